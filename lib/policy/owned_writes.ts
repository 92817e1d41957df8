/**
 * Owned protected writes: the one rule on whether a command may write a path `protected_paths`
 * covers. `protected_paths` binds proposals; a command request is held to its allowlist entry.
 * When the entry's own `writes` globs cover a protected path (a registered tool that maintains a
 * protected record, such as `tools/record.py` writing `reports/*\/counterexamples.json`), the
 * entry owns it and the command may write it. Reached only through the agent's write scopes or a
 * request's `expected_writes`, it stays refused. The control plane and the brief are refused
 * elsewhere, before this rule, whatever an entry's globs say.
 *
 * Pure. The request checks (`lib/requests/`), the undeclared-write check after a run and the
 * confinement plan (`lib/sandbox/`) all ask {@link protectedWriteRefused}.
 *
 * @example
 * ```ts
 * import { protectedWriteRefused } from "./owned_writes.ts";
 * const isProtected = (rel: string) => rel.endsWith("counterexamples.json");
 * protectedWriteRefused("reports/p1/counterexamples.json", isProtected, ["reports/*\/counterexamples.json"]); // false: owned
 * protectedWriteRefused("reports/p1/counterexamples.json", isProtected, ["src/*"]); // true
 * ```
 * @module
 */

import { fnmatchCase } from "../pycompat/fnmatch.ts";

/** A glob matcher called with both arguments lower-cased (fnmatch: `*` crosses `/`). */
export type GlobMatch = (rel: string, glob: string) => boolean;

/**
 * True when one of a command entry's `writes` globs covers `rel`: fnmatch, case-insensitive, `*`
 * crossing `/`, matched against the whole project-relative path. `match` is the matcher, called
 * with both sides lower-cased (a test may pass a reference implementation).
 *
 * @example
 * ```ts
 * import { entryWritesCover } from "./owned_writes.ts";
 * entryWritesCover("Out/a/b.o", ["out/*"]); // true
 * entryWritesCover("out", ["out/*"]); // false
 * ```
 */
export function entryWritesCover(
  rel: string,
  writes: readonly string[],
  match: GlobMatch = fnmatchCase,
): boolean {
  const folded = rel.toLowerCase();
  return writes.some((glob) => match(folded, glob.toLowerCase()));
}

/**
 * True when a command may not write `rel` because it is protected: `isProtected(rel)` holds and
 * the entry's own `writes` globs do not cover it. Write scopes and declarations never make a
 * protected path writable; only the entry that owns it does. Pass `[]` as `entryWrites` where no
 * entry applies (a gate): every protected path is then refused. `match` as for
 * {@link entryWritesCover}.
 *
 * @example
 * ```ts
 * import { protectedWriteRefused } from "./owned_writes.ts";
 * protectedWriteRefused("secrets/k", (r) => r.startsWith("secrets/"), []); // true
 * protectedWriteRefused("src/a.ts", (r) => r.startsWith("secrets/"), []); // false: not protected
 * ```
 */
export function protectedWriteRefused(
  rel: string,
  isProtected: (rel: string) => boolean,
  entryWrites: readonly string[],
  match: GlobMatch = fnmatchCase,
): boolean {
  return isProtected(rel) && !entryWritesCover(rel, entryWrites, match);
}
