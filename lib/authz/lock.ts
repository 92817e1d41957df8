/**
 * Serializing the triad's read-modify-write steps (a waiver consumed, a decision marked used, a
 * row appended): an exclusive `flock` on the project (or holder workspace) directory itself,
 * which is never replaced and always exists (the ledger files are replaced by rename on every
 * change, so locking them would serialize nothing; locking `references/` would mean creating it
 * even for a refused write).
 *
 * @example
 * ```ts
 * import { withDirLock } from "./lock.ts";
 * await withDirLock(Deno.makeTempDirSync(), () => 1); // 1
 * ```
 * @module
 */

/**
 * Runs `fn` holding an exclusive lock on directory `dir` (which must exist).
 *
 * @example
 * ```ts
 * import { withDirLock } from "./lock.ts";
 * const n = await withDirLock(Deno.makeTempDirSync(), () => 42); // 42
 * ```
 */
export async function withDirLock<T>(dir: string, fn: () => T | Promise<T>): Promise<T> {
  const st = Deno.lstatSync(dir);
  if (!st.isDirectory) throw new Deno.errors.NotADirectory(`${dir} is not a directory`);
  const f = Deno.openSync(dir, { read: true });
  try {
    await f.lock(true);
    return await fn();
  } finally {
    f.close();
  }
}
