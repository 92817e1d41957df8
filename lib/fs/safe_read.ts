/**
 * Reading a file that must be a plain regular file: never through a symlink, never a FIFO or
 * device, never more than a cap, and never a file swapped in between the check and the open.
 *
 * `lstat` must show a regular file; the file is then opened and its `fstat` must show the same
 * device and inode, so a symlink or another file renamed in between is refused, not followed.
 * Only Deno's own file API is used (no `node:fs`, whose compatibility layer costs ~45 ms at
 * start-up), and it cannot open without blocking: a FIFO renamed in between the `lstat` and the
 * open makes the open wait for a writer. For the operator's own files (keys, state) only someone
 * who could replace them anyway can do that. Files an agent can swap (apply's target) are read
 * with {@link readRegularFileWithin}, whose open has a deadline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readRegularFile } from "./safe_read.ts";
 * const path = Deno.makeTempDirSync() + "/a.txt";
 * Deno.writeTextFileSync(path, "hi\n");
 * assert.equal(new TextDecoder().decode((await readRegularFile(path, { maxBytes: 4096 })).bytes), "hi\n");
 * ```
 * @module
 */
import { FsSafetyError } from "../errors.ts";
import { describeKind } from "./entry.ts";
import { readAtSync, readWholeOpenedSync } from "./read_at.ts";
import { after } from "../time/after.ts";

/** What the caller demands of the file. */
export interface ReadRegularOptions {
  /** Refuse files larger than this many bytes. */
  maxBytes: number;
  /** Require the file to be owned by this uid. */
  ownerUid?: number;
  /** Refuse when any of these mode bits is set (e.g. `0o077` for "no group/other bits"). */
  forbiddenModeBits?: number;
  /** Words used in error messages, e.g. "key file". */
  what?: string;
  /**
   * Refuse a file with more than one name (a hard link): for a trust root in a folder the
   * session settings deny writing, another name elsewhere is a path a session can write it by.
   */
  singleName?: boolean;
}

/** The custody rule {@link custodyProblem} checks: the entry's kind, owner and mode bits. */
export interface CustodyRule {
  /** The kind the entry must be (a symlink is never either); unchecked when absent. */
  readonly kind?: "file" | "directory";
  /** The uid that must own the entry; unchecked when absent. */
  readonly uid?: number;
  /** Mode bits none of which may be set (`0o077`: no group or other bits); unchecked when absent. */
  readonly forbiddenModeBits?: number;
}

/** Why an entry fails its {@link CustodyRule}: a stable code and words that follow its path. */
export interface CustodyProblem {
  /** The refusal code the rule maps to. */
  readonly code: "SYMLINK" | "NOT_DIRECTORY" | "NOT_REGULAR_FILE" | "UNSAFE_OWNER" | "UNSAFE_MODE";
  /** What is wrong, worded to follow the entry's path ("is owned by uid 7, not 1000"). */
  readonly why: string;
}

/**
 * The owner and mode check of an operator-only file or directory (a key dir, a key file, the
 * operator's confined-programs file and its folder): `st` (from `lstat` or `fstat`) is of the
 * rule's kind, owned by its uid, and has none of its forbidden mode bits. Returns the first
 * problem, or `null`. An owner or mode this platform does not report fails a rule that checks it.
 * Every caller words the refusal under its own code; {@link readRegularFileSync} applies it to
 * the opened file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { custodyProblem } from "./safe_read.ts";
 * const st = Deno.lstatSync(Deno.makeTempDirSync());
 * assert.equal(custodyProblem(st, { kind: "directory", uid: st.uid!, forbiddenModeBits: 0o077 }), null);
 * assert.equal(custodyProblem(st, { kind: "file" })?.code, "NOT_REGULAR_FILE");
 * ```
 */
