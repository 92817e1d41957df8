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
import { openDirectorySync } from "./entry.ts";
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
  /**
   * `false`: no fsync of the file or its folder, for a cache whose loss or staleness after a crash
   * only costs recomputing it (default `true`). Still atomic: a reader sees old or new bytes.
   */
  durable?: boolean;
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
 * Fsyncs a directory so a rename or creation inside it is durable. Only a directory is opened
 * (`openDirectorySync`): something else swapped in at its name is refused, never waited on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fsyncDirSync } from "./atomic_write.ts";
 * assert.doesNotThrow(() => fsyncDirSync(Deno.makeTempDirSync()));
 * ```
 */
export function fsyncDirSync(dir: string): void {
  const f = openDirectorySync(dir);
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
  writeNewFileSync(file, path, bytes, mode, replaced);
  file.syncSync();
}

/** {@link fillNewFileSync} but the fsync: the bytes written, the mode set. */
function writeNewFileSync(
  file: Deno.FsFile,
  path: string,
  bytes: Uint8Array,
  mode: number,
  replaced: () => Error,
): void {
  let off = 0;
  while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
  const st = file.statSync();
  if (((st.mode ?? 0) & 0o7777) !== mode) {
    const named = Deno.lstatSync(path);
    if (!named.isFile || named.ino !== st.ino || named.dev !== st.dev) throw replaced();
    Deno.chmodSync(path, mode);
  }
}

/** The mode {@link atomicWriteFileSync} gives `path` (see {@link AtomicWriteOptions}). */
function modeFor(path: string, opts: AtomicWriteOptions): number {
  if (opts.forceMode !== undefined) return replacementMode(null, opts.forceMode);
  let current: number | null = null;
  try {
    const st = Deno.lstatSync(path);
    if (st.isFile && st.mode !== null) current = st.mode;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return replacementMode(current, opts.mode ?? 0o644);
}

/** A filled temporary file beside its target, not yet durable or renamed. */
interface Temp {
  readonly tmp: string;
  readonly file: Deno.FsFile;
  readonly mode: number;
}

/**
 * The start of every atomic write: the mode decided, a temporary file created exclusively beside
 * `path` and filled (its mode set). On failure it is removed and the error thrown.
 */
function filledTemp(path: string, data: string | Uint8Array, opts: AtomicWriteOptions): Temp {
  const bytes = typeof data === "string" ? enc.encode(data) : data;
  const mode = modeFor(path, opts);
  const tmp = tempNameFor(path);
  // O_CREAT | O_EXCL: never opens an existing file, never follows a symlink at `tmp`.
  const file = Deno.openSync(tmp, { write: true, createNew: true, mode });
  try {
    writeNewFileSync(
      file,
      tmp,
      bytes,
      mode,
      () => new Deno.errors.AlreadyExists(`${tmp} was replaced while being written`),
    );
  } catch (e) {
    dropTemp({ tmp, file, mode });
    throw e;
  }
  return { tmp, file, mode };
}

/** Closes and removes a temporary file that will not be renamed. */
function dropTemp(t: Temp): void {
  t.file.close();
  try {
    Deno.removeSync(t.tmp);
  } catch { /* already gone */ }
}

/** The end of every atomic write, once the temporary file is durable: rename, fsync the folder. */
function commitTemp(t: Temp, path: string, durable = true): number {
  t.file.close();
  let renamed = false;
  try {
    Deno.renameSync(t.tmp, path);
    renamed = true;
    if (durable) fsyncDirSync(dirname(path));
    return t.mode;
  } finally {
    if (!renamed) {
      try {
        Deno.removeSync(t.tmp);
      } catch { /* already gone */ }
    }
  }
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
  const t = filledTemp(path, data, opts);
  const durable = opts.durable !== false;
  try {
    if (durable) t.file.syncSync();
  } catch (e) {
    dropTemp(t);
    throw e;
  }
  return commitTemp(t, path, durable);
}

/**
 * {@link atomicWriteFileSync}, with the temporary file's fsync run in the background beside
 * `alongside` (another file's fsync, say): the rename waits for both, so the new bytes are
 * durable before the name leads to them, and so is what `alongside` makes durable. Two fsyncs of
 * different files in flight at once cost about one (the file system commits them together).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { atomicWriteFile } from "./atomic_write.ts";
 * const dir = Deno.makeTempDirSync();
 * const log = Deno.openSync(`${dir}/log`, { append: true, create: true });
 * log.writeSync(new TextEncoder().encode("row\n"));
 * await atomicWriteFile(`${dir}/head`, "1\n", {}, log.sync());
 * log.close();
 * assert.equal(Deno.readTextFileSync(`${dir}/head`), "1\n");
 * ```
 */
export async function atomicWriteFile(
  path: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
  alongside: Promise<unknown> = Promise.resolve(),
): Promise<number> {
  let t: Temp;
  try {
    t = filledTemp(path, data, opts);
  } catch (e) {
    // `alongside` is the caller's; it is awaited all the same, so nothing is left in flight.
    await alongside.catch(() => {});
    throw e;
  }
  // Both settle before anything is decided: on a failure of either the temporary file is gone,
  // the name untouched.
  const [own, other] = await Promise.allSettled([t.file.sync(), alongside]);
  if (own.status === "rejected" || other.status === "rejected") {
    dropTemp(t);
    throw own.status === "rejected" ? own.reason : (other as PromiseRejectedResult).reason;
  }
  return commitTemp(t, path);
}
