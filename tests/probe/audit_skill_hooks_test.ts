/**
 * Probe 22d, finding D6: hooks in a project skill or command. Claude Code loads
 * `.claude/skills/<name>/SKILL.md` and `.claude/commands/**.md`, and a `hooks` key in their front
 * matter (2.1.42 `cli.js` `MS7`; 2.1.332 "Invalid hooks in skill") is registered when the skill
 * runs: shell commands around every later tool call, as the user, outside the sandbox. The main
 * session's model runs a skill on its own when its description fits ("use before any task").
 * docs/audit.md listed skill folders as not covered, and a team with such a skill passed
 * (`--strict`, exit 0). Now `hooks` there is `CLAUDE_SKILL_HOOKS`.
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { auditEnv, compliantClaude, switchBrief, withSandbox, writeFiles } from "../audit/_team.ts";

const HOOKS =
  "hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          command: id\n";

const CASES: [string, string][] = [
  [".claude/skills/setup/SKILL.md", `---\nname: setup\ndescription: Use first\n${HOOKS}---\nGo.\n`],
  [".claude/commands/go.md", `---\ndescription: Go\n${HOOKS}---\nGo.\n`],
  // Claude Code cuts the front matter at the first `---`; a YAML reader reads on to the line.
  [
    ".claude/skills/late/SKILL.md",
    `---\nname: late\ndescription: a --- b\n${HOOKS}---\nGo.\n`,
  ],
  [".claude/skills/flow/SKILL.md", `---\n{name: flow, "hooks": {Stop: []}}\n---\nGo.\n`],
];

for (const [rel, text] of CASES) {
  Deno.test(`probe audit: hooks in ${rel} fail under --strict, nothing written`, async () => {
    await withSandbox("probe-audit-skill-hooks", async (sb) => {
      writeFiles(sb.project, {
        ...compliantClaude(),
        [rel]: text,
        "agentteams.jsonc": switchBrief(),
      });
      const before = await snapshotTree(sb.dir);
      const r = await runCli(["audit", "--project", sb.project, "--strict"], {
        env: auditEnv(sb),
      });
      assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
      assert.match(r.stdout, /error CLAUDE_SKILL_HOOKS/);
      assert.ok(r.stdout.includes(rel), r.stdout);
      assertSameTree(before, await snapshotTree(sb.dir));
    });
  });
}

Deno.test("probe audit: a skill and a command without hooks pass", async () => {
  await withSandbox("probe-audit-skill-ok", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/skills/review/SKILL.md":
        "---\nname: review\ndescription: Reviews git hooks: pre-commit\n---\nhooks: are prose here\n",
      ".claude/commands/go.md": "---\ndescription: Go\n---\nGo.\n",
      "agentteams.jsonc": switchBrief(),
    });
    const r = await runCli(["audit", "--project", sb.project, "--strict"], {
      env: auditEnv(sb),
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /2 agent file\(s\)/);
  });
});
