/**
 * How a verify problem reads as a line, for `ledger verify` and the earlier spelling's
 * `  ✗ problem` lines alike.
 *
 * @module
 */

/**
 * One problem of a verify report as a line: where (its row, or the ledger as a whole), its code,
 * what was wrong.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { problemLine } from "./problem_line.ts";
 * assert.equal(
 *   problemLine({ row: 3, code: "ROW_MAC_INVALID", message: "the row's MAC does not verify" }),
 *   "row 3: ROW_MAC_INVALID: the row's MAC does not verify",
 * );
 * ```
 */
export function problemLine(p: { row: number | null; code: string; message: string }): string {
  return `${p.row === null ? "ledger" : `row ${p.row}`}: ${p.code}: ${p.message}`;
}
