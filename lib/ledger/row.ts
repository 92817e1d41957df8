/**
 * One ledger row: `canonical({...body, time, prev, mac})` where
 * `mac = hex(HMAC-SHA256(key, canonical({...body, time, prev})))` and `prev` is the hex SHA-256
 * of the previous line's text (`""` for the first row).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signRow, utcSeconds } from "./row.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const line = signRow({ action: "note" }, new HmacKey(new Uint8Array([1])), {
 *   time: utcSeconds(new Date(0)),
 *   prev: "",
 * });
 * assert.equal(line.startsWith('{"action": "note", "mac": '), true);
 * ```
 * @module
 */
import { canonical, type JsonObject, type JsonValue } from "../pycompat/canonical.ts";
import { LedgerError } from "../errors.ts";
import type { HmacKey } from "../crypto/hash.ts";
import {
  CUT_END,
  CUT_START,
  HAS_MAC,
  LINE_SCANNED,
  LINE_TOO_LONG,
  lineStatus,
  MAC_POS,
  PREV_POS,
  SCAN_SLOTS,
  scanRow,
} from "./scan.ts";

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
 * import assert from "node:assert/strict";
 * import { utcSeconds } from "./row.ts";
 * assert.equal(utcSeconds(new Date(Date.UTC(2026, 10, 29, 18, 2, 10, 999))), "2026-11-29T18:02:10+00:00");
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
 * import assert from "node:assert/strict";
 * import { checkRowSize, MAX_ROW_BYTES } from "./row.ts";
 * assert.doesNotThrow(() => checkRowSize(MAX_ROW_BYTES));
 * assert.throws(() => checkRowSize(MAX_ROW_BYTES + 1), { code: "LEDGER_ROW_TOO_LARGE" });
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
 * import assert from "node:assert/strict";
 * import { checkBody } from "./row.ts";
 * assert.doesNotThrow(() => checkBody({ action: "x" }));
 * ```
 */
export function checkBody(body: RowBody): void {
  refuseReservedKeys(body);
  const shortest = { ...body, time: TIME_STAND_IN, prev: "", mac: MAC_STAND_IN };
  // Canonical JSON is ASCII: its length is its size in bytes. One more for the newline.
  checkRowSize(canonicalRow(shortest).length + 1);
}

/**
 * The size, in bytes and with its newline, of the line `body` would sign into after any other row
 * (a 64-hex `prev`): what {@link MAX_ROW_BYTES} bounds. An act checks its rows with it before it
 * spends anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MAX_ROW_BYTES, rowBytes } from "./row.ts";
 * assert.equal(rowBytes({ action: "note" }) < MAX_ROW_BYTES, true);
 * ```
 */
export function rowBytes(body: RowBody): number {
  const longest = { ...body, time: TIME_STAND_IN, prev: MAC_STAND_IN, mac: MAC_STAND_IN };
  // Canonical JSON is ASCII: its length is its size in bytes. One more for the newline.
  return canonicalRow(longest).length + 1;
}

/**
 * Signs a body into a ledger line (without the trailing newline).
 *
 * @throws {LedgerError} `ROW_INVALID` when the body carries a reserved key or has no canonical
 *   encoding (floats, lone surrogates, ...).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signRow } from "./row.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const row = JSON.parse(signRow({ action: "x" }, new HmacKey(new Uint8Array([7])), { time: "t", prev: "" }));
 * assert.deepEqual(Object.keys(row), ["action", "mac", "prev", "time"]);
 * assert.match(row.mac, /^[0-9a-f]{64}$/);
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
const dec = new TextDecoder();

/**
 * How a line is laid out, as far as judging it as a row goes (nothing hashed yet):
 *
 * - `scanned`: the canonical layout (`scan.ts`) with top-level `mac`, `prev` and `time` strings;
 *   the scan slots say where the signed text, the MAC and `prev` are;
 * - `loose`: a JSON object with those strings, not in the canonical layout: it was edited (a
 *   verified signed text is canonical by construction), so its MAC cannot verify; its `prev` is
 *   still known, for the chain diagnosis;
 * - `too-large`, `malformed`: not a row at all.
 */
