/**
 * The walk that finds, inside each writable root, the entries a confined command must not change:
 * control-plane-named entries at any depth (`.git`, `.GIT`, `.claude`, ...) and entries a
 * `protected_paths` pattern covers. I/O only; which entries count is decided by
 * {@link readOnlyMatcher} (pure) and what to do with them by `plan.ts`.
 *
 * @example
 * ```ts
 * import { readOnlyMatcher, scanWritableRoots } from "./root_scan.ts";
 * const hits = scanWritableRoots(["/srv/repo/build"], readOnlyMatcher("/srv/repo", [], false));
 * hits.map((h) => h.path); // e.g. ["/srv/repo/build/vendor/.git"]
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import { within } from "../fs/within.ts";
import { isControlPlaneName } from "../policy/control_plane.ts";
import { protectedWriteRefused } from "../policy/owned_writes.ts";
import { protectedMatcher } from "./protected.ts";
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
 * import { readOnlyMatcher } from "./root_scan.ts";
 * const m = readOnlyMatcher("/p", ["*.pem"], false);
 * m("/p/build/a.pem", "a.pem"); // true
 * m("/p/build/.Git", ".Git"); // true
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
 * import { protectedIn } from "./root_scan.ts";
 * protectedIn("/p", ["*.pem"], false)("/p/build/a.pem"); // true
 * protectedIn("/p", ["*.pem"], false, ["build/*.pem"])("/p/build/a.pem"); // false: owned
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

/**
 * Walks each root depth-first without following symlinks and returns every entry the matcher
 * selects, and every directory below a root that git takes for a repository whatever its name
 * (`lib/git/repo_shape.ts`), not descending into a selected entry. An unreadable directory
 * inside a root is refused (`CONFINED_PATH_UNSAFE`): what it holds could not be kept read-only.
 *
 * @example
 * ```ts
 * import { scanWritableRoots } from "./root_scan.ts";
 * scanWritableRoots([], () => true); // []
 * ```
 */
export function scanWritableRoots(roots: readonly string[], isHit: ReadOnlyMatcher): ScanHit[] {
  const hits: ScanHit[] = [];
  const stack = [...roots];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
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
    if (!roots.includes(dir) && isGitDirListing(entries.map((e) => [e.name, kindOfInfo(e)]))) {
      hits.push({ path: dir, kind: "dir" });
      continue;
    }
    for (const entry of entries) {
      const path = dir === "/" ? "/" + entry.name : dir + "/" + entry.name;
      const kind = kindOfInfo(entry);
      if (isHit(path, entry.name)) {
        hits.push({ path, kind });
      } else if (kind === "dir") {
        stack.push(path);
      }
    }
  }
  return hits.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
