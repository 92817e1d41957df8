/**
 * Python's `str` operations the ledgers' text rules rest on: `s.strip()` (its whitespace set,
 * which differs from JavaScript's `trim()`) and `s[:n]` (by code point; JavaScript's `slice`
 * would split a surrogate pair).
 *
 * @example
 * ```ts
 * import { codePointSlice, pyStrip } from "./str.ts";
 * codePointSlice(pyStrip("  why \u3000"), 2); // "wh"
 * ```
 * @module
 */

function isPyWhitespace(c: number): boolean {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c === 0x85 || c === 0xa0 ||
    c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x202f || c === 0x205f || c === 0x3000;
}

/** `!` through `~`. */
function isPrintableAscii(c: number): boolean {
  return c >= 0x21 && c <= 0x7e;
}

/**
 * Python's `s.strip()`.
 *
 * @example
 * ```ts
 * import { pyStrip } from "./str.ts";
 * pyStrip("\u001fx\u0085"); // "x"
 * pyStrip("\ufeffx"); // "\ufeffx" (U+FEFF is not whitespace to Python)
 * ```
 */
export function pyStrip(s: string): string {
  // Most text has a printable ASCII character (never whitespace) at each end: nothing to strip.
  const n = s.length;
  if (n !== 0 && isPrintableAscii(s.charCodeAt(0)) && isPrintableAscii(s.charCodeAt(n - 1))) {
    return s;
  }
  let a = 0;
  let b = n;
  while (a < b && isPyWhitespace(s.charCodeAt(a))) a++;
  while (b > a && isPyWhitespace(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

/**
 * The first `n` code points of `s` (Python's `s[:n]`).
 *
 * @example
 * ```ts
 * import { codePointSlice } from "./str.ts";
 * codePointSlice("\u{1f600}ab", 2); // "\u{1f600}a"
 * ```
 */
export function codePointSlice(s: string, n: number): string {
  let i = 0;
  let count = 0;
  while (i < s.length && count < n) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
    count++;
  }
  return s.slice(0, i);
}
