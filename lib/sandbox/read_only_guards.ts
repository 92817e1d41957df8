/**
 * Gathers what exists of each guarded path (control plane, literal protected paths, git's
 * resolved paths): walking from `/` with `lstat`, the first missing component and the first
 * symlink. A non-directory met above the guarded path becomes the guarded path itself (the guard
 * could only be created by replacing it). I/O only; `mounts.ts` decides.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { guardFacts } from "./read_only_guards.ts";
 * const repo = Deno.realPathSync(Deno.makeTempDirSync());
 * Deno.mkdirSync(`${repo}/build`);
 * assert.deepEqual(guardFacts([`${repo}/build/keys`]), [
 *   { path: `${repo}/build/keys`, firstMissing: `${repo}/build/keys`, symlinkAt: null },
 * ]);
 * ```
 * @module
 */

import { FsSafetyError, SandboxError } from "../errors.ts";
import { anchoredRemoveTree } from "../fs/anchored_write.ts";
import type { GuardFact } from "./mounts.ts";
import { type EntryKind, entryKind } from "../fs/entry.ts";
import {
  protectedIn,
  rescanWritableRoots,
  type ScanRecord,
  scanWritableRoots,
} from "./write_root_scan.ts";
import { isControlPlaneName } from "../policy/control_plane.ts";
import { within } from "../fs/within.ts";

/**
 * Walks each absolute path component by component.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { guardFacts } from "./read_only_guards.ts";
 * assert.equal(guardFacts(["/"])[0].firstMissing, null);
 * ```
 */
export function guardFacts(paths: readonly string[]): GuardFact[] {
  // The guarded paths share the project's ancestors: each component is lstat'ed once per call.
  const kinds = new Map<string, EntryKind | null>();
  const kindAt = (p: string): EntryKind | null => {
    let kind = kinds.get(p);
    if (kind === undefined) {
      try {
        kind = entryKind(p);
      } catch (e) {
        // A component the tool may not read (narrow launch flags) is an ancestor of a granted
        // path: of the project, or of a git path outside it (which the launch line grants one
        // by one). Every guarded path was resolved with `realPathLoose` first, so such an
        // ancestor is a real directory, not a link: it is taken as one (`null`).
        if (!(e instanceof Deno.errors.NotCapable)) throw e;
        kind = null;
      }
      kinds.set(p, kind);
    }
    return kind;
  };
  return paths.map((path) => {
    let cur = "";
    for (const seg of path.split("/")) {
      if (seg === "") continue;
      cur += "/" + seg;
      const kind = kindAt(cur);
      if (kind === null) continue;
      if (kind === "missing") return { path, firstMissing: cur, symlinkAt: null };
      if (kind === "symlink") return { path, firstMissing: null, symlinkAt: cur };
      if (kind !== "dir" && cur !== path) {
        // A file where a directory was expected: the guarded path could only be created by
        // replacing that file, so the file itself is what must stay read-only.
        return { path: cur, firstMissing: null, symlinkAt: null };
      }
    }
    return { path, firstMissing: null, symlinkAt: null };
  });
}

/**
 * What a read-only bind cannot stop: inside a write root, a guarded path's parent can be renamed
 * (the mount moves with it) and the path made anew, and a masked path can be created once its
 * parent is moved aside. So the identity (device and inode) of each re-bound path is taken before
 * the command runs; {@link guardedPathsChanged} compares after it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { guardedIdentities } from "./read_only_guards.ts";
 * // The kind, device and inode, as in "dir 2049:131073".
 * assert.match(guardedIdentities({ readOnly: ["/etc"], masks: [] }).get("/etc") ?? "", /^dir \d+:\d+$/);
 * ```
 */
export function guardedIdentities(
  plan: { readonly readOnly: readonly string[]; readonly masks: readonly string[] },
): Map<string, string> {
  return new Map(plan.readOnly.map((p) => [p, identityOf(p)]));
}

/**
 * The re-bound paths whose identity changed (replaced, moved away) and the masked paths that now
 * exist, sorted: the command got past a read-only mount by moving a parent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { guardedIdentities, guardedPathsChanged } from "./read_only_guards.ts";
 * const plan = { readOnly: ["/etc"], masks: ["/nonexistent/x"] };
 * assert.deepEqual(guardedPathsChanged(plan, guardedIdentities(plan)), []);
 * ```
 */
export function guardedPathsChanged(
  plan: { readonly readOnly: readonly string[]; readonly masks: readonly string[] },
  before: ReadonlyMap<string, string>,
): string[] {
  const changed = plan.readOnly.filter((p) => identityOf(p) !== before.get(p));
  // bwrap's own mount points for masks are removed after the run (run_dir.ts); anything at a
  // mask path now was made by the command.
  const made = plan.masks.filter((p) => identityOf(p) !== "missing");
  return [...changed, ...made].sort();
}

function identityOf(path: string): string {
  try {
    const st = Deno.lstatSync(path);
    return `${st.isDirectory ? "dir" : st.isSymlink ? "link" : "file"} ${st.dev}:${st.ino}`;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
      return "missing";
    }
    throw e;
  }
}

