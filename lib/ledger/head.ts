/**
 * The ledger head `.agentteams/proposal-ledger.head`: `{"count", "last", "mac"}` anchoring the
 * row count and the SHA-256 of the last line, signed over `canonical({count, last})`. It is
 * rewritten atomically after every append, so truncating the ledger's tail shows.
 *
 * @example
 * ```ts
 * import { headText, parseHead } from "./head.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([1]));
 * parseHead(headText(0, null, k)).count; // 0
 * ```
 * @module
 */
import { canonical } from "../pycompat/canonical.ts";
import type { HmacKey } from "../crypto/hash.ts";

/** A parsed head (not yet authenticated). */
export interface Head {
  /** Number of rows the writer had appended. */
  readonly count: number;
  /** SHA-256 hex of the last line, `null` for an empty ledger. */
  readonly last: string | null;
  /** HMAC over `canonical({count, last})`. */
  readonly mac: string;
}

/** Why a head text could not be parsed. */
export class HeadFormatError extends Error {}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The head file's text for a ledger state (with its trailing newline).
 *
 * @example
 * ```ts
 * import { headText } from "./head.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * headText(1, "ab".repeat(32), new HmacKey(new Uint8Array([1]))).startsWith('{"count": 1'); // true
 * ```
 */
export function headText(count: number, last: string | null, hmac: HmacKey): string {
  const mac = hmac.hex(canonical({ count, last }));
  return canonical({ count, last, mac }) + "\n";
}

/**
 * Parses a head file's text (surrounding whitespace ignored, as the earlier tool did).
 *
 * @throws {HeadFormatError} when it is not `{"count": int, "last": hex|null, "mac": hex}`.
 * @example
 * ```ts
 * import { parseHead } from "./head.ts";
 * parseHead('{"count": 0, "last": null, "mac": "00"}').last; // null
 * ```
 */
export function parseHead(text: string): Head {
  let v: unknown;
  try {
    v = JSON.parse(text.trim());
  } catch {
    throw new HeadFormatError("the head is not JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new HeadFormatError("the head is not a JSON object");
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(",");
  if (keys !== "count,last,mac") {
    throw new HeadFormatError(`the head has keys [${keys}], expected count, last, mac`);
  }
  if (typeof o.count !== "number" || !Number.isSafeInteger(o.count) || o.count < 0) {
    throw new HeadFormatError("the head's count is not a non-negative integer");
  }
  if (!(o.last === null || (typeof o.last === "string" && HEX64.test(o.last)))) {
    throw new HeadFormatError("the head's last is neither null nor 64 hex characters");
  }
  if (typeof o.mac !== "string") throw new HeadFormatError("the head's mac is not a string");
  return { count: o.count, last: o.last as string | null, mac: o.mac };
}

/**
 * True when the head's MAC verifies under `hmac`.
 *
 * @example
 * ```ts
 * import { headText, headVerifies, parseHead } from "./head.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([1]));
 * headVerifies(parseHead(headText(0, null, k)), k); // true
 * ```
 */
export function headVerifies(head: Head, hmac: HmacKey): boolean {
  return hmac.verify(canonical({ count: head.count, last: head.last }), head.mac);
}
