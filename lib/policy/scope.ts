/**
 * Write scopes: which project paths an agent's change and deletion proposals may touch.
 *
 * A scope is one of:
 * - a literal file, `docs/guide.md`, which covers exactly that path;
 * - a directory ending in `/`, `docs/`, which covers everything below it;
 * - a segment pattern such as `reports/dossiers/ * /strategy.md` (written here with spaces around
 *   the star only because a comment cannot hold star-slash), where `*`, `?` and `[...]` match
 *   within one path segment (never across `/`) and never match a dot-segment (one starting with
 *   `.`) unless the pattern segment itself starts with `.`. A pattern ending in `/` covers
 *   everything below what it matches, dot-files and dot-directories included (`reports/p?/`
 *   covers `reports/p2/.envrc`).
 *
 * Matching is case-exact (the control plane and protected paths, which refuse, are the ones folded).
 * The first segment must be literal and outside the control plane; a
 * scope with any problem (see {@link scopePatternProblem}) never matches, whether or not the policy
 * lint saw it.
 *
 * @example
 * ```ts
 * import { inWriteScopes } from "./scope.ts";
 * inWriteScopes("reports/p2/.envrc", ["reports/p?/"]); // true
 * inWriteScopes("reports/.git/config", ["reports/?git/"]); // false: `?` never matches the dot
 * ```
 * @module
 */

import { patternNamesControlPlane } from "./control_plane.ts";
import { fnmatchCase, hasWildcard } from "../pycompat/fnmatch.ts";
import { commonPathProblem } from "./pattern_rules.ts";
import { isPlainRel, segmentProblem } from "../fs/rel_path.ts";

/**
 * Why a write scope is unsafe, or `null` when it is acceptable. Applies to literal scopes and
 * patterns alike: absolute or `~` paths, empty, `.` or `..` segments, `**`, a wildcard in the
 * first segment, a control-plane segment, backslashes and control characters are refused.
 *
 * @example
 * ```ts
 * import { scopePatternProblem } from "./scope.ts";
 * scopePatternProblem("src/"); // null
 * scopePatternProblem("src/**"); // "uses '**'; ..."
 * ```
 */
export function scopePatternProblem(scope: string): string | null {
  const common = commonPathProblem(scope);
  if (common !== null) return common;
  const segments = (scope.endsWith("/") ? scope.slice(0, -1) : scope).split("/");
  if (segmentProblem(segments) !== null) return "has an empty, '.' or '..' segment";
  if (segments.some((s) => s.includes("**"))) {
    return "uses '**'; '*' matches within one segment, so list each depth";
  }
  if (hasWildcard(segments[0])) return "must start with a literal project directory";
  const plane = patternNamesControlPlane(segments);
  if (plane !== null) return `is inside the project control plane (${plane.entry})`;
  return null;
}

/**
 * Whether one scope covers `rel` (a normalized project-relative path). Unsafe scopes never match.
 *
 * @example
 * ```ts
 * import { scopeMatches } from "./scope.ts";
 * scopeMatches("docs/Guide.md", "docs/"); // true
 * scopeMatches("Docs/Guide.md", "docs/"); // false: case is exact
 * scopeMatches("docs", "docs/"); // false: a directory scope covers what is below it
 * ```
 */
export function scopeMatches(rel: string, scope: string): boolean {
  if (!isPlainRel(rel) || scopePatternProblem(scope) !== null) return false;
  // Exact case: on a case-sensitive file system `Docs/` is another directory than `docs/`, and
  // folding (`toLowerCase` also folds U+212A KELVIN SIGN to `k`) would widen a scope to it. On a
  // case-insensitive one, a path spelled in another case is refused, which fails safe.
  const parts = rel.split("/");
  const below = scope.endsWith("/");
  const pattern = (below ? scope.slice(0, -1) : scope).split("/");
  if (below ? parts.length <= pattern.length : parts.length !== pattern.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const seg = parts[i];
    const pat = pattern[i];
    if (seg.startsWith(".") && !pat.startsWith(".")) return false;
    if (!fnmatchCase(seg, pat)) return false;
  }
  return true;
}

/**
 * Whether `rel` lies inside any of `scopes`.
 *
 * @example
 * ```ts
 * import { inWriteScopes } from "./scope.ts";
 * const scopes = ["reports/dossiers/[a-z]*"];
 * inWriteScopes("reports/dossiers/acme", scopes); // true
 * inWriteScopes("reports/dossiers/acme/strategy.md", scopes); // false: `*` stays in its segment
 * ```
 */
export function inWriteScopes(rel: string, scopes: readonly string[]): boolean {
  return scopes.some((scope) => scopeMatches(rel, scope));
}

/**
 * Whether a scope is literal: no wildcard and no trailing `/`, so it names exactly one path (a
 * file, whatever is there).
 *
 * @example
 * ```ts
 * import { isLiteralScope } from "./scope.ts";
 * isLiteralScope("src"); // true
 * isLiteralScope("src/"); // false
 * isLiteralScope("reports/p?"); // false
 * ```
 */
export function isLiteralScope(scope: string): boolean {
  return !scope.endsWith("/") && !hasWildcard(scope);
}

/**
 * The first literal scope that `rel` lies below (`rel` starts with `<scope>/`), or `null`: such a
 * scope was most likely meant as the directory `<scope>/`, but covers only the file `<scope>`.
 *
 * @example
 * ```ts
 * import { literalScopeAbove } from "./scope.ts";
 * literalScopeAbove("src/a.ts", ["docs/", "src"]); // "src"
 * literalScopeAbove("src/a.ts", ["src/"]); // null
 * ```
 */
export function literalScopeAbove(rel: string, scopes: readonly string[]): string | null {
  return scopes.find((s) => isLiteralScope(s) && s !== "" && rel.startsWith(`${s}/`)) ?? null;
}

/**
 * The hint for a literal scope that names a directory: it covers the file of that name only.
 *
 * @example
 * ```ts
 * import { literalDirScopeHint } from "./scope.ts";
 * literalDirScopeHint("src"); // 'the scope "src" names the file src only; write "src/" for the directory'
 * ```
 */
export function literalDirScopeHint(scope: string): string {
  return `the scope ${JSON.stringify(scope)} names the file ${scope} only; write ${
    JSON.stringify(`${scope}/`)
  } for the directory`;
}
