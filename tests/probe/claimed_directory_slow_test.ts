/**
 * Probe 22c, finding C1 (tests/probe/PROBE_22C_REPORT.md): a directory a session planted at a
 * request's or an ack's name was renamed by the runner into its own folder under `.agentteams/`
 * (`queue-claimed/`, `acks-claimed/`), where it stayed until the runner removed it. A session
 * process whose working directory (or an open directory handle) is inside that directory then
 * reaches `.agentteams/` by `..`: the path-based deny rules never see it (the process never names
 * `.agentteams`), and a read-only mount over `.agentteams/` in a session sandbox is not crossed by
 * going up from below it. From there it reads the claimed requests (raw nonces in transit), the
 * ledger and the dispatch store, and writes where only the runner writes.
 *
 * The session's process here is a Perl loop that sits in the planted directory and watches its
 * parent: the moment the parent is no longer the queue folder it steps up twice and writes
 * `ESCAPED` there. With the fix the runner never moves a directory out of a session folder: it is
 * refused where it stands (recorded once), so the loop only ever sees the queue folder.
 *
 * Run through a real runner launched with the flags `agentteams permissions serve` prints.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld, type World } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import {
  handRequest,
  openAs,
  requestId,
  resultOf,
  runnerBrief,
  until,
  withRunner,
} from "../runner/_runner_helpers.ts";

const PERL = "/usr/bin/perl";

/**
 * The session's process: its working directory is `dir`; it watches `..` until it is the queue
 * folder (inode `queueIno`), then until it is no longer (the directory was moved on), then goes up
 * twice and writes `ESCAPED` there. Prints `escaped <cwd inode>` when it did, `held` when `ms`
 * passed first.
 */
const WATCH = String.raw`
use strict; use warnings; use Time::HiRes qw(time);
my ($dir, $queue, $ms) = @ARGV;
chdir($dir) or die "chdir: $!";
my $end = time() + $ms / 1000;
my $queued = 0;
while (time() < $end) {
  my @s = stat("..");
  next unless @s;
  if ($s[1] == $queue) { $queued = 1; next; }
  if ($queued) {
    chdir("..") or next;
    chdir("..") or next;
    if (open(my $f, ">", "ESCAPED")) { print $f "written by the session\n"; close($f); }
    my @here = stat(".");
    print "escaped $here[1]\n";
    exit 0;
  }
}
print "held\n";
`;

/**
 * Makes the directory outside the queue, starts the session's process in it, and once the process
 * sits there renames the directory to `at` (a session can: it writes the queue folder).
 */
async function plantWatched(
  w: World,
  at: string,
  ms: number,
): Promise<{ p: Deno.ChildProcess; ino: number }> {
  const dir = join(w.scratch, `planted-${crypto.randomUUID()}`);
  Deno.mkdirSync(dir);
  const queueIno = Deno.lstatSync(join(at, "..")).ino!;
  const p = new Deno.Command(PERL, {
    args: ["-e", WATCH, dir, String(queueIno), String(ms)],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await until(() => {
    try {
      return Deno.readLinkSync(`/proc/${p.pid}/cwd`) === dir;
    } catch {
      return false;
    }
  }, "the session's process in its directory");
  const ino = Deno.lstatSync(dir).ino!;
  Deno.renameSync(dir, at);
  return { p, ino };
}

async function outcome(p: Deno.ChildProcess): Promise<string> {
  const o = await p.output();
  return new TextDecoder().decode(o.stdout).trim() + new TextDecoder().decode(o.stderr);
}

function assertHeld(w: World, said: string, what: string): void {
  const state = join(w.project, ".agentteams");
  assert.equal(said, "held", `${what}: the session's process reached ${said}`);
  assert.throws(() => Deno.lstatSync(join(state, "ESCAPED")), Deno.errors.NotFound);
  assert.throws(
    () => Deno.lstatSync(join(state, "queue-claimed", "ESCAPED")),
    Deno.errors.NotFound,
  );
}

Deno.test("a directory at a request's name is never moved into .agentteams/: a session process inside it does not reach the runner's state by ..; refused where it stands, recorded, the runner keeps serving", async () => {
  await withWorld("p22c-claimed-dir", { brief: runnerBrief }, async (w) => {
    await w.dispatchBeforeBriefChanged("worker");
    await withRunner(w, async () => {
      const q = queuePaths(w.project);
      const name = `${requestId("0")}.json`;
      const planted = join(q.requests, name);
      const n = w.rows().length;
      const { p, ino } = await plantWatched(w, planted, 8_000);
      await until(
        () =>
          w.rows().slice(n).some((r) =>
            r.action === "runner-request-refused" && String(r.reason ?? "").includes(name)
          ),
        "a runner-request-refused row naming the planted directory",
      );
      // Still serving, and the directory still where the session put it, never moved.
      const next = await handRequest(w, { kind: "verify-ledger" });
      assert.equal((await openAs(w, next, await resultOf(w, next.id))).body.ok, true);
      assertHeld(w, await outcome(p), "a directory at a request's name");
      assert.equal(Deno.lstatSync(planted).ino, ino, "the planted directory was moved");
      // Recorded once, not on every pass.
      const rows = w.rows().slice(n).filter((r) =>
        r.action === "runner-request-refused" && String(r.reason ?? "").includes(name)
      );
      assert.equal(rows.length, 1, JSON.stringify(rows));
      Deno.removeSync(planted);
    });
  });
});

Deno.test("a directory at an ack's name is never moved into .agentteams/: a session process inside it does not reach the runner's state by ..; refused, recorded once, the result stays", async () => {
  await withWorld("p22c-claimed-ack-dir", { brief: runnerBrief }, async (w) => {
    await w.dispatchBeforeBriefChanged("worker");
    await withRunner(w, async () => {
      const q = queuePaths(w.project);
      const req = await handRequest(w, { kind: "verify-ledger" });
      const text = await resultOf(w, req.id);
      const planted = join(q.acks, req.id);
      const n = w.rows().length;
      const { p, ino } = await plantWatched(w, planted, 8_000);
      await until(
        () => w.rows().slice(n).some((r) => r.action === "runner-ack-refused" && r.id === req.id),
        "a runner-ack-refused row",
      );
      assertHeld(w, await outcome(p), "a directory at an ack's name");
      assert.equal(Deno.lstatSync(planted).ino, ino, "the planted directory was moved");
      assert.equal(Deno.readTextFileSync(join(q.results, `${req.id}.json`)), text);
      assert.equal((await openAs(w, req, text)).body.ok, true);
      Deno.removeSync(planted);
    });
  });
});
