/**
 * What makes a directory a git repository to git itself, whatever its name: a `HEAD`, an
 * `objects/` directory and a `refs/` directory in it (git's `is_git_directory`; a bare
 * repository needs no `.git` name, and `safe.bareRepository` accepts one by default). A directory
 * that is one, or that a write would complete into one, is control plane: the operator's next
 * `git` there obeys its config and hooks.
 *
 * @example
 * ```ts
 * import { isGitDirListing } from "./repo_shape.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isGitDirListing([["HEAD", "file"], ["objects", "dir"], ["refs", "dir"]]), true);
 * assert.equal(isGitDirListing([["HEAD", "file"], ["objects", "dir"]]), false);
 * ```
 * @module
 */
import type { EntryKind } from "../fs/entry.ts";

/** The three entries that make a git directory, and what kind each must be. */
const PARTS: ReadonlyMap<string, (k: EntryKind) => boolean> = new Map<
  string,
  (k: EntryKind) => boolean
>([
  ["HEAD", (k) => k === "file" || k === "symlink"],
  ["objects", (k) => k === "dir" || k === "symlink"],
  ["refs", (k) => k === "dir" || k === "symlink"],
]);

/**
 * Whether a directory listing (name and kind of each entry) is a git directory's.
 *
 * @example
 * ```ts
 * import { isGitDirListing } from "./repo_shape.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isGitDirListing([["HEAD", "symlink"], ["objects", "dir"], ["refs", "symlink"]]), true);
 * ```
 */
export function isGitDirListing(entries: Iterable<readonly [string, EntryKind]>): boolean {
  let found = 0;
  for (const [name, kind] of entries) {
    const ok = PARTS.get(name);
    if (ok !== undefined && ok(kind)) found++;
  }
  return found === PARTS.size;
}

/**
 * Whether the directory `dir` is a git directory, or would be one once `child` (the first name
 * below it on a path about to be written) exists: `kindOf` says what is there now. Pure but for
 * `kindOf`.
 *
 * @example
 * ```ts
 * import { wouldBeGitDir } from "./repo_shape.ts";
 * import assert from "node:assert/strict";
 * const on = new Map([["/p/v/HEAD", "file"], ["/p/v/objects", "dir"]]);
 * const kindOf = (abs: string) => on.get(abs) as "file" | "dir" ?? "missing";
 * assert.equal(wouldBeGitDir("/p/v", "refs", kindOf), true); // writing refs/heads/main completes it
 * assert.equal(wouldBeGitDir("/p/v", "src", kindOf), false);
 * ```
 */
export function wouldBeGitDir(
  dir: string,
  child: string,
  kindOf: (abs: string) => EntryKind,
): boolean {
  const base = dir === "/" ? "" : dir;
  for (const [name, ok] of PARTS) {
    if (name === child) continue; // the write makes it
    if (!ok(kindOf(`${base}/${name}`))) return false;
  }
  return true;
}
