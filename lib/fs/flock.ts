/**
 * Exclusive advisory locks (`flock`), the one place the tool takes them: the triad's directory
 * lock (the project or holder workspace, which is never replaced and always exists: the triad's
 * CSV ledgers are replaced by rename on every change, so locking them would serialize nothing,
 * and locking `references/` would mean creating it even for a refused write), the
 * ledger's and dispatch store's lock files, and the runner's `runner.lock`. Every writer of the
 * same project serializes on the same inode, across processes and across implementations.
 *
 * A file target is opened (created `0600` when absent) for read and append, and refused when the
 * file opened is not the one the path names (a symlink or a swap in between). Deno has no
 * non-blocking `flock`: a caller that must not wait long gives a bounded wait instead.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withFlock } from "./flock.ts";
 * assert.equal(await withFlock(Deno.makeTempDirSync(), { target: "directory" }, () => 1), 1);
 * ```
 * @module
 */
import { lstatOrNullSync, openDirectorySync } from "./entry.ts";
import { after } from "../time/after.ts";

/** What {@link takeFlock} locks, and how long it waits. */
export interface FlockOptions {
  /**
   * `directory`: an existing directory, never created (`lstat` must show a directory, so a
   * symlink is refused); `file`: a regular file, created `0600` when absent.
   */
  readonly target: "directory" | "file";
  /** Give up after this many milliseconds (resolves `null`); absent: wait until it is held. */
  readonly waitMs?: number;
  /**
   * Called when a file target's opened file is not the one `path` names, before the refusal: a
   * caller names an unsafe path under its own code by throwing here.
   */
  readonly onChanged?: (path: string) => void;
}

/** A held lock. */
export interface Flock {
  /** The locked file or directory, open (a file target: for read and append). */
  readonly file: Deno.FsFile;
  /** Its `fstat` when it was opened. */
  readonly info: Deno.FileInfo;
  /** Unlocks and closes it (a file stays). */
  release(): void;
}

/**
 * Opens `path` as `opts.target` says and takes an exclusive lock on it, or resolves `null` when
 * `opts.waitMs` passed first. A lock still pending then stays pending on its open descriptor
 * until this process exits (Deno cannot cancel it); the caller is about to refuse and exit.
 *
 * @throws {Deno.errors.NotADirectory} a directory target that is not a directory (or a symlink)
 * @throws {Deno.errors.InvalidData} a file target whose opened file is not the one `path` names
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { takeFlock } from "./flock.ts";
 * const lock = await takeFlock(Deno.makeTempDirSync() + "/a.lock", { target: "file", waitMs: 300 });
 * assert.notEqual(lock, null); // no one else held it
 * lock?.release();
 * ```
 */
export async function takeFlock(path: string, opts: FlockOptions): Promise<Flock | null> {
  const { file, info } = openChecked(path, opts);
  if (opts.waitMs === undefined) {
    await lockOrClose(file);
    return held(file, info);
  }
  let cancel = () => {};
  const waitMs = opts.waitMs;
  const got = await Promise.race([
    file.lock(true).then(() => true),
    new Promise<boolean>((res) => {
      cancel = after(waitMs, () => res(false));
    }),
  ]);
  cancel();
  return got ? held(file, info) : null;
}

/**
 * Runs `fn` holding an exclusive lock on `path` ({@link takeFlock}, waiting as long as it takes),
 * then releases it. With `replaced`, a file target that `path` no longer names once the lock is
 * held (`fn` is not run) or once `fn` is done (what `fn` wrote stays written) throws what
 * `replaced` returns: a writer that opened the replacement holds its own lock meanwhile, so the
 * lock no longer serializes anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withFlock } from "./flock.ts";
 * const p = Deno.makeTempDirSync() + "/a.lock";
 * assert.equal(await withFlock(p, { target: "file" }, (lock) => lock.file.statSync().size), 0);
 * ```
 */
export async function withFlock<T>(
  path: string,
  opts: Omit<FlockOptions, "waitMs"> & {
    /** The refusal for a lock file removed or replaced while waited for or held. */
    readonly replaced?: (how: "removed" | "replaced", when: "waited" | "held") => Error;
  },
  fn: (lock: Flock) => T | Promise<T>,
): Promise<T> {
  const { file, info } = openChecked(path, opts);
  await lockOrClose(file);
  const lock = held(file, info);
  try {
    if (opts.replaced) stillNamed(path, lock.info, "waited", opts.replaced);
    const result = await fn(lock);
    if (opts.replaced) stillNamed(path, lock.info, "held", opts.replaced);
    return result;
  } finally {
    lock.release();
  }
}

/** Opens the target; a file target must be the file `path` names once it is open. */
function openChecked(
  path: string,
  { target, onChanged }: Omit<FlockOptions, "waitMs">,
): { file: Deno.FsFile; info: Deno.FileInfo } {
  let file: Deno.FsFile;
  if (target === "directory") {
    const st = Deno.lstatSync(path);
    if (!st.isDirectory) throw new Deno.errors.NotADirectory(`${path} is not a directory`);
    // A FIFO swapped in after the lstat is refused, not waited on.
    file = openDirectorySync(path);
  } else {
    // Opened synchronously: an async open is a round trip through the blocking thread pool
    // (~3 ms each when cold), and every ledger and dispatch operation takes a lock.
    file = Deno.openSync(path, { read: true, append: true, create: true, mode: 0o600 });
  }
  try {
    const info = file.statSync();
    if (target === "file") {
      const named = Deno.lstatSync(path);
      if (named.isSymlink || info.ino !== named.ino || !info.isFile) {
        onChanged?.(path);
        throw new Deno.errors.InvalidData(`${path} changed while being opened`);
      }
    }
    return { file, info };
  } catch (e) {
    file.close();
    throw e;
  }
}

/** Waits for the exclusive lock; closes the file when taking it fails. */
async function lockOrClose(file: Deno.FsFile): Promise<void> {
  try {
    await file.lock(true);
  } catch (e) {
    file.close();
    throw e;
  }
}

function held(file: Deno.FsFile, info: Deno.FileInfo): Flock {
  return {
    file,
    info,
    release() {
      try {
        file.unlockSync();
      } finally {
        file.close();
      }
    },
  };
}

function stillNamed(
  path: string,
  locked: Deno.FileInfo,
  when: "waited" | "held",
  replaced: (how: "removed" | "replaced", when: "waited" | "held") => Error,
): void {
  const now = lstatOrNullSync(path);
  if (now === null) throw replaced("removed", when);
  if (now.ino !== locked.ino || now.dev !== locked.dev) throw replaced("replaced", when);
}
