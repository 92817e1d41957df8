/**
 * A queued request has a lifetime (issue 23 item 5), through the real CLI (launched with the flags
 * `agentteams permissions` prints) and a real runner:
 *
 * - `apply --wait-timeout 2` with no runner: `NO_RUNNER`, exit 1, and the request is withdrawn
 *   (the message says nothing will act on it); a runner started later applies nothing;
 * - a request past its deadline (`expires`): refused `REQUEST_EXPIRED`, recorded as a
 *   `runner-request-refused` row, never acted on; the same request within its deadline is;
 * - `agentteams cancel ID` withdraws a request no runner has claimed; a second cancel says
 *   `REQUEST_NOT_QUEUED` (exit 1); a malformed id is a usage error (exit 2);
 * - a runner that stops itself while a client waits (a pinned brief changed; a refused start)
 *   tells the client at once (`RUNNER_STOPPED`, naming the runner's own refusal), and the
 *   client's request is withdrawn, instead of the client waiting out its timeout.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused } from "../_helpers/assert.ts";
import { sha256 } from "../_helpers/mod.ts";
import { withWorld, type World } from "../e2e/_run_helpers.ts";
import { change } from "../proposals/_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import {
  handRequest,
  names,
  openAs,
  resultCode,
  resultOf,
  runnerBrief,
  serveToEnd,
  startRunner,
  underPrinted,
  until,
  verifyDirect,
  withRunner,
} from "./_runner_helpers.ts";

/** A runner started once and stopped: the queue folders exist; the ledger too; no runner live. */
async function foldersMade(w: World): Promise<void> {
  await w.dispatchBeforeBriefChanged("worker");
  const first = await startRunner(w);
  assert.equal((await first.stop()).code, 0, first.stderr());
}

/** A change proposal (as an object) of src/a.txt from "hello\n" to `content`. */
async function proposalOf(w: World, content: string): Promise<Record<string, unknown>> {
  const nonce = await w.dispatchBeforeBriefChanged("worker");
  return change(nonce, "src/a.txt", content, sha256("hello\n")) as unknown as Record<
    string,
    unknown
  >;
}

/** The request files waiting in the orchestrator's folder. */
function queued(w: World): string[] {
  return names(queuePaths(w.project).requests).filter((n) => n.endsWith(".json"));
}

Deno.test("apply --wait-timeout 2 with no runner: NO_RUNNER, exit 1, the request withdrawn; a runner started later applies nothing", async () => {
  await withWorld("rq-life-timeout", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    const file = join(w.scratch, "p.json");
    Deno.writeTextFileSync(file, JSON.stringify(await proposalOf(w, "late\n")));
    const rows = w.rows().length;
    const r = await (await underPrinted(w, [
      "apply",
      file,
      "--project",
      w.project,
      "--wait-timeout",
      "2",
    ])).done;
    const refusal = assertCliRefused(r, "apply", "NO_RUNNER", 1);
    assert.match(refusal.reason, /no runner answered within 2 s/);
    assert.match(refusal.reason, /request [0-9a-f]{32} was withdrawn: nothing will act on it/);
    assert.deepEqual(queued(w), [], "the request stayed queued");
    // An orchestrator that retries on exit 1 gets no duplicate: the next runner finds nothing.
    const s = await serveToEnd(w, {}, ["--once"]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /^answered 0 requests \(0 served, 0 refused\)/);
    assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");
    assert.ok(!w.rows().slice(rows).some((x) => x.action === "runner-request"), "a request row");
    await verifyDirect(w);
  });
});

Deno.test("a request past its deadline: REQUEST_EXPIRED, recorded, not acted on; within its deadline it is", async () => {
  await withWorld("rq-life-expired", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    const past = new Date(Date.now() - 60_000).toISOString();
    const rows = w.rows().length;
    const req = await handRequest(w, {
      kind: "apply-proposal",
      artifact: await proposalOf(w, "expired\n"),
      dry_run: false,
      expires: past,
    });
    await withRunner(w, async () => {
      const opened = await openAs(w, req, await resultOf(w, req.id));
      assert.equal(resultCode(opened), "REQUEST_EXPIRED");
      assert.match(String(opened.body.error?.message), /expired at .*not acted on/);
    });
    assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");
    const mine = w.rows().slice(rows).filter((x) => x.id === req.id);
    assert.deepEqual(mine.map((x) => [x.action, x.error]), [
      ["runner-request-refused", "REQUEST_EXPIRED"],
    ]);
    // The control: the same request with a deadline still ahead is applied.
    const ok = await handRequest(w, {
      kind: "apply-proposal",
      artifact: await proposalOf(w, "in time\n"),
      dry_run: false,
      expires: new Date(Date.now() + 600_000).toISOString(),
    });
    await withRunner(w, async () => {
      assert.equal((await openAs(w, ok, await resultOf(w, ok.id))).body.ok, true);
    });
    assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "in time\n");
    await verifyDirect(w);
  });
});

