/**
 * Exclusive advisory locks (`flock`) on files that are never replaced, so every writer of the
 * same project serializes on the same inode, across processes and across implementations. A lock
 * file found replaced once it is locked, or when its holder is done, is tampering: a writer that
 * opened the replacement holds its own lock meanwhile, so the lock no longer serializes anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withFileLock } from "./ledger_lock.ts";
 * const p = Deno.makeTempDirSync() + "/x.lock";
 * const n = await withFileLock(p, () => 42);
 * assert.equal(n, 42);
 * ```
 * @module
 */
import { LedgerError } from "../errors.ts";
import { withFlock } from "../fs/flock.ts";
import { checkStatePath } from "../layout.ts";

/**
 * Opens (creating if needed) `path` for read and append, takes an exclusive lock, runs `fn`, unlocks
 * (`lib/fs/flock.ts`). Refuses a symlink or a non-regular file at `path`.
 *
 * @throws {LedgerError} `LEDGER_TAMPERED` when `path` no longer names the locked file once the
 *   lock is taken (`fn` is not run) or once `fn` is done (what `fn` wrote stays written).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withFileLock } from "./ledger_lock.ts";
 * assert.equal(await withFileLock(Deno.makeTempDirSync() + "/a.lock", (f) => f.statSync().size), 0);
 * ```
 */
export async function withFileLock<T>(
  path: string,
  fn: (file: Deno.FsFile) => T | Promise<T>,
): Promise<T> {
  checkStatePath(path, "file");
  return await withFlock(path, {
    target: "file",
    // A symlink swapped in while it was opened is named as the unsafe path it is.
    onChanged: (p) => checkStatePath(p, "file"),
    replaced: (how, when) => tampered(path, how, when),
  }, (lock) => fn(lock.file));
}

/** `LEDGER_TAMPERED`: `path` no longer names the locked file. */
function tampered(path: string, how: "removed" | "replaced", when: "waited" | "held"): LedgerError {
  return new LedgerError(
    "LEDGER_TAMPERED",
    `${path} was ${how} ${
      when === "waited"
        ? "while this process waited for its lock"
        : "while this process held its lock"
    }: another writer may have locked the replacement at the same time (agentteams never ` +
      "replaces it); inspect with `agentteams ledger verify`",
  );
}