export type LineForm =
  | { readonly kind: "scanned" }
  | { readonly kind: "loose"; readonly prev: string }
  | { readonly kind: "too-large" | "malformed"; readonly message: string };

/** The form of a line over {@link MAX_ROW_BYTES} (for a reader that did not keep all of it). */
export const LINE_TOO_LARGE: LineForm = Object.freeze({
  kind: "too-large",
  message: "the row is over the 1 MiB line limit",
});

const SCANNED: LineForm = Object.freeze({ kind: "scanned" });

/**
 * The form of the line `b[start..end)` (no newline), filling `scan` (`SCAN_SLOTS` slots) for a
 * `scanned` one. This, {@link rowFault} and the MAC check of {@link judgeRow} are the one
 * definition of a row: the batch verifier (`verify_rows.ts`) runs the same scanner over a chunk
 * of lines at once (`scan_lines` beside `scan_row` in lib/crypto/wasm/sha256.c, with this
 * function's `scanned` test), calls this function for each line that does not scan, and hashes
 * in WebAssembly what {@link judgeRow} hashes here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineForm } from "./row.ts";
 * import { SCAN_SLOTS } from "./scan.ts";
 * const b = new TextEncoder().encode('{"mac": "m"}');
 * assert.deepEqual(lineForm(b, 0, b.length, new Int32Array(SCAN_SLOTS)), {
 *   kind: "malformed",
 *   message: "the row has no 'prev' string",
 * });
 * ```
 */
export function lineForm(b: Uint8Array, start: number, end: number, scan: Int32Array): LineForm {
  const status = lineStatus(b, start, end, scan, MAX_ROW_BYTES);
  if (status & LINE_TOO_LONG) return LINE_TOO_LARGE;
  if (status & LINE_SCANNED) return SCANNED;
  let v: unknown;
  try {
    v = JSON.parse(dec.decode(b.subarray(start, end)));
  } catch {
    return { kind: "malformed", message: "the row is not JSON" };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return { kind: "malformed", message: "the row is not a JSON object" };
  }
  const o = v as Record<string, unknown>;
  for (const k of ["mac", "prev", "time"]) {
    if (typeof o[k] !== "string") {
      return { kind: "malformed", message: `the row has no '${k}' string` };
    }
  }
  return { kind: "loose", prev: o.prev as string };
}

/**
 * The `prev` of a `scanned` line (see {@link lineForm}), or `null` when it cannot be read (a line
 * that scans but is not JSON).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineForm, scannedPrev } from "./row.ts";
 * import { SCAN_SLOTS } from "./scan.ts";
 * const b = new TextEncoder().encode('{"mac": "m", "prev": "", "time": "t"}');
 * const scan = new Int32Array(SCAN_SLOTS);
 * assert.deepEqual(lineForm(b, 0, b.length, scan), { kind: "scanned" });
 * assert.equal(scannedPrev(b, 0, b.length, scan), "");
 * ```
 */
export function scannedPrev(
  b: Uint8Array,
  start: number,
  end: number,
  scan: Int32Array,
): string | null {
  const p = scan[PREV_POS];
  if (p >= 0) return dec.decode(b.subarray(p, p + 64));
  if (p === -2) return "";
  try {
    const v = JSON.parse(dec.decode(b.subarray(start, end))) as Record<string, unknown>;
    return typeof v.prev === "string" ? v.prev : null;
  } catch {
    return null;
  }
}