Deno.test("cancel ID withdraws a request no runner claimed; again: REQUEST_NOT_QUEUED (exit 1); a malformed id: USAGE (exit 2)", async () => {
  await withWorld("rq-life-cancel", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    const file = join(w.scratch, "p.json");
    Deno.writeTextFileSync(file, JSON.stringify(await proposalOf(w, "cancelled\n")));
    const sub = await (await underPrinted(w, ["submit", file, "--project", w.project])).done;
    assert.equal(sub.code, 0, sub.stderr);
    const id = sub.stdout.trim().split(" ")[0];
    assert.match(id, /^[0-9a-f]{32}$/);
    // submit says when the request expires and how to withdraw it.
    assert.match(
      sub.stderr,
      /refuses it, REQUEST_EXPIRED; withdraw it sooner with: agentteams cancel/,
    );
    assert.deepEqual(queued(w), [`${id}.json`]);
    const c = await (await underPrinted(w, ["cancel", id, "--project", w.project])).done;
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.trim(), `withdrew request ${id}: nothing will act on it`);
    assert.deepEqual(queued(w), []);
    const again = await (await underPrinted(w, ["cancel", id, "--project", w.project])).done;
    const refusal = assertCliRefused(again, "cancel", "REQUEST_NOT_QUEUED", 1);
    assert.match(refusal.reason, /a runner claimed it already/);
    const bad = await w.cli(["cancel", "../x", "--project", w.project]);
    assertCliRefused(bad, "cancel", "USAGE", 2);
    const s = await serveToEnd(w, {}, ["--once"]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /^answered 0 requests/);
    assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");
    await verifyDirect(w);
  });
});

Deno.test("a runner that stops itself while a client waits tells it at once (RUNNER_STOPPED, naming why), and the client's request is withdrawn", async (t) => {
  await withWorld("rq-life-stopped", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    const q = queuePaths(w.project);
    const briefFile = join(w.project, "agentteams.jsonc");
    const good = Deno.readTextFileSync(briefFile);

    await t.step("a pinned brief changed (RUNNER_PIN_CHANGED)", async () => {
      const runner = await startRunner(w);
      try {
        // The runner busy with a slow command, so the client's request waits behind it.
        const nonce = await w.dispatch();
        const slow = await handRequest(w, {
          kind: "run-request",
          artifact: {
            kind: "command-request",
            dispatch: nonce,
            argv: ["sleep", "3"],
            purpose: "x",
          },
        });
        await until(() => {
          try {
            return JSON.parse(Deno.readTextFileSync(q.runnerJson)).serving === slow.id;
          } catch {
            return false;
          }
        }, "the runner serving the slow request");
        // The hang guard (120 s) is far below the client's own timeout: only being told at
        // once lets this finish.
        const waiting = await underPrinted(w, [
          "ledger",
          "verify",
          "--project",
          w.project,
          "--wait-timeout",
          "600",
        ]);
        await until(() => queued(w).length === 1, "the client's request queued");
        Deno.writeTextFileSync(briefFile, good + "\n");
        const r = await waiting.done;
        const refusal = assertCliRefused(r, "ledger verify", "RUNNER_STOPPED", 1);
        assert.match(refusal.reason, /the runner stopped itself at .*RUNNER_PIN_CHANGED/);
        assert.match(refusal.reason, /was withdrawn: nothing will act on it/);
        assert.deepEqual(queued(w), []);
        assert.equal((await runner.exited).code, 1);
      } finally {
        await runner.kill9();
        Deno.writeTextFileSync(briefFile, good);
      }
    });

    await t.step("a refused start (the runner's secret key 0644: KEY_CUSTODY)", async () => {
      // A clean start and stop first: the stopped status of the step before would tell this
      // client at once on its own.
      await foldersMade(w);
      const waiting = await underPrinted(w, [
        "ledger",
        "verify",
        "--project",
        w.project,
        "--wait-timeout",
        "600",
      ]);
      await until(() => queued(w).length === 1, "the client's request queued");
      const seal = join(w.keyDir, "runner-x25519.pem");
      Deno.chmodSync(seal, 0o644);
      try {
        const s = await serveToEnd(w);
        assertCliRefused(s, "serve", "KEY_CUSTODY", 1);
      } finally {
        Deno.chmodSync(seal, 0o600);
      }
      const r = await waiting.done;
      const refusal = assertCliRefused(r, "ledger verify", "RUNNER_STOPPED", 1);
      assert.match(refusal.reason, /KEY_CUSTODY/);
      assert.match(refusal.reason, /was withdrawn/);
      assert.deepEqual(queued(w), []);
    });

    // A runner started again serves (its own status replaces the stopped one).
    await withRunner(w, async () => {
      const v = await w.cli(["ledger", "verify", "--project", w.project]);
      assert.equal(v.code, 0, v.stderr);
    });
    await verifyDirect(w);
  });
});
