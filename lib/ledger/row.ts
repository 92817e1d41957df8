/**
 * One ledger row: `canonical({...body, time, prev, mac})` where
 * `mac = hex(HMAC-SHA256(key, canonical({...body, time, prev})))` and `prev` is the hex SHA-256
 * of the previous line's text (`""` for the first row).
 *
 * @example
 * ```ts
 * import { signRow, utcSeconds } from "./row.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const line = signRow({ action: "note" }, new HmacKey(new Uint8Array([1])), {
 *   time: utcSeconds(new Date(0)),
 *   prev: "",
 * });
 * line.startsWith('{"action": "note", "mac": '); // true
 * ```
 * @module
 */
import { canonical, type JsonObject, type JsonValue } from "../canonical.ts";
import { LedgerError } from "../errors.ts";
import type { HmacKey } from "../crypto/hash.ts";
import { signedPart } from "./scan.ts";

/** Keys the ledger sets itself; a body may not carry them. */
export const RESERVED_ROW_KEYS = ["mac", "prev", "time"] as const;

/** Longest line accepted on read (1 MiB). */
export const MAX_ROW_BYTES = 1024 * 1024;

/** A row body: what a caller records (`action`, `agent`, ...). */
export type RowBody = JsonObject;

/**
 * Python's `datetime.now(UTC).isoformat(timespec="seconds")`: `2026-11-29T18:02:10+00:00`.
 *
 * @example
 * ```ts
 * import { utcSeconds } from "./row.ts";
 * utcSeconds(new Date(Date.UTC(2026, 10, 29, 18, 2, 10, 999))); // "2026-11-29T18:02:10+00:00"
 * ```
 */
export function utcSeconds(d: Date): string {
  return d.toISOString().slice(0, 19) + "+00:00";
}

function refuseReservedKeys(body: RowBody): void {
  for (const k of RESERVED_ROW_KEYS) {
    if (Object.hasOwn(body, k)) {
      throw new LedgerError("ROW_INVALID", `a row body may not set '${k}'; the ledger sets it`);
    }
  }
}

function canonicalRow(value: JsonObject): string {
  try {
    return canonical(value);
  } catch (e) {
    throw new LedgerError("ROW_INVALID", `row has no canonical encoding: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/** A time as {@link utcSeconds} writes it and a MAC, standing in for the real ones in a size check. */
const TIME_STAND_IN = "0000-00-00T00:00:00+00:00";
const MAC_STAND_IN = "0".repeat(64);

/**
 * Refuses a row of `bytes` bytes (its newline included) over {@link MAX_ROW_BYTES}.
 *
 * @throws {LedgerError} `LEDGER_ROW_TOO_LARGE`
 * @example
 * ```ts
 * import { checkRowSize, MAX_ROW_BYTES } from "./row.ts";
 * checkRowSize(MAX_ROW_BYTES); // ok; one byte more is refused
 * ```
 */
export function checkRowSize(bytes: number): void {
  if (bytes > MAX_ROW_BYTES) {
    throw new LedgerError("LEDGER_ROW_TOO_LARGE", `a ${bytes}-byte row is over 1 MiB`);
  }
}

/**
 * Refuses a body the ledger cannot record: a reserved key, no canonical encoding, or a row over
 * the line limit even as a first row (the shortest line it can sign into: `prev` is `""`).
 *
 * @throws {LedgerError} `ROW_INVALID`, `LEDGER_ROW_TOO_LARGE`
 * @example
 * ```ts
 * import { checkBody } from "./row.ts";
 * checkBody({ action: "x" }); // ok
 * ```
 */
export function checkBody(body: RowBody): void {
  refuseReservedKeys(body);
  const shortest = { ...body, time: TIME_STAND_IN, prev: "", mac: MAC_STAND_IN };
  // Canonical JSON is ASCII: its length is its size in bytes. One more for the newline.
  checkRowSize(canonicalRow(shortest).length + 1);
}

/**
 * Signs a body into a ledger line (without the trailing newline).
 *
 * @throws {LedgerError} `ROW_INVALID` when the body carries a reserved key or has no canonical
 *   encoding (floats, lone surrogates, ...).
 * @example
 * ```ts
 * import { signRow } from "./row.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * signRow({ action: "x" }, new HmacKey(new Uint8Array([7])), { time: "t", prev: "" });
 * ```
 */
export function signRow(
  body: RowBody,
  hmac: HmacKey,
  meta: { time: string; prev: string },
): string {
  refuseReservedKeys(body);
  const full: Record<string, JsonValue> = { ...body, time: meta.time, prev: meta.prev };
  return canonical({ ...full, mac: hmac.hex(canonicalRow(full)) });
}

const enc = new TextEncoder();

/**
 * True when `line` (a ledger or dispatch-store line, without its newline) is signed by `hmac`:
 * its top-level `mac` is the HMAC of the line without that member. Such a line is canonical
 * JSON by construction.
 *
 * @example
 * ```ts
 * import { lineVerifies, signRow } from "./row.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([7]));
 * lineVerifies(signRow({ action: "x" }, k, { time: "t", prev: "" }), k); // true
 * ```
 */
export function lineVerifies(line: string | Uint8Array, hmac: HmacKey): boolean {
  const part = signedPart(typeof line === "string" ? enc.encode(line) : line);
  return part !== null && hmac.verify(part.signed, part.mac);
}