export function custodyProblem(
  st: Deno.FileInfo,
  rule: CustodyRule,
): CustodyProblem | null {
  if (rule.kind !== undefined) {
    if (st.isSymlink) return { code: "SYMLINK", why: "is a symlink" };
    if (rule.kind === "directory" && !st.isDirectory) {
      return { code: "NOT_DIRECTORY", why: `is ${describeKind(st)}, not a directory` };
    }
    if (rule.kind === "file" && !st.isFile) {
      return { code: "NOT_REGULAR_FILE", why: `is ${describeKind(st)}, not a regular file` };
    }
  }
  if (rule.uid !== undefined) {
    if (st.uid === null) {
      return { code: "UNSAFE_OWNER", why: "has an owner this platform does not report" };
    }
    if (st.uid !== rule.uid) {
      return { code: "UNSAFE_OWNER", why: `is owned by uid ${st.uid}, not ${rule.uid}` };
    }
  }
  const bits = rule.forbiddenModeBits;
  if (bits !== undefined) {
    if (st.mode === null) {
      return { code: "UNSAFE_MODE", why: "has a mode this platform does not report" };
    }
    if ((st.mode & bits) !== 0) {
      const must = bits === 0o077 && rule.kind === "directory"
        ? "be 0700"
        : bits === 0o022
        ? "not be group- or world-writable"
        : `have none of ${bits.toString(8).padStart(4, "0")}`;
      return {
        code: "UNSAFE_MODE",
        why: `has mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}; it must ${must}`,
      };
    }
  }
  return null;
}

/** The file's bytes and the metadata checked. */
export interface RegularFile {
  /** The content. */
  bytes: Uint8Array;
  /** Inode number. */
  ino: number;
  /** Permission bits and type, as `st_mode`. */
  mode: number;
  /** Owner uid. */
  uid: number;
}

/**
 * Reads a regular file under the rules in {@link ReadRegularOptions}.
 *
 * @throws {FsSafetyError} `SYMLINK`, `NOT_REGULAR_FILE`, `FILE_TOO_LARGE`, `FILE_CHANGED`,
 *   `UNSAFE_OWNER`, `UNSAFE_MODE`; `Deno.errors.NotFound` when absent.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readRegularFile } from "./safe_read.ts";
 * const path = Deno.makeTempDirSync() + "/a.txt";
 * Deno.writeTextFileSync(path, "hi\n");
 * const f = await readRegularFile(path, { maxBytes: 4096, what: "a.txt" });
 * assert.equal(f.bytes.length, 3);
 * await assert.rejects(readRegularFile(path, { maxBytes: 2, what: "a.txt" }));
 * ```
 */
export function readRegularFile(path: string, opts: ReadRegularOptions): Promise<RegularFile> {
  return Promise.resolve().then(() => readRegularFileSync(path, opts));
}

/**
 * Synchronous {@link readRegularFile}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readRegularFileSync } from "./safe_read.ts";
 * const path = Deno.makeTempDirSync() + "/a.txt";
 * Deno.writeTextFileSync(path, "hi\n");
 * assert.equal(readRegularFileSync(path, { maxBytes: 4096 }).bytes.length, 3);
 * ```
 */
export function readRegularFileSync(path: string, opts: ReadRegularOptions): RegularFile {
  const before = lstatRegular(path, opts);
  return readOpened(path, Deno.openSync(path, { read: true }), before, opts);
}

/** How long an open of a file someone else may swap can take before it counts as a FIFO. */
export const OPEN_DEADLINE_MS = 2000;

/**
 * {@link readRegularFile} for a path someone else may swap while it is read (an agent's file): the
 * open is given `deadlineMs`. `lstat` shows a regular file, but a FIFO renamed into its place before
 * the open makes a plain open wait for a writer forever; here it is refused instead
 * (`NOT_REGULAR_FILE`), and the open left waiting is closed if it ever completes.
 *
 * @throws {FsSafetyError} as {@link readRegularFileSync}, and `NOT_REGULAR_FILE` when the open
 *   does not complete in time.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readRegularFileWithin } from "./safe_read.ts";
 * const path = Deno.makeTempDirSync() + "/a.txt";
 * Deno.writeTextFileSync(path, "hi\n");
 * const f = await readRegularFileWithin(path, { maxBytes: 4096 }, 2000);
 * assert.equal(f.bytes.length, 3);
 * ```
 */
