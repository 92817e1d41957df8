/**
 * runProcess with real processes: exit codes, signals, process groups, timeouts, escaped
 * grandchildren, output caps and stdin.
 */

import { SETSID_PATH } from "../../lib/host/programs.ts";
import assert from "node:assert/strict";
import { RequestError } from "../../lib/errors.ts";
import { MAX_OUTPUT_BYTES } from "../../lib/process/output.ts";
import {
  defaultSessionLauncher,
  exitOf,
  runProcess,
  type RunSpec,
} from "../../lib/process/spawn.ts";
import {
  escapedPipeHolders,
  isEscapee,
  parseProcStat,
  pipeHolders,
  pipeInodesOf,
} from "../../lib/process/procfs.ts";
import { assertRefusal } from "../_helpers/assert.ts";

const SH = "/bin/sh";
const ENV = { PATH: "/usr/bin:/bin" };
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Runs `/bin/sh -c script` with a PATH-only env in `/` (10 s guard) unless `opts` says otherwise. */
function sh(script: string, opts: Partial<RunSpec> = {}) {
  return runProcess({
    program: SH,
    args: ["-c", script],
    cwd: "/",
    env: ENV,
    timeoutMs: 10_000,
    ...opts,
  });
}

function requireProgram(path: string): void {
  if (!Deno.statSync(path).isFile) throw new Error(`${path} is required by this test`);
}

function alive(pid: number): boolean {
  try {
    const st = parseProcStat(Deno.readTextFileSync(`/proc/${pid}/stat`));
    return st !== null && st.state !== "Z" && st.state !== "X";
  } catch {
    return false;
  }
}

/**
 * Waits until `pid` is no longer a live process. A hang guard, not a timing check: the test fails
 * only when `pid` is still alive after `boundMs` (generous). A process waited on here must not be
 * able to end by itself within the bound (it sleeps far longer), or a survivor would pass.
 */
