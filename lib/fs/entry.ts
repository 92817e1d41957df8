/**
 * What is at a path, asked with `lstat` (never following a final symlink), and a path's real
 * form. Every "is it a file, a directory, a symlink, or nothing" question in the tree is answered
 * here.
 *
 * @example
 * ```ts
 * import { entryKind } from "./entry.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(entryKind("/"), "dir");
 * assert.deepEqual(entryKind("/surely/not/here-4c1"), "missing");
 * ```
 * @module
 */

/** The kinds {@link entryKind} tells apart. */
export type EntryKind = "dir" | "file" | "symlink" | "other" | "missing";

/**
 * The kind of an `lstat` result (or of a directory entry, which is not followed either).
 *
 * @example
 * ```ts
 * import { kindOfInfo } from "./entry.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(kindOfInfo(Deno.lstatSync("/dev/null")), "other");
 * ```
 */
export function kindOfInfo(
  info: Pick<Deno.FileInfo | Deno.DirEntry, "isSymlink" | "isDirectory" | "isFile">,
): Exclude<EntryKind, "missing"> {
  if (info.isSymlink) return "symlink";
  if (info.isDirectory) return "dir";
  if (info.isFile) return "file";
  return "other";
}

/**
 * What `lstat` says is at `path`: `missing` when nothing is there (or a component above is not a
 * directory). Other errors (permission, Deno's `NotCapable`) are thrown.
 *
 * @example
 * ```ts
 * import { entryKind } from "./entry.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(entryKind("/etc/hostname/x"), "missing");
 * ```
 */
export function entryKind(path: string): EntryKind {
  try {
    return kindOfInfo(Deno.lstatSync(path));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
      return "missing";
    }
    throw e;
  }
}

/**
 * `lstat` of `path`, or `null` when nothing is there. A component above that is not a directory
 * is an error, not "nothing there": a directory replaced by a file is for the caller to refuse.
 *
 * @example
 * ```ts
 * import { lstatOrNull } from "./entry.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await lstatOrNull("/nonexistent-4c1"), null);
 * ```
 */
export async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/**
 * Synchronous {@link lstatOrNull}.
 *
 * @example
 * ```ts
 * import { lstatOrNullSync } from "./entry.ts";
 * import assert from "node:assert/strict";
 * assert.equal(lstatOrNullSync("/nonexistent-4c1"), null);
 * ```
 */
export function lstatOrNullSync(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/**
 * What kind of object an `lstat` result is, for messages.
 *
 * @example
 * ```ts
 * import { describeKind } from "./entry.ts";
 * import assert from "node:assert/strict";
 * assert.equal(describeKind(Deno.lstatSync("/dev/null")), "a device");
 * ```
 */
export function describeKind(info: Deno.FileInfo): string {
  if (info.isSymlink) return "a symlink";
  if (info.isDirectory) return "a directory";
  if (info.isFile) return "a regular file";
  if (info.isFifo) return "a FIFO";
  if (info.isSocket) return "a socket";
  if (info.isCharDevice || info.isBlockDevice) return "a device";
  return "not a regular file";
}

/**
 * The real path of `path`, resolving symlinks as far as the path exists and appending the
 * missing remainder lexically (like Python's `os.path.realpath`).
 *
 * @example
 * ```ts
 * import { realPathLoose } from "./entry.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(realPathLoose("/surely-not-here-4c1/x"), "/surely-not-here-4c1/x");
 * ```
 */
export function realPathLoose(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    const cut = path.replace(/\/+$/, "").lastIndexOf("/");
    if (cut <= 0) return path;
    const parent = realPathLoose(path.slice(0, cut));
    const rest = path.slice(cut + 1).replace(/\/+$/, "");
    return parent === "/" ? "/" + rest : parent + "/" + rest;
  }
}

/**
 * Opens the directory at `path` for reading (to fsync it, or to hold a lock on it), and only a
 * directory: the open goes through `path/.`, which the kernel resolves only when `path` is one, so
 * a FIFO, a file or a device put at the name between a check and this open is refused
 * (`NotADirectory`) instead of opened. A FIFO opened for reading waits for a writer, on the calling
 * thread: a session that can rename a folder the tool syncs could otherwise stop it there.
 *
 * @throws {Deno.errors.NotADirectory} when something other than a directory is at `path`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openDirectorySync } from "./entry.ts";
 * const d = Deno.makeTempDirSync();
 * openDirectorySync(d).close();
 * Deno.writeTextFileSync(`${d}/f`, "x");
 * assert.throws(() => openDirectorySync(`${d}/f`), Deno.errors.NotADirectory);
 * ```
 */
export function openDirectorySync(path: string): Deno.FsFile {
  return Deno.openSync(path.endsWith("/") ? `${path}.` : `${path}/.`, { read: true });
}
