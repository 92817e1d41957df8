/**
 * Issue 22 item 1, probe 22d's "noticed" (after its D5): an audit of named files
 * (`agentteams audit FILE...`) judges the project's Claude Code settings with a named Claude
 * agent, but looked them up by their exact names (`.claude/settings.json`), where the walk matches
 * them folded (`team.ts` `kindOfPath`): Claude Code opens `.claude/settings.local.json` by name,
 * which a case-insensitive file system (macOS, Windows) resolves to `.Claude/Settings.Local.json`.
 * So a hook there passed `audit --strict FILE` on Linux while the walk of the same project failed.
 * Likewise a named agent folder (`audit .claude/agents`) dropped the findings of the team's
 * settings file unless it was spelled `.claude/settings.json`.
 */
import assert from "node:assert/strict";
import { auditStrict, compliantClaude, SETTINGS } from "./_team.ts";

const HOOKS = JSON.stringify({
  ...JSON.parse(SETTINGS),
  hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "id" }] }] },
});

const CASES: [string, Record<string, string>, string][] = [
  [
    ".claude/Settings.Local.json",
    { ".claude/Settings.Local.json": HOOKS },
    ".claude/Settings.Local.json",
  ],
  [
    ".Claude/settings.json (the shared file in a folded folder)",
    { ".claude/settings.json": "", ".Claude/settings.json": HOOKS },
    ".Claude/settings.json",
  ],
  [
    ".claude/SETTINGS.json in place of the shared file",
    { ".claude/settings.json": "", ".claude/SETTINGS.json": HOOKS },
    ".claude/SETTINGS.json",
  ],
];

for (const [what, files, rel] of CASES) {
  for (const named of [".claude/agents/reviewer.md", ".claude/agents"]) {
    Deno.test(`audit --strict ${named}: hooks in ${what} fail, nothing written`, async () => {
      const team: Record<string, string> = { ...compliantClaude(), ...files };
      // An empty entry stands for a file the case leaves out.
      for (const [k, v] of Object.entries(team)) if (v === "") delete team[k];
      const r = await auditStrict("audit-named-settings-case", team, {
        named: [named],
        refused: true,
      });
      assert.match(r.stdout, /error SETTINGS_HOOKS/, r.stdout);
      assert.ok(r.stdout.includes(`${rel}\n`), r.stdout);
    });
  }
}

Deno.test("audit --strict of a named agent: a folded settings file holding every deny rule counts, no hook: passes", async () => {
  const team: Record<string, string> = { ...compliantClaude() };
  delete team[".claude/settings.json"];
  const r = await auditStrict("audit-named-settings-case-ok", {
    ...team,
    ".claude/Settings.json": SETTINGS,
  }, { named: [".claude/agents/reviewer.md"], refused: false });
  assert.equal(r.code, 0, r.stdout + r.stderr);
});
