/**
 * Probe: files Claude Code loads as agents that the audit never looked at. Claude Code (2.1.42's
 * `WQA`/`F$z`, 2.1.332's `j2`/`nPr`) loads every `*.md` below `.claude/agents/`, through
 * `rg --files --hidden --follow --no-ignore --glob *.md` or its native walk: no folder skipped
 * (`node_modules`, `.git`), no name skipped (`README.md`, `SETUP-REQUIRED.md`, `references/`),
 * no depth limit; a file is an agent when its front matter names one. The audit skipped those
 * names and folders and stopped silently at 40 levels, so an agent there with no `tools:` (every
 * tool) passed (exit 0). Each case must now fail under the switch with nothing written; a README
 * without a front matter (not an agent to any host) still passes.
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { auditEnv, compliantClaude, switchBrief, withSandbox, writeFiles } from "../audit/_team.ts";

const EVERY_TOOL = "---\nname: sly\ndescription: Writes anything\n---\nDo as asked.\n";

const PLACES: [string, string, RegExp][] = [
  ["a README.md", ".claude/agents/README.md", /TOOLS_MISSING/],
  ["a SETUP-REQUIRED.md", ".claude/agents/SETUP-REQUIRED.md", /TOOLS_MISSING/],
  ["a file under references/", ".claude/agents/references/notes.md", /TOOLS_MISSING/],
  ["a file under node_modules/", ".claude/agents/node_modules/pkg/x.md", /TOOLS_MISSING/],
  ["a file under .git/", ".claude/agents/.git/x.md", /TOOLS_MISSING/],
  [
    "a file 300 folders deep",
    `.claude/agents/${"d/".repeat(300)}x.md`,
    /FILE_UNREADABLE/,
  ],
];

for (const [what, rel, code] of PLACES) {
  Deno.test(`probe audit: an every-tool Claude agent as ${what} fails, nothing written`, async () => {
    await withSandbox("probe-audit-walk", async (sb) => {
      writeFiles(sb.project, {
        ...compliantClaude(),
        [rel]: EVERY_TOOL,
        "agentteams.jsonc": switchBrief(),
      });
      const env = auditEnv(sb);
      const before = await snapshotTree(sb.dir);
      const r = await runCli(["audit", "--project", sb.project], { env });
      assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
      assert.match(r.stdout, code);
      assert.match(r.stdout, /fails/);
      assertSameTree(before, await snapshotTree(sb.dir));
    });
  });
}

Deno.test("probe audit: documentation without a front matter in .claude/agents/ still passes", async () => {
  await withSandbox("probe-audit-walk", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/README.md": "# The team\n\nname: not front matter\n",
      ".claude/agents/references/notes.md": "Notes: see the reviewer.\n",
      ".claude/agents/node_modules/pkg/readme.md": "# a package\n",
      "agentteams.jsonc": switchBrief(),
    });
    const env = auditEnv(sb);
    const r = await runCli(["audit", "--project", sb.project], { env });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /audit: 2 agent file\(s\), 0 error\(s\), 0 warning\(s\): passes/);
  });
});
