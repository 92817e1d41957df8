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
 * import { countDispatchActs } from "./dispatch_acts.ts";
 * const row = '{"action": "apply-proposal", "dispatch": "0123456789ab", "mac": "x"}\n';
 * countDispatchActs(new TextEncoder().encode(row + row)).get("0123456789ab"); // 2
 * ```
 * @module
 */

/**
 * How ledger rows name a dispatch: the first 12 hex characters of its id (the `id` of its
 * `issue-dispatch` row; the `dispatch` of each act that spent one of its uses).
 *
 * @example
 * ```ts
 * import { dispatchTag } from "./dispatch_acts.ts";
 * dispatchTag("ab".repeat(32)); // "abababababab"
 * ```
 */
export function dispatchTag(id: string): string {
  return id.slice(0, 12);
}

const PREFIX = new TextEncoder().encode('"dispatch": "');
const TAG = 12;
/** A match is the prefix, 12 lower-case hex digits and a closing quote. */
const MATCH = PREFIX.length + TAG + 1;
const dec = new TextDecoder();

function isLowerHex(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66);
}

/** Adds the matches that start in `bytes[from..]` and end inside `bytes` to `counts`. */
function scan(bytes: Uint8Array, from: number, counts: Map<string, number>): void {
  let at = from;
  while (true) {
    const i = bytes.indexOf(PREFIX[0], at);
    if (i < 0 || i + MATCH > bytes.length) return;
    at = i + 1;
    let ok = true;
    for (let k = 1; k < PREFIX.length && ok; k++) ok = bytes[i + k] === PREFIX[k];
    if (!ok) continue;
    const t = i + PREFIX.length;
    for (let k = 0; k < TAG && ok; k++) ok = isLowerHex(bytes[t + k]);
    if (!ok || bytes[t + TAG] !== 0x22) continue;
    const tag = dec.decode(bytes.subarray(t, t + TAG));
    counts.set(tag, (counts.get(tag) ?? 0) + 1);
    at = i + MATCH;
  }
}

/**
 * The acts per dispatch tag in a ledger's bytes.
 *
 * @example
 * ```ts
 * import { countDispatchActs } from "./dispatch_acts.ts";
 * countDispatchActs(new Uint8Array()).size; // 0
 * ```
 */
export function countDispatchActs(bytes: Uint8Array): Map<string, number> {
  const counts = new Map<string, number>();
  scan(bytes, 0, counts);
  return counts;
}

/** Reads into `into`, returning the byte count (0 at end of file). */
export type ChunkReader = (into: Uint8Array) => number;

/**
 * {@link countDispatchActs} over a stream read in chunks (a match split between two chunks is
 * counted once).
 *
 * @example
 * ```ts
 * import { countDispatchActsStream } from "./dispatch_acts.ts";
 * const bytes = new TextEncoder().encode('{"dispatch": "0123456789ab"}\n');
 * let at = 0;
 * const acts = countDispatchActsStream((into) => {
 *   const n = Math.min(into.length, bytes.length - at, 5);
 *   into.set(bytes.subarray(at, at + n));
 *   at += n;
 *   return n;
 * });
 * acts.get("0123456789ab"); // 1
 * ```
 */
export function countDispatchActsStream(read: ChunkReader, chunk = 4 << 20): Map<string, number> {
  const counts = new Map<string, number>();
  const keep = MATCH - 1;
  const buf = new Uint8Array(keep + chunk);
  let carried = 0;
  while (true) {
    const n = read(buf.subarray(carried));
    if (n === 0) break;
    const filled = carried + n;
    // Every match found here ends past the carried bytes: one wholly inside them would have been
    // counted from the previous read, and none fits in fewer than MATCH bytes.
    scan(buf.subarray(0, filled), 0, counts);
    carried = Math.min(keep, filled);
    buf.copyWithin(0, filled - carried, filled);
  }
  return counts;
}
