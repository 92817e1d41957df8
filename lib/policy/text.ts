/**
 * Small text predicates shared by the policy checks.
 *
 * @example
 * ```ts
 * import { hasControlChar } from "./text.ts";
 * hasControlChar("a\tb"); // true
 * hasControlChar("docs/guide.md"); // false
 * ```
 * @module
 */

/**
 * Whether `s` holds a C0 control character or DEL (a NUL, newline or tab in a path or program
 * name is never intended, and some of them truncate or split the value downstream).
 *
 * @example
 * ```ts
 * import { hasControlChar } from "./text.ts";
 * hasControlChar("x\u0000y"); // true
 * ```
 */
export function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}
