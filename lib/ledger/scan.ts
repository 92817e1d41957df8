/**
 * A top-level scanner for ledger lines. A row is the canonical JSON of an object; the signed text
 * is that line without its top-level `mac` member (and the `", "` beside it). The scanner finds
 * that member and the `prev` and `time` members without building the object, so verification
 * can skip `JSON.parse` for the rows whose MAC then verifies (a verified signed text is canonical
 * JSON by construction, so the line is valid JSON too).
 *
 * The scanner accepts only the canonical layout (`{`, members separated by `", "`, keys and
 * values separated by `": "`, `}`); anything else fails the scan, and the row is then examined
 * with `JSON.parse` for a diagnosis. It is written once, in C beside the SHA-256 code
 * (`scan_row` in lib/crypto/wasm/sha256.c), so that the batch verifier scans a chunk of lines in
 * the same WebAssembly call that finds them; {@link scanRow} runs it on a copy of one line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scanRow, SCAN_SLOTS } from "./scan.ts";
 * const line = new TextEncoder().encode('{"a": 1, "mac": "ff", "prev": "", "time": "t"}');
 * const out = new Int32Array(SCAN_SLOTS);
 * assert.equal(scanRow(line, 0, line.length, out), true);
 * ```
 * @module
 */
import { WasmSha256 } from "../crypto/sha256_wasm.ts";

/** Slots written by {@link scanRow}. */
export const SCAN_SLOTS = 6;
/** Slot: start of the cut (the mac member and one separator), or -1. */
export const CUT_START = 0;
/** Slot: end of the cut (exclusive). */
export const CUT_END = 1;
/** Slot: offset of the mac value's first character when it is 64 characters long, else -1. */
export const MAC_POS = 2;
/** Slot: offset of prev's first character when 64 long; -2 when `""`; -3 otherwise; -1 absent. */
export const PREV_POS = 3;
/** Slot: 1 when a top-level `time` string is present. */
export const HAS_TIME = 4;
/** Slot: 1 when a top-level `mac` string is present. */
export const HAS_MAC = 5;

/** The instance that scans single lines (the batch verifier scans in its own). */
let scanner: WasmSha256 | null = null;

/**
 * Scans the line `b[start..end)` (no newline). Fills `out` (see the slot constants) and returns
 * true when the line has the canonical object layout with no duplicate `mac`, `prev` or `time`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scanRow, SCAN_SLOTS, CUT_START, CUT_END } from "./scan.ts";
 * const t = '{"a": [1, {"mac": "x"}], "mac": "ab", "time": "t"}';
 * const line = new TextEncoder().encode(t);
 * const out = new Int32Array(SCAN_SLOTS);
 * scanRow(line, 0, line.length, out);
 * assert.equal(t.slice(0, out[CUT_START]) + t.slice(out[CUT_END]), '{"a": [1, {"mac": "x"}], "time": "t"}');
 * ```
 */
export function scanRow(b: Uint8Array, start: number, end: number, out: Int32Array): boolean {
  return onCopy(b, start, end, out, (w, at, len, slots) => w.scanRow(at, 0, len, slots)) === 1;
}

/** Form bits of {@link lineStatus} (and of the batch verifier's `scan_lines`). */
export const LINE_SCANNED = 1;
/** Form bit: a scanned row's `prev` is `""`. */
export const LINE_PREV_EMPTY = 2;
/** Form bit: the line is over the size limit (nothing scanned). */
export const LINE_TOO_LONG = 4;

/**
 * The form of the line `b[start..end)` as a ledger row (`line_status` in the C source, the one
 * decision the batch verifier makes per line too): {@link LINE_SCANNED} when it has the canonical
 * layout with top-level `mac`, `prev` and `time` strings (`out` then holds the scan's slots),
 * {@link LINE_PREV_EMPTY} beside it when `prev` is `""`, {@link LINE_TOO_LONG} alone when it is
 * over `maxRow` bytes, 0 otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LINE_SCANNED, lineStatus, SCAN_SLOTS } from "./scan.ts";
 * const b = new TextEncoder().encode('{"mac": "m", "prev": "p", "time": "t"}');
 * assert.equal(lineStatus(b, 0, b.length, new Int32Array(SCAN_SLOTS), 1 << 20), LINE_SCANNED);
 * ```
 */
export function lineStatus(
  b: Uint8Array,
  start: number,
  end: number,
  out: Int32Array,
  maxRow: number,
): number {
  return onCopy(b, start, end, out, (w, at, len, slots) => w.lineStatus(at, 0, len, slots, maxRow));
}

/**
 * Runs `f` on a copy of `b[start..end)` in the single-line instance, then moves the slots it
 * wrote into `out`, positions made relative to `b` again.
 */
function onCopy(
  b: Uint8Array,
  start: number,
  end: number,
  out: Int32Array,
  f: (w: WasmSha256, at: number, len: number, slots: number) => number,
): number {
  const w = scanner ??= WasmSha256.create();
  const len = Math.max(0, end - start);
  w.reserve(len + 64);
  const base = w.heapBase;
  const at = (base + len + 15) & ~15;
  const mem = w.bytes;
  mem.set(b.subarray(start, start + len), base);
  const r = f(w, base, len, at);
  const slots = new Int32Array(mem.buffer, at, SCAN_SLOTS);
  for (let k = 0; k < SCAN_SLOTS; k++) {
    const x = slots[k];
    // Positions (slots 0-3 when not negative) come back relative to the copy.
    out[k] = k <= PREV_POS && x >= 0 ? x + start : x;
  }
  return r;
}

/**
 * The signed bytes of a line (the line without its top-level mac member) and the mac, or `null`
 * when the line does not scan or has no mac.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signedPart } from "./scan.ts";
 * const p = signedPart(new TextEncoder().encode('{"a": 1, "mac": "ff"}'));
 * assert.equal(new TextDecoder().decode(p!.signed), '{"a": 1}');
 * ```
 */
export function signedPart(line: Uint8Array): { signed: Uint8Array; mac: string } | null {
  const out = new Int32Array(SCAN_SLOTS);
  if (!scanRow(line, 0, line.length, out) || !out[HAS_MAC]) return null;
  const cs = out[CUT_START];
  const ce = out[CUT_END];
  const signed = new Uint8Array(line.length - (ce - cs));
  signed.set(line.subarray(0, cs), 0);
  signed.set(line.subarray(ce), cs);
  // The mac value is the member's string; find it from the member text.
  const member = new TextDecoder().decode(line.subarray(cs, ce));
  const m = /"mac": "((?:[^"\\]|\\.)*)"/.exec(member);
  if (m === null) return null;
  return { signed, mac: m[1] };
}
