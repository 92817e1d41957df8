/**
 * Running one program in its own process group with captured, capped output, optional stdin,
 * a timeout that kills the whole group, and a bound on waiting for output after the program
 * exits. Generic: command requests, proposal gates and confined (bwrap-wrapped) commands all use it.
 *
 * Process model (verified on Deno 2.9.6, Linux): `Deno.Command` with `detached: true` starts the
 * child with `setsid()`, so the child leads a new session and a new process group whose id is its
 * pid (`/proc/<pid>/stat` shows pgrp = session = pid). `Deno.kill(-pgid, "SIGKILL")` passes the
 * negative pid to `kill(2)`, signalling the whole group.
 *
 * After the direct child exits:
 * 1. live members left in its group (zombies excluded, read from `/proc` on Linux) are killed and
 *    reported as `survivors`;
 * 2. output is drained for at most `drainMs`. A process that left the group (`setsid`) and still
 *    holds the pipes is then reported as a survivor too; on Linux the holders of the child's pipes
 *    are found through `/proc/*\/fd` and killed, elsewhere reading just stops.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runProcess } from "./spawn.ts";
 * const r = await runProcess({ program: "/bin/echo", args: ["hi"], cwd: "/tmp", env: {}, timeoutMs: 5000 });
 * assert.equal(r.exit, 0);
 * assert.equal(new TextDecoder().decode(r.stdout), "hi\n");
 * ```
 * @module
 */

import { SETSID_PATH } from "../host/programs.ts";
import { RequestError } from "../errors.ts";
import { captureStream, MAX_OUTPUT_BYTES } from "./output.ts";
import {
  escapedPipeHolders,
  liveGroupMembers,
  ownPipeInodes,
  pipeHolders,
  pipeInodesOf,
} from "./procfs.ts";
import { diskFs, isExecutable } from "./resolve_program.ts";
import { after } from "../time/after.ts";

/** How long to wait for the pipes to close after the direct child exits (ms). */
export const DEFAULT_DRAIN_MS = 2000;

let launcherChecked: string | null | undefined;

/**
 * {@link SETSID_PATH} when it is an executable regular file this process may stat and run, else
 * `null` (macOS, or narrow permissions without it): then Deno's `detached` spawn is used. Checked
 * once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultSessionLauncher } from "./spawn.ts";
 * assert.match(defaultSessionLauncher() ?? "none", /\/setsid$|^none$/); // "/usr/bin/setsid" on Debian
 * ```
 */
export function defaultSessionLauncher(): string | null {
  if (launcherChecked === undefined) {
    // Flags that do not let this process run it: Deno's own detached spawn needs nothing more.
    const mayRun = Deno.permissions.querySync({ name: "run", command: SETSID_PATH }).state ===
      "granted";
    try {
      launcherChecked = mayRun && isExecutable(diskFs, SETSID_PATH) ? SETSID_PATH : null;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotCapable)) throw e;
      launcherChecked = null;
    }
  }
  return launcherChecked;
}

/**
 * The refusal for a program that cannot be started (`e`: what the stat or the spawn threw). Deno's
 * `NotCapable` (the launch flags do not grant it) passes through as itself.
 */
function cannotStart(program: string, e: unknown): Error {
  if (e instanceof Deno.errors.NotCapable) return e;
  const code = e instanceof Deno.errors.NotFound ? "PROGRAM_NOT_FOUND" : "SPAWN_FAILED";
  return new RequestError(code, `cannot start ${program}: ${String(e)}`, { cause: e });
}

/** Refuses, as the spawn itself would, a program that is missing or cannot be executed. */
function checkStartable(program: string): void {
  let st: Deno.FileInfo;
  try {
    st = Deno.statSync(program);
  } catch (e) {
    throw cannotStart(program, e);
  }
  if (!st.isFile || ((st.mode ?? 0) & 0o111) === 0) {
    throw new RequestError(
      "SPAWN_FAILED",
      `cannot start ${program}: not an executable file`,
    );
  }
}

/** What to run. */
export interface RunSpec {
  /** Absolute path of the program (already resolved). */
  readonly program: string;
  /** Arguments after the program. */
  readonly args: readonly string[];
  /** Working directory (absolute). */
  readonly cwd: string;
  /** The child's whole environment (nothing is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /** Bytes for stdin; `null`/absent gives the child `/dev/null`. */
  readonly stdin?: Uint8Array | null;
  /** Kill the group after this many milliseconds. */
  readonly timeoutMs: number;
  /** Bytes kept per output stream (default 256 KiB). */
  readonly capBytes?: number;
  /** Bound on draining output after the direct child exits (default 2000 ms). */
  readonly drainMs?: number;
  /**
   * A `setsid`-style program that starts `program` in a new session (default
   * {@link defaultSessionLauncher}); `null` uses Deno's `detached` spawn.
   */
  readonly launcher?: string | null;
}

/** How a run ended. */
export interface RunResult {
  /** Exit code; negative is the signal that ended it (`-9` for SIGKILL); `null` if unknown. */
  readonly exit: number | null;
  /** Captured stdout (at most `capBytes`). */
  readonly stdout: Uint8Array;
  /** Captured stderr (at most `capBytes`). */
  readonly stderr: Uint8Array;
  /** True when either stream had more than `capBytes`. */
  readonly truncated: boolean;
  /** True when the timeout fired. */
  readonly timedOut: boolean;
  /** True when a SIGKILL to the process group was delivered (timeout or leftover members). */
  readonly groupKilled: boolean;
  /** True when something outlived the direct child (group members, or holders of its pipes). */
  readonly survivors: boolean;
  /** Wall time from spawn to return, in whole milliseconds. */
  readonly durationMs: number;
}

