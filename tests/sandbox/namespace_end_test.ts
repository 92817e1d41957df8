/**
 * A confined run ends when its sandbox does: bwrap reports the command's exit before its PID
 * namespace is gone, so a job the command left running there could write for a moment after
 * bwrap returned (after the run's after-snapshot). executeRun waits for the namespace's init
 * (bwrap's --info-fd names it) to end; once it returned, nothing of the sandbox writes again.
 */
import assert from "node:assert/strict";
import { runConfined } from "../../lib/sandbox/execute.ts";
import { awaitNamespaceEnd, initPidOf, NAMESPACE_END_MS } from "../../lib/sandbox/namespace_end.ts";
import { confineArgv } from "../../lib/sandbox/launch.ts";
import { makePrivateTmpdir, removePrivateTmpdir } from "../../lib/sandbox/run_dir.ts";
import { makeFixture, planFor, requireProgram } from "./_helpers.ts";

Deno.test("a background job the command left writing is dead when the run returns; the info file is gone", async () => {
  requireProgram("/usr/bin/bwrap");
  const fx = makeFixture();
  const tmpdir = makePrivateTmpdir();
  try {
    const beat = `${fx.project}/build/beat`;
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
          "(while :; do echo x >> build/beat; done) </dev/null >/dev/null 2>&1 & " +
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
      await new Promise((res) => setTimeout(res, 150));
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

/** A process's state letter, or `gone`; a zombie (`Z`) has ended, only its entry is left. */
function stateOf(pid: number): string {
  return readOr(`/proc/${pid}/stat`).split(") ")[1]?.[0] ?? "gone";
}

function readOr(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

Deno.test("awaitNamespaceEnd waits for the sandbox's init named by --info-fd, and removes the file", async () => {
  const run = await startWithInfo(["/usr/bin/sleep", "0.6"]);
  try {
    // The init is another PID namespace's, alive now.
    assert.notEqual(
      Deno.readLinkSync(`/proc/${run.pid}/ns/pid`),
      Deno.readLinkSync("/proc/self/ns/pid"),
    );
    const t = performance.now();
    assert.equal(await awaitNamespaceEnd(run.info), true);
    assert.ok(performance.now() - t > 300, "it waited for the sleep to end");
    assert.ok(["Z", "gone"].includes(stateOf(run.pid)), stateOf(run.pid));
    assert.throws(() => Deno.lstatSync(run.info), Deno.errors.NotFound);
  } finally {
    await run.done();
  }
});

Deno.test("a sandbox that does not end within the bound is killed (its init, hence all of it)", async () => {
  const run = await startWithInfo(["/usr/bin/sleep", "60"]);
  try {
    const t = performance.now();
    assert.equal(await awaitNamespaceEnd(run.info), true);
    const took = performance.now() - t;
    assert.ok(took >= NAMESPACE_END_MS && took < NAMESPACE_END_MS + 3000, `${took} ms`);
    assert.ok(["Z", "gone"].includes(stateOf(run.pid)), stateOf(run.pid));
  } finally {
    await run.done();
  }
});
