/**
 * Probe 22c, finding C4 (tests/probe/PROBE_22C_REPORT.md): under the switch, a team that does not
 * use Claude Code (no `.claude/`, `write_policy_frameworks` without `claude`) passed `doctor` and
 * started `serve` with its sessions checked for nothing ("not checked: the team does not use
 * Claude Code"). Its orchestrator session (Goose or Codex, which must write `.agentteams-queue/`,
 * so holds a shell or a workspace-write sandbox) then cut the operator's emergency stop from
 * `references/security-decisions.log.csv` (the last row: no chain breaks) and the runner issued a
 * nonce again. Under the switch, settings this tool cannot check now fail closed: `doctor` exits 1
 * and `serve` refuses to start (`PREFLIGHT_FAILED`), serving nothing.
 *
 * Run through a real runner launched with the flags `agentteams permissions serve` prints.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeno } from "../_helpers/mod.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { DECISIONS_REL } from "../../lib/layout.ts";
import {
  handRequest,
  permissionsArgs,
  present,
  resultPath,
  runnerBrief,
} from "../runner/_runner_helpers.ts";

Deno.test("probe 22c: under the switch, a team without Claude Code has no sessions doctor can check: doctor fails and serve refuses to start, so a HALT its sessions cut lifts nothing", async () => {
  await withWorld("p22c-unchecked", {
    brief: (p) => ({ ...runnerBrief(p), write_policy_frameworks: ["goose"] }),
  }, async (w) => {
    assert.equal(present(join(w.project, ".claude")), false);
    const halt = await w.cli([
      ...["decision", "sign", "--action", "*", "--verdict", "HALT", "--ed25519"],
      ...["--evidence", "stop", "--project", w.project],
    ]);
    assert.equal(halt.code, 0, halt.stderr);
    // The session (a Goose shell) cuts the HALT: the log's last row, the chain still whole.
    const log = join(w.project, DECISIONS_REL);
    const lines = Deno.readTextFileSync(log).split(/(?<=\n)/);
    Deno.writeTextFileSync(log, lines.slice(0, -1).join(""));
    const cut = Deno.readTextFileSync(log);
    // It queues a dispatch for itself (the queue folder is a session's to make).
    Deno.mkdirSync(join(w.project, ".agentteams-queue", "requests"), { recursive: true });
    const req = await handRequest(w, { kind: "issue-dispatch", agent: "worker" });
    const doctor = await w.cli(["doctor", "--project", w.project]);
    assert.equal(doctor.code, 1, doctor.stdout + doctor.stderr);
    assert.match(doctor.stdout, /error: session-settings: .*does not use Claude Code/);
    const args = await permissionsArgs(w, ["serve", "--project", w.project, "--once"]);
    const r = await runDeno(args, { env: w.env, cwd: w.dir, hangGuardMs: 60_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /PREFLIGHT_FAILED: session-settings: /);
    // Nothing served: the request still queued, no result, the log as the session left it.
    assert.equal(present(req.path), true);
    assert.equal(present(resultPath(w, req.id)), false);
    assert.equal(Deno.readTextFileSync(log), cut);
  });
});
