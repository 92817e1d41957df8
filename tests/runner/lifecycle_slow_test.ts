/**
 * The runner's life under stress and faults, each against a real runner subprocess: the brief
 * (or the grants ledger) changed while it serves (it stops, RUNNER_PIN_CHANGED, exit 1, and the
 * next request is not served); killed with SIGKILL mid-request (the write-ahead `runner-request`
 * row stands; a restarted runner does not serve the claimed request again, and answers it
 * RUNNER_INTERRUPTED with a `runner-interrupted` row); a flood of 1,000 requests (every one served
 * or refused, the loop up, its peak resident set reported and bounded).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused } from "../_helpers/assert.ts";
import { withWorld, type World } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import {
  type HandRequest,
  handRequest,
  names,
  openAs,
  present,
  resultCode,
  resultOf,
  resultPath,
  type Runner,
  runnerBrief,
  startRunner,
  until,
  verifyDirect,
} from "./_runner_helpers.ts";

/** The runner's end as a finished run (for assertCliRefused). */
async function ended(r: Runner) {
  const s = await r.exited;
  return { code: s.code, signal: s.signal, stdout: "", stderr: r.stderr() };
}

Deno.test("a pinned file changed while serving stops the runner (RUNNER_PIN_CHANGED, exit 1); the next request is not served", async (t) => {
  await withWorld("rq-pins", { brief: runnerBrief }, async (w) => {
    const q = queuePaths(w.project);
    const cases: [string, () => void, () => void][] = [
      [
        "the brief edited",
        () => Deno.writeTextFileSync(join(w.project, "agentteams.jsonc"), "\n", { append: true }),
        () => {
          const p = join(w.project, "agentteams.jsonc");
          Deno.writeTextFileSync(p, Deno.readTextFileSync(p).replace(/\n\n$/, "\n"));
        },
      ],
      [
        "a grants ledger appearing",
        () => {
          Deno.mkdirSync(join(w.project, "references"), { recursive: true });
          Deno.writeTextFileSync(join(w.project, "references/capability-grants.log.csv"), "x\n");
        },
        () => Deno.removeSync(join(w.project, "references"), { recursive: true }),
      ],
    ];
    for (const [what, change, undo] of cases) {
      await t.step(what, async () => {
        const runner = await startRunner(w);
        let req: HandRequest;
        const rows = w.rows().length;
        try {
          // The runner is serving: one request answered first.
          const first = await handRequest(w, { kind: "verify-ledger" });
          assert.equal((await openAs(w, first, await resultOf(w, first.id))).body.ok, true);
          change();
          req = await handRequest(w, { kind: "verify-ledger" });
          const r = await ended(runner);
          const refusal = assertCliRefused(r, "serve", "RUNNER_PIN_CHANGED", 1);
          assert.match(refusal.reason, /changed while the runner served/);
        } finally {
          await runner.kill9();
        }
        // The next request was not served: still queued, no result, no row for it.
        assert.ok(present(req.path), "the request was taken");
        assert.equal(present(resultPath(w, req.id)), false);
        assert.ok(!w.rows().slice(rows).some((x) => x.id === req.id), "a row names it");
        // The runner that stopped itself says why, and no longer beats as live.
        const st = JSON.parse(Deno.readTextFileSync(q.runnerJson));
        assert.equal(st.stopped?.code, "RUNNER_PIN_CHANGED", JSON.stringify(st));
        assert.match(st.stopped.message, /changed while the runner served/);
        undo();
        Deno.removeSync(req.path);
      });
    }
    await verifyDirect(w);
  });
});

