/**
 * Names in a folder an agent session can write (the queue's request, ack and result folders, the
 * status folder): opened, created, renamed and removed without ever following what a session put
 * there. The one place every such operation goes through, the runner's and the waiting CLI's.
 *
 * - A folder is **pinned** by its device and inode ({@link pinDir}); every operation checks the
 *   folder's path still leads to the pinned inode before and after it ({@link inPinnedDir}), and
 *   checks what it touched is what it meant to touch (the inode it listed, the file it created).
 * - A name is **created exclusively** (`O_CREAT | O_EXCL`, which never opens an existing entry and
 *   never follows a symlink at the name): a link, FIFO, directory or file already there refuses
 *   the create, nothing is written through it.
 * - A name is **read** only after it is moved (renamed: the entry itself, never its target) into
 *   a folder no session can write ({@link claimName}), checked there to be the entry that was
 *   listed (same inode), a regular file with one name (a hard link could name the key file), and
 *   read there; or, for a reader that holds no private folder (the waiting CLI), read in place
 *   with the open bounded by a deadline and checked against the `lstat` ({@link readNameWithin}).
 * - A name is **removed** by unlinking it (never its target); a directory at the name is refused,
 *   not emptied.
 *
 * What stays (Deno has no `openat`, and a working directory cannot be restored without read
 * access to it): a folder swapped for a link in the instant between the check before and the
 * operation sends that one operation to the link's target. It can then create a new file there
 * (never truncate or write through an existing one: the create is exclusive), or rename one entry
 * named like a request out of it, which the check after sees: the claim puts it back and refuses.
 *
 * @module
 */
import { FsSafetyError } from "../errors.ts";
import { describeKind } from "./entry.ts";
import { fillNewFileSync, fsyncDirSync } from "./atomic_write.ts";
import { readAtSync } from "./read_at.ts";
import { OPEN_DEADLINE_MS, openWithin } from "./safe_read.ts";

