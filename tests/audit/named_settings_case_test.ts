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
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { compliantClaude, SETTINGS, switchBrief, withSandbox, writeFiles } from "./_team.ts";

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
      await withSandbox("audit-named-settings-case", async (sb) => {
        const team: Record<string, string> = { ...compliantClaude(), ...files };
        // An empty entry stands for a file the case leaves out.
        for (const [k, v] of Object.entries(team)) if (v === "") delete team[k];
        writeFiles(sb.project, { ...team, "agentteams.jsonc": switchBrief() });
        const { AGENTTEAMS_KEY_DIR: _elsewhere, ...underHome } = sb.env;
        const env = { ...underHome, AGENTTEAMS_BROAD_OK: "1" };
        const before = await snapshotTree(sb.dir);
        const r = await runCli(
          ["audit", "--project", sb.project, "--strict", `${sb.project}/${named}`],
          { env },
        );
        assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
        assert.match(r.stdout, /error SETTINGS_HOOKS/, r.stdout);
        assert.ok(r.stdout.includes(`${rel}\n`), r.stdout);
        assertSameTree(before, await snapshotTree(sb.dir));
      });
    });
  }
}

Deno.test("audit --strict of a named agent: a folded settings file holding every deny rule counts, no hook: passes", async () => {
  await withSandbox("audit-named-settings-case-ok", async (sb) => {
    const team: Record<string, string> = { ...compliantClaude() };
    delete team[".claude/settings.json"];
    writeFiles(sb.project, {
      ...team,
      ".claude/Settings.json": SETTINGS,
      "agentteams.jsonc": switchBrief(),
    });
    const { AGENTTEAMS_KEY_DIR: _elsewhere, ...underHome } = sb.env;
    const r = await runCli(
      ["audit", "--project", sb.project, "--strict", `${sb.project}/.claude/agents/reviewer.md`],
      { env: { ...underHome, AGENTTEAMS_BROAD_OK: "1" } },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});
