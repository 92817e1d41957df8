/**
 * Write-ahead recording: a start row before an act, a completion row after. A crash in between
 * leaves a start row without its completion, which is the signal an operator looks for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeAhead } from "./write_ahead.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const out = await writeAhead(root, new HmacKey(new Uint8Array([1])), { action: "x-start" }, () =>
 *   Promise.resolve({ result: 7, complete: { action: "x", value: 7 } })
 * );
 * assert.equal(out, 7);
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { type AppendResult, appendRow } from "./append.ts";
import type { RowBody } from "./row.ts";

/** What an act returns: its result and the completion row (`null`: record nothing more). */
export interface ActOutcome<T> {
  /** The act's result. */
  result: T;
  /** The completion row, or `null` when nothing more may be recorded (e.g. a tampered ledger). */
  complete: RowBody | null;
}

/**
 * Appends `start`, runs `act` (given what that append wrote: `lib/ledger/guard.ts` takes the
 * ledger's end from it), appends its completion row. If `act` throws, nothing more is appended
 * and the error propagates (the start row stands alone).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeAhead } from "./write_ahead.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const out = await writeAhead(root, new HmacKey(new Uint8Array([1])), { action: "run-start" }, () =>
 *   Promise.resolve({ result: "refused", complete: null }));
 * // Only the start row was appended.
 * assert.equal(out, "refused");
 * assert.equal(Deno.readTextFileSync(`${root}/.agentteams/proposal-ledger.jsonl`).trim().split("\n").length, 1);
 * ```
 */
export async function writeAhead<T>(
  root: string,
  hmac: HmacKey,
  start: RowBody,
  act: (start: AppendResult) => Promise<ActOutcome<T>>,
  opts: { now?: () => Date } = {},
): Promise<T> {
  const { result, complete } = await act(await appendRow(root, hmac, start, opts));
  if (complete !== null) await appendRow(root, hmac, complete, opts);
  return result;
}
