/**
 * The runner's refusals at start, each launched with the flags `agentteams permissions serve`
 * prints: a key variable set (KEY_ENV_IN_RUNNER), a ledger key file readable by others or a
 * symlink (KEY_CUSTODY), a brief that does not load (PREFLIGHT_FAILED), a second runner
 * (RUNNER_RUNNING naming the first's pid), a symlinked queue or status folder
 * (QUEUE_UNSAFE_PATH, nothing written through the link). Each asserts the code and that nothing
 * else changed. And queue mode with no runner: NO_RUNNER naming
 * `agentteams serve`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { withWorld, type World } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import {
  denySessions,
  isLivenessWrite,
  names,
  present,
  runnerBrief,
  serveToEnd,
  startRunner,
  withRunner,
} from "./_runner_helpers.ts";

const OPTS = { brief: runnerBrief };

/** Everything of the world (project, home, key dir, scratch) but its TMPDIR. */
function whole(w: World) {
  return snapshotTreeSync([w.project, w.home, w.keyDir, w.scratch]);
}

/** {@link whole} without the runner's status file (a runner that stops itself says why there). */
function wholeButStatus(w: World) {
  return snapshotTreeSync(
    [w.project, w.home, w.keyDir, w.scratch],
    (p) => p === queuePaths(w.project).runnerJson,
  );
}

/**
 * The status a runner that refused to start leaves: no live beat, the refusal's code and message,
 * so a waiting client is told at once.
 */
function assertStoppedStatus(w: World, code: string): void {
  const v = JSON.parse(Deno.readTextFileSync(queuePaths(w.project).runnerJson));
  assert.equal(v.stopped?.code, code, JSON.stringify(v));
  assert.equal(typeof v.stopped?.message, "string");
  assert.equal(v.serving, null);
}

Deno.test("serve refuses to start: key custody and the environment, before anything is made", async (t) => {
  await withWorld("rq-start-key", OPTS, async (w) => {
    // The operator's settings first: serve writes none of them, so the tree stays the same.
    await denySessions(w);
    const key = join(w.keyDir, "proposal-ledger.key");

    await t.step("a key variable set at start: KEY_ENV_IN_RUNNER, nothing created", async () => {
      // Every variable that carries a key (the _FILE variable names a file in the key dir: a file).
      const cases: [string, string][] = [
        ["AGENTTEAMS_PROPOSAL_LEDGER_KEY", "k".repeat(64)],
        ["AGENTTEAMS_PROPOSAL_LEDGER_KEY", ""],
        ["AGENTTEAMS_DECISION_SIGNING_KEY", "k".repeat(64)],
        ["AGENTTEAMS_WAIVER_SIGNING_KEY", "k"],
        ["AGENTTEAMS_GRANT_SIGNING_KEY", "k"],
      ];
      for (const [name, value] of cases) {
        const before = whole(w);
        const r = await serveToEnd(w, { [name]: value });
        assertCliRefused(r, "serve", "KEY_ENV_IN_RUNNER", 1);
        assertSameTree(before, whole(w), `after serve with ${name}`);
        assert.equal(present(join(w.project, ".agentteams-queue")), false);
        assert.equal(present(join(w.project, ".agentteams")), false);
      }
    });

    const real = join(w.scratch, "real.key");
    const custody: [string, () => void, () => void][] = [
      [
        "a ledger key file 0644",
        () => Deno.chmodSync(key, 0o644),
        () => Deno.chmodSync(key, 0o600),
      ],
      ["a ledger key file that is a symlink", () => {
        Deno.renameSync(key, real);
        Deno.symlinkSync(real, key);
      }, () => {
        Deno.removeSync(key);
        Deno.renameSync(real, key);
      }],
    ];
    for (const [what, spoil, mend] of custody) {
      await t.step(`${what}: KEY_CUSTODY, nothing created`, async () => {
        spoil();
        try {
          const before = whole(w);
          const r = await serveToEnd(w);
          assertCliRefused(r, "serve", "KEY_CUSTODY", 1);
          assertSameTree(before, whole(w), `after serve with ${what}`);
        } finally {
          mend();
        }
      });
    }

    await t.step(
      "a brief that does not load: PREFLIGHT_FAILED (brief), nothing created",
      async () => {
        const briefFile = join(w.project, "agentteams.jsonc");
        const good = Deno.readFileSync(briefFile);
        Deno.writeTextFileSync(briefFile, "{ broken");
        try {
          const before = whole(w);
          const r = await serveToEnd(w);
          const refusal = assertCliRefused(r, "serve", "PREFLIGHT_FAILED", 1);
          assert.match(refusal.reason, /^brief: /);
          assertSameTree(before, whole(w), "after serve with a brief that does not load");
          assert.equal(present(join(w.project, ".agentteams-queue")), false);
          assert.equal(present(queuePaths(w.project).runnerJson), false, "it beat");
        } finally {
          Deno.writeFileSync(briefFile, good);
        }
      },
    );

    await t.step("the runner's X25519 secret 0644: KEY_CUSTODY, no request served", async () => {
      const seal = join(w.keyDir, "runner-x25519.pem");
      Deno.chmodSync(seal, 0o644);
      try {
        const r = await serveToEnd(w);
        assertCliRefused(r, "serve", "KEY_CUSTODY", 1);
        // A refused start says why in the status (when the status folder exists), never a beat.
        if (present(queuePaths(w.project).runnerJson)) assertStoppedStatus(w, "KEY_CUSTODY");
      } finally {
        Deno.chmodSync(seal, 0o600);
      }
    });
  });
});