/** Whether a scanned line's 64-character MAC is the HMAC of the line without its mac member. */
function scannedMacOk(b: Uint8Array, scan: Int32Array, hmac: HmacKey): boolean {
  const at = scan[MAC_POS];
  if (at < 0) return false;
  const cs = scan[CUT_START];
  const ce = scan[CUT_END];
  const signed = new Uint8Array(b.length - (ce - cs));
  signed.set(b.subarray(0, cs), 0);
  signed.set(b.subarray(ce), cs);
  return hmac.verify(signed, dec.decode(b.subarray(at, at + 64)));
}

/** Why a line is not a valid signed row where it stands, in the order a row is judged. */
export type RowFault = "too-large" | "malformed" | "mac" | "chain";

/**
 * The decision about one row, from its form, whether its MAC verifies and whether its `prev` is
 * the one its place calls for: `null` for a valid signed row that chains, else the first fault.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rowFault } from "./row.ts";
 * assert.equal(rowFault({ kind: "scanned" }, true, false), "chain");
 * assert.equal(rowFault({ kind: "loose", prev: "" }, true, true), "mac"); // an edited layout never verifies
 * ```
 */
export function rowFault(form: LineForm, macOk: boolean, chainOk: boolean): RowFault | null {
  if (form.kind === "too-large" || form.kind === "malformed") return form.kind;
  if (form.kind === "loose" || !macOk) return "mac";
  return chainOk ? null : "chain";
}

/** What {@link judgeRow} found. */
export interface RowJudgement {
  /** `null` for a valid signed row whose `prev` is the expected one. */
  readonly fault: RowFault | null;
  /** The row's `prev` when it has one (`null` for a malformed line). */
  readonly prev: string | null;
  /** Why, in words (`""` when there is no fault). */
  readonly message: string;
}

const FAULT_MESSAGE: Record<"mac" | "chain", string> = {
  mac: "the row's MAC does not verify",
  chain: "the row does not chain onto the row before",
};

/**
 * Judges one ledger line (without its newline): a valid row is well-formed ({@link lineForm}),
 * its MAC verifies under `hmac`, and its `prev` is `expectedPrev` (`""` for a first row, else the
 * SHA-256 hex of the line before). Every single-line check of the ledger uses it: the append's
 * tail check, the run guard's appended rows, verify's unterminated last line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { judgeRow, signRow } from "./row.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([7]));
 * const line = new TextEncoder().encode(signRow({ action: "x" }, k, { time: "t", prev: "" }));
 * assert.equal(judgeRow(line, k, "").fault, null);
 * assert.equal(judgeRow(line, k, "ab".repeat(32)).fault, "chain");
 * ```
 */
export function judgeRow(line: Uint8Array, hmac: HmacKey, expectedPrev: string): RowJudgement {
  const scan = new Int32Array(SCAN_SLOTS);
  const form = lineForm(line, 0, line.length, scan);
  if (form.kind === "too-large" || form.kind === "malformed") {
    return { fault: form.kind, prev: null, message: form.message };
  }
  const prev = form.kind === "loose" ? form.prev : scannedPrev(line, 0, line.length, scan);
  const macOk = form.kind === "scanned" && scannedMacOk(line, scan, hmac);
  const fault = rowFault(form, macOk, prev === expectedPrev) as "mac" | "chain" | null;
  return { fault, prev, message: fault === null ? "" : FAULT_MESSAGE[fault] };
}

/**
 * True when `line` (a ledger or dispatch-store line, without its newline) is signed by `hmac`:
 * its top-level `mac` is the HMAC of the line without that member. Such a line is canonical
 * JSON by construction.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineVerifies, signRow } from "./row.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([7]));
 * assert.equal(lineVerifies(signRow({ action: "x" }, k, { time: "t", prev: "" }), k), true);
 * ```
 */
export function lineVerifies(line: string | Uint8Array, hmac: HmacKey): boolean {
  const b = typeof line === "string" ? enc.encode(line) : line;
  const scan = new Int32Array(SCAN_SLOTS);
  return scanRow(b, 0, b.length, scan) && scan[HAS_MAC] === 1 && scannedMacOk(b, scan, hmac);
}
