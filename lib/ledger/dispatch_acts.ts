/**
 * Counting, per dispatch, the ledger rows that spent one of its uses. Each act's row names its
 * dispatch (`"dispatch": "<12 hex>"`, written by `apply` and `run` right after the use is counted
 * in the dispatch store), so a store whose `use` rows were deleted, or put back from an older copy,
 * shows: it records fewer uses than the ledger has acts. Rows are canonical JSON, where a string
 * value can never hold `"dispatch": "` unescaped, so the byte pattern names the field itself.
 * Rows written by the earlier tool carry no such field and count nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countDispatchActs } from "./dispatch_acts.ts";
 * const row = '{"action": "apply-proposal", "dispatch": "0123456789ab", "mac": "x"}\n';
 * assert.equal(countDispatchActs(new TextEncoder().encode(row + row)).get("0123456789ab"), 2);
 * ```
 * @module
 */

/**
 * How ledger rows name a dispatch: the first 12 hex characters of its id (the `id` of its
 * `issue-dispatch` row; the `dispatch` of each act that spent one of its uses).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dispatchTag } from "./dispatch_acts.ts";
 * assert.equal(dispatchTag("ab".repeat(32)), "abababababab");
 * ```
 */
export function dispatchTag(id: string): string {
  return id.slice(0, 12);
}

const enc = new TextEncoder();
const PREFIX = enc.encode('"dispatch": "');
const TAG = 12;
/** Rows of acts begin so (canonical JSON sorts `action` first). */
const ACT_STARTS = ["apply-proposal", "delete-proposal", "run-request-start"].map((a) =>
  enc.encode(`{"action": "${a}", `)
);
/** Longest line looked at (a row is at most 1 MiB); a longer one is skipped. */
const MAX_LINE = 2 * 1024 * 1024;
const dec = new TextDecoder();

function isLowerHex(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66);
}

function startsWith(line: Uint8Array, prefix: Uint8Array): boolean {
  if (line.length < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (line[k] !== prefix[k]) return false;
  return true;
}

/**
 * The dispatch tag of one line, when it is an act's row: its first `"dispatch": "<12 hex>"`, which
 * in canonical JSON is the top-level field (every key before `dispatch` in an act's row holds a
 * string, a number or a list of strings).
 */
function tagOf(line: Uint8Array): string | null {
  if (!ACT_STARTS.some((p) => startsWith(line, p))) return null;
  let at = 0;
  while (true) {
    const i = line.indexOf(PREFIX[0], at);
    if (i < 0 || i + PREFIX.length + TAG + 1 > line.length) return null;
    at = i + 1;
    if (!startsWith(line.subarray(i), PREFIX)) continue;
    const t = i + PREFIX.length;
    for (let k = 0; k < TAG; k++) if (!isLowerHex(line[t + k])) return null;
    return line[t + TAG] === 0x22 ? dec.decode(line.subarray(t, t + TAG)) : null;
  }
}

/** Counts the complete lines of `bytes` (each ending in a newline) into `counts`. */
function countLines(bytes: Uint8Array, counts: Map<string, number>): void {
  let start = 0;
  while (true) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) return;
    const tag = tagOf(bytes.subarray(start, nl));
    if (tag !== null) counts.set(tag, (counts.get(tag) ?? 0) + 1);
    start = nl + 1;
  }
}

/**
 * The acts per dispatch tag in a ledger's bytes (complete lines only: an unterminated last line
 * never counted as a row).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countDispatchActs } from "./dispatch_acts.ts";
 * assert.equal(countDispatchActs(new Uint8Array()).size, 0);
 * ```
 */
export function countDispatchActs(bytes: Uint8Array): Map<string, number> {
  const counts = new Map<string, number>();
  countLines(bytes, counts);
  return counts;
}

/** Reads into `into`, returning the byte count (0 at end of file). */
export type ChunkReader = (into: Uint8Array) => number;

/**
 * {@link countDispatchActs} over a stream read in chunks (a line split between reads is put
 * together; one longer than a row can be is skipped).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countDispatchActsStream } from "./dispatch_acts.ts";
 * const bytes = new TextEncoder().encode(
 *   '{"action": "apply-proposal", "agent": "w", "dispatch": "0123456789ab"}\n',
 * );
 * let at = 0;
 * const acts = countDispatchActsStream((into) => {
 *   const n = Math.min(into.length, bytes.length - at, 5);
 *   into.set(bytes.subarray(at, at + n));
 *   at += n;
 *   return n;
 * });
 * assert.equal(acts.get("0123456789ab"), 1);
 * ```
 */
export function countDispatchActsStream(read: ChunkReader, chunk = 4 << 20): Map<string, number> {
  const counts = new Map<string, number>();
  const buf = new Uint8Array(MAX_LINE + chunk);
  let carried = 0;
  let skipping = false; // inside a line longer than MAX_LINE
  while (true) {
    const n = read(buf.subarray(carried, carried + chunk));
    if (n === 0) return counts;
    const filled = carried + n;
    let from = 0;
    if (skipping) {
      const nl = buf.subarray(0, filled).indexOf(0x0a);
      if (nl < 0) {
        carried = 0;
        continue;
      }
      from = nl + 1;
      skipping = false;
    }
    const last = buf.subarray(0, filled).lastIndexOf(0x0a);
    if (last >= from) countLines(buf.subarray(from, last + 1), counts);
    const restFrom = Math.max(from, last + 1);
    const rest = filled - restFrom;
    if (rest > MAX_LINE) {
      skipping = true;
      carried = 0;
    } else {
      buf.copyWithin(0, restFrom, filled);
      carried = rest;
    }
  }
}