Deno.test("serve refuses a second runner (RUNNER_RUNNING, naming the first's pid); the first keeps serving", async () => {
  await withWorld("rq-start-second", OPTS, async (w) => {
    await withRunner(w, async (first) => {
      const before = snapshotTreeSync([w.project], isLivenessWrite);
      const r = await serveToEnd(w);
      const refusal = assertCliRefused(r, "serve", "RUNNER_RUNNING", 1);
      assert.match(refusal.reason, new RegExp(`\\bpid ${first.pid}\\b`));
      assertSameTree(before, snapshotTreeSync([w.project], isLivenessWrite));
      // The first runner still answers.
      const v = await w.cli(["ledger", "verify", "--project", w.project]);
      assert.equal(v.code, 0, v.stderr);
      assert.equal(
        JSON.parse(Deno.readTextFileSync(queuePaths(w.project).runnerJson)).pid,
        first.pid,
      );
    });
  });
});

Deno.test("serve refuses a symlinked requests/, .agentteams-status/ or .agentteams-queue/ (QUEUE_UNSAFE_PATH); nothing is written through the link", async (t) => {
  await withWorld("rq-start-links", OPTS, async (w) => {
    // A runner ran once: every folder exists.
    const first = await startRunner(w);
    assert.equal((await first.stop()).code, 0, first.stderr());
    const p = queuePaths(w.project);
    for (
      const [what, path] of [["requests/", p.requests], [".agentteams-status/", p.status], [
        ".agentteams-queue/",
        p.queue,
      ]] as const
    ) {
      await t.step(`a symlinked ${what}`, async () => {
        const aside = join(w.scratch, `aside-${names(w.scratch).length}`);
        const target = join(w.scratch, `target-${names(w.scratch).length}`);
        Deno.mkdirSync(target);
        Deno.renameSync(path, aside);
        Deno.symlinkSync(target, path);
        try {
          const before = wholeButStatus(w);
          const r = await serveToEnd(w);
          assertCliRefused(r, "serve", "QUEUE_UNSAFE_PATH", 1);
          assert.deepEqual(names(target), [], "written through the link");
          assertSameTree(before, wholeButStatus(w), `after serve with a symlinked ${what}`);
          // The status folder itself a link: nothing written; else the stop is said there.
          if (what !== ".agentteams-status/") assertStoppedStatus(w, "QUEUE_UNSAFE_PATH");
        } finally {
          Deno.removeSync(path);
          Deno.renameSync(aside, path);
        }
      });
    }
  });
});

Deno.test("queue mode with no runner: NO_RUNNER within --wait-timeout, naming agentteams serve; nothing acts", async (t) => {
  await withWorld("rq-norunner", OPTS, async (w) => {
    await t.step("no queue at all (no runner ever started)", async () => {
      const before = whole(w);
      const r = await w.cli([
        "dispatch",
        "--agent",
        "worker",
        "--project",
        w.project,
        "--wait-timeout",
        "2",
      ]);
      const refusal = assertCliRefused(r, "dispatch", "NO_RUNNER", 1);
      assert.match(refusal.reason, /agentteams serve/);
      assertSameTree(before, whole(w), "after dispatch with no runner");
    });
    await t.step(
      "a queue whose runner stopped: the CLI gives up after 2 s and withdraws its request, saying so",
      async () => {
        const first = await startRunner(w);
        assert.equal((await first.stop()).code, 0, first.stderr());
        const rows = w.rows().length;
        const r = await w.cli(["ledger", "verify", "--project", w.project, "--wait-timeout", "2"]);
        const refusal = assertCliRefused(r, "ledger verify", "NO_RUNNER", 1);
        assert.match(refusal.reason, /agentteams serve/);
        assert.match(refusal.reason, /request [0-9a-f]{32} was withdrawn: nothing will act on it/);
        assert.equal(w.rows().length, rows, "a row was written");
        // Withdrawn: no later runner can act on it (an orchestrator retrying on exit 1 queues
        // no duplicates); no result exists.
        assert.deepEqual(names(queuePaths(w.project).requests), []);
        assert.deepEqual(names(queuePaths(w.project).results), []);
      },
    );
  });
});

Deno.test("queue mode refuses what only direct mode could do: --unconfined, ledger verify --checkpoint; nothing queued or written", async (t) => {
  await withWorld("rq-queue-usage", OPTS, async (w) => {
    const first = await startRunner(w);
    assert.equal((await first.stop()).code, 0, first.stderr());
    const nonce = await w.dispatchBeforeBriefChanged("worker");
    const artifact = await w.artifact({ argv: ["true"] }, nonce);
    const cases: [string, string[], string][] = [
      ["run --unconfined", ["run", artifact, "--unconfined"], "run"],
      ["ledger verify --checkpoint", [
        "ledger",
        "verify",
        "--checkpoint",
        join(w.scratch, "cp.json"),
      ], "ledger verify"],
    ];
    Deno.writeTextFileSync(join(w.scratch, "cp.json"), "{}");
    for (const [what, args, words] of cases) {
      await t.step(what, async () => {
        const before = whole(w);
        const rows = w.rows().length;
        const r = await w.cli([...args, "--project", w.project, "--wait-timeout", "2"]);
        assertCliRefused(r, words, "USAGE", 2);
        assert.equal(w.rows().length, rows, "a row was written");
        assert.deepEqual(names(queuePaths(w.project).requests), [], "a request was queued");
        assertSameTree(before, whole(w), `after ${what}`);
      });
    }
  });
});
