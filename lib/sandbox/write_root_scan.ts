/**
 * The walk that finds, inside each writable root, the entries a confined command must not change:
 * control-plane-named entries at any depth (`.git`, `.GIT`, `.claude`, ...) and entries a
 * `protected_paths` pattern covers. I/O only; which entries count is decided by
 * {@link readOnlyMatcher} (pure) and what to do with them by `mounts.ts`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readOnlyMatcher, scanWritableRoots } from "./write_root_scan.ts";
 * const repo = Deno.realPathSync(Deno.makeTempDirSync());
 * Deno.mkdirSync(`${repo}/build/vendor/.git`, { recursive: true });
 * const hits = scanWritableRoots([`${repo}/build`], readOnlyMatcher(repo, [], false));
 * assert.deepEqual(hits.map((h) => h.path), [`${repo}/build/vendor/.git`]);
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import { within } from "../fs/within.ts";
import { isControlPlaneName } from "../policy/control_plane.ts";
import { protectedWriteRefused } from "../policy/owned_writes.ts";
import { protectedMatcher } from "./protected_paths.ts";
import { type EntryKind, kindOfInfo } from "../fs/entry.ts";
import { isGitDirListing } from "../git/repo_shape.ts";

/** One entry the scan found. */
export interface ScanHit {
  /** Absolute path. */
  readonly path: string;
  /** What `lstat` says it is (a hit is never descended into, and symlinks are never followed). */
  readonly kind: EntryKind;
}

/** Decides whether an entry (absolute path and its name) must stay read-only. */
export type ReadOnlyMatcher = (absPath: string, name: string) => boolean;

/**
 * The matcher for one project: a control-plane name in any letter case, or a project-relative
 * path covered by `protected_paths` that the command entry's own `writes` globs (`ownedWrites`)
 * do not cover (an owned protected path stays writable: `protectedWriteRefused`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readOnlyMatcher } from "./write_root_scan.ts";
 * const m = readOnlyMatcher("/p", ["*.pem"], false);
 * assert.equal(m("/p/build/a.pem", "a.pem"), true);
 * assert.equal(m("/p/build/.Git", ".Git"), true);
 * ```
 */
export function readOnlyMatcher(
  projectReal: string,
  protectedPaths: readonly string[],
  foldCase: boolean,
  ownedWrites: readonly string[] = [],
): ReadOnlyMatcher {
  const covered = protectedIn(projectReal, protectedPaths, foldCase, ownedWrites);
  return (absPath, name) => isControlPlaneName(name) || covered(absPath);
}

/**
 * Whether an absolute path inside the project is covered by `protected_paths` (patterns
 * normalized once) and not owned: the command entry's `writes` globs (`ownedWrites`, default
 * none) do not cover it (`protectedWriteRefused`, the rule the request checks use too).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { protectedIn } from "./write_root_scan.ts";
 * assert.equal(protectedIn("/p", ["*.pem"], false)("/p/build/a.pem"), true);
 * assert.equal(protectedIn("/p", ["*.pem"], false, ["build/*.pem"])("/p/build/a.pem"), false); // owned
 * ```
 */
export function protectedIn(
  projectReal: string,
  protectedPaths: readonly string[],
  foldCase: boolean,
  ownedWrites: readonly string[] = [],
): (absPath: string) => boolean {
  if (protectedPaths.length === 0) return () => false;
  const prefix = projectReal === "/" ? "/" : projectReal + "/";
  const covers = protectedMatcher(protectedPaths);
  return (absPath) =>
    within(absPath, projectReal, foldCase) &&
    protectedWriteRefused(absPath.slice(prefix.length), covers, ownedWrites);
}

/** A directory as the first walk listed it: its identity and the subdirectories it descended into. */
export interface ScannedDir {
  /** `lstat` of the directory, taken before it was listed: inode, ctime and mtime (ms). */
  readonly id: string;
  /** The wall-clock time the `lstat` was taken (ms). */
  readonly at: number;
  /** The subdirectories the walk descended into (hits, never descended into, are not here). */
  readonly descended: readonly string[];
}

/**
 * What {@link scanWritableRoots} saw, by directory: filled when given, read by
 * {@link rescanWritableRoots} so the walk after the command lists only the directories whose
 * entries may have changed.
 */
export type ScanRecord = Map<string, ScannedDir>;

/**
 * How recently before its `lstat` a directory may have changed and still be trusted unchanged
 * later by its times alone: file times come from the kernel's coarse clock (a tick of up to 10 ms),
 * so a change just before the first walk and one just after could carry the same time. A
 * directory changed within this window is always listed again.
 */
export const SCAN_SETTLE_MS = 1000;

