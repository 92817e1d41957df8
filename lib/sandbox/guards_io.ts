/**
 * Gathers what exists of each guarded path (control plane, literal protected paths, git's
 * resolved paths): walking from `/` with `lstat`, the first missing component and the first
 * symlink. A non-directory met above the guarded path becomes the guarded path itself (the guard
 * could only be created by replacing it). I/O only; `plan.ts` decides.
 *
 * @example
 * ```ts
 * import { guardFacts } from "./guards_io.ts";
 * guardFacts(["/srv/repo/build/keys"]);
 * // [{ path: "/srv/repo/build/keys", firstMissing: "/srv/repo/build/keys", symlinkAt: null }]
 * ```
 * @module
 */

import type { GuardFact } from "./plan.ts";
import type { EntryKind } from "./roots.ts";
import { entryKind } from "./roots_io.ts";

/**
 * Walks each absolute path component by component.
 *
 * @example
 * ```ts
 * import { guardFacts } from "./guards_io.ts";
 * guardFacts(["/"])[0].firstMissing; // null
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
