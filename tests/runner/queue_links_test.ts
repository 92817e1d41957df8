/**
 * Queue files are never followed (issue 22 item 4), through the real CLI and a real runner, each
 * launched with exactly the flags `agentteams permissions` prints:
 *
 * - an ack a session planted as a symlink to the ledger key, the ledger or the decision log,
 *   before the result exists (the waiting `ledger verify` queued, the runner not yet started) and
 *   after (`submit`, the runner serves, the link planted, then `wait`): the waiter refuses to
 *   write through it, and every target keeps its bytes;
 * - an ack planted for another waiter's id (a plain file with a made-up token, a hard link to the
 *   key file, a FIFO, a directory): the runner deletes no result for it, records a
 *   `runner-ack-refused` row, and the real waiter still reads its result;
 * - a hard link to the key file, a FIFO or a directory at a pending request's result name: the
 *   waiter reads none of them (the key's bytes never reach it), the runner's rename replaces the
 *   link or FIFO (whose target keeps its bytes) and the waiter gets the real result; a directory
 *   there is refused and recorded (`runner-result-refused`) and the runner keeps serving;
 * - requests/ swapped for a link (to a folder holding a valid request) while the runner serves:
 *   it stops with QUEUE_UNSAFE_PATH, says so in its status, and neither serves nor moves the
 *   request in the link's target (the instant between the check and the rename is driven in
 *   tests/fs/session_dir_test.ts, where a hook stands the swap there).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256 } from "../_helpers/mod.ts";
import { withWorld, type World } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { DECISIONS_REL } from "../../lib/layout.ts";
import { NEW_DECISION_HEADER } from "../../lib/authz/decisions.ts";
import {
  handRequest,
  makeRequest,
  names,
  openAs,
  present,
  resultOf,
  resultPath,
  runnerBrief,
  startRunner,
  underPrinted,
  until,
  verifyDirect,
  withRunner,
} from "./_runner_helpers.ts";

/** The files a planted link aims at: the ledger key, the ledger, the decision log. */
function targets(w: World): Record<string, string> {
  const decisions = join(w.project, DECISIONS_REL);
  if (!present(decisions)) {
    Deno.mkdirSync(join(w.project, "references"), { recursive: true });
    // A real (empty) log in the current format: the HALT check reads it before every act.
    Deno.writeTextFileSync(decisions, `${NEW_DECISION_HEADER.join(",")}\n`);
  }
  return {
    "the ledger key": join(w.keyDir, "proposal-ledger.key"),
    "the ledger": join(w.project, ".agentteams", "proposal-ledger.jsonl"),
    "the decision log": decisions,
  };
}

/** Each target's bytes now. */
function digests(paths: Record<string, string>): Record<string, Uint8Array> {
  return Object.fromEntries(Object.entries(paths).map(([k, p]) => [k, Deno.readFileSync(p)]));
}

/**
 * Every target as it was: the key and the decision log byte for byte; the ledger, which the runner
 * appends to meanwhile, still starting with every byte it had (never truncated or overwritten).
 */
function assertIntact(
  now: Record<string, Uint8Array>,
  before: Record<string, Uint8Array>,
  what: string,
): void {
  for (const [k, b] of Object.entries(before)) {
    const a = now[k];
    if (k === "the ledger") {
      assert.ok(a.length >= b.length, `${what}: ${k} shrank (${b.length} -> ${a.length})`);
      assert.equal(sha256(a.subarray(0, b.length)), sha256(b), `${what}: ${k} was rewritten`);
    } else {
      assert.equal(sha256(a), sha256(b), `${what}: ${k} changed`);
    }
  }
}

/** The ledger's rows (the project's), parsed. */
function rows(w: World): Record<string, unknown>[] {
  return w.rows();
}

/**
 * A runner started once and stopped: every queue folder exists, and no runner is live; the ledger
 * exists (one dispatch issued).
 */
