/**
 * Exclusive advisory locks (`flock`) on files that are never replaced, so every writer of the
 * same project serializes on the same inode, across processes and across implementations. A lock
 * file found replaced once it is locked, or when its holder is done, is tampering: a writer that
 * opened the replacement holds its own lock meanwhile, so the lock no longer serializes anything.
 *
 * @example
 * ```ts
 * import { withFileLock } from "./lock.ts";
 * const p = Deno.makeTempDirSync() + "/x.lock";
 * const n = await withFileLock(p, () => 42);
 * ```
 * @module
 */
import { LedgerError } from "../errors.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { checkStatePath } from "./paths.ts";

/**
 * Opens (creating if needed) `path` for read and append, takes an exclusive lock, runs `fn`, unlocks.
 * Refuses a symlink or a non-regular file at `path`.
 *
 * @throws {LedgerError} `LEDGER_TAMPERED` when `path` no longer names the locked file once the
 *   lock is taken (`fn` is not run) or once `fn` is done (what `fn` wrote stays written).
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
      stillNamed(path, st, "while this process waited for its lock");
      const result = await fn(file);
      stillNamed(path, st, "while this process held its lock");
      return result;
    } finally {
      await file.unlock();
    }
  } finally {
    file.close();
  }
}

/** Throws `LEDGER_TAMPERED` unless `path` still names the file `locked` describes. */
function stillNamed(path: string, locked: Deno.FileInfo, when: string): void {
  const now = lstatOrNullSync(path);
  if (now === null || now.ino !== locked.ino || now.dev !== locked.dev) {
    throw new LedgerError(
      "LEDGER_TAMPERED",
      `${path} was ${now === null ? "removed" : "replaced"} ${when}: another writer may have ` +
        "locked the replacement at the same time (agentteams never replaces it); inspect with " +
        "`agentteams ledger verify`",
    );
  }
}
