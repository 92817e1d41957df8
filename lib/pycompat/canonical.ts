/**
 * The canonical JSON encoding behind every MAC and hash: byte for byte what Python's
 * `json.dumps(obj, sort_keys=True)` writes, so ledgers stay compatible with the earlier tool.
 *
 * - object keys sorted by Unicode code point (not UTF-16 unit order);
 * - separators `", "` and `": "`;
 * - every character outside U+0020..U+007E escaped: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f` in
 *   short form, the rest as lower-case `\uXXXX` (astral characters as a surrogate pair);
 * - integers only: floats, NaN, infinities, integers beyond ±(2^53 − 1), lone surrogates,
 *   `undefined`, functions, symbols, bigints and non-plain objects are refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonical } from "./canonical.ts";
 * assert.equal(canonical({ b: 1, a: ["é", true, null] }), '{"a": ["\\u00e9", true, null], "b": 1}');
 * ```
 * @module
 */

/** A value the canonical encoding accepts. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** Raised when a value has no canonical encoding. */
export class CanonicalError extends TypeError {
  /** Stable code for the refusal. */
  readonly code = "NOT_CANONICAL";
  constructor(message: string) {
    super(message);
    this.name = "CanonicalError";
  }
}

// Printable ASCII other than `"` and `\`: such strings are emitted verbatim.
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const HEX = "0123456789abcdef";

function u4(code: number): string {
  return "\\u" + HEX[(code >> 12) & 15] + HEX[(code >> 8) & 15] + HEX[(code >> 4) & 15] +
    HEX[code & 15];
}

/**
 * Encodes one string as Python's `json.dumps` (ensure_ascii) would.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalString } from "./canonical.ts";
 * assert.equal(canonicalString("tab\there"), '"tab\\there"');
 * ```
 */
export function canonicalString(s: string): string {
  if (VERBATIM.test(s)) return '"' + s + '"';
  let out = '"';
  let start = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(start, i);
    start = i + 1;
    switch (c) {
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += "\\\\";
        break;
      case 0x0a:
        out += "\\n";
        break;
      case 0x0d:
        out += "\\r";
        break;
      case 0x09:
        out += "\\t";
        break;
      case 0x08:
        out += "\\b";
        break;
      case 0x0c:
        out += "\\f";
        break;
      default:
        if (c >= 0xd800 && c <= 0xdbff) {
          const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
          if (d < 0xdc00 || d > 0xdfff) {
            throw new CanonicalError(`lone high surrogate at index ${i}`);
          }
          out += u4(c) + u4(d);
          i++;
          start = i + 1;
        } else if (c >= 0xdc00 && c <= 0xdfff) {
          throw new CanonicalError(`lone low surrogate at index ${i}`);
        } else {
          out += u4(c);
        }
    }
  }
  return out + s.slice(start) + '"';
}

/**
 * Compares two strings by Unicode code point, the order Python's `sorted` gives.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareCodePoints } from "./canonical.ts";
 * assert.equal(compareCodePoints("\uff61", "\u{1f600}") < 0, true); // UTF-16 unit order says the opposite
 * assert.equal(compareCodePoints("a", "a"), 0);
 * ```
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort above every BMP unit, including U+E000..U+FFFF.
    if (x >= 0xd800) x += x >= 0xe000 ? -0x800 : 0x2000;
    if (y >= 0xd800) y += y >= 0xe000 ? -0x800 : 0x2000;
    return x - y;
  }
  return a.length - b.length;
}

/** The separators of one encoding: between items, and between a key and its value. */
interface Separators {
  readonly item: string;
  readonly key: string;
}

const SPACED: Separators = { item: ", ", key: ": " };
const COMPACT: Separators = { item: ",", key: ":" };

function encode(v: unknown, path: string, sep: Separators = SPACED): string {
  switch (typeof v) {
    case "string":
      try {
        return canonicalString(v);
      } catch (e) {
        throw new CanonicalError(`${path}: ${(e as Error).message}`);
      }
    case "number":
      if (!Number.isInteger(v)) throw new CanonicalError(`${path}: ${v} is not an integer`);
      if (!Number.isSafeInteger(v)) {
        throw new CanonicalError(`${path}: ${v} is beyond the safe integer range`);
      }
      return v === 0 ? "0" : String(v);
    case "boolean":
      return v ? "true" : "false";
    case "object": {
      if (v === null) return "null";
      if (Array.isArray(v)) {
        if (v.length === 0) return "[]";
        let out = "[";
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out += sep.item;
          if (!(i in v)) throw new CanonicalError(`${path}[${i}]: hole in array`);
          out += encode(v[i], `${path}[${i}]`, sep);
        }
        return out + "]";
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new CanonicalError(`${path}: ${proto?.constructor?.name ?? "object"} is not plain`);
      }
      const rec = v as Record<string, unknown>;
      const keys = Object.keys(rec);
      if (keys.length === 0) return "{}";
      keys.sort(compareCodePoints);
      let out = "{";
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        if (i > 0) out += sep.item;
        let ks: string;
        try {
          ks = canonicalString(k);
        } catch (e) {
          throw new CanonicalError(`${path}: key: ${(e as Error).message}`);
        }
        out += ks + sep.key + encode(rec[k], `${path}.${k}`, sep);
      }
      return out + "}";
    }
    default:
      throw new CanonicalError(`${path}: ${typeof v} has no JSON encoding`);
  }
}

/**
 * Encodes a value canonically (Python `json.dumps(v, sort_keys=True)`).
 *
 * @throws {CanonicalError} for floats, unsafe integers, lone surrogates, `undefined` and other
 *   values JSON cannot carry exactly.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonical } from "./canonical.ts";
 * assert.equal(canonical({ z: [], a: {} }), '{"a": {}, "z": []}');
 * ```
 */
export function canonical(v: unknown): string {
  return encode(v, "$");
}

/**
 * Encodes a value canonically without spaces: Python's `json.dumps(v, sort_keys=True,
 * separators=(",", ":"))` (ensure_ascii, keys in code-point order), what a signed payload that
 * embeds one JSON field is built from.
 *
 * @throws {CanonicalError} as {@link canonical}.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalCompact } from "./canonical.ts";
 * assert.equal(canonicalCompact({ b: [1, 2], a: "\u00e9" }), '{"a":"\\u00e9","b":[1,2]}');
 * ```
 */
export function canonicalCompact(v: unknown): string {
  return encode(v, "$", COMPACT);
}

const encoder = new TextEncoder();

/**
 * The canonical encoding as UTF-8 bytes (always ASCII).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalBytes } from "./canonical.ts";
 * assert.equal(canonicalBytes([1, 2]).length, 6);
 * ```
 */
export function canonicalBytes(v: unknown): Uint8Array {
  return encoder.encode(canonical(v));
}
