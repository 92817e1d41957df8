/**
 * Writing inside a project so that a directory swapped for a symlink between the check and the
 * write cannot redirect the write.
 *
 * Deno has no `openat(2)`, and it treats `/proc/self/fd` and `/dev/fd` as special files that need
 * `--allow-all`, so handles cannot be anchored through descriptors. The process's working
 * directory is the one anchor left: `chdir` binds it to the directory's inode, after which names
 * relative to `.` never pass through a path again. So every mutation here:
 *
 * 1. walks the directories from the project root with `lstat`, refusing any symlink or
 *    non-directory, and records the last directory's device, inode and expected real path;
 * 2. `chdir`s into it, then checks that `.` has that device and inode and that the kernel's path
 *    of `.` (`realpath(".")`) is the expected one; only then
 * 3. opens, renames or unlinks single names relative to `.`; and returns to the project root.
 *
 * A swap before step 2 fails the check; a swap after it cannot move the operation, which is bound
 * to the inode. The working directory is process-wide, so these calls are synchronous and brief,
 * and the CLI's working directory is the project root otherwise.
 *
 * @example
 * ```ts
 * import { walkDirs, writeFileAnchored } from "./anchored_dir.ts";
 * const root = Deno.makeTempDirSync();
 * const dir = walkDirs(root, [], {})!;
 * writeFileAnchored(dir, "a.txt", new TextEncoder().encode("hi\n"), () => 0o644);
 * ```
 * @module
 */
import * as nodeFs from "node:fs";
import { FsSafetyError } from "../errors.ts";

const C = nodeFs.constants;

/** A directory reached without symlinks, identified by device and inode. */
export interface DirRef {
  /** Its absolute path under the project root as given. */
  readonly abs: string;
  /** Its expected real path (the root's real path joined with the segments). */
  readonly real: string;
  /** Device. */
  readonly dev: number;
  /** Inode. */
  readonly ino: number;
}

/** What `lstat` says a child is. */
export type ChildKind = "absent" | "file" | "dir" | "symlink" | "other";

function checkName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new FsSafetyError(
      "NOT_DIRECTORY",
      `not a single path component: ${JSON.stringify(name)}`,
    );
  }
}

function errno(e: unknown): string | undefined {
  return (e as { code?: string }).code;
}

function randomHex(n: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(n)),
    (x) => x.toString(16).padStart(2, "0"),
  ).join("");
}

function refOf(abs: string, real: string, st: Deno.FileInfo): DirRef {
  return { abs, real, dev: st.dev, ino: st.ino ?? -1 };
}

/**
 * Walks `segments` below `root` with `lstat`, refusing symlinks and non-directories; with
 * `create`, makes missing directories (0755). Returns `null` when one is missing and `create` is
 * false.
 *
 * @throws {FsSafetyError} `SYMLINK` or `NOT_DIRECTORY` naming the component.
 * @example
 * ```ts
 * import { walkDirs } from "./anchored_dir.ts";
 * walkDirs(Deno.makeTempDirSync(), ["missing"]); // null
 * ```
 */
export function walkDirs(
  root: string,
  segments: readonly string[],
  opts: { create?: boolean } = {},
): DirRef | null {
  const rootReal = Deno.realPathSync(root);
  let abs = root;
  let real = rootReal;
  let st = Deno.statSync(root);
  for (const seg of segments) {
    checkName(seg);
    abs = `${abs}/${seg}`;
    real = `${real}/${seg}`;
    let l: Deno.FileInfo;
    try {
      l = Deno.lstatSync(abs);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound) || !opts.create) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
      try {
        Deno.mkdirSync(abs, { mode: 0o755 });
      } catch (m) {
        if (!(m instanceof Deno.errors.AlreadyExists)) throw m;
      }
      l = Deno.lstatSync(abs);
    }
    if (l.isSymlink) throw new FsSafetyError("SYMLINK", `${abs} is a symlink`);
    if (!l.isDirectory) throw new FsSafetyError("NOT_DIRECTORY", `${abs} is not a directory`);
    st = l;
  }
  return refOf(abs, real, st);
}

/**
 * What is at `name` in `dir` (not following a symlink). Path-based: for checks, not for acts.
 *
 * @example
 * ```ts
 * import { childKind, walkDirs } from "./anchored_dir.ts";
 * childKind(walkDirs(Deno.makeTempDirSync(), [])!, "x"); // "absent"
 * ```
 */
export function childKind(dir: DirRef, name: string): ChildKind {
  checkName(name);
  try {
    const st = Deno.lstatSync(`${dir.abs}/${name}`);
    if (st.isSymlink) return "symlink";
    if (st.isDirectory) return "dir";
    if (st.isFile) return "file";
    return "other";
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "absent";
    throw e;
  }
}

/** The current working directory, when the process may know it. */
function cwdOrNull(): string | null {
  try {
    return Deno.cwd();
  } catch {
    return null;
  }
}

/**
 * Runs `fn` with the working directory anchored in `dir` (see the module doc), then returns to
 * the previous working directory (or, if it may not be read, to the directory's parent chain's
 * root: the caller's project).
 *
 * @throws {FsSafetyError} `FILE_CHANGED` when `dir` is no longer the directory that was walked.
 */
export function inDirectory<T>(dir: DirRef, back: string, fn: () => T): T {
  const prev = cwdOrNull() ?? back;
  Deno.chdir(dir.abs);
  try {
    const st = Deno.statSync(".");
    if (st.dev !== dir.dev || st.ino !== dir.ino || Deno.realPathSync(".") !== dir.real) {
      throw new FsSafetyError(
        "FILE_CHANGED",
        `${dir.abs} changed (replaced or moved) between the check and the write; refused`,
      );
    }
    return fn();
  } finally {
    Deno.chdir(prev);
  }
}