/**
 * What a run left in a granted root (another team's workspace, which sees no ledger of this
 * project) that steers agents, hosts or git there: every control-plane name (any depth, any case)
 * or git repository shape that was not there, read-only, when the run started, and every
 * read-only path the command got past by moving a parent (`changed`, from
 * {@link guardedPathsChanged}). Each is removed (whole, links not followed, every folder reached
 * from the granted root by `anchoredRemoveTree`) and returned, sorted:
 * the run then fails naming them, and nothing of it is left for the issuer's git to obey. An entry
 * that is one of the read-only paths moved aside (its identity among `before`'s) is the issuer's
 * own, and stays where the move left it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scrubGrantedRoots } from "./read_only_guards.ts";
 * assert.deepEqual(await scrubGrantedRoots({ readOnly: [], masks: [] }, [], [], new Map()), []);
 * ```
 */
export async function scrubGrantedRoots(
  plan: { readonly readOnly: readonly string[]; readonly masks: readonly string[] },
  grantedRoots: readonly string[],
  changed: readonly string[],
  before: ReadonlyMap<string, string>,
  foldCase: boolean = Deno.build.os === "darwin",
): Promise<string[]> {
  if (grantedRoots.length === 0) return [];
  const known = [...plan.readOnly, ...plan.masks];
  const original = new Set(before.values());
  const inGranted = (p: string) => grantedRoots.some((g) => within(p, g, foldCase));
  let found: string[];
  try {
    found = scanWritableRoots(grantedRoots, (_abs, name) => isControlPlaneName(name))
      .map((h) => h.path)
      .filter((p) => !known.some((k) => within(p, k, foldCase)))
      .filter((p) => !original.has(identityOf(p)));
  } catch (e) {
    // A directory the scan cannot open: reported, not removed (what it holds is unknown).
    if (e instanceof SandboxError && typeof e.details.path === "string") return [e.details.path];
    throw e;
  }
  const made = [...new Set([...found, ...changed.filter(inGranted)])].sort();
  for (const p of made) {
    // Removed the anchored way: from `/` one folder at a time (the granted root's own among
    // them), none a link, none swapped between its check and its entry (the issuer's side can
    // write there). One that is leaves the entry where it is, still named (the run fails on it).
    const place = placeIn(p, grantedRoots, foldCase);
    if (place === null) continue;
    try {
      await anchoredRemoveTree(place);
    } catch (e) {
      if (!(e instanceof FsSafetyError)) throw e;
    }
  }
  return made;
}

/**
 * `p` as an anchored place, walked from `/`: every folder of the granted root holding it (a real
 * path, by the grant rule) and below, then its name. The granted root itself is checked too: its
 * parent is the issuer's, who could swap it for a link between the scan and the removal.
 */
function placeIn(
  p: string,
  roots: readonly string[],
  foldCase: boolean,
): { root: string; dirs: string[]; name: string } | null {
  if (!roots.some((g) => within(p, g, foldCase) && p.length > g.length)) return null;
  const segs = p.split("/").filter((x) => x !== "");
  const name = segs.pop();
  return name === undefined ? null : { root: "/", dirs: segs, name };
}

/**
 * Entries that appeared in a write root during the run and must not be left there unreported: a
 * new `.git` (any letter case, at any depth: git would obey its hooks and config in that
 * directory), or a new entry a `protected_paths` pattern covers that the command entry's own
 * `writes` globs (`ownedWrites`) do not (an owned protected write). bwrap re-binds only what exists
 * when the run starts and cannot forbid creating such an entry, and git status never lists a
 * `.git`, so the write roots are scanned again after the command. Other control-plane names met
 * deeper in a tree (a package's own `.github/FUNDING.yml`) are ordinary writes there, compared and
 * declared like any other. What lies inside a path that stayed read-only (or masked) is not
 * new. A directory the scan cannot open is returned itself (what it holds could not be checked).
 * Sorted absolute paths. With the plan's scan `record` (`PreparedRun.scan`), only directories
 * whose entries may have changed since are listed again (`rescanWritableRoots`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newReadOnlyEntries } from "./read_only_guards.ts";
 * assert.deepEqual(newReadOnlyEntries({ project: "/p", writeRoots: [], readOnly: [], masks: [] }, []), []);
 * ```
 */
export function newReadOnlyEntries(
  plan: {
    readonly project: string;
    readonly writeRoots: readonly string[];
    readonly readOnly: readonly string[];
    readonly masks: readonly string[];
  },
  protectedPaths: readonly string[],
  ownedWrites: readonly string[] = [],
  foldCase: boolean = Deno.build.os === "darwin",
  record?: ScanRecord,
): string[] {
  const known = [...plan.readOnly, ...plan.masks];
  const covered = protectedIn(plan.project, protectedPaths, foldCase, ownedWrites);
  const matcher = (abs: string, name: string): boolean =>
    name.toLowerCase() === ".git" || (!isControlPlaneName(name) && covered(abs));
  try {
    const hits = record === undefined
      ? scanWritableRoots(plan.writeRoots, matcher)
      : rescanWritableRoots(plan.writeRoots, matcher, record);
    return hits
      .map((h) => h.path)
      .filter((p) => !known.some((k) => within(p, k, foldCase)));
  } catch (e) {
    if (e instanceof SandboxError && typeof e.details.path === "string") return [e.details.path];
    throw e;
  }
}
