/**
 * The quoting of Python's `csv.writer` / `csv.DictWriter` with the default dialect
 * (QUOTE_MINIMAL): a cell is quoted only when it holds `,`, `"`, CR or LF, and `"` is doubled.
 *
 * @example
 * ```ts
 * import { formatCell } from "./csv_quote.ts";
 * formatCell("a,b"); // '"a,b"'
 * ```
 * @module
 */

/**
 * One cell as `csv.writer` (QUOTE_MINIMAL) writes it.
 *
 * @example
 * ```ts
 * import { formatCell } from "./csv_quote.ts";
 * formatCell('a"b'); // '"a""b"'
 * formatCell("plain"); // "plain"
 * ```
 */
export function formatCell(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/**
 * One record as `csv.writer` (QUOTE_MINIMAL) writes it, without its line end: cells quoted by
 * {@link formatCell}, joined by `,`; a record of one empty cell is `""`.
 *
 * @example
 * ```ts
 * import { formatRecord } from "./csv_quote.ts";
 * formatRecord(["1", "x,y"]); // '1,"x,y"'
 * formatRecord([""]); // '""'
 * ```
 */
export function formatRecord(cells: readonly string[]): string {
  // A record of one empty cell is written `""` (else it would read back as a blank line).
  if (cells.length === 1 && cells[0] === "") return '""';
  return cells.map(formatCell).join(",");
}