/**
 * Reads the regular file `name` in the current directory (not through a symlink, not blocking
 * on a FIFO), at most `maxBytes`; `null` when absent. Call inside {@link inDirectory}.
 *
 * @throws {FsSafetyError} `SYMLINK`, `NOT_REGULAR_FILE`, `FILE_TOO_LARGE`.
 */
export function readHere(
  name: string,
  maxBytes: number,
): { bytes: Uint8Array; mode: number } | null {
  checkName(name);
  let fd: number;
  try {
    fd = nodeFs.openSync(name, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (e) {
    if (errno(e) === "ENOENT") return null;
    if (errno(e) === "ELOOP") throw new FsSafetyError("SYMLINK", `${name} is a symlink`);
    throw e;
  }
  try {
    const st = nodeFs.fstatSync(fd);
    if (!st.isFile()) throw new FsSafetyError("NOT_REGULAR_FILE", `${name} is not a regular file`);
    if (st.size > maxBytes) {
      throw new FsSafetyError("FILE_TOO_LARGE", `${name} is ${st.size} bytes, over ${maxBytes}`);
    }
    const buf = new Uint8Array(st.size + 1);
    let off = 0;
    while (off < buf.length) {
      const n = nodeFs.readSync(fd, buf, off, buf.length - off, null);
      if (n === 0) break;
      off += n;
    }
    if (off > maxBytes) throw new FsSafetyError("FILE_TOO_LARGE", `${name} grew past ${maxBytes}`);
    return { bytes: buf.slice(0, off), mode: st.mode & 0o7777 };
  } finally {
    nodeFs.closeSync(fd);
  }
}

/**
 * Reads `name` in `dir`, anchored.
 *
 * @example
 * ```ts
 * import { readAnchored, walkDirs } from "./anchored_dir.ts";
 * const root = Deno.makeTempDirSync();
 * readAnchored(walkDirs(root, [])!, "x", 10, root); // null
 * ```
 */
export function readAnchored(
  dir: DirRef,
  name: string,
  maxBytes: number,
  back: string,
): { bytes: Uint8Array; mode: number } | null {
  return inDirectory(dir, back, () => readHere(name, maxBytes));
}

/**
 * Replaces (or creates) `name` in `dir` atomically and anchored: `check` sees the current content
 * (or `null`) and may throw to refuse; it returns the mode to write. The temporary file is
 * created exclusively in the anchored directory, written and fsynced, then renamed over `name` (a
 * symlink there is replaced, never followed), and the directory is fsynced.
 *
 * @example
 * ```ts
 * import { walkDirs, writeFileAnchored } from "./anchored_dir.ts";
 * const root = Deno.makeTempDirSync();
 * writeFileAnchored(walkDirs(root, [])!, "n.txt", new Uint8Array([104]), (cur) => cur?.mode ?? 0o644, root);
 * ```
 */
export function writeFileAnchored(
  dir: DirRef,
  name: string,
  bytes: Uint8Array,
  check: (current: { bytes: Uint8Array; mode: number } | null) => number,
  back: string = dir.abs,
  maxBytes = 64 * 1024 * 1024,
): void {
  checkName(name);
  const tmp = `.${name.slice(0, 100)}.${randomHex(8)}.tmp`;
  // 1. Check the current content and create the temporary file, anchored.
  const { fd, mode } = inDirectory(dir, back, () => {
    const m = check(readHere(name, maxBytes));
    return {
      fd: nodeFs.openSync(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600),
      mode: m,
    };
  });
  let done = false;
  try {
    // 2. Fill it through its descriptor (no path involved).
    let off = 0;
    while (off < bytes.length) off += nodeFs.writeSync(fd, bytes, off, bytes.length - off);
    nodeFs.fchmodSync(fd, mode);
    nodeFs.fsyncSync(fd);
    nodeFs.closeSync(fd);
    // 3. Re-check and rename, anchored in the same directory inode.
    inDirectory(dir, back, () => {
      check(readHere(name, maxBytes));
      nodeFs.renameSync(tmp, name);
      done = true;
      const d = nodeFs.openSync(".", C.O_RDONLY | C.O_DIRECTORY);
      try {
        nodeFs.fsyncSync(d);
      } finally {
        nodeFs.closeSync(d);
      }
    });
  } finally {
    if (!done) {
      try {
        nodeFs.closeSync(fd);
      } catch { /* closed already */ }
      try {
        inDirectory(dir, back, () => nodeFs.unlinkSync(tmp));
      } catch { /* gone, or the directory moved: nothing outside was touched */ }
    }
  }
}

/**
 * Removes `name` in `dir`, anchored, after `check` approves its current content.
 *
 * @example
 * ```ts
 * import { unlinkAnchored, walkDirs, writeFileAnchored } from "./anchored_dir.ts";
 * const root = Deno.makeTempDirSync();
 * const d = walkDirs(root, [])!;
 * writeFileAnchored(d, "x", new Uint8Array(0), () => 0o644, root);
 * unlinkAnchored(d, "x", () => {}, root);
 * ```
 */
export function unlinkAnchored(
  dir: DirRef,
  name: string,
  check: (current: { bytes: Uint8Array; mode: number } | null) => void,
  back: string = dir.abs,
  maxBytes = 64 * 1024 * 1024,
): void {
  checkName(name);
  inDirectory(dir, back, () => {
    check(readHere(name, maxBytes));
    nodeFs.unlinkSync(name);
    const d = nodeFs.openSync(".", C.O_RDONLY | C.O_DIRECTORY);
    try {
      nodeFs.fsyncSync(d);
    } finally {
      nodeFs.closeSync(d);
    }
  });
}
