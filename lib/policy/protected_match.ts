/**
 * What `protected_paths` covers: a literal covers what is below it, a glob (Python `fnmatch`,
 * `lib/pycompat/fnmatch.ts`) what it matches and what is below a directory it matches.
 *
 * @example
 * ```ts
 * import { protectedMatch } from "./protected_match.ts";
 * protectedMatch("secrets/prod/key.pem", ["secrets"]); // true: a literal covers what is below
 * ```
 * @module
 */
import { fnmatchCase, hasWildcard } from "../pycompat/fnmatch.ts";

/**
 * Whether a project-relative path is covered by `protected_paths`. A pattern without wildcards
 * covers the path itself and everything below it (`secrets` covers `secrets/a/b`). A pattern with
 * wildcards covers a path it matches and, failing safe, everything below a directory it matches
 * (`build?` covers `build1/x`). Case-insensitive.
 *
 * @example
 * ```ts
 * import { protectedMatch } from "./protected_match.ts";
 * protectedMatch("Secrets/api.key", ["secrets"]); // true
 * protectedMatch("src/app.ts", ["*.key"]); // false
 * ```
 */
export function protectedMatch(rel: string, patterns: readonly string[]): boolean {
  const path = rel.toLowerCase();
  const parts = path.split("/");
  for (const raw of patterns) {
    const pat = raw.toLowerCase().replace(/\/+$/, "");
    if (pat === "") continue;
    if (!hasWildcard(pat)) {
      if (path === pat || path.startsWith(pat + "/")) return true;
      continue;
    }
    for (let n = parts.length; n > 0; n--) {
      if (fnmatchCase(parts.slice(0, n).join("/"), pat)) return true;
    }
  }
  return false;
}
