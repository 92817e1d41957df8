/**
 * Probe of issue 26, finding 2 (tests/probe/PROBE_26_REPORT.md): staging spent no use of the
 * dispatch (only an attempt) and an approval counts nothing, so one dispatch of N uses staged,
 * and once approved wrote, any number of proposals up to its 100 attempts. Now a staging spends a
 * use: a dispatch of 2 uses stages 2 proposals, and the third is refused (`AGENT_MISMATCH`, the
 * tool-server channel's one answer for every nonce problem) with no record kept and nothing
 * written; a dry run spends none.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import type { JsonObject } from "../../lib/pycompat/canonical.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { useCount, withWorld } from "../e2e/_run_helpers.ts";
import { change, runnerOf, serve, staged, stageOf, stagerBrief, tree } from "./_staged.ts";

Deno.test("probe 26: a staging spends a use; a dispatch of 2 uses stages no third proposal", async () => {
  await withWorld("probe26-budget", { brief: stagerBrief }, async (w) => {
    const s = await runnerOf(w);
    const key = loadLedgerKey({ env: w.env, mode: "direct" });
    const { nonce } = await issueDispatch(w.project, key.hmac, "stager", { maxUses: 2 });
    const uses = useCount(w.project);
    // A dry run checks only: no use spent, nothing staged.
    const dry = await serve(
      s,
      w,
      { ...stageOf(change(nonce, "src/dry.txt")), dry_run: true },
      "mcp",
    );
    assert.equal(dry.body.ok, true, JSON.stringify(dry.body.error));
    assert.equal(useCount(w.project), uses);
    assert.deepEqual(staged(w), []);
    for (const name of ["one", "two"]) {
      const r = await serve(s, w, stageOf(change(nonce, `src/${name}.txt`)), "mcp");
      assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
      assert.equal((r.body.result as JsonObject).staged, true);
    }
    assert.equal(useCount(w.project), uses + 2, "each staging spends a use");
    assert.equal(staged(w).length, 2);
    const before = tree(w);
    const records = staged(w);
    const rows = w.rows().length;
    const third = await serve(s, w, stageOf(change(nonce, "src/three.txt")), "mcp");
    assert.equal(third.body.ok, false, JSON.stringify(third.body.result));
    assert.equal(third.body.error?.code, "AGENT_MISMATCH");
    assertSameTree(before, tree(w), "the third staging");
    assert.deepEqual(staged(w), records, "no record kept for the third");
    assert.deepEqual(w.rows().slice(rows).map((x) => x.action), [
      "runner-request",
      "stage-proposal-refused",
    ]);
    // Both staged proposals are still approved, and the approval counts nothing more.
    for (const name of records) {
      const a = await serve(s, w, { kind: "apply-staged", sid: name.slice(0, 32) });
      assert.equal(a.body.ok, true, JSON.stringify(a.body.error));
    }
    assert.equal(useCount(w.project), uses + 2);
    assert.equal(Deno.readTextFileSync(join(w.project, "src/two.txt")), "staged\n");
  });
});
