/**
 * What must stay read-only inside a writable root: control-plane-named entries at any depth
 * (`.git`, `.claude`, ... in any letter case) and anything a `protected_paths` pattern covers.
 * Pure decisions; the scan that walks the roots lives in `scan.ts`.
 *
 * @example
 * ```ts
 * import { isControlPlaneName, protectedCovers } from "./protected.ts";
 * isControlPlaneName(".GIT"); // true
 * protectedCovers("secrets/a.txt", ["secrets"]); // true: a literal pattern covers what is below it
 * ```
 * @module
 */

import { CONTROL_PLANE_TOP } from "../policy/control_plane.ts";
import { hasWildcard, protectedMatch } from "../policy/fnmatch.ts";

/**
 * Entry names that are control plane wherever they appear inside a writable root, lower case:
 * the dot-named first segments of the control plane. (`sandbox` is control plane only at the
 * project root, which is never writable, so a nested `sandbox/` directory stays usable.)
 */
export const CONTROL_PLANE_NAMES: readonly string[] = Object.freeze(
  CONTROL_PLANE_TOP.filter((s) => s.startsWith(".")),
);

const NAME_SET = new Set(CONTROL_PLANE_NAMES);

/**
 * True when an entry name is a control-plane name, compared case-folded.
 *
 * @example
 * ```ts
 * import { isControlPlaneName } from "./protected.ts";
 * isControlPlaneName(".AgentTeams"); // true
 * isControlPlaneName("src"); // false
 * ```
 */
export function isControlPlaneName(name: string): boolean {
  return NAME_SET.has(name.toLowerCase());
}

/**
 * A protected pattern in the form the matcher compares: leading `./` and surrounding slashes
 * dropped. Returns `null` for a pattern that names nothing inside the project (empty, `.`,
 * absolute, or `..`-relative), which the sandbox then ignores (the project root is read-only anyway).
 *
 * @example
 * ```ts
 * import { normalizeProtected } from "./protected.ts";
 * normalizeProtected("./secrets/"); // "secrets"
 * ```
 */
export function normalizeProtected(pattern: string): string | null {
  let p = pattern;
  while (p.startsWith("./")) p = p.slice(2);
  p = p.replace(/^\/+|\/+$/g, "");
  if (pattern.startsWith("/") || p === "" || p === ".") return null;
  if (p.split("/").includes("..")) return null;
  return p;
}

/**
 * True when the project-relative POSIX path `rel` is covered by one of the `protected_paths`
 * patterns: it, or a directory above it, matches a pattern (fnmatch, case-folded, `*` crosses
 * `/`); a pattern without wildcards covers everything below it.
 *
 * @example
 * ```ts
 * import { protectedCovers } from "./protected.ts";
 * protectedCovers("build/keys/a.pem", ["*.pem"]); // true
 * protectedCovers("build/out", ["build/keys"]); // false
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
 * import { protectedMatcher } from "./protected.ts";
 * const covers = protectedMatcher(["./secrets/", "*.pem"]);
 * covers("secrets/a.txt"); // true
 * covers("src/a.ts"); // false
 * ```
 */
export function protectedMatcher(patterns: readonly string[]): (rel: string) => boolean {
  const normalized = patterns.map(normalizeProtected).filter((p): p is string => p !== null);
  // The same matcher as the proposal checks (lib/policy/fnmatch.ts): a path is covered when it,
  // or a directory above it, matches.
  return (rel) => protectedMatch(rel.replace(/^\/+|\/+$/g, ""), normalized);
}

/**
 * The literal (wildcard-free) protected patterns, normalized: paths the plan keeps read-only even
 * before they exist.
 *
 * @example
 * ```ts
 * import { literalProtected } from "./protected.ts";
 * literalProtected(["build/keys/", "*.pem"]); // ["build/keys"]
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