Deno.test("SIGKILL mid-request: the write-ahead row stands; a restarted runner reports RUNNER_INTERRUPTED and never serves it again", async () => {
  await withWorld("rq-kill9", { brief: runnerBrief }, async (w) => {
    const q = queuePaths(w.project);
    const first = await startRunner(w);
    let req: HandRequest;
    try {
      const nonce = await w.dispatch();
      req = await handRequest(w, {
        kind: "run-request",
        artifact: {
          kind: "command-request",
          dispatch: nonce,
          argv: ["sleep", "5"],
          purpose: "slow",
        },
      });
      await until(() => {
        try {
          return JSON.parse(Deno.readTextFileSync(q.runnerJson)).serving === req.id;
        } catch {
          return false;
        }
      }, "runner.json serving the slow request");
      // Its command started (the write-ahead row and the run's start row are written).
      await until(() => w.rows().some((x) => x.action === "run-request-start"), "the start row");
      const s = await first.kill9();
      assert.equal(s.signal, "SIGKILL");
    } finally {
      await first.kill9();
    }
    const ahead = w.rows().filter((x) => x.action === "runner-request" && x.id === req.id);
    assert.equal(ahead.length, 1, JSON.stringify(w.rows()));
    assert.equal(ahead[0].kind, "run-request");
    assert.equal(ahead[0].request_sha256, req.sha256);
    assert.deepEqual(names(q.claimed), [`${req.id}.json`]);
    assert.equal(present(resultPath(w, req.id)), false);
    const starts = w.rows().filter((x) => x.action === "run-request-start").length;
    const rows = w.rows().length;

    const second = await startRunner(w);
    try {
      const opened = await openAs(w, req, await resultOf(w, req.id));
      assert.equal(resultCode(opened), "RUNNER_INTERRUPTED", JSON.stringify(opened.body));
      assert.equal(opened.body.exit, 1);
      const added = w.rows().slice(rows);
      assert.deepEqual(added.map((x) => [x.action, x.id]), [["runner-interrupted", req.id]]);
      assert.deepEqual(names(q.claimed), []);
      // The restarted runner serves new requests, and never that one again.
      const next = await handRequest(w, { kind: "verify-ledger" });
      assert.equal((await openAs(w, next, await resultOf(w, next.id))).body.ok, true);
      assert.equal(w.rows().filter((x) => x.action === "run-request-start").length, starts);
      assert.equal(
        w.rows().filter((x) => x.action === "runner-request" && x.id === req.id).length,
        1,
      );
    } finally {
      assert.equal((await second.stop()).code, 0, second.stderr());
    }
  });
});

Deno.test("a flood of 1,000 requests: every one answered, the loop stays up, peak RSS bounded", async () => {
  await withWorld("rq-flood", { brief: runnerBrief }, async (w) => {
    const runner = await startRunner(w);
    try {
      const reqs: { h: HandRequest; valid: boolean }[] = [];
      for (let i = 0; i < 1000; i++) {
        const valid = i % 2 === 0;
        const h = await handRequest(
          w,
          valid ? { kind: "issue-dispatch", agent: "worker" } : { kind: "flood", n: i },
        );
        reqs.push({ h, valid });
      }
      const results = queuePaths(w.project).results;
      await until(
        () => names(results).length >= 1000,
        "1,000 results",
        180_000,
      );
      let served = 0;
      let refused = 0;
      for (const { h, valid } of reqs) {
        const opened = await openAs(w, h, Deno.readTextFileSync(resultPath(w, h.id)));
        if (valid) {
          assert.equal(opened.body.ok, true, JSON.stringify(opened.body));
          assert.match(String(opened.secret?.nonce), /^[0-9a-f]{32}$/);
          served++;
        } else {
          assert.equal(resultCode(opened), "REQUEST_INVALID");
          refused++;
        }
      }
      assert.equal(served, 500);
      assert.equal(refused, 500);
      const peakKb = runner.peakRssKb();
      console.log(`runner flood: 1000 requests; peak RSS (VmHWM) ${Math.round(peakKb / 1024)} MiB`);
      assert.ok(peakKb < 512 * 1024, `peak RSS ${peakKb} kB`);
      // Still serving.
      const last = await handRequest(w, { kind: "verify-ledger" });
      assert.equal((await openAs(w, last, await resultOf(w, last.id))).body.ok, true);
    } finally {
      assert.equal((await runner.stop()).code, 0, runner.stderr());
    }
    await verifyDirect(w);
  });
});

export type { World };
