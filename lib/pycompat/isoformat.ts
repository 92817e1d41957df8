/**
 * Python's `datetime.fromisoformat` (3.11 grammar: `YYYY-MM-DD`, then `T` or a space and
 * `HH[:MM[:SS[.fff…]]]`, then `Z`, `±HH[:MM[:SS]]` or `±HHMM`), with `Z` read as `+00:00`; a
 * value without an offset is naive (what a caller does with it is its own rule:
 * `lib/authz/expiry.ts`).
 *
 * @example
 * ```ts
 * import { parseInstant } from "./isoformat.ts";
 * parseInstant("2026-12-01T00:00:00Z")?.ms === Date.UTC(2026, 11, 1); // true
 * ```
 * @module
 */

/** A parsed instant. */
export interface Instant {
  /** Milliseconds since the epoch (a naive value taken as UTC). */
  readonly ms: number;
  /** The value carried no offset. */
  readonly naive: boolean;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?)?$/;

/**
 * Parses an ISO-8601 instant, or `null` when it is not one.
 *
 * @example
 * ```ts
 * import { parseInstant } from "./isoformat.ts";
 * parseInstant("2026-12-01T05:30:00+05:30")?.ms === Date.UTC(2026, 11, 1); // true
 * parseInstant("2026-12-01")?.naive; // true
 * parseInstant("tomorrow"); // null
 * ```
 */
export function parseInstant(s: string): Instant | null {
  // Ledgers repeat their expiries: each distinct text is parsed once (bounded), and the text of
  // the row before is compared first (no hashing).
  if (s === last.text) return last.value;
  let v = PARSED.get(s);
  if (v === undefined) {
    v = parse(s);
    if (PARSED.size >= 4096) PARSED.clear();
    PARSED.set(s, v);
  }
  last = { text: s, value: v };
  return v;
}

const PARSED = new Map<string, Instant | null>();
let last: { readonly text: string; readonly value: Instant | null } = { text: "", value: null };

function parse(s: string): Instant | null {
  const m = ISO.exec(s);
  if (m === null) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [h, mi, se] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const frac = m[7] === undefined ? 0 : Number(m[7].padEnd(3, "0").slice(0, 3));
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || se > 59) return null;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = mo === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31;
  if (d < 1 || d > days) return null;
  let ms = Date.UTC(y, mo - 1, d, h, mi, se, frac);
  if (y < 100) ms = new Date(ms).setUTCFullYear(y);
  const off = m[8];
  if (off === undefined) return { ms, naive: true };
  if (off !== "Z") {
    const digits = off.slice(1).replaceAll(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2, 4) || 0);
    const os = Number(digits.slice(4, 6) || 0);
    if (oh > 23 || om > 59 || os > 59) return null;
    const sign = off[0] === "-" ? -1 : 1;
    ms -= sign * ((oh * 60 + om) * 60 + os) * 1000;
  }
  return { ms, naive: false };
}
