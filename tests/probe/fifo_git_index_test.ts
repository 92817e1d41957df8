/**
 * Probe 22e, finding E1 (tests/probe/PROBE_22E_REPORT.md): a FIFO a session put at `.git/index`
 * (sessions may write `.git/` but its hooks and config) held the runner forever. The undeclared-
 * write check reads the index by a plain synchronous open, which waits for a writer that never
 * comes: the runner stopped serving, stopped beating (every waiter then says NO_RUNNER), kept its
 * lock (a second runner refuses, RUNNER_RUNNING), and printed nothing. Now the index (and every
 * file the snapshot opens after an `lstat`: a dirty worktree file, a racy watched one) is opened
 * with a deadline (and read with a cap: a sparse file there cost the runner its size in memory): the
 * run is refused (SNAPSHOT_FAILED, naming the index), nothing runs, and the runner keeps serving. Run through a real runner launched with the flags `agentteams permissions
 * serve` prints.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { readWholeFileWithin } from "../../lib/fs/safe_read.ts";
import { contentSha256 } from "../../lib/requests/fingerprint.ts";
import { FsSafetyError } from "../../lib/errors.ts";
import { runnerBrief, withRunner } from "../runner/_runner_helpers.ts";

const GIB = 1024 * 1024 * 1024;

function mkfifo(path: string): void {
  const out = new Deno.Command("mkfifo", { args: [path] }).outputSync();
  assert.equal(out.code, 0, "mkfifo is needed for this test");
}

Deno.test("probe 22e: a FIFO or a sparse 1 GiB file at .git/index refuses the run (SNAPSHOT_FAILED) and the runner serves on", async () => {
  await withWorld("p22e-fifo-index", { brief: runnerBrief }, async (w) => {
    await withRunner(w, async (r) => {
      const nonce = await w.dispatch("worker");
      const index = join(w.project, ".git", "index");
      const saved = Deno.readFileSync(index);
      Deno.removeSync(index);
      mkfifo(index);
      const refused = await w.run(
        { argv: ["echo", "ran"], expected_writes: [] },
        { nonce, flags: ["--wait-timeout", "60"] },
      );
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /SNAPSHOT_FAILED: cannot read the git index: .*\.git\/index/);
      assert.doesNotMatch(refused.stdout, /ran/);
      // Nothing ran: no run row after the refusal's, and the runner still beats and serves.
      assert.equal(w.rows().some((row) => row.action === "run"), false);
      // A sparse index (no disk to its maker) is refused unread too, not read into memory.
      Deno.removeSync(index);
      const sparse = Deno.openSync(index, { write: true, createNew: true });
      sparse.truncateSync(GIB);
      sparse.close();
      const big = await w.run({ argv: ["echo", "ran"] }, { nonce });
      assert.equal(big.code, 1, big.stderr);
      assert.match(
        big.stderr,
        /SNAPSHOT_FAILED: cannot read the git index: .* over the \d+-byte limit/,
      );
      assert.ok(r.peakRssKb() * 1024 < GIB / 4, `the runner's peak RSS was ${r.peakRssKb()} kB`);
      Deno.removeSync(index);
      Deno.writeFileSync(index, saved);
      const served = await w.run({ argv: ["echo", "ran"] }, { nonce });
      assert.equal(served.code, 0, served.stderr);
      assert.match(served.stdout, /ran/);
      const status = JSON.parse(Deno.readTextFileSync(queuePaths(w.project).runnerJson));
      assert.equal(status.pid, r.pid);
      assert.ok(Date.now() - Date.parse(status.beat) < 15_000, `a stale beat: ${status.beat}`);
    });
  });
});

Deno.test("readWholeFileWithin: a FIFO, with a writer or none, is refused, not waited on; a sparse file past the cap is refused unread", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const fifo = `${dir}/index`;
    mkfifo(fifo);
    const none = await readWholeFileWithin(fifo, "the git index", 1024, 300).catch((e) => e);
    assert.ok(none instanceof FsSafetyError, String(none));
    assert.equal(none.code, "NOT_REGULAR_FILE");
    // With a writer holding it open, the open completes: the kind is refused before any read.
    const writer = new Deno.Command("sh", {
      args: ["-c", `exec 3>"${fifo}"; sleep 5`],
      stdout: "null",
    }).spawn();
    try {
      const held = await readWholeFileWithin(fifo, "the git index", 1024).catch((e) => e);
      assert.ok(held instanceof FsSafetyError, String(held));
      assert.match(held.message, /is a FIFO, not a regular file/);
    } finally {
      writer.kill("SIGKILL");
      await writer.status;
    }
    Deno.writeTextFileSync(`${dir}/plain`, "DIRC");
    assert.equal((await readWholeFileWithin(`${dir}/plain`, "the git index", 4)).length, 4);
    // A sparse file past the cap is refused unread.
    const sparse = Deno.openSync(`${dir}/sparse`, { write: true, createNew: true });
    sparse.truncateSync(1024 * 1024 * 1024);
    sparse.close();
    const big = await readWholeFileWithin(`${dir}/sparse`, "the git index", 1024).catch((e) => e);
    assert.ok(big instanceof FsSafetyError, String(big));
    assert.equal(big.code, "FILE_TOO_LARGE");
    // A racy watched file (a session may write `.git/info/`) that large is not hashed: it gets a
    // fingerprint that never repeats (shown as changed), read into no buffer.
    assert.match(await contentSha256(`${dir}/sparse`), /^unreadable:/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
