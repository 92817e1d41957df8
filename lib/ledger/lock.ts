/**
 * Exclusive advisory locks (`flock`) on files that are never replaced, so every writer of the
 * same project serializes on the same inode, across processes and across implementations.
 *
 * @example
 * ```ts
 * import { withFileLock } from "./lock.ts";
 * const p = Deno.makeTempDirSync() + "/x.lock";
 * const n = await withFileLock(p, () => 42);
 * ```
 * @module
 */
import { checkStatePath } from "./paths.ts";

/**
 * Opens (creating if needed) `path` for read and append, takes an exclusive lock, runs `fn`, unlocks.
 * Refuses a symlink or a non-regular file at `path`.
 *
 * @example
 * ```ts
 * import { withFileLock } from "./lock.ts";
 * await withFileLock(Deno.makeTempDirSync() + "/a.lock", (f) => f.statSync().size);
 * ```
 */
export async function withFileLock<T>(
  path: string,
  fn: (file: Deno.FsFile) => T | Promise<T>,
): Promise<T> {
  checkStatePath(path, "file");
  // Opened synchronously: an async open is a round trip through the blocking thread pool
  // (~3 ms each when cold), and every ledger and dispatch operation takes a lock.
  const file = Deno.openSync(path, { read: true, append: true, create: true, mode: 0o600 });
  try {
    const st = file.statSync();
    const after = Deno.lstatSync(path);
    if (after.isSymlink || st.ino !== after.ino || !st.isFile) {
      checkStatePath(path, "file");
      throw new Deno.errors.InvalidData(`${path} changed while being opened`);
    }
    await file.lock(true);
    try {
      return await fn(file);
    } finally {
      await file.unlock();
    }
  } finally {
    file.close();
  }
}