function dirId(st: Deno.FileInfo): string {
  return `${st.isDirectory} ${st.dev} ${st.ino} ${st.ctime?.getTime()} ${st.mtime?.getTime()}`;
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/**
 * Walks each root depth-first without following symlinks and returns every entry the matcher
 * selects, and every directory below a root that git takes for a repository whatever its name
 * (`lib/git/repo_shape.ts`), not descending into a selected entry. An unreadable directory
 * inside a root is refused (`CONFINED_PATH_UNSAFE`): what it holds could not be kept read-only.
 * When `record` is given, every directory descended into is recorded in it (its `lstat`
 * identity, taken before it is listed, and the subdirectories descended into).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scanWritableRoots } from "./write_root_scan.ts";
 * assert.deepEqual(scanWritableRoots([], () => true), []);
 * ```
 */
export function scanWritableRoots(
  roots: readonly string[],
  isHit: ReadOnlyMatcher,
  record?: ScanRecord,
): ScanHit[] {
  return walk(roots, isHit, record, undefined);
}

/**
 * The walk of {@link scanWritableRoots} after the command, with the first walk's `record`: a
 * directory whose `lstat` identity (device, inode, ctime, mtime) is the one recorded, and that had
 * not changed for {@link SCAN_SETTLE_MS} before it was recorded, holds the same entries (adding,
 * removing or renaming an entry changes its directory's mtime and ctime, and no process without
 * privilege can set a ctime back), so it is not listed again: the walk goes on into the
 * subdirectories it recorded. Every other directory (changed, replaced, new, or not recorded) is
 * listed and judged as {@link scanWritableRoots} judges it. So the second walk costs one `lstat`
 * per unchanged directory, not one entry per file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rescanWritableRoots, scanWritableRoots, type ScanRecord } from "./write_root_scan.ts";
 * const record: ScanRecord = new Map();
 * scanWritableRoots([], () => true, record);
 * assert.deepEqual(rescanWritableRoots([], () => true, record), []);
 * ```
 */
export function rescanWritableRoots(
  roots: readonly string[],
  isHit: ReadOnlyMatcher,
  record: ScanRecord,
): ScanHit[] {
  return walk(roots, isHit, undefined, record);
}

function walk(
  roots: readonly string[],
  isHit: ReadOnlyMatcher,
  record: ScanRecord | undefined,
  seen: ScanRecord | undefined,
): ScanHit[] {
  const hits: ScanHit[] = [];
  const stack = [...roots];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    let st: Deno.FileInfo | null = null;
    if (record !== undefined || seen !== undefined) {
      try {
        st = lstatOrNull(dir);
      } catch (e) {
        throw new SandboxError(
          "CONFINED_PATH_UNSAFE",
          `cannot scan ${dir} inside a writable root (${(e as Error).message}); refused`,
          { details: { path: dir } },
        );
      }
      if (st === null) continue;
    }
    const was = seen?.get(dir);
    if (was !== undefined && st !== null && dirId(st) === was.id) {
      // Unchanged since the first walk listed it: its entries are the ones it had.
      stack.push(...was.descended);
      continue;
    }
    const at = Date.now();
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      throw new SandboxError(
        "CONFINED_PATH_UNSAFE",
        `cannot scan ${dir} inside a writable root (${(e as Error).message}); refused`,
        { details: { path: dir } },
      );
    }
    // A directory git takes for a repository whatever its name (HEAD, objects/, refs/: a bare
    // repository) stays read-only as a whole, like a `.git`.
    // (Only a listing with a HEAD can be one: the pairs are built for those alone.)
    if (
      !roots.includes(dir) && entries.some((e) => e.name === "HEAD") &&
      isGitDirListing(entries.map((e) => [e.name, kindOfInfo(e)]))
    ) {
      hits.push({ path: dir, kind: "dir" });
      continue;
    }
    const descended: string[] = [];
    for (const entry of entries) {
      const path = dir === "/" ? "/" + entry.name : dir + "/" + entry.name;
      if (isHit(path, entry.name)) {
        hits.push({ path, kind: kindOfInfo(entry) });
      } else if (entry.isDirectory) {
        stack.push(path);
        descended.push(path);
      }
    }
    if (record !== undefined && st !== null && st.isDirectory) {
      // A directory that changed just before it was listed could change again within the same
      // clock tick: it is recorded so that the walk after the command lists it again.
      const settled = (st.ctime?.getTime() ?? at) < at - SCAN_SETTLE_MS &&
        (st.mtime?.getTime() ?? at) < at - SCAN_SETTLE_MS;
      record.set(dir, { id: settled ? dirId(st) : "unsettled", at, descended });
    }
  }
  return hits.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
