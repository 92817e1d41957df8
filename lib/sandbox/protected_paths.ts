/**
 * What `protected_paths` keeps read-only inside a writable root (the control plane's names are
 * `lib/policy/control_plane.ts`'s). Pure decisions; the scan that walks the roots lives in
 * `write_root_scan.ts`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { protectedCovers } from "./protected_paths.ts";
 * assert.equal(protectedCovers("secrets/a.txt", ["secrets"]), true); // a literal pattern covers what is below it
 * ```
 * @module
 */

import { hasWildcard } from "../pycompat/fnmatch.ts";
import { protectedMatch } from "../policy/protected_match.ts";
import { normalizeRel } from "../fs/rel_path.ts";

/**
 * A protected pattern in the form the matcher compares (`normalizeRel`: `.` and empty segments
 * dropped, a trailing `/` too). Returns `null` for a pattern that names nothing inside the project
 * (empty, `.`, absolute, a home path or `..`-relative), which the sandbox then ignores (the
 * project root is read-only anyway).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeProtected } from "./protected_paths.ts";
 * assert.equal(normalizeProtected("./secrets/"), "secrets");
 * ```
 */
export function normalizeProtected(pattern: string): string | null {
  const n = normalizeRel(pattern);
  return n.ok && n.rel !== "." ? n.rel : null;
}

/**
 * True when the project-relative POSIX path `rel` is covered by one of the `protected_paths`
 * patterns: it, or a directory above it, matches a pattern (fnmatch, case-folded, `*` crosses
 * `/`); a pattern without wildcards covers everything below it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { protectedCovers } from "./protected_paths.ts";
 * assert.equal(protectedCovers("build/keys/a.pem", ["*.pem"]), true);
 * assert.equal(protectedCovers("build/out", ["build/keys"]), false);
 * ```
 */
export function protectedCovers(rel: string, patterns: readonly string[]): boolean {
  return protectedMatcher(patterns)(rel);
}

/**
 * {@link protectedCovers} for many paths against one pattern list: the patterns are normalized
 * once (a scan asks for every entry of a write root).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { protectedMatcher } from "./protected_paths.ts";
 * const covers = protectedMatcher(["./secrets/", "*.pem"]);
 * assert.equal(covers("secrets/a.txt"), true);
 * assert.equal(covers("src/a.ts"), false);
 * ```
 */
export function protectedMatcher(patterns: readonly string[]): (rel: string) => boolean {
  const normalized = patterns.map(normalizeProtected).filter((p): p is string => p !== null);
  // The same matcher as the proposal checks (lib/pycompat/fnmatch.ts): a path is covered when it,
  // or a directory above it, matches.
  return (rel) => protectedMatch(rel.replace(/^\/+|\/+$/g, ""), normalized);
}

/**
 * The literal (wildcard-free) protected patterns, normalized: paths the plan keeps read-only even
 * before they exist.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { literalProtected } from "./protected_paths.ts";
 * assert.deepEqual(literalProtected(["build/keys/", "*.pem"]), ["build/keys"]);
 * ```
 */
export function literalProtected(patterns: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of patterns) {
    const p = normalizeProtected(raw);
    if (p !== null && !hasWildcard(p)) out.push(p);
  }
  return out;
}
