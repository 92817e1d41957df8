/**
 * Checking a project path by walking it from the root with `lstat`: every directory on the way
 * must be a real directory, never a symlink. These are checks, made by path; acting on the
 * result goes through `anchored_write.ts`, which repeats them bound to inodes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { walkDirs } from "./path_walk.ts";
 * assert.equal(walkDirs(Deno.makeTempDirSync(), ["missing"]), null);
 * ```
 * @module
 */
import { FsSafetyError } from "../errors.ts";
import { readRegularFileWithin } from "./safe_read.ts";
import { type EntryKind, entryKind } from "./entry.ts";

/**
 * Refuses a name that is not one path component (empty, `.`, `..`, or holding `/` or NUL).
 *
 * @throws {FsSafetyError} `NOT_DIRECTORY`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkName } from "./path_walk.ts";
 * assert.doesNotThrow(() => checkName("a.txt"));
 * assert.throws(() => checkName("../a"), { code: "NOT_DIRECTORY" });
 * ```
 */
export function checkName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new FsSafetyError(
      "NOT_DIRECTORY",
      `not a single path component: ${JSON.stringify(name)}`,
    );
  }
}

/**
 * Walks `segments` below `root` with `lstat`, refusing symlinks and non-directories. Returns the
 * last directory's path, or `null` when one is missing.
 *
 * @throws {FsSafetyError} `SYMLINK` or `NOT_DIRECTORY` naming the component.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { walkDirs } from "./path_walk.ts";
 * assert.equal(walkDirs("/usr", ["bin"]), "/usr/bin");
 * assert.equal(walkDirs("/usr", ["no-such-dir-4c1"]), null);
 * ```
 */
export function walkDirs(root: string, segments: readonly string[]): string | null {
  let abs = root;
  for (const seg of segments) {
    checkName(seg);
    abs = `${abs}/${seg}`;
    let l: Deno.FileInfo;
    try {
      l = Deno.lstatSync(abs);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      if (e instanceof Deno.errors.NotADirectory) {
        throw new FsSafetyError("NOT_DIRECTORY", `a component above ${abs} is not a directory`);
      }
      throw e;
    }
    if (l.isSymlink) throw new FsSafetyError("SYMLINK", `${abs} is a symlink`);
    if (!l.isDirectory) throw new FsSafetyError("NOT_DIRECTORY", `${abs} is not a directory`);
  }
  return abs;
}

/**
 * What is at `name` in `dir` (not following a symlink).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { childKind } from "./path_walk.ts";
 * assert.equal(childKind("/tmp", "surely-not-here-4c1"), "missing");
 * ```
 */
export function childKind(dir: string, name: string): EntryKind {
  checkName(name);
  return entryKind(`${dir}/${name}`);
}

/**
 * Reads the regular file `name` in `dir`, at most `maxBytes`: never through a symlink, and never
 * waiting on a FIFO an agent renamed into its place after the check (the open has a deadline).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readChild } from "./path_walk.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a.txt`, "hi\n");
 * assert.equal(new TextDecoder().decode((await readChild(dir, "a.txt", 4096)).bytes), "hi\n");
 * ```
 */
export async function readChild(
  dir: string,
  name: string,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; mode: number }> {
  checkName(name);
  const f = await readRegularFileWithin(`${dir}/${name}`, { maxBytes, what: "target" });
  return { bytes: f.bytes, mode: f.mode & 0o7777 };
}
