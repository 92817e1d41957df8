/**
 * The `prev_digest` chain the decision log and the grant ledger share: row `i`'s `prev_digest`
 * is the hex SHA-256 of row `i - 1`'s payload (the first row's is empty). {@link firstChainBreak}
 * checks a whole table in a few WebAssembly calls (`verify_rows` hashes four payloads at a time
 * and compares each `prev` inside the module), where one `sha256Hex` per row paid a copy, a
 * memory view and a hex decode for each.
 *
 * @example
 * ```ts
 * import { firstChainBreak } from "./chain.ts";
 * import { sha256Hex } from "./hash.ts";
 * firstChainBreak(["a", "b"], ["", sha256Hex("a")]); // null
 * firstChainBreak(["a", "b"], ["", sha256Hex("x")]); // 1
 * ```
 * @module
 */
import { sha256Hex } from "./hash.ts";
import { WasmSha256 } from "./sha256_wasm.ts";

const NONE = 0xffffffff;
const BATCH = 2048;
const enc = new TextEncoder();
const BLANK = " ".repeat(64);
let shared: WasmSha256 | null = null;

/**
 * The first row (0-based) whose `prev` is not the SHA-256 of the previous row's payload (the
 * first row's `prev` must be `first`: empty for a whole table, the hash of the row before for a
 * table's continuation), or `null` when the chain holds. `prevs[i]` is compared as
 * given (the caller trims it); `payloads` and `prevs` have one entry per row.
 *
 * @example
 * ```ts
 * import { firstChainBreak } from "./chain.ts";
 * firstChainBreak(["a"], ["x"]); // 0
 * firstChainBreak([], []); // null
 * ```
 */
export function firstChainBreak(
  payloads: readonly string[],
  prevs: readonly string[],
  first = "",
): number | null {
  const n = payloads.length;
  if (n === 0) return null;
  if (prevs[0] !== first) return 0;
  shared ??= WasmSha256.create();
  const w = shared;
  let prevHash: string | null = null; // the last row's hash, for a batch checked in JS
  for (let start = 0; start < n; start += BATCH) {
    const end = Math.min(n, start + BATCH);
    const r = batchBreak(w, payloads, prevs, start, end, prevHash);
    if (typeof r === "number") return r;
    prevHash = r;
  }
  return null;
}

/**
 * One batch: in the module when every payload and `prev` is ASCII, else one hash per row. The
 * first broken row, or (the batch holding) the hex hash of its last row.
 */
function batchBreak(
  w: WasmSha256,
  payloads: readonly string[],
  prevs: readonly string[],
  start: number,
  end: number,
  prevHash: string | null,
): number | string {
  const k = end - start;
  let bytes = 0;
  for (let i = start; i < end; i++) bytes += payloads[i].length;
  const base = w.heapBase;
  const tableAt = base;
  const lastAt = tableAt + k * 24;
  const hashesAt = lastAt + 64;
  const flagsAt = hashesAt + k * 64;
  const prevAt = flagsAt + k;
  const dataAt = prevAt + k * 64;
  const scratchAt = (dataAt + bytes + 15) & ~15;
  w.reserve(scratchAt + k * w.scratchPerRow - base);
  const mem = w.bytes;
  // One encode per batch: an ASCII text's byte offsets are its string offsets.
  const text = payloads.slice(start, end).join("");
  if (!ascii(enc.encodeInto(text, mem.subarray(dataAt, dataAt + bytes)), text)) {
    return slowBreak(payloads, prevs, start, end, prevHash);
  }
  // Every row's `prev` in 64 bytes (one that is not 64 characters long cannot match a hash: its
  // slot is blank and left unread), one encode for the batch.
  const slots = new Array<string>(k);
  for (let j = 0; j < k; j++) {
    const p = prevs[start + j];
    slots[j] = p.length === 64 ? p : BLANK;
  }
  const joined = slots.join("");
  if (!ascii(enc.encodeInto(joined, mem.subarray(prevAt, prevAt + k * 64)), joined)) {
    return slowBreak(payloads, prevs, start, end, prevHash);
  }
  const table = new Uint32Array(mem.buffer, tableAt, k * 6);
  let at = dataAt;
  for (let j = 0; j < k; j++) {
    const i = start + j;
    const t = j * 6;
    const len = payloads[i].length;
    table[t] = at;
    table[t + 1] = len;
    table[t + 2] = NONE;
    table[t + 3] = NONE;
    table[t + 4] = NONE;
    at += len;
    table[t + 5] = prevs[i].length === 64 ? prevAt + j * 64 : NONE;
  }
  if (prevHash !== null) enc.encodeInto(prevHash, mem.subarray(lastAt, lastAt + 64));
  w.verifyRows(k, tableAt, hashesAt, flagsAt, scratchAt, prevHash !== null);
  for (let j = start === 0 ? 1 : 0; j < k; j++) {
    if ((mem[flagsAt + j] & 2) === 0) return start + j;
  }
  return dec.decode(mem.subarray(hashesAt + (k - 1) * 64, hashesAt + k * 64));
}

const dec = new TextDecoder();

/** Whether an encode into a buffer of `text.length` bytes took all of it, one byte a character. */
function ascii(r: TextEncoderEncodeIntoResult, text: string): boolean {
  return r.read === text.length && r.written === text.length;
}

function slowBreak(
  payloads: readonly string[],
  prevs: readonly string[],
  start: number,
  end: number,
  prevHash: string | null,
): number | string {
  let prev = prevHash ?? "";
  for (let i = start; i < end; i++) {
    if (prevs[i] !== prev) return i;
    prev = sha256Hex(payloads[i]);
  }
  return prev;
}
