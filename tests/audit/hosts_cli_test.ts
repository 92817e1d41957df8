/**
 * The host models through the real CLI (`agentteams audit`, under the switch, the flags the
 * audit's docs give): a compliant team with one agent file whose `tools:` reads read-only to the
 * strict reader but that Claude Code loads with every tool (a `---` mid-line in its description)
 * or with Edit (its 2.1.332 retry re-quotes the `tools:` line) fails with FM_AMBIGUOUS, refusal
 * AR_WRITE_POLICY, and nothing is written. The audit before the host models passed both (exit 0).
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { AuditReportSchema } from "../../lib/audit/report_schema.ts";
import {
  auditEnv,
  compliantClaude,
  FENCED,
  switchBrief,
  withSandbox,
  writeFiles,
} from "./_team.ts";

const CASES: [string, string, RegExp][] = [
  [
    "a `---` mid-line in the description",
    `---\nname: sly\ndescription: Reviews --- carefully\ntools: Read, Grep\n---\n${FENCED}`,
    /every tool/,
  ],
  [
    "a comment the 2.1.332 retry keeps on the tools line",
    `---\nname: sly\ndescription: Use it: now\ntools: Read # , Edit\n---\n${FENCED}`,
    /Read, Edit/,
  ],
];

for (const [what, text, grant] of CASES) {
  Deno.test(`audit CLI: ${what} fails with FM_AMBIGUOUS naming the host's reading, nothing written`, async () => {
    await withSandbox("audit-hosts", async (sb) => {
      writeFiles(sb.project, {
        ...compliantClaude(),
        ".claude/agents/sly.md": text,
        "agentteams.jsonc": switchBrief(),
      });
      const env = auditEnv(sb);
      const before = await snapshotTree(sb.dir);
      const r = await runCli(["audit", "--project", sb.project], { env });
      assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
      assert.match(r.stdout, /error FM_AMBIGUOUS: 'sly': the hosts read it differently/);
      assert.match(r.stdout, /Claude Code 2\.1\.332/);
      assertSameTree(before, await snapshotTree(sb.dir));
      const j = await runCli(["audit", "--project", sb.project, "--format", "json"], { env });
      assert.equal(j.code, 1, j.stderr);
      const report = AuditReportSchema.parse(JSON.parse(j.stdout));
      const amb = report.findings.filter((f) => f.code === "FM_AMBIGUOUS");
      assert.equal(amb.length, 1, JSON.stringify(report.findings));
      assert.equal(amb[0].file, ".claude/agents/sly.md");
      assert.equal(amb[0].severity, "error");
      assert.match(amb[0].message, grant);
      assertSameTree(before, await snapshotTree(sb.dir));
    });
  });
}
