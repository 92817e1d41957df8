/**
 * The shapes the instruments answer in: a problem (a rule's code and a reason naming the user's
 * input) and a per-row finding of a read-only verify.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findingLine } from "./verdict.ts";
 * assert.equal(
 *   findingLine({ line: 2, id: "W-1", action: "x", valid: true, code: null, reason: "valid" }),
 *   "line 2: W-1 (x): valid",
 * );
 * ```
 * @module
 */
import type { AuthzCode } from "../errors.ts";

/** Why an instrument does not allow: the rule's code and a reason. */
export interface Problem {
  /** The broken rule's stable code. */
  readonly code: AuthzCode;
  /** What was wrong, naming the row's own values. */
  readonly reason: string;
}

/** One row's verdict in a read-only verify. */
export interface Finding {
  /** The row's line in the file. */
  readonly line: number;
  /** Its id (`waiver_id`, `grant_id`, or the decision's action). */
  readonly id: string;
  /** The action or target it concerns. */
  readonly action: string;
  /** Whether it is valid. */
  readonly valid: boolean;
  /** The broken rule's code, when invalid. */
  readonly code: AuthzCode | null;
  /** `valid`, or why not. */
  readonly reason: string;
  /**
   * A waiver that was simply used up (`USES_EXHAUSTED`): not valid any more, but not a bad row
   * either; a verify reports it as spent and fails on it only when strict.
   */
  readonly spent?: boolean;
}

/**
 * A finding as the one line a verify prints for it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findingLine } from "./verdict.ts";
 * assert.equal(
 *   findingLine({ line: 3, id: "W-2", action: "y", valid: false, code: "EXPIRED", reason: "expired" }),
 *   "line 3: W-2 (y): invalid: EXPIRED: expired",
 * );
 * ```
 */
export function findingLine(f: Finding): string {
  const head = `line ${f.line}: ${f.id || "(no id)"} (${f.action})`;
  if (f.valid) return `${head}: valid`;
  return f.spent === true
    ? `${head}: spent: ${f.reason}`
    : `${head}: invalid: ${f.code}: ${f.reason}`;
}
