/**
 * Free text as the ledger records it, the way the earlier tool did: Python's `str.strip()` (its
 * whitespace set, which differs from JavaScript's `trim()`), then at most 300 code points (Python
 * slices by code point; JavaScript's `slice` would split a surrogate pair).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ledgerText } from "./row_text.ts";
 * assert.equal(ledgerText("  why \u3000"), "why");
 * ```
 * @module
 */
import { refusalCode } from "../errors.ts";
import type { RowBody } from "./row.ts";

/** Longest free-text field in a row, in code points. */
export const MAX_ROW_TEXT = 300;

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
 * import assert from "node:assert/strict";
 * import { pyStrip } from "./row_text.ts";
 * assert.equal(pyStrip("\u001fx\u0085"), "x");
 * assert.equal(pyStrip("\ufeffx"), "\ufeffx"); // (U+FEFF is not whitespace to Python)
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
 * import assert from "node:assert/strict";
 * import { codePointSlice } from "./row_text.ts";
 * assert.equal(codePointSlice("\u{1f600}ab", 2), "\u{1f600}a");
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

/**
 * A rationale or purpose as recorded: stripped, then cut to 300 code points.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ledgerText } from "./row_text.ts";
 * assert.equal(ledgerText("x".repeat(400)).length, 300);
 * ```
 */
export function ledgerText(s: string): string {
  return codePointSlice(pyStrip(s), MAX_ROW_TEXT);
}

/**
 * A refusal reason as recorded: cut to 300 code points, not stripped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reasonText } from "./row_text.ts";
 * assert.equal(reasonText(" r ").length, 3);
 * ```
 */
export function reasonText(s: string): string {
  return codePointSlice(s, MAX_ROW_TEXT);
}

/**
 * The row a refused act records: `<act>-refused`, the agent (`?` before the dispatch is known),
 * the reason and the error's code as {@link refusalCode} gives it (`NOT_CAPABLE` for a permission
 * Deno refused, `INTERNAL` for any other error that carries none).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refusalRow } from "./row_text.ts";
 * assert.equal(refusalRow("run-request", "?", new Error("boom")).code, "INTERNAL");
 * ```
 */
export function refusalRow(act: string, agent: string, e: unknown): RowBody {
  return {
    action: `${act}-refused`,
    agent,
    reason: reasonText(e instanceof Error ? e.message : String(e)),
    // Recorded under the code the CLI reports it with.
    code: refusalCode(e),
  };
}