export async function readRegularFileWithin(
  path: string,
  opts: ReadRegularOptions,
  deadlineMs: number = OPEN_DEADLINE_MS,
): Promise<RegularFile> {
  const before = lstatRegular(path, opts);
  return readOpened(path, await openWithin(path, deadlineMs, opts.what ?? "file"), before, opts);
}

/**
 * How many opens left waiting (past their deadline) this process allows at once: each holds one
 * of the threads Deno's file operations share until a writer comes, so past this many every
 * further open through {@link openWithin} is refused at once (the process keeps its threads for
 * the rest of its work, and says why, instead of stalling once they are all waiting).
 */
export const MAX_OPENS_LEFT_WAITING = 8;

/** The opens past their deadline still waiting (decremented if one ever completes). */
let opensLeftWaiting = 0;

/**
 * Opens `path` for reading, or refuses (`NOT_REGULAR_FILE`) when the open has not completed after
 * `deadlineMs` (a FIFO without a writer); a late open is closed when it completes. Until then it
 * keeps waiting in a thread of Deno's pool, which also keeps the process from ending by itself:
 * the CLI ends with `Deno.exit`; a library caller that must end on its own should do the same.
 * With {@link MAX_OPENS_LEFT_WAITING} such opens waiting, it refuses (`NOT_REGULAR_FILE`) without
 * opening.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openWithin } from "./safe_read.ts";
 * const path = Deno.makeTempDirSync() + "/a.txt";
 * Deno.writeTextFileSync(path, "hi\n");
 * const f = await openWithin(path, 2000, "a.txt");
 * assert.equal(f.statSync().size, 3);
 * f.close();
 * ```
 */
export async function openWithin(
  path: string,
  deadlineMs: number,
  what: string,
): Promise<Deno.FsFile> {
  if (opensLeftWaiting >= MAX_OPENS_LEFT_WAITING) {
    throw new FsSafetyError(
      "NOT_REGULAR_FILE",
      `${what} ${path} was not opened: ${opensLeftWaiting} earlier opens in this process are ` +
        "still waiting on something that waits on open (a FIFO put where a file was); refused " +
        "until the process is restarted",
      { details: { path } },
    );
  }
  const opening = Deno.open(path, { read: true });
  let cancel = (): void => {};
  const late = new Promise<null>((resolve) => {
    cancel = after(deadlineMs, () => resolve(null));
  });
  try {
    const won = await Promise.race([opening, late]);
    if (won !== null) return won;
  } finally {
    cancel();
  }
  opensLeftWaiting++;
  opening.then((f) => f.close(), () => {}).finally(() => opensLeftWaiting--);
  throw new FsSafetyError(
    "NOT_REGULAR_FILE",
    `${what} ${path} did not open within ${deadlineMs} ms: something that waits on open (a FIFO) ` +
      "took its place; refused",
    { details: { path } },
  );
}

/**
 * The whole of a regular file at a path someone else may swap (a session's `.git/index`, a
 * watched file of the control plane), at most `maxBytes`: opened by {@link openWithin}, so a FIFO
 * put at the name (with or without a writer) is refused (`NOT_REGULAR_FILE`) instead of holding
 * the process, refused unread past the cap (`FILE_TOO_LARGE`: a sparse file costs its maker no
 * disk and a reader its size in memory), and read in one buffer (`readWholeOpenedSync`). It
 * follows a final symlink, as the plain read it replaces did; callers that must not, `lstat`
 * first.
 *
 * @throws {FsSafetyError} `NOT_REGULAR_FILE` (a FIFO, a directory, a device, an open that did not
 *   complete in time), `FILE_TOO_LARGE`; what `Deno.open` throws (`Deno.errors.NotFound`, ...).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readWholeFileWithin } from "./safe_read.ts";
 * const path = Deno.makeTempDirSync() + "/index";
 * Deno.writeTextFileSync(path, "DIRC");
 * assert.equal((await readWholeFileWithin(path, "git index", 1024)).length, 4);
 * ```
 */
