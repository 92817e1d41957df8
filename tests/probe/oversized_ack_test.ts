/**
 * Probe 22e, finding E2 (tests/probe/PROBE_22E_REPORT.md): the runner read a claimed ack whole.
 * An ack is at most 128 bytes (its token is 64 hex characters), but the sweep read whatever the
 * session put at `.agentteams-queue/acks/<id>` into memory before looking at its length: a sparse
 * file costs the session no disk and the runner its size in memory (1 GiB here; at tens of GiB the
 * kernel's OOM killer picks a process, the runner or another), and nothing said why. Now the ack
 * is read with the cap (`readRegularFileSync`, `maxBytes`), refused unread past it and recorded
 * (`runner-ack-refused`), and the result folder is untouched. Run through a real runner launched
 * with the flags `agentteams permissions serve` prints.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import {
  ledgerRows,
  names,
  present,
  requestId,
  runnerBrief,
  until,
  withRunner,
} from "../runner/_runner_helpers.ts";

const GIB = 1024 * 1024 * 1024;

Deno.test("probe 22e: a sparse 1 GiB ack is refused unread and recorded; the runner's memory does not grow by it", async () => {
  await withWorld("p22e-ack-size", { brief: runnerBrief }, async (w) => {
    await withRunner(w, async (r) => {
      const q = queuePaths(w.project);
      const resultsBefore = names(q.results);
      const id = requestId();
      const ack = join(q.acks, id);
      // Made aside and renamed in, as a session would (the runner never sees it half made).
      const f = Deno.openSync(`${ack}.part`, { write: true, createNew: true });
      f.truncateSync(GIB);
      f.close();
      Deno.renameSync(`${ack}.part`, ack);
      const refusedRow = () =>
        ledgerRows(w).find((row) => row.action === "runner-ack-refused" && row.id === id);
      await until(() => refusedRow() !== undefined, "the runner-ack-refused row", 20_000);
      assert.match(String(refusedRow()?.reason), /over the 128-byte limit/);
      assert.ok(!present(ack), "the ack stayed in the queue");
      // Its peak resident set stayed far below the ack's size: it was never read.
      const peakKb = r.peakRssKb();
      assert.ok(peakKb * 1024 < GIB / 4, `the runner's peak RSS was ${peakKb} kB`);
      assert.deepEqual(names(q.results), resultsBefore, "the result folder changed");
    });
  });
});