async function foldersMade(w: World): Promise<void> {
  await w.dispatchBeforeBriefChanged("worker");
  const first = await startRunner(w);
  assert.equal((await first.stop()).code, 0, first.stderr());
}

/** The id of the one request waiting in requests/ (polled until one is there). */
async function pendingId(w: World): Promise<string> {
  const dir = queuePaths(w.project).requests;
  let id = "";
  await until(() => {
    const n = names(dir).find((x) => /^[0-9a-f]{32}\.json$/.test(x));
    if (n !== undefined) id = n.slice(0, 32);
    return n !== undefined;
  }, "a queued request");
  return id;
}

/** `submit` of a verify... there is no verify artifact: a dry-run command request instead. */
async function submitted(w: World): Promise<{ id: string; line: string }> {
  const nonce = await w.dispatchBeforeBriefChanged("worker");
  const file = await w.artifact({ argv: ["true"] }, nonce);
  const r = await (await underPrinted(w, ["submit", file, "--project", w.project])).done;
  assert.equal(r.code, 0, r.stderr);
  const line = r.stdout.trim();
  const m = /^([0-9a-f]{32}) at1\.\S+$/.exec(line);
  assert.ok(m !== null, line);
  return { id: m[1], line };
}

Deno.test("an ack symlinked to the key file, the ledger or the decision log, before the result exists: the waiter writes nothing through it", async (t) => {
  await withWorld("rq-ack-link-before", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    const aims = targets(w);
    const q = queuePaths(w.project);
    await withRunner(w, async () => {
      for (const [what, target] of Object.entries(aims)) {
        await t.step(what, async () => {
          const nonce = await w.dispatch();
          const file = await w.artifact({ argv: ["sleep", "3"] }, nonce);
          const before = digests(aims);
          const n = rows(w).length;
          // The waiting `run` queues; while the runner serves it (claimed, no result yet), the
          // session plants the link where the waiter will acknowledge.
          const waiting = await underPrinted(w, [
            "run",
            file,
            "--project",
            w.project,
            "--wait-timeout",
            "100",
          ]);
          let id = "";
          await until(() => {
            try {
              id = JSON.parse(Deno.readTextFileSync(q.runnerJson)).serving ?? "";
            } catch { /* being replaced */ }
            return id !== "";
          }, "the runner serving the run");
          assert.equal(present(resultPath(w, id)), false, "the result exists already");
          const ack = join(q.acks, id);
          Deno.symlinkSync(target, ack);
          const r = await waiting.done;
          // The run itself answered as it should, and nothing was written through the link:
          // either the waiter met it and refused to write its ack there (it says so), or the
          // runner's sweep right after publishing took it away first (the entry, not its
          // target) and the waiter's own ack was made in its place; which one comes first is
          // the two processes' race, and both leave every target as it was.
          assert.equal(r.code, 0, r.stderr);
          // (The sweep may also take the link between the waiter's refused create and its look at
          // the name: the waiter then says the name was taken.)
          if (r.stderr.includes("acknowledgement was not written")) {
            assert.match(r.stderr, /acknowledgement was not written.*(a symlink|is taken)/);
          }
          assertIntact(digests(aims), before, `${what} changed through the planted ack`);
          // The runner's sweep takes the link away (the entry, not its target), recorded.
          await until(
            () => rows(w).slice(n).some((x) => x.action === "runner-ack-refused" && x.id === id),
            "a runner-ack-refused row",
          );
          // When the sweep came first, the waiter's own ack took the name after it: the runner
          // takes that one too on its next pass, so the name is cleared either way.
          await until(() => !present(ack), "the ack's name cleared");
          assertIntact(digests(aims), before, `${what} changed by the runner's sweep`);
        });
      }
    });
    await verifyDirect(w);
  });
});