async function waitGone(pid: number, what: string, boundMs = 60_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (alive(pid)) {
    if (Date.now() >= end) {
      assert.fail(`hang guard: ${what} (pid ${pid}) still alive after ${boundMs / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function killQuietly(pid: number): void {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

async function tempDir(): Promise<string> {
  return Deno.realPathSync(await Deno.makeTempDir({ prefix: "at-proc-" }));
}

Deno.test("exit codes pass through", async () => {
  for (const code of [0, 1, 7, 255]) {
    const r = await sh(`exit ${code}`);
    assert.equal(r.exit, code);
    assert.equal(r.timedOut, false);
    assert.equal(r.survivors, false);
    assert.equal(r.groupKilled, false);
    assert.ok(Number.isInteger(r.durationMs) && r.durationMs >= 0);
  }
});

Deno.test("death by a signal gives a negative exit", async () => {
  const term = await sh("kill -TERM $$");
  assert.equal(term.exit, -15);
  const kill = await sh("kill -KILL $$");
  assert.equal(kill.exit, -9);
  assert.equal(exitOf({ success: false, code: 139, signal: "SIGSEGV" }), -11);
  assert.equal(exitOf({ success: false, code: 0, signal: "SIGTERM" }), -15);
});

Deno.test("both spawn paths give the child its own session and group (pid = pgid = sid)", async () => {
  requireProgram("/bin/cat");
  assert.equal(defaultSessionLauncher(), SETSID_PATH, "util-linux setsid is expected here");
  const ownPgrp = parseProcStat(Deno.readTextFileSync("/proc/self/stat"))?.pgrp;
  for (const launcher of [undefined, null] as const) {
    const how = launcher === null ? "detached" : "setsid";
    const r = await runProcess({
      program: "/bin/cat",
      args: ["/proc/self/stat"],
      cwd: "/",
      env: ENV,
      timeoutMs: 10_000,
      launcher,
    });
    assert.equal(r.exit, 0);
    const statText = text(r.stdout);
    const pid = Number(statText.split(" ")[0]);
    const st = parseProcStat(statText);
    assert.ok(st !== null);
    assert.equal(st.pgrp, pid, `pgid is the child's pid (${how})`);
    assert.equal(st.session, pid, `the child leads a new session (${how})`);
    assert.notEqual(st.ppid, pid);
    assert.notEqual(st.pgrp, ownPgrp);
  }
});

Deno.test("cwd and env are exactly what was given", async () => {
  requireProgram("/usr/bin/env");
  const dir = await tempDir();
  try {
    const r = await runProcess({
      program: "/usr/bin/env",
      args: [],
      cwd: dir,
      env: { ONLY: "this" },
      timeoutMs: 10_000,
    });
    assert.equal(text(r.stdout), "ONLY=this\n");
    const pwd = await sh("pwd -P", { cwd: dir });
    assert.equal(text(pwd.stdout), `${dir}\n`);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("timeout kills the whole group; the orphan never writes its marker", async () => {
  const dir = await tempDir();
  try {
    const marker = `${dir}/marker`;
    const r = await sh(`(sleep 2; echo late > '${marker}') & echo $! > '${dir}/child'; sleep 60`, {
      cwd: dir,
      timeoutMs: 700,
    });
    assert.equal(r.timedOut, true);
    assert.equal(r.groupKilled, true);
    assert.equal(r.exit, -9);
    const child = Number(Deno.readTextFileSync(`${dir}/child`).trim());
    // Were it not killed, it would end by itself after 2 s, having written the marker first; so
    // once it has ended, a missing marker is the proof (no sleeping past its delay).
    await waitGone(child, "the background child");
    assert.throws(() => Deno.statSync(marker), Deno.errors.NotFound);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a setsid grandchild holding the pipes does not hang the run and is reported", async () => {
  requireProgram("/usr/bin/setsid");
  const dir = await tempDir();
  let escaped = 0;
  try {
    const r = await sh(
      `/usr/bin/setsid /bin/sh -c 'echo $$ > "${dir}/pid"; exec sleep 600' & ` +
        `while [ ! -s "${dir}/pid" ]; do sleep 0.05; done; echo started`,
      { cwd: dir, timeoutMs: 20_000, drainMs: 500 },
    );
    escaped = Number(Deno.readTextFileSync(`${dir}/pid`).trim());
    assert.equal(r.exit, 0);
    assert.equal(r.timedOut, false);
    assert.equal(r.survivors, true);
    assert.equal(text(r.stdout), "started\n");
    assert.ok(escaped > 0);
    // On Linux the holder of the pipes is found through /proc and killed (it sleeps 600 s).
    await waitGone(escaped, "the escaped process holding the pipes, not killed");
  } finally {
    if (escaped > 0) killQuietly(escaped);
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("escapedPipeHolders: among holders of several spawns' pipes, only the setsid escapee", async () => {
  requireProgram("/usr/bin/setsid");
  const self = { pid: 100, session: 90 };
  assert.equal(isEscapee({ state: "S", ppid: 1, pgrp: 7, session: 7 }, self, new Set()), true);
  assert.equal(isEscapee({ state: "S", ppid: 100, pgrp: 7, session: 7 }, self, new Set()), false);
  assert.equal(isEscapee({ state: "S", ppid: 1, pgrp: 7, session: 90 }, self, new Set()), false);
  assert.equal(isEscapee({ state: "S", ppid: 1, pgrp: 8, session: 7 }, self, new Set([7])), false);
  const dir = await tempDir();
  // A running spawn (a child of this process, leading its own session) and an escapee from a
  // spawn that already exited (`setsid -f` forks it off and returns), each holding its own pipes.
  const running = new Deno.Command("/bin/sleep", {
    args: ["30"],
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  let escaped = 0;
  try {
    const holder = new Deno.Command("/usr/bin/setsid", {
      args: ["-f", "/bin/sh", "-c", `echo $$ > "${dir}/pid2"; exec sleep 30`],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    await holder.status;
    while (!exists(`${dir}/pid2`) || Deno.readTextFileSync(`${dir}/pid2`).trim() === "") {
      await new Promise((res) => setTimeout(res, 20));
    }
    escaped = Number(Deno.readTextFileSync(`${dir}/pid2`).trim());
    const inodes = [...(pipeInodesOf(running.pid) ?? []), ...(pipeInodesOf(escaped) ?? [])];
    assert.equal(inodes.length, 4, "both processes hold two pipes");
    assert.deepEqual(pipeHolders(inodes, [Deno.pid])?.sort(), [running.pid, escaped].sort());
    assert.deepEqual(escapedPipeHolders(inodes), [escaped], "the running spawn is spared");
    await holder.stdout.cancel();
    await holder.stderr.cancel();
  } finally {
    if (escaped > 0) killQuietly(escaped);
    killQuietly(running.pid);
    await running.status;
    await running.stdout.cancel();
    await running.stderr.cancel();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a background member left in the group is killed and reported", async () => {
  const dir = await tempDir();
  let bg = 0;
  try {
    const r = await sh(`sleep 600 >/dev/null 2>&1 & echo $! > '${dir}/bg'; exit 0`, {
      cwd: dir,
      timeoutMs: 20_000,
    });
    assert.equal(r.exit, 0);
    assert.equal(r.survivors, true);
    assert.equal(r.groupKilled, true);
    bg = Number(Deno.readTextFileSync(`${dir}/bg`).trim());
    await waitGone(bg, "the leftover sleep, not killed");
  } finally {
    if (bg > 0) killQuietly(bg);
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("output is capped at 256 KiB per stream with a truncated flag, and the child never blocks", async () => {
  requireProgram("/usr/bin/head");
  const r = await sh(
    "head -c 1048576 /dev/zero; head -c 300000 /dev/zero >&2; echo done >&2; exit 0",
    { timeoutMs: 30_000 },
  );
  assert.equal(r.exit, 0, "the child ran to completion");
  assert.equal(r.timedOut, false);
  assert.equal(r.stdout.length, MAX_OUTPUT_BYTES);
  assert.equal(r.stderr.length, MAX_OUTPUT_BYTES);
  assert.equal(r.truncated, true);
  const small = await sh("printf 0123456789", { capBytes: 4 });
  assert.equal(text(small.stdout), "0123");
  assert.equal(small.truncated, true);
  const exact = await sh("printf 0123", { capBytes: 4 });
  assert.equal(text(exact.stdout), "0123");
  assert.equal(exact.truncated, false);
});

Deno.test("stdin bytes are delivered; without stdin the child reads /dev/null", async () => {
  requireProgram("/bin/cat");
  const payload = new Uint8Array(200_000).map((_, i) => i % 251);
  const r = await runProcess({
    program: "/bin/cat",
    args: [],
    cwd: "/",
    env: ENV,
    stdin: payload,
    timeoutMs: 20_000,
  });
  assert.equal(r.exit, 0);
  assert.deepEqual(r.stdout, payload);
  const none = await runProcess({
    program: "/bin/cat",
    args: [],
    cwd: "/",
    env: ENV,
    timeoutMs: 20_000,
  });
  assert.equal(none.exit, 0);
  assert.equal(none.stdout.length, 0);
  const ignored = await sh("exit 0", { stdin: payload, timeoutMs: 20_000 });
  assert.equal(ignored.exit, 0, "a child that never reads its stdin does not hang the run");
});

Deno.test("a program that cannot start is a typed refusal, through the launcher or not", async () => {
  const dir = await tempDir();
  try {
    const plain = `${dir}/not-executable`;
    Deno.writeTextFileSync(plain, "#!/bin/sh\ntouch ran\n", { mode: 0o644 });
    Deno.chmodSync(plain, 0o644);
    for (const launcher of [undefined, SETSID_PATH, null] as const) {
      const how = `launcher ${launcher}`;
      const refused = (program: string, code: string) =>
        assertRefusal(
          () => runProcess({ program, args: [], cwd: dir, env: ENV, timeoutMs: 1000, launcher }),
          code,
          RequestError,
          `${program} (${how})`,
        );
      await refused("/nonexistent/prog", "PROGRAM_NOT_FOUND");
      await refused(plain, "SPAWN_FAILED");
      assert.throws(() => Deno.statSync(`${dir}/ran`), Deno.errors.NotFound, how);
      await refused("/etc", "SPAWN_FAILED");
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a finished run leaves no timer that keeps the process alive", async () => {
  // An embedding program ends as soon as its run does, not when the run's timeout would have
  // fired (here in an hour; the hang guard kills it after 120 s and fails the test).
  const program = `import { runProcess } from ${
    JSON.stringify(new URL("../../lib/process/spawn.ts", import.meta.url).href)
  };
const r = await runProcess({ program: "/bin/true", args: [], cwd: "/", env: {}, timeoutMs: 3_600_000 });
console.log(r.exit);`;
  const dir = await tempDir();
  try {
    Deno.writeTextFileSync(`${dir}/embed.ts`, program);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "--no-check", "--no-config", `${dir}/embed.ts`],
      signal: AbortSignal.timeout(120_000),
    }).output();
    assert.equal(
      out.signal,
      null,
      "hang guard: the embedding process was still alive after 120 s (a timer kept it alive)",
    );
    assert.equal(out.code, 0, text(out.stderr));
    assert.equal(text(out.stdout).trim(), "0");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
