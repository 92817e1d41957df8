/**
 * The queue's directories: each a real directory (never a symlink, whose target a session could
 * choose), made when missing with its mode. Checked at start and again before every use, since a
 * session may replace one at any time.
 *
 * @module
 */
import { describeKind, lstatOrNullSync } from "../fs/entry.ts";
import { fsyncDirSync } from "../fs/atomic_write.ts";
import { dirname } from "../fs/path.ts";
import { QueueError } from "../errors.ts";
import type { QueuePaths } from "./queue_paths.ts";

/**
 * Refuses (`QUEUE_UNSAFE_PATH`) a path that exists and is not a real directory; true when it is
 * one, false when missing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isQueueDir } from "./dirs.ts";
 * assert.equal(isQueueDir(Deno.makeTempDirSync()), true);
 * assert.equal(isQueueDir("/nonexistent-agentteams"), false);
 * ```
 */
export function isQueueDir(path: string): boolean {
  const st = lstatOrNullSync(path);
  if (st === null) return false;
  if (!st.isDirectory) {
    throw new QueueError(
      "QUEUE_UNSAFE_PATH",
      `${path} is ${describeKind(st)}, not a directory; refused (the runner writes only into ` +
        "real directories it checked; remove it and restart agentteams serve)",
      { details: { path } },
    );
  }
  return true;
}

/**
 * Makes a directory when missing (with `mode`), then checks it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ensureQueueDir } from "./dirs.ts";
 * const d = Deno.makeTempDirSync() + "/q";
 * ensureQueueDir(d, 0o755);
 * assert.equal(Deno.statSync(d).isDirectory, true);
 * ```
 */
export function ensureQueueDir(path: string, mode: number): void {
  if (isQueueDir(path)) return;
  try {
    Deno.mkdirSync(path, { mode });
    Deno.chmodSync(path, mode);
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  }
  isQueueDir(path);
  fsyncDirSync(dirname(path));
}

/**
 * Every directory the runner uses, made and checked (the runner's own under `.agentteams/` 0700;
 * the sessions' request folders and the status folder their default mode). What the runner
 * writes there is never a command's undeclared write (`isRuntimeWrite` in the control plane).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ensureRunnerDirs } from "./dirs.ts";
 * import { queuePaths } from "./queue_paths.ts";
 * const p = queuePaths(Deno.makeTempDirSync());
 * ensureRunnerDirs(p);
 * assert.equal(Deno.statSync(p.claimed).mode! & 0o777, 0o700);
 * ```
 */
export function ensureRunnerDirs(p: QueuePaths): void {
  for (const [dir, mode] of runnerDirs(p)) ensureQueueDir(dir, mode);
}

/** Every directory the runner uses, parents first, with the mode it is made with. */
function runnerDirs(p: QueuePaths): [string, number][] {
  return [
    [p.state, 0o700],
    [p.claimed, 0o700],
    [p.ackClaimed, 0o700],
    [p.queue, 0o755],
    [p.requests, 0o755],
    [p.mcpRequests, 0o755],
    [p.acks, 0o755],
    [p.status, 0o755],
    [p.results, 0o755],
  ];
}

/**
 * Checks (without making) every directory the runner uses: before each request and each write.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRunnerDirs, ensureRunnerDirs } from "./dirs.ts";
 * import { queuePaths } from "./queue_paths.ts";
 * const p = queuePaths(Deno.makeTempDirSync());
 * ensureRunnerDirs(p);
 * assert.doesNotThrow(() => checkRunnerDirs(p));
 * ```
 */
export function checkRunnerDirs(p: QueuePaths): void {
  for (const [d] of runnerDirs(p)) {
    if (!isQueueDir(d)) {
      throw new QueueError("QUEUE_UNSAFE_PATH", `${d} disappeared while serving; refused`, {
        details: { path: d },
      });
    }
  }
}