Deno.test("an ack symlinked to the key file, the ledger or the decision log after the result exists: wait writes nothing through it", async (t) => {
  await withWorld("rq-ack-link-after", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    const aims = targets(w);
    for (const [what, target] of Object.entries(aims)) {
      await t.step(what, async () => {
        const s = await submitted(w);
        // The runner serves it: the result exists before the link is planted.
        await withRunner(w, async () => {
          await resultOf(w, s.id);
        });
        const before = digests(aims);
        const ack = join(queuePaths(w.project).acks, s.id);
        Deno.symlinkSync(target, ack);
        const r = await (await underPrinted(
          w,
          ["wait", "-", "--project", w.project, "--timeout", "20"],
          s.line + "\n",
        )).done;
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /acknowledgement was not written.*a symlink/);
        assertIntact(digests(aims), before, `${what} changed through the planted ack`);
        assert.ok(Deno.lstatSync(ack).isSymlink);
        Deno.removeSync(ack);
      });
    }
    await verifyDirect(w);
  });
});

Deno.test("an ack planted for another waiter's id (a made-up token, a hard link to the key, a FIFO, a directory) deletes no result; refused and recorded; the waiter reads its result", async (t) => {
  await withWorld("rq-ack-planted", { brief: runnerBrief }, async (w) => {
    await w.dispatchBeforeBriefChanged("worker");
    const key = join(w.keyDir, "proposal-ledger.key");
    const keyBefore = sha256(Deno.readFileSync(key));
    const plants: [string, (path: string) => void][] = [
      ["a plain file with a made-up token", (p) => Deno.writeTextFileSync(p, "0".repeat(64))],
      ["an empty file (the earlier ack)", (p) => Deno.writeFileSync(p, new Uint8Array())],
      ["a hard link to the key file", (p) => Deno.linkSync(key, p)],
      ["a FIFO", (p) => {
        const r = new Deno.Command("/usr/bin/mkfifo", { args: [p] }).outputSync();
        assert.ok(r.success, "mkfifo");
      }],
      ["a directory", (p) => {
        Deno.mkdirSync(p);
        Deno.writeTextFileSync(join(p, "x"), "x");
      }],
    ];
    await withRunner(w, async () => {
      for (const [what, plant] of plants) {
        await t.step(what, async () => {
          // Another waiter's request, served: its result waits for its waiter.
          const req = await handRequest(w, { kind: "verify-ledger" });
          const text = await resultOf(w, req.id);
          const n = rows(w).length;
          plant(join(queuePaths(w.project).acks, req.id));
          // The runner's sweep takes the planted ack (renamed, never followed) and refuses it.
          await until(
            () =>
              rows(w).slice(n).some((r) => r.action === "runner-ack-refused" && r.id === req.id),
            "a runner-ack-refused row",
          );
          assert.ok(present(resultPath(w, req.id)), "the result was deleted for a planted ack");
          assert.equal(Deno.readTextFileSync(resultPath(w, req.id)), text);
          assert.equal(sha256(Deno.readFileSync(key)), keyBefore, "the key changed");
          // Taken away, all but a directory: that is never moved out of the session's folder
          // (probe 22c C1), it stays where it was put.
          const ack = join(queuePaths(w.project).acks, req.id);
          assert.equal(present(ack), what === "a directory", what);
          if (what === "a directory") Deno.removeSync(ack, { recursive: true });
          // The result still opens for its own waiter.
          assert.equal((await openAs(w, req, text)).body.ok, true);
        });
      }
    });
    await verifyDirect(w);
  });
});

