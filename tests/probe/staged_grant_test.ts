/**
 * Probe of issue 26, finding 3 (tests/probe/PROBE_26_REPORT.md): a record staged while its agent
 * held `write_file` was still approved after the operator took the tool away (the brief changed,
 * the runner restarted). Now the approval asks the brief's `mcp_grants` again
 * (`TOOL_NOT_GRANTED`): nothing written, the refusal recorded, the record kept for a rejection.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

import type { JsonObject } from "../../lib/pycompat/canonical.ts";
import type { RunnerState } from "../../lib/runner/serve_one.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { change, runnerOf, serve, staged, stageOf, stagerBrief, tree } from "./_staged.ts";

Deno.test("probe 26: an approval asks the brief's mcp_grants again: a revoked write_file is refused", async () => {
  await withWorld("probe26-revoked", { brief: stagerBrief }, async (w) => {
    const s = await runnerOf(w);
    const nonce = await w.dispatchBeforeBriefChanged("stager");
    const r = await serve(s, w, stageOf(change(nonce, "src/revoked.txt")), "mcp");
    assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
    const sid = String((r.body.result as JsonObject).sid);
    // The operator takes write_file away (the brief changed; the runner restarted with it).
    const revoked: RunnerState = {
      ...s,
      policy: {
        ...s.policy,
        mcpGrants: { stager: { tools: ["delete_file"], approval: "staged" } },
      },
    };
    const before = tree(w);
    const rows = w.rows().length;
    const a = await serve(revoked, w, { kind: "apply-staged", sid });
    assert.equal(a.body.ok, false, JSON.stringify(a.body.result));
    assert.equal(a.body.error?.code, "TOOL_NOT_GRANTED");
    assertSameTree(before, tree(w), "the approval of a revoked grant");
    assert.deepEqual(w.rows().slice(rows).map((x) => x.action), [
      "runner-request",
      "apply-staged-refused",
    ]);
    assert.deepEqual(staged(w), [`${sid}.json`], "the record stays, to be rejected");
    // No entry at all: refused the same way.
    const none: RunnerState = { ...s, policy: { ...s.policy, mcpGrants: {} } };
    const b = await serve(none, w, { kind: "apply-staged", sid });
    assert.equal(b.body.error?.code, "TOOL_NOT_GRANTED");
    assert.throws(() => Deno.lstatSync(join(w.project, "src/revoked.txt")), Deno.errors.NotFound);
  });
});
