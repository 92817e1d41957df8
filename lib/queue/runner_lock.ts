/**
 * The runner's exclusive lock: `.agentteams/runner.lock`, held with `flock` (`lib/fs/flock.ts`)
 * for the runner's life and never deleted; it holds the holder's pid, so a second runner can name
 * the first.
 *
 * @module
 */
import { QueueError } from "../errors.ts";
import { checkStatePath } from "../layout.ts";
import { takeFlock } from "../fs/flock.ts";

/** How long a second runner waits for the lock before it refuses. */
export const LOCK_WAIT_MS = 300;

/** A held runner lock. */
export interface RunnerLock {
  /** Releases the lock (the file stays). */
  release(): void;
}

/**
 * Takes the runner lock, or refuses (`RUNNER_RUNNING`) naming the pid of the runner holding it.
 *
 * @throws {QueueError} `RUNNER_RUNNING`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { takeRunnerLock } from "./runner_lock.ts";
 * const dir = Deno.makeTempDirSync();
 * const lock = await takeRunnerLock(`${dir}/runner.lock`, Deno.pid);
 * assert.ok(Deno.statSync(`${dir}/runner.lock`).isFile);
 * lock.release();
 * ```
 */
export async function takeRunnerLock(path: string, pid: number): Promise<RunnerLock> {
  checkStatePath(path, "file");
  // Deno has no non-blocking flock: the wait is bounded instead. A lock still pending when this
  // process refuses and exits goes with it.
  const lock = await takeFlock(path, {
    target: "file",
    waitMs: LOCK_WAIT_MS,
    onChanged: (p) => checkStatePath(p, "file"),
  });
  if (lock === null) {
    let holder = "";
    try {
      holder = new TextDecoder().decode(Deno.readFileSync(path)).trim();
    } catch { /* unreadable: named as unknown below */ }
    throw new QueueError(
      "RUNNER_RUNNING",
      `another runner already serves this project (pid ${
        /^[0-9]+$/.test(holder) ? holder : "unknown"
      }` +
        `, holding ${path}); stop it first, or use it`,
      { details: { pid: /^[0-9]+$/.test(holder) ? Number(holder) : null } },
    );
  }
  // Opened for append: once emptied, the pid is written at its start.
  lock.file.truncateSync(0);
  lock.file.writeSync(new TextEncoder().encode(`${pid}\n`));
  lock.file.syncSync();
  return { release: () => lock.release() };
}