Deno.test("a hard link to the key, a FIFO or a directory at a pending request's result name: the waiter reads none; the runner replaces the link and FIFO, refuses the directory and keeps serving", async (t) => {
  await withWorld("rq-result-planted", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    const key = join(w.keyDir, "proposal-ledger.key");
    const keyBefore = sha256(Deno.readFileSync(key));
    const replaced: [string, (p: string) => void][] = [
      ["a hard link to the key file", (p) => Deno.linkSync(key, p)],
      ["a symlink to the key file", (p) => Deno.symlinkSync(key, p)],
      ["a FIFO", (p) => {
        const r = new Deno.Command("/usr/bin/mkfifo", { args: [p] }).outputSync();
        assert.ok(r.success, "mkfifo");
      }],
    ];
    for (const [what, plant] of replaced) {
      await t.step(what, async () => {
        const waiting = await underPrinted(
          w,
          [
            "ledger",
            "verify",
            "--project",
            w.project,
            "--wait-timeout",
            "100",
          ],
          "",
          ["--json"],
        );
        const id = await pendingId(w);
        plant(resultPath(w, id));
        const r = await withRunner(w, async () => await waiting.done);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout.trim().split("\n").at(-1)!).ok, true, r.stdout);
        assert.ok(!r.stdout.includes(Deno.readTextFileSync(key).trim()), "the key reached stdout");
        assert.equal(sha256(Deno.readFileSync(key)), keyBefore, "the key changed");
      });
    }
    await t.step("a directory: refused and recorded, the runner keeps serving", async () => {
      const req = await handRequest(w, { kind: "verify-ledger" });
      Deno.mkdirSync(resultPath(w, req.id));
      Deno.writeTextFileSync(join(resultPath(w, req.id), "keep"), "keep");
      const n = rows(w).length;
      await withRunner(w, async () => {
        await until(
          () =>
            rows(w).slice(n).some((x) => x.action === "runner-result-refused" && x.id === req.id),
          "a runner-result-refused row",
        );
        assert.equal(Deno.readTextFileSync(join(resultPath(w, req.id), "keep")), "keep");
        assert.deepEqual(names(resultPath(w, req.id)), ["keep"]);
        // Still serving.
        const next = await handRequest(w, { kind: "verify-ledger" });
        assert.equal((await openAs(w, next, await resultOf(w, next.id))).body.ok, true);
      });
      Deno.removeSync(resultPath(w, req.id), { recursive: true });
    });
    await verifyDirect(w);
  });
});

Deno.test("requests/ swapped for a link while the runner serves: it stops (QUEUE_UNSAFE_PATH, said in its status); the request in the link's target is neither served nor moved", async () => {
  await withWorld("rq-requests-swapped", { brief: runnerBrief }, async (w) => {
    await w.dispatchBeforeBriefChanged("worker");
    const q = queuePaths(w.project);
    const runner = await startRunner(w);
    const rows0 = rows(w).length;
    const elsewhere = join(w.scratch, "elsewhere");
    const aside = join(w.scratch, "requests-aside");
    let moved = false;
    try {
      // Served first: the loop is up.
      const first = await handRequest(w, { kind: "verify-ledger" });
      assert.equal((await openAs(w, first, await resultOf(w, first.id))).body.ok, true);
      // A valid request waits in another folder; requests/ becomes a link to it.
      Deno.mkdirSync(elsewhere);
      const bait = await makeRequest(w, { kind: "verify-ledger" });
      Deno.writeFileSync(join(elsewhere, `${bait.id}.json`), bait.bytes);
      const baitBytes = Deno.readFileSync(join(elsewhere, `${bait.id}.json`));
      Deno.renameSync(q.requests, aside);
      moved = true;
      Deno.symlinkSync(elsewhere, q.requests);
      const s = await runner.exited;
      assert.equal(s.code, 1, runner.stderr());
      assert.match(runner.stderr(), /QUEUE_UNSAFE_PATH/);
      assert.deepEqual(Deno.readFileSync(join(elsewhere, `${bait.id}.json`)), baitBytes);
      assert.deepEqual(names(elsewhere), [`${bait.id}.json`]);
      assert.ok(!rows(w).slice(rows0).some((x) => x.id === bait.id), "a row names the bait");
      assert.equal(present(resultPath(w, bait.id)), false);
      const st = JSON.parse(Deno.readTextFileSync(q.runnerJson));
      assert.equal(st.stopped?.code, "QUEUE_UNSAFE_PATH", JSON.stringify(st));
    } finally {
      await runner.kill9();
      if (moved) {
        Deno.removeSync(q.requests);
        Deno.renameSync(aside, q.requests);
      }
    }
    await verifyDirect(w);
  });
});