const COMMON_SIGNALS: Readonly<Record<string, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
};

/**
 * Maps a Deno child status to one exit number: the code, or minus the signal number.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exitOf } from "./spawn.ts";
 * assert.equal(exitOf({ success: false, code: 137, signal: "SIGKILL" }), -9);
 * assert.equal(exitOf({ success: false, code: 2, signal: null }), 2);
 * ```
 */
export function exitOf(status: Deno.CommandStatus): number | null {
  if (status.signal === null) return status.code;
  if (status.code > 128) return -(status.code - 128);
  const n = COMMON_SIGNALS[status.signal];
  return n === undefined ? null : -n;
}

function signalGroup(pgid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

function killPid(pid: number): void {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Settles true when `p` settles within `ms`, false otherwise. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let cancel = (): void => {};
  const late = new Promise<boolean>((resolve) => {
    cancel = after(ms, () => resolve(false));
  });
  try {
    return await Promise.race([p.then(() => true, () => true), late]);
  } finally {
    cancel();
  }
}

async function feed(stream: WritableStream<Uint8Array>, bytes: Uint8Array): Promise<void> {
  const writer = stream.getWriter();
  try {
    if (bytes.length > 0) await writer.write(bytes);
    await writer.close();
  } catch {
    // The child closed its stdin early; that is its business.
  }
}

/**
 * Leftover members of the group after the direct child exited: kill them. Returns whether any
 * live member was found (on systems without `/proc`, any member at all).
 */
function reapGroup(pgid: number): { survivors: boolean; killed: boolean } {
  // SIGCONT as a probe: harmless, and ESRCH tells an empty group cheaply.
  if (!signalGroup(pgid, "SIGCONT")) return { survivors: false, killed: false };
  const live = liveGroupMembers(pgid);
  if (live !== null && live.length === 0) return { survivors: false, killed: false };
  return { survivors: true, killed: signalGroup(pgid, "SIGKILL") };
}

/**
 * Runs a program and reports how it ended. Throws `RequestError` `SPAWN_FAILED` (or
 * `PROGRAM_NOT_FOUND`) when it cannot be started; never throws for how the program behaves.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runProcess } from "./spawn.ts";
 * const r = await runProcess({
 *   program: "/bin/sleep", args: ["10"], cwd: "/", env: {}, timeoutMs: 100,
 * });
 * assert.equal(r.timedOut, true);
 * assert.equal(r.exit, -9);
 * ```
 */
export async function runProcess(spec: RunSpec): Promise<RunResult> {
  const cap = spec.capBytes ?? MAX_OUTPUT_BYTES;
  const drainMs = spec.drainMs ?? DEFAULT_DRAIN_MS;
  const hasStdin = spec.stdin !== undefined && spec.stdin !== null;
  const started = performance.now();
  const launcher = spec.launcher === undefined ? defaultSessionLauncher() : spec.launcher;
  // Through a launcher, a program that cannot start would only show as its exit 126/127: check
  // first, so it is the same typed refusal either way.
  if (launcher !== null) checkStartable(spec.program);
  let child: Deno.ChildProcess;
  let ownBefore: Set<number> | null = null;
  try {
    ownBefore = ownPipeInodes();
    child = new Deno.Command(launcher ?? spec.program, {
      args: launcher === null ? [...spec.args] : ["--", spec.program, ...spec.args],
      cwd: spec.cwd,
      env: { ...spec.env },
      clearEnv: true,
      stdin: hasStdin ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
      detached: launcher === null,
    }).spawn();
  } catch (e) {
    throw cannotStart(spec.program, e);
  }
  const pgid = child.pid;
  // The child's output pipes: read from its /proc entry, or, when it already exited, as the pipes
  // this process gained with the spawn.
  let pipes = pipeInodesOf(pgid) ?? [];
  let pipesExact = pipes.length > 0;
  if (!pipesExact && ownBefore !== null) {
    const after = ownPipeInodes() ?? new Set<number>();
    pipes = [...after].filter((i) => !ownBefore.has(i));
    // Exactly this spawn's pipes appeared, or also those of spawns made at the same moment (by
    // other code in this process): then only holders that escaped a spawn are killed, never a
    // process of a spawn still running.
    pipesExact = pipes.length === (hasStdin ? 3 : 2);
  }
  const out = captureStream(child.stdout, cap);
  const err = captureStream(child.stderr, cap);
  const stdinDone = hasStdin ? feed(child.stdin, spec.stdin as Uint8Array) : Promise.resolve();
  let timedOut = false;
  let groupKilled = false;
  const cancelTimer = after(spec.timeoutMs, () => {
    timedOut = true;
    if (signalGroup(pgid, "SIGKILL")) groupKilled = true;
  });
  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    cancelTimer();
  }
  let survivors = false;
  if (!timedOut) {
    const left = reapGroup(pgid);
    survivors = left.survivors;
    groupKilled ||= left.killed;
  }
  const io = Promise.all([out.done, err.done, stdinDone]);
  if (!await within(io, drainMs)) {
    survivors = true;
    const holders = (pipesExact ? pipeHolders(pipes, [Deno.pid]) : escapedPipeHolders(pipes)) ??
      [];
    holders.forEach(killPid);
    signalGroup(pgid, "SIGKILL");
    if (holders.length === 0 || !await within(io, 500)) {
      await out.cancel();
      await err.cancel();
    }
  }
  const o = out.result();
  const e = err.result();
  return {
    exit: exitOf(status),
    stdout: o.bytes,
    stderr: e.bytes,
    truncated: o.truncated || e.truncated,
    timedOut,
    groupKilled,
    survivors,
    durationMs: Math.round(performance.now() - started),
  };
}
