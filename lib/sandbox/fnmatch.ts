/**
 * Python-style `fnmatch` for `protected_paths`, case-folded: `*` matches any run of characters
 * (slashes included), `?` one character, `[seq]` / `[!seq]` a set. The sandbox uses it to find
 * entries inside writable roots that a protected pattern covers, so it can keep them read-only.
 *
 * @example
 * ```ts
 * import { fnmatchFold } from "./fnmatch.ts";
 * fnmatchFold("Build/Keys/a.PEM", "build/*.pem"); // true: `*` crosses `/`, case is folded
 * ```
 * @module
 */

function escapeChar(ch: string): string {
  return "\\u{" + (ch.codePointAt(0) ?? 0).toString(16) + "}";
}

function translateSet(body: string[]): string {
  let negate = false;
  let i = 0;
  if (body[0] === "!") {
    negate = true;
    i = 1;
  }
  let out = "";
  while (i < body.length) {
    const a = body[i];
    if (i + 2 < body.length && body[i + 1] === "-") {
      const b = body[i + 2];
      // Python drops an empty range such as `z-a`.
      if ((a.codePointAt(0) ?? 0) <= (b.codePointAt(0) ?? 0)) {
        out += escapeChar(a) + "-" + escapeChar(b);
      }
      i += 3;
    } else {
      out += escapeChar(a);
      i += 1;
    }
  }
  if (out === "") return negate ? "[^]" : "(?!)";
  return (negate ? "[^" : "[") + out + "]";
}

/**
 * Compiles an fnmatch pattern to an anchored, case-insensitive regular expression.
 *
 * @example
 * ```ts
 * import { fnmatchRegExp } from "./fnmatch.ts";
 * fnmatchRegExp("*.key").test("a/b.KEY"); // true
 * ```
 */
export function fnmatchRegExp(pattern: string): RegExp {
  const chars = Array.from(pattern);
  let src = "";
  let i = 0;
  while (i < chars.length) {
    const c = chars[i++];
    if (c === "*") {
      if (!src.endsWith(".*")) src += ".*";
    } else if (c === "?") {
      src += ".";
    } else if (c === "[") {
      let j = i;
      if (j < chars.length && chars[j] === "!") j++;
      if (j < chars.length && chars[j] === "]") j++;
      while (j < chars.length && chars[j] !== "]") j++;
      if (j >= chars.length) {
        src += escapeChar("[");
      } else {
        src += translateSet(chars.slice(i, j));
        i = j + 1;
      }
    } else {
      src += escapeChar(c);
    }
  }
  return new RegExp("^(?:" + src + ")$", "isu");
}

/**
 * True when `name` matches the fnmatch `pattern`, ignoring case.
 *
 * @example
 * ```ts
 * import { fnmatchFold } from "./fnmatch.ts";
 * fnmatchFold("docs/a.md", "docs/?.md"); // true
 * ```
 */
export function fnmatchFold(name: string, pattern: string): boolean {
  return fnmatchRegExp(pattern).test(name);
}

/**
 * True when the pattern holds an fnmatch wildcard (`*`, `?` or `[`).
 *
 * @example
 * ```ts
 * import { hasWildcard } from "./fnmatch.ts";
 * hasWildcard("secrets/"); // false
 * ```
 */
export function hasWildcard(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}