/** A directory pinned by device and inode at the moment it was checked. */
export interface DirPin {
  /** The path it was pinned at (absolute). */
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

/** What is at a name, as an operation found it (for the caller's record). */
export type Found = "file" | "symlink" | "dir" | "fifo" | "other" | "hardlink" | "gone";

/** A name refused: what was found there. */
export class NameRefused extends FsSafetyError {
  /** The class's name, spelled out: a minified bundle renames classes. */
  override name = "NameRefused";
  /** What was at the name. */
  readonly found: Found;
  /** The refused name (relative to the folder). */
  readonly entry: string;
  /** A refusal naming what was found at `dir/name`. */
  constructor(dir: string, name: string, found: Found, why: string) {
    super(
      found === "symlink" ? "SYMLINK" : "NOT_REGULAR_FILE",
      `${dir}/${name} is ${foundWords(found)}: ${why}; refused, not followed`,
      { details: { path: `${dir}/${name}`, found } },
    );
    this.found = found;
    this.entry = name;
  }
}

function foundWords(f: Found): string {
  switch (f) {
    case "file":
      return "a regular file";
    case "symlink":
      return "a symlink";
    case "dir":
      return "a directory";
    case "fifo":
      return "a FIFO";
    case "hardlink":
      return "a hard link (a file with more than one name)";
    case "gone":
      return "taken (an entry was there, and was gone again when looked at)";
    default:
      return "not a regular file";
  }
}

/**
 * What an `lstat` result is, as {@link Found} (a regular file with more than one name is a hard
 * link). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { foundOf } from "./session_dir.ts";
 * assert.equal(foundOf(Deno.lstatSync("/")), "dir");
 * ```
 */
export function foundOf(st: Deno.FileInfo): Found {
  if (st.isSymlink) return "symlink";
  if (st.isDirectory) return "dir";
  if (st.isFifo) return "fifo";
  if (!st.isFile) return "other";
  return (st.nlink ?? 1) > 1 ? "hardlink" : "file";
}

function isName(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !name.includes("/") &&
    !name.includes("\0");
}

function checkName(pin: DirPin, name: string): void {
  if (!isName(name)) {
    throw new FsSafetyError("NOT_REGULAR_FILE", `${JSON.stringify(name)} is not a bare name`, {
      details: { path: pin.path },
    });
  }
}

/**
 * Pins the directory at `path`: its device and inode, `lstat`ed (a symlink at the path is refused,
 * never followed). Null when nothing is there.
 *
 * @throws {FsSafetyError} `NOT_DIRECTORY` when something other than a real directory is there
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pinDir } from "./session_dir.ts";
 * assert.equal(pinDir(Deno.makeTempDirSync())?.ino !== undefined, true);
 * assert.equal(pinDir("/nonexistent-4c1"), null);
 * ```
 */
export function pinDir(path: string): DirPin | null {
  let st: Deno.FileInfo;
  try {
    st = Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  if (!st.isDirectory) {
    throw new FsSafetyError(
      "NOT_DIRECTORY",
      `${path} is ${describeKind(st)}, not a directory; refused, not followed`,
      { details: { path } },
    );
  }
  return { path, dev: st.dev, ino: st.ino ?? 0 };
}

/**
 * Refuses (`NOT_DIRECTORY`) when the pinned path no longer leads to the pinned directory (it was
 * replaced, or swapped for a link).
 *
 * @throws {FsSafetyError} `NOT_DIRECTORY`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkPin, pinDir } from "./session_dir.ts";
 * assert.doesNotThrow(() => checkPin(pinDir(Deno.makeTempDirSync())!));
 * ```
 */
export function checkPin(pin: DirPin): void {
  let st: Deno.FileInfo | null = null;
  try {
    st = Deno.lstatSync(pin.path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (st === null || !st.isDirectory || st.dev !== pin.dev || (st.ino ?? 0) !== pin.ino) {
    throw new FsSafetyError(
      "NOT_DIRECTORY",
      `${pin.path} is no longer the directory that was checked (replaced, or swapped for a ` +
        "link); refused, not followed",
      { details: { path: pin.path } },
    );
  }
}

/**
 * Runs `fn` (synchronous, given the path of a bare name in the folder) between two checks that
 * the folder is still the pinned one ({@link checkPin}).
 *
 * @throws {FsSafetyError} `NOT_DIRECTORY` when the folder moved before or during `fn`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inPinnedDir, pinDir } from "./session_dir.ts";
 * const pin = pinDir(Deno.makeTempDirSync())!;
 * inPinnedDir(pin, (at) => Deno.writeTextFileSync(at("x"), "1"));
 * assert.equal(inPinnedDir(pin, (at) => Deno.readTextFileSync(at("x"))), "1");
 * ```
 */
export function inPinnedDir<T>(pin: DirPin, fn: (at: (name: string) => string) => T): T {
  checkPin(pin);
  const r = fn((name) => {
    checkName(pin, name);
    return `${pin.path}/${name}`;
  });
  checkPin(pin);
  return r;
}

/**
 * The names in a pinned directory (unsorted), listed through the pin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listNames, pinDir } from "./session_dir.ts";
 * assert.deepEqual(listNames(pinDir(Deno.makeTempDirSync())!), []);
 * ```
 */
export function listNames(pin: DirPin): string[] {
  return inPinnedDir(pin, () => [...Deno.readDirSync(pin.path)].map((e) => e.name));
}

/**
 * What is at `name` in the pinned directory (`lstat`, never followed), or null when nothing is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lstatName, pinDir } from "./session_dir.ts";
 * assert.equal(lstatName(pinDir(Deno.makeTempDirSync())!, "x"), null);
 * ```
 */
export function lstatName(pin: DirPin, name: string): Deno.FileInfo | null {
  return inPinnedDir(pin, (at) => {
    try {
      return Deno.lstatSync(at(name));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  });
}

/** Removes the file just made at `path` when the name still leads to it (`made`: its fstat). */
function undoCreate(path: string, made: Deno.FileInfo): void {
  try {
    const st = Deno.lstatSync(path);
    if (st.isFile && st.dev === made.dev && st.ino === made.ino) Deno.removeSync(path);
  } catch { /* gone already */ }
}

/**
 * Creates `name` in the pinned directory exclusively and fills it with `bytes` (mode `mode`,
 * fsynced). Anything already at the name (a symlink to the key file, a FIFO, a directory, a file)
 * refuses the create: nothing is written through it. When the folder moved meanwhile, the file
 * made is removed again and the create refused.
 *
 * @throws {NameRefused} naming what was at the name; {FsSafetyError} when the folder moved
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createNewIn, pinDir } from "./session_dir.ts";
 * const d = Deno.makeTempDirSync();
 * createNewIn(pinDir(d)!, "ack", new Uint8Array([0x61]), 0o644);
 * assert.equal(Deno.readTextFileSync(`${d}/ack`), "a");
 * ```
 */
export function createNewIn(pin: DirPin, name: string, bytes: Uint8Array, mode: number): void {
  let made: Deno.FileInfo | null = null;
  try {
    inPinnedDir(pin, (at) => {
      const path = at(name);
      let f: Deno.FsFile;
      try {
        f = Deno.openSync(path, { write: true, createNew: true, mode });
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
        let found: Found = "gone";
        try {
          found = foundOf(Deno.lstatSync(path));
        } catch { /* gone meanwhile: still refused, and said so */ }
        throw new NameRefused(pin.path, name, found, "something is already at this name");
      }
      try {
        made = f.statSync();
        fillNewFileSync(f, path, bytes, mode);
      } finally {
        f.close();
      }
    });
  } catch (e) {
    if (made !== null) undoCreate(`${pin.path}/${name}`, made);
    throw e;
  }
}

/**
 * Writes `name` in the pinned directory whole: a temporary `.<name>.<random>.tmp` created
 * exclusively, filled, renamed over the name (a rename replaces a symlink, FIFO or file at the
 * name, never what it points to), the directory fsynced. A directory at the name refuses it.
 *
 * @throws {NameRefused} a directory at the name; {FsSafetyError} when the folder moved
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pinDir, replaceIn } from "./session_dir.ts";
 * const d = Deno.makeTempDirSync();
 * replaceIn(pinDir(d)!, "r.json", new TextEncoder().encode("{}"), 0o644);
 * assert.equal(Deno.readTextFileSync(`${d}/r.json`), "{}");
 * ```
 */
export function replaceIn(pin: DirPin, name: string, bytes: Uint8Array, mode: number): void {
  const tmpName = `.${name}.${crypto.getRandomValues(new Uint8Array(8)).toHex()}.tmp`;
  createNewIn(pin, tmpName, bytes, mode);
  let renamed = false;
  try {
    inPinnedDir(pin, (at) => {
      try {
        Deno.renameSync(at(tmpName), at(name));
      } catch (e) {
        let st: Deno.FileInfo | null = null;
        try {
          st = Deno.lstatSync(at(name));
        } catch { /* not there */ }
        if (st?.isDirectory) {
          throw new NameRefused(pin.path, name, "dir", "the runner writes a file here");
        }
        throw e;
      }
      renamed = true;
      try {
        fsyncDirSync(pin.path);
      } catch (e) {
        // The folder swapped for something else after the rename (a FIFO would have held this
        // thread): refused as a folder that moved.
        if (e instanceof Deno.errors.NotADirectory) checkPin(pin);
        throw e;
      }
    });
  } finally {
    if (!renamed) {
      try {
        Deno.removeSync(`${pin.path}/${tmpName}`);
      } catch { /* already gone */ }
    }
  }
}

/**
 * Creates `name` in the pinned directory only when nothing is there, and whole: anything at the
 * name refuses it (as `createNewIn`), and otherwise its bytes arrive at once (`replaceIn`: a
 * temporary filled and fsynced, renamed in), so a reader that takes the name the moment it appears
 * never finds it empty or half-written. A thing put at the name between the look and the rename is
 * replaced (the entry, never what it points to): nothing is written through it either way.
 *
 * @throws {NameRefused} naming what was at the name; {FsSafetyError} when the folder moved
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NameRefused, pinDir, publishNewIn } from "./session_dir.ts";
 * const d = Deno.makeTempDirSync();
 * publishNewIn(pinDir(d)!, "ack", new TextEncoder().encode("token"), 0o644);
 * assert.equal(Deno.readTextFileSync(`${d}/ack`), "token");
 * assert.throws(() => publishNewIn(pinDir(d)!, "ack", new Uint8Array(), 0o644), NameRefused);
 * ```
 */
export function publishNewIn(pin: DirPin, name: string, bytes: Uint8Array, mode: number): void {
  const seen = lstatName(pin, name);
  if (seen !== null) {
    throw new NameRefused(pin.path, name, foundOf(seen), "something is already at this name");
  }
  replaceIn(pin, name, bytes, mode);
}

/**
 * Removes `name` from the pinned directory: the entry itself (a symlink goes, not its target; a
 * hard link's other names stay). A directory at the name is refused, not emptied. False when
 * nothing was there.
 *
 * @throws {NameRefused} a directory at the name; {FsSafetyError} when the folder moved
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pinDir, removeIn } from "./session_dir.ts";
 * assert.equal(removeIn(pinDir(Deno.makeTempDirSync())!, "x"), false);
 * ```
 */
export function removeIn(pin: DirPin, name: string): boolean {
  return inPinnedDir(pin, (at) => {
    let st: Deno.FileInfo;
    try {
      st = Deno.lstatSync(at(name));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw e;
    }
    if (st.isDirectory) throw new NameRefused(pin.path, name, "dir", "only files are removed here");
    try {
      Deno.removeSync(at(name));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw e;
    }
    return true;
  });
}

/**
 * Moves `name` out of the pinned (session-writable) directory `from` into `toPath` (absolute, in a
 * folder no session can write) by renaming the entry itself, then checks the folder is still the
 * pinned one, that what arrived is what the caller listed (`expect`: the device and inode of the
 * listing's `lstat`) and a regular file with one name. When the folder moved in between (the
 * rename took an entry of the link's target), the entry is put back where it came from and the
 * claim refused. Null when the name vanished before the rename. Any other refused entry is left
 * at `toPath` for the caller to record and remove.
 *
 * A directory is never moved: the rename goes onto an empty file made at `toPath` first, which
 * the kernel refuses for a directory (`ENOTDIR`), so it stays where the session put it and the
 * claim is refused. Moved into the runner's folder, a directory would carry with it any session
 * process whose working directory (or open handle) is inside it, and that process would reach
 * the runner's own folders by `..`, never naming them (probe 22c C1).
 *
 * @throws {NameRefused} a symlink, FIFO, directory, hard link, or another entry than the one
 *   listed; {FsSafetyError} `NOT_DIRECTORY` when the folder moved, `NOT_REGULAR_FILE` when
 *   something is already at `toPath`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claimName, pinDir } from "./session_dir.ts";
 * const d = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(d + "/r", "x");
 * const st = Deno.lstatSync(d + "/r");
 * const to = Deno.makeTempDirSync() + "/r";
 * claimName(pinDir(d)!, "r", to, st);
 * assert.equal(Deno.readTextFileSync(to), "x");
 * ```
 */
export function claimName(
  from: DirPin,
  name: string,
  toPath: string,
  expect: Pick<Deno.FileInfo, "dev" | "ino"> | null,
  /** Called between the check before and the rename (tests stand a session's swap there). */
  beforeRename?: () => void,
): Deno.FileInfo | null {
  checkName(from, name);
  checkPin(from);
  const src = `${from.path}/${name}`;
  try {
    Deno.writeFileSync(toPath, new Uint8Array(), { createNew: true, mode: 0o600 });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    throw new FsSafetyError(
      "NOT_REGULAR_FILE",
      `${toPath} exists already; no claim is made onto it`,
      {
        details: { path: toPath },
      },
    );
  }
  beforeRename?.();
  try {
    Deno.renameSync(src, toPath);
  } catch (e) {
    try {
      Deno.removeSync(toPath);
    } catch { /* the placeholder is the caller's to remove */ }
    if (e instanceof Deno.errors.NotFound) return null;
    let st: Deno.FileInfo | null = null;
    try {
      st = Deno.lstatSync(src);
    } catch { /* gone meanwhile */ }
    if (st?.isDirectory) {
      throw new NameRefused(from.path, name, "dir", "a directory is never moved out of here");
    }
    throw e;
  }
  try {
    checkPin(from);
  } catch (e) {
    // Taken from wherever the swapped path led: given back, by the same path, as it was.
    try {
      Deno.renameSync(toPath, src);
    } catch { /* the caller removes what stays */ }
    throw e;
  }
  const st = Deno.lstatSync(toPath);
  const found = foundOf(st);
  if (found !== "file") throw new NameRefused(from.path, name, found, "only a plain file is read");
  if (expect !== null && (st.dev !== expect.dev || (st.ino ?? 0) !== (expect.ino ?? 0))) {
    throw new NameRefused(
      from.path,
      name,
      "file",
      "another file than the one listed took its place",
    );
  }
  return st;
}

/**
 * Reads `name` in the pinned directory where the reader holds no private folder (the waiting
 * CLI reading its result): `lstat` must show a regular file with one name, the open is bounded
 * by `deadlineMs` (a FIFO swapped in cannot hold it), and the opened file must be the one the
 * `lstat` saw. Null when nothing is there.
 *
 * @throws {NameRefused} a symlink, FIFO, directory or hard link at the name, or a file swapped in
 *   between; {FsSafetyError} `FILE_TOO_LARGE`, or when the folder moved
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pinDir, readNameWithin } from "./session_dir.ts";
 * assert.equal(await readNameWithin(pinDir(Deno.makeTempDirSync())!, "x", 1024), null);
 * ```
 */
export async function readNameWithin(
  pin: DirPin,
  name: string,
  maxBytes: number,
  deadlineMs: number = OPEN_DEADLINE_MS,
): Promise<Uint8Array | null> {
  const before = lstatName(pin, name);
  if (before === null) return null;
  const found = foundOf(before);
  if (found !== "file") throw new NameRefused(pin.path, name, found, "only a plain file is read");
  // The open is by the pinned path (the wait for it cannot hold the working directory); the
  // fstat below refuses anything but the very file the lstat through the pin saw.
  const f = await openWithin(`${pin.path}/${name}`, deadlineMs, "file");
  try {
    const st = f.statSync();
    if (!st.isFile || st.dev !== before.dev || st.ino !== before.ino || (st.nlink ?? 1) > 1) {
      throw new NameRefused(pin.path, name, "file", "another file took its place while opening");
    }
    if (st.size > maxBytes) {
      throw new FsSafetyError(
        "FILE_TOO_LARGE",
        `${pin.path}/${name} is ${st.size} bytes, over the ${maxBytes}-byte limit`,
        { details: { path: `${pin.path}/${name}` } },
      );
    }
    const buf = new Uint8Array(Math.min(st.size, maxBytes) + 1);
    const n = readAtSync(f, 0, buf);
    if (n > maxBytes) {
      throw new FsSafetyError("FILE_TOO_LARGE", `${pin.path}/${name} grew past ${maxBytes} bytes`, {
        details: { path: `${pin.path}/${name}` },
      });
    }
    return buf.subarray(0, n);
  } finally {
    f.close();
  }
}
