/**
 * A top-level scanner for ledger lines. A row is the canonical JSON of an object; the signed text
 * is that line without its top-level `mac` member (and the `", "` beside it). The scanner finds
 * that member and the `prev` and `time` members without building the object, so verification
 * can skip `JSON.parse` for the rows whose MAC then verifies (a verified signed text is canonical
 * JSON by construction, so the line is valid JSON too).
 *
 * The scanner accepts only the canonical layout (`{`, members separated by `", "`, keys and
 * values separated by `": "`, `}`); anything else fails the scan, and the row is then examined
 * with `JSON.parse` for a diagnosis.
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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;

/** Returns the offset just past the string starting at `i` (a quote), or -1. */
function skipString(b: Uint8Array, i: number, end: number): number {
  for (let j = i + 1; j < end; j++) {
    const c = b[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** Returns the offset just past the JSON value starting at `i`, or -1. */
function skipValue(b: Uint8Array, i: number, end: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i, end);
  if (c === LBRACE || c === LBRACKET) {
    let depth = 0;
    for (let j = i; j < end; j++) {
      const d = b[j];
      if (d === QUOTE) {
        j = skipString(b, j, end) - 1;
        if (j < 0) return -1;
      } else if (d === LBRACE || d === LBRACKET) depth++;
      else if (d === RBRACE || d === RBRACKET) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: runs to the next separator.
  let j = i;
  while (j < end && b[j] !== COMMA && b[j] !== RBRACE) j++;
  return j === i ? -1 : j;
}

function keyIs(b: Uint8Array, s: number, len: number, word: string): boolean {
  if (len !== word.length) return false;
  for (let k = 0; k < len; k++) if (b[s + k] !== word.charCodeAt(k)) return false;
  return true;
}

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
  out[CUT_START] = -1;
  out[CUT_END] = -1;
  out[MAC_POS] = -1;
  out[PREV_POS] = -1;
  out[HAS_TIME] = 0;
  out[HAS_MAC] = 0;
  if (end - start < 2 || b[start] !== LBRACE || b[end - 1] !== RBRACE) return false;
  const close = end - 1;
  if (close === start + 1) return true; // {}
  let i = start + 1;
  for (;;) {
    if (b[i] !== QUOTE) return false;
    const keyEnd = skipString(b, i, close);
    if (keyEnd < 0 || b[keyEnd] !== COLON || b[keyEnd + 1] !== SPACE) return false;
    const v = keyEnd + 2;
    const vEnd = skipValue(b, v, close);
    if (vEnd < 0) return false;
    const klen = keyEnd - i - 2;
    const isString = b[v] === QUOTE;
    if (keyIs(b, i + 1, klen, "mac")) {
      if (out[HAS_MAC] || !isString) return false;
      out[HAS_MAC] = 1;
      out[MAC_POS] = vEnd - v === 66 ? v + 1 : -1;
      if (i > start + 1) {
        out[CUT_START] = i - 2;
        out[CUT_END] = vEnd;
      } else if (vEnd < close) {
        out[CUT_START] = i;
        out[CUT_END] = vEnd + 2;
      } else {
        out[CUT_START] = i;
        out[CUT_END] = vEnd;
      }
    } else if (keyIs(b, i + 1, klen, "prev")) {
      if (out[PREV_POS] !== -1 || !isString) return false;
      const len = vEnd - v - 2;
      out[PREV_POS] = len === 64 ? v + 1 : len === 0 ? -2 : -3;
    } else if (keyIs(b, i + 1, klen, "time")) {
      if (out[HAS_TIME] || !isString) return false;
      out[HAS_TIME] = 1;
    }
    if (vEnd === close) return true;
    if (b[vEnd] !== COMMA || b[vEnd + 1] !== SPACE) return false;
    i = vEnd + 2;
  }
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
