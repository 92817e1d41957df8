/**
 * Probe 22, finding Q5: a HALT on a program by its full path does not stop the same program run by
 * its bare name. The operator stops `/usr/bin/true` (`run:<path>`); the agent's command request
 * names `true`, which the run resolves (on the confined PATH) to that very file, and the act is
 * checked only under `run:true`: it runs. A run is checked under the program it resolved too.
 */
import assert from "node:assert/strict";
import { withWorld, workerBrief } from "../e2e/_run_helpers.ts";

Deno.test("probe Q5: a HALT on run:<full path> stops a run that names the program by its bare name", async () => {
  await withWorld("probe-q5", {
    brief: (p) => workerBrief(p, [{ prefix: ["true"], args: [] }], { scopes: ["src/"] }),
  }, async (w) => {
    const nonce = await w.dispatch();
    const real = Deno.realPathSync("/usr/bin/true");
    const s = await w.cli([
      "decision",
      "sign",
      "--project",
      w.project,
      "--action",
      `run:${real}`,
      "--verdict",
      "HALT",
      "--ed25519",
    ]);
    assert.equal(s.code, 0, s.stderr);
    const rowsBefore = w.rows().length;
    const r = await w.run({ argv: ["true"] }, { nonce });
    assert.match(r.stderr, /refused: HALTED:/, `the halted program ran: ${r.stdout}${r.stderr}`);
    assert.equal(r.code, 1);
    const added = w.rows().slice(rowsBefore).map((x) => x.action);
    assert.ok(!added.includes("run-request-start"), `no start row: ${added.join(", ")}`);
    assert.ok(added.includes("run-request-refused"), `a refusal row: ${added.join(", ")}`);
  });
});