export async function readWholeFileWithin(
  path: string,
  what: string,
  maxBytes: number,
  deadlineMs: number = OPEN_DEADLINE_MS,
): Promise<Uint8Array<ArrayBuffer>> {
  const notRegular = (st: Deno.FileInfo) =>
    new FsSafetyError(
      "NOT_REGULAR_FILE",
      `${what} ${path} is ${describeKind(st)}, not a regular file; refused`,
      { details: { path } },
    );
  // Asked first (a stat never waits, and follows a final symlink as the open does): what is not a
  // regular file is refused unopened. An open that waits would hold one of Deno's few blocking
  // threads until a writer came, however long after its deadline; a session leaving a FIFO where
  // every run reads (`.git/index`) would use them all up, and every later file operation of the
  // runner would wait with them. Only a swap in the instant after this still reaches the open.
  const seen = Deno.statSync(path);
  if (!seen.isFile) throw notRegular(seen);
  using file = await openWithin(path, deadlineMs, what);
  const st = file.statSync();
  if (!st.isFile) throw notRegular(st);
  const tooLarge = (how: string) =>
    new FsSafetyError("FILE_TOO_LARGE", `${what} ${path} ${how} the ${maxBytes}-byte limit`, {
      details: { path },
    });
  if (st.size > maxBytes) throw tooLarge(`is ${st.size} bytes, over`);
  const bytes = readWholeOpenedSync(file, maxBytes);
  if (bytes.length > maxBytes) throw tooLarge("grew past");
  return bytes;
}

/** `lstat` of `path`, which must be a regular file (not a symlink). */
function lstatRegular(path: string, opts: ReadRegularOptions): Deno.FileInfo {
  const what = opts.what ?? "file";
  const before = Deno.lstatSync(path);
  if (before.isSymlink) {
    throw new FsSafetyError("SYMLINK", `${what} ${path} is a symlink; refused`, {
      details: { path },
    });
  }
  if (!before.isFile) {
    throw new FsSafetyError(
      "NOT_REGULAR_FILE",
      `${what} ${path} is ${describeKind(before)}, not a regular file; refused`,
      { details: { path } },
    );
  }
  return before;
}

/** Checks and reads an opened file against its `lstat`; closes it. */
function readOpened(
  path: string,
  file: Deno.FsFile,
  before: Deno.FileInfo,
  opts: ReadRegularOptions,
): RegularFile {
  const what = opts.what ?? "file";
  try {
    const st = file.statSync();
    if (!st.isFile || st.ino !== before.ino || st.dev !== before.dev) {
      throw new FsSafetyError("FILE_CHANGED", `${what} ${path} was replaced while opening`, {
        details: { path },
      });
    }
    if (opts.singleName === true && (st.nlink ?? 1) > 1) {
      throw new FsSafetyError(
        "NOT_REGULAR_FILE",
        `${what} ${path} has ${st.nlink} names (a hard link): an agent session could write it ` +
          "by its other name; refused. Find the other name (find -samefile) and remove it, or " +
          "copy the file over itself (cp f f.new && mv f.new f)",
        { details: { path } },
      );
    }
    const uid = st.uid ?? -1;
    const mode = st.mode ?? 0;
    const problem = custodyProblem(st, {
      uid: opts.ownerUid,
      forbiddenModeBits: opts.forbiddenModeBits,
    });
    if (problem !== null) {
      throw new FsSafetyError(problem.code, `${what} ${path} ${problem.why}; refused`, {
        details: { path },
      });
    }
    if (st.size > opts.maxBytes) {
      throw new FsSafetyError(
        "FILE_TOO_LARGE",
        `${what} ${path} is ${st.size} bytes, over the ${opts.maxBytes}-byte limit`,
        { details: { path } },
      );
    }
    // Read one byte past the cap so growth after fstat is caught too.
    const buf = new Uint8Array(Math.min(st.size, opts.maxBytes) + 1);
    const off = readAtSync(file, 0, buf);
    if (off > opts.maxBytes) {
      throw new FsSafetyError(
        "FILE_TOO_LARGE",
        `${what} ${path} grew past the ${opts.maxBytes}-byte limit`,
        { details: { path } },
      );
    }
    return { bytes: buf.subarray(0, off), ino: st.ino ?? 0, mode, uid };
  } finally {
    file.close();
  }
}
