/**
 * A gate's exec paths may not overlap any write grant's root in the holder's grants ledger, valid
 * or not, in direct mode as under the runner: what a runner let a command write there (here the
 * gate's own program, a script that accepts everything) must never run as a gate and decide a
 * proposal's verdict.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SandboxError } from "../../lib/errors.ts";
import { formatCsv } from "../../lib/authz/csv.ts";
import { GRANT_COLUMNS, writeGrantTargets } from "../../lib/authz/grants.ts";
import { assertRefusal } from "../_helpers/assert.ts";
import { sandbox } from "../_helpers/mod.ts";
import { policyIn, sandboxGateRunner } from "./_helpers.ts";

Deno.test("gates: a gate program inside a write grant's root is refused (CONFINED_INVALID), the grant valid or not", async () => {
  const sb = await sandbox("gate-grant-targets");
  try {
    const issuer = join(sb.dir, "issuer");
    const tools = join(issuer, "tools");
    await Deno.mkdir(tools, { recursive: true });
    const lint = join(tools, "lint");
    await Deno.writeTextFile(lint, "#!/bin/sh\nexit 0\n");
    await Deno.chmod(lint, 0o755);
    const brief = JSON.stringify({
      agent_policies: { worker: { write_scopes: ["src/"] } },
      proposal_gates: { lint: { argv: [lint, "{file}"] } },
    });
    const policy = policyIn(sb, brief);
    const gate = () =>
      sandboxGateRunner(sb, policy, { grantTargets: () => writeGrantTargets(sb.project) })(
        policy.gates.lint,
        { content: new TextEncoder().encode("x\n"), rel: "src/a.ts" },
      );
    // No grants ledger: the gate runs its program.
    assert.equal((await gate()).exit, 0);
    // A write row naming the tools' parent, unsigned (nothing is verified for this check).
    const row: Record<string, string> = {
      timestamp: "2026-11-29T10:00:00Z",
      grant_id: "G-1",
      issuer_team: "a",
      holder_team: "b",
      target_path: "tools/",
      permitted_ops: "read;write",
      expires_at: "2000-01-01T00:00:00Z",
      max_uses: "1",
      uses: "0",
      approver: "x",
      ticket_id: "T",
      reason_code: "r",
      issuer_root: issuer,
    };
    await Deno.mkdir(join(sb.project, "references"), { recursive: true });
    await Deno.writeTextFile(
      join(sb.project, "references", "capability-grants.log.csv"),
      formatCsv(GRANT_COLUMNS, [GRANT_COLUMNS.map((c) => row[c] ?? "")], { eol: "\n" }),
    );
    assert.deepEqual(writeGrantTargets(sb.project), [tools]);
    const e = await assertRefusal(gate, "CONFINED_INVALID", SandboxError);
    assert.match(e.message, /overlap/);
  } finally {
    await sb.dispose();
  }
});
