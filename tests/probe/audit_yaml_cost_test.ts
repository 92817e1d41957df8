/**
 * Probe: a front matter that makes the audit hang. The host models read YAML as the hosts do,
 * with duplicate-key checks that take time quadratic in a mapping's keys: one 3.5 MB agent file
 * whose front matter holds a flow mapping of 300,000 keys kept `agentteams audit` busy for more
 * than two minutes (killed; 20,000 keys took the models over 30 s), which stalls the CI job.
 * A front matter over the audit's bound (1,000 lines, commas and opening brackets) is now
 * FILE_UNREADABLE at once, with nothing read further and nothing written. The test bounds no
 * time: it asserts the finding, which the old code never gave (it read the file to the end).
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import {
  auditEnv,
  compliantClaude,
  FENCED,
  switchBrief,
  withSandbox,
  writeFiles,
} from "../audit/_team.ts";

const KEYS = 5000;
const CASES: [string, string, string][] = [
  [
    "a flow mapping of 5,000 keys",
    ".claude/agents/wide.md",
    `---\nname: wide\ndescription: d\ntools: Read\nz: {${
      Array.from({ length: KEYS }, (_, i) => `a${i}: 1`).join(", ")
    }}\n---\n${FENCED}`,
  ],
  [
    "a block mapping of 5,000 keys (Copilot)",
    ".github/agents/wide.agent.md",
    `---\ndescription: d\ntools: ['read']\n${
      Array.from({ length: KEYS }, (_, i) => `a${i}: 1`).join("\n")
    }\n---\n${FENCED}`,
  ],
  [
    "5,000 nested flow lists",
    ".claude/agents/deep.md",
    `---\nname: deep\ndescription: d\ntools: Read\nz: ${"[".repeat(KEYS)}${
      "]".repeat(KEYS)
    }\n---\n${FENCED}`,
  ],
];

for (const [what, rel, text] of CASES) {
  Deno.test(`probe audit: ${what} is refused unread (FILE_UNREADABLE), nothing written`, async () => {
    await withSandbox("probe-audit-cost", async (sb) => {
      writeFiles(sb.project, {
        ...compliantClaude(),
        [rel]: text,
        "agentteams.jsonc": switchBrief(),
      });
      const env = auditEnv(sb);
      const before = await snapshotTree(sb.dir);
      const r = await runCli(["audit", "--project", sb.project], { env });
      assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
      assert.match(
        r.stdout,
        /error FILE_UNREADABLE: '(wide|deep)': its front matter holds \d+ lines/,
      );
      assertSameTree(before, await snapshotTree(sb.dir));
      const f = await runCli(["audit", "--project", sb.project, "--fix", `${sb.project}/${rel}`], {
        env,
      });
      assert.equal(f.code, 1, f.stdout + f.stderr);
      assert.match(f.stdout + f.stderr, /not fixed .*larger than the audit reads/);
      assertSameTree(before, await snapshotTree(sb.dir));
    });
  });
}
