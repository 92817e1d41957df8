/**
 * A confined run ends when its sandbox does: bwrap reports the command's exit before its PID
 * namespace is gone, so a job the command left running there could write for a moment after
 * bwrap returned (after the run's after-snapshot). executeRun waits for the namespace's init
 * (bwrap's --info-fd names it) to end; once it returned, nothing of the sandbox writes again.
 * No timing is asserted: each test looks at the event itself (the processes' end in /proc, a
 * marker the command writes only when it was not killed).
 */
import assert from "node:assert/strict";
import { runConfined } from "../../lib/sandbox/confined_run.ts";
import { awaitNamespaceEnd, initPidOf } from "../../lib/sandbox/namespace_end.ts";
import { confineArgv } from "../../lib/sandbox/wrapper_chain.ts";
import { makePrivateTmpdir, removePrivateTmpdir } from "../../lib/sandbox/run_dir.ts";
import { makeFixture, planFor, requireProgram } from "./_helpers.ts";
import { ended, livingWith } from "../_helpers/procs.ts";

Deno.test("a background job the command left writing is dead when the run returns; the info file is gone", async () => {
  requireProgram("/usr/bin/bwrap");
  const fx = makeFixture();
  const tmpdir = makePrivateTmpdir();
  try {
    const beat = `${fx.project}/build/beat`;
    // In the job's command line, so /proc shows which processes are the job's.
    const word = `job-${crypto.randomUUID()}`;
    for (let round = 0; round < 5; round++) {
      Deno.writeTextFileSync(beat, "");
      const r = await runConfined({
        project: fx.project,
        home: fx.home,
        tmpdir,
        backend: "bwrap",
        agent: { exec: ["/usr/bin", "/bin"], write: ["build"] },
        cwd: ".",
        // The job writes as fast as it can and outlives the command, which exits at once.
        argv: [
          "/bin/sh",
          "-c",
          `: ${word}; (while :; do echo x >> build/beat; done) </dev/null >/dev/null 2>&1 & ` +
          "while [ ! -s build/beat ]; do :; done; exit 0",
        ],
        env: { PATH: "/usr/bin:/bin" },
        network: false,
        protectedPaths: [],
        hiddenDirs: [fx.keyDir],
        controlPlane: { git: [] },
        timeoutMs: 20_000,
      });
      assert.equal(r.exit, 0, new TextDecoder().decode(r.stderr));
      const at = Deno.statSync(beat).size;
      assert.ok(at > 0, "the job ran");
      // The job has ended (not only stopped writing for a while): no process of it lives.
      assert.deepEqual(livingWith(word), [], `round ${round}: the job outlived the run`);
      assert.equal(Deno.statSync(beat).size, at, `round ${round}: the job wrote after the run`);
      assert.throws(() => Deno.lstatSync(`${tmpdir}.bwrap-info`), Deno.errors.NotFound);
    }
  } finally {
    removePrivateTmpdir(tmpdir);
    fx.cleanup();
  }
});

Deno.test("bwrap's info text: the child pid, or null for anything else", () => {
  assert.equal(initPidOf('{"child-pid": 77, "cgroup-namespace": 1}'), 77);
  for (
    const t of ["", "{", '{"child-pid": "77"}', '{"child-pid": 1}', "[]", '{"child-pid": 1.5}']
  ) {
    assert.equal(initPidOf(t), null, t);
  }
});

/** Starts `argv` confined with an info file, without waiting; resolves once bwrap wrote it. */
async function startWithInfo(argv: string[]) {
  const fx = makeFixture();
  const tmpdir = makePrivateTmpdir();
  const info = `${tmpdir}.bwrap-info`;
  const cmd = confineArgv(planFor(fx, argv, tmpdir), "bwrap", undefined, info);
  const child = new Deno.Command(cmd.program, {
    args: cmd.args,
    env: cmd.env,
    clearEnv: true,
    cwd: cmd.cwd,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const until = performance.now() + 10_000;
  while (initPidOf(readOr(info)) === null) {
    if (performance.now() > until) throw new Error("bwrap wrote no info");
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    info,
    project: fx.project,
    pid: initPidOf(readOr(info))!,
    done: async () => {
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await child.status;
      removePrivateTmpdir(tmpdir);
      fx.cleanup();
    },
  };
}

function readOr(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

Deno.test("awaitNamespaceEnd waits for the sandbox's init named by --info-fd, and removes the file", async () => {
  // The command writes its marker only when its sleep ran to the end (it was not killed).
  const run = await startWithInfo(["/usr/bin/sh", "-c", "sleep 0.6; touch build/ended"]);
  try {
    // The init is another PID namespace's, alive now.
    assert.notEqual(
      Deno.readLinkSync(`/proc/${run.pid}/ns/pid`),
      Deno.readLinkSync("/proc/self/ns/pid"),
    );
    assert.equal(ended(run.pid), false);
    assert.equal(await awaitNamespaceEnd(run.info), true);
    assert.ok(ended(run.pid), "the init has ended");
    assert.ok(
      Deno.statSync(`${run.project}/build/ended`).isFile,
      "it waited for the command's end",
    );
    assert.throws(() => Deno.lstatSync(run.info), Deno.errors.NotFound);
  } finally {
    await run.done();
  }
});

Deno.test("a sandbox that does not end within the bound is killed (its init, hence all of it)", async () => {
  const word = `sleeper-${crypto.randomUUID()}`;
  const run = await startWithInfo(["/usr/bin/sh", "-c", `: ${word}; sleep 60; touch build/never`]);
  try {
    assert.equal(ended(run.pid), false);
    assert.equal(await awaitNamespaceEnd(run.info), true);
    // Killed, not waited out: the init and the command are gone, and the marker was never written.
    assert.ok(ended(run.pid), "the init has ended");
    // (bwrap itself, outside the sandbox, carries the command line too: only the sandbox's
    // processes, those in another PID namespace, count.)
    const own = Deno.readLinkSync("/proc/self/ns/pid");
    const inSandbox = livingWith(word).filter((pid) => {
      try {
        return Deno.readLinkSync(`/proc/${pid}/ns/pid`) !== own;
      } catch {
        return false; // ended meanwhile
      }
    });
    assert.deepEqual(inSandbox, [], "the command outlived its sandbox");
    assert.throws(() => Deno.lstatSync(`${run.project}/build/never`), Deno.errors.NotFound);
    assert.throws(() => Deno.lstatSync(run.info), Deno.errors.NotFound);
  } finally {
    await run.done();
  }
});
