/**
 * Free text as the ledger records it, the way the earlier tool did: Python's `str.strip()` (its
 * whitespace set, which differs from JavaScript's `trim()`), then at most 300 code points (Python
 * slices by code point; JavaScript's `slice` would split a surrogate pair).
 *
 * @example
 * ```ts
 * import { ledgerText } from "./row_text.ts";
 * ledgerText("  why \u3000"); // "why"
 * ```
 * @module
 */
import { refusalCode } from "../errors.ts";
import { codePointSlice, pyStrip } from "../pycompat/str.ts";
import type { RowBody } from "./row.ts";

/** Longest free-text field in a row, in code points. */
export const MAX_ROW_TEXT = 300;

/**
 * A rationale or purpose as recorded: stripped, then cut to 300 code points.
 *
 * @example
 * ```ts
 * import { ledgerText } from "./row_text.ts";
 * ledgerText("x".repeat(400)).length; // 300
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
 * import { reasonText } from "./row_text.ts";
 * reasonText(" r ").length; // 3
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
 * import { refusalRow } from "./row_text.ts";
 * refusalRow("run-request", "?", new Error("boom")).code; // "INTERNAL"
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
