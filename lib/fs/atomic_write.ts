/**
 * Atomic replacement of a file: a temporary file in the same directory (created exclusively,
 * never through a symlink), fsync, the old file's permission bits kept (without setuid, setgid
 * and sticky: {@link replacementMode}), rename over the target, fsync of the directory. A reader sees the old bytes or the new ones, never a mix; a crash leaves one of the
 * two plus, at worst, a stray `.<name>.<random>.tmp`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { atomicWriteFileSync } from "./atomic_write.ts";
 * const dir = Deno.makeTempDirSync();
 * atomicWriteFileSync(`${dir}/a.txt`, "hello\n");
 * assert.equal(Deno.readTextFileSync(`${dir}/a.txt`), "hello\n");
 * ```
 * @module
 */
import { basename, dirname } from "./path.ts";

const enc = new TextEncoder();

/** Options of {@link atomicWriteFileSync}. */
export interface AtomicWriteOptions {
  /**
   * Mode for a new file (default `0o644`). An existing file's permission bits are kept; setuid,
   * setgid and sticky never are ({@link replacementMode}).
   */
  mode?: number;
  /** Use this mode even when the file exists (less setuid, setgid and sticky all the same). */
  forceMode?: number;
}

/** The mode bits a written file never gets: setuid (`0o4000`), setgid (`0o2000`), sticky (`0o1000`). */
export const SPECIAL_MODE_BITS = 0o7000;

/**
 * The mode of the file a writer puts at a path: the permission bits (`0o777`) of the file it
 * replaces (`current`, its `st_mode`; file-type bits are ignored), or of `fresh` when there is
 * none, never the setuid, setgid or sticky bit ({@link SPECIAL_MODE_BITS}). Those bits are the
 * old file's owner's: the new file is the writer's, so an operator running as root would
 * otherwise turn a user's own setuid file, rewritten with an ELF that happens to be UTF-8, into
 * a setuid-root program. Every writer (`atomicWriteFileSync`, `anchoredReplace`, hence `apply`)
 * decides the mode here and nowhere else. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { replacementMode } from "./atomic_write.ts";
 * assert.equal(replacementMode(0o755, 0o644), 0o755);
 * assert.equal(replacementMode(0o4755, 0o644), 0o755);
 * assert.equal(replacementMode(0o2775, 0o644), 0o775);
 * assert.equal(replacementMode(0o101644, 0o644), 0o644); // (a regular file's st_mode, sticky)
 * assert.equal(replacementMode(null, 0o644), 0o644); // (no file to replace)
 * ```
 */
export function replacementMode(current: number | null, fresh: number): number {
  return (current ?? fresh) & 0o777;
}

function randomHex(bytes: number): string {
  return crypto.getRandomValues(new Uint8Array(bytes)).toHex();
}

/**
 * Fsyncs a directory so a rename or creation inside it is durable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fsyncDirSync } from "./atomic_write.ts";
 * assert.doesNotThrow(() => fsyncDirSync(Deno.makeTempDirSync()));
 * ```
 */
export function fsyncDirSync(dir: string): void {
  const f = Deno.openSync(dir, { read: true });
  try {
    f.syncSync();
  } finally {
    f.close();
  }
}

/**
 * The temporary name used next to `path` (exported for tests and crash forensics).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tempNameFor } from "./atomic_write.ts";
 * assert.equal(tempNameFor("/p/a.txt").startsWith("/p/.a.txt."), true);
 * ```
 */
export function tempNameFor(path: string): string {
  return `${tempPrefix(path)}${randomHex(8)}.tmp`;
}

/** What every temporary name for `path` starts with: `<dir>/.<name>.` */
function tempPrefix(path: string): string {
  return `${dirname(path)}/.${basename(path)}.`;
}

/**
 * Whether `candidate` is a name {@link tempNameFor} gives a temporary file for `path` (same
 * directory).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isTempNameFor, tempNameFor } from "./atomic_write.ts";
 * assert.equal(isTempNameFor(tempNameFor("/p/a.txt"), "/p/a.txt"), true);
 * assert.equal(isTempNameFor("/p/.a.txt.tmp", "/p/a.txt"), false);
 * ```
 */
export function isTempNameFor(candidate: string, path: string): boolean {
  const prefix = tempPrefix(path);
  return candidate.startsWith(prefix) && /^[0-9a-f]{16}\.tmp$/.test(candidate.slice(prefix.length));
}

/**
 * Fills a file just created exclusively (`createNew`) at `path`: writes all of `bytes`, gives it
 * `mode` when the umask narrowed it, and fsyncs it. Deno has no fchmod, so the mode is set by
 * name, and only after checking that the name still leads to the open file; otherwise
 * `replaced()` is thrown. The caller closes the file.
 *
 * @throws {Deno.errors.AlreadyExists} (or `replaced()`'s error) when `path` no longer leads to
 *   `file`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fillNewFileSync } from "./atomic_write.ts";
 * const p = Deno.makeTempDirSync() + "/new";
 * const f = Deno.openSync(p, { write: true, createNew: true, mode: 0o640 });
 * try {
 *   fillNewFileSync(f, p, new TextEncoder().encode("x"), 0o640);
 * } finally {
 *   f.close();
 * }
 * assert.equal(Deno.readTextFileSync(p), "x");
 * ```
 */
export function fillNewFileSync(
  file: Deno.FsFile,
  path: string,
  bytes: Uint8Array,
  mode: number,
  replaced: () => Error = () =>
    new Deno.errors.AlreadyExists(`${path} was replaced while being written`),
): void {
  let off = 0;
  while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
  const st = file.statSync();
  if (((st.mode ?? 0) & 0o7777) !== mode) {
    const named = Deno.lstatSync(path);
    if (!named.isFile || named.ino !== st.ino || named.dev !== st.dev) throw replaced();
    Deno.chmodSync(path, mode);
  }
  file.syncSync();
}

/**
 * Writes `data` to `path` atomically, keeping an existing file's permission bits (without setuid,
 * setgid and sticky, see {@link replacementMode}). Returns the mode the file now has.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { atomicWriteFileSync } from "./atomic_write.ts";
 * const dir = Deno.makeTempDirSync();
 * atomicWriteFileSync(`${dir}/b.txt`, new Uint8Array([1, 2, 3]), { mode: 0o600 });
 * assert.deepEqual(Deno.readFileSync(`${dir}/b.txt`), new Uint8Array([1, 2, 3]));
 * assert.equal(Deno.statSync(`${dir}/b.txt`).mode! & 0o777, 0o600);
 * ```
 */
export function atomicWriteFileSync(
  path: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): number {
  const bytes = typeof data === "string" ? enc.encode(data) : data;
  let current: number | null = null;
  if (opts.forceMode === undefined) {
    try {
      const st = Deno.lstatSync(path);
      if (st.isFile && st.mode !== null) current = st.mode;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  const mode = opts.forceMode !== undefined
    ? replacementMode(null, opts.forceMode)
    : replacementMode(current, opts.mode ?? 0o644);
  const tmp = tempNameFor(path);
  // O_CREAT | O_EXCL: never opens an existing file, never follows a symlink at `tmp`.
  const file = Deno.openSync(tmp, { write: true, createNew: true, mode });
  let renamed = false;
  try {
    try {
      fillNewFileSync(file, tmp, bytes, mode);
    } finally {
      file.close();
    }
    Deno.renameSync(tmp, path);
    renamed = true;
    fsyncDirSync(dirname(path));
    return mode;
  } finally {
    if (!renamed) {
      try {
        Deno.removeSync(tmp);
      } catch { /* already gone */ }
    }
  }
}
