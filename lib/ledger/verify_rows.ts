/**
 * The per-row half of ledger verification, streamed. The ledger is read in 4 MiB chunks into the
 * WebAssembly module's memory (one buffer, reused, so a 100k-row ledger costs no page faults
 * beyond the first chunk); one `scan_lines` call finds the complete lines and scans each for its
 * top-level `mac`, `prev` and `time` members (the scanner `scan.ts` runs, in the same module),
 * writing the hashing table as it goes; every 2048 rows `verify_rows` hashes the lines
 * and checks the MACs and `prev` links, four messages at a time. Only rows that fail are examined
 * further (with `JSON.parse`, for a precise diagnosis, through `lineForm` in row.ts).
 *
 * Without `retain`, only the last two line hashes are kept (enough for the head); a caller that
 * finds a broken chain runs again with `retain` to name where rows went.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkLedgerBytes } from "./verify_rows.ts";
 * const c = checkLedgerBytes(new TextEncoder().encode("{}\n"), new TextEncoder().encode("k"));
 * assert.deepEqual(c.problems.get(0), { tooLarge: false, message: "the row has no 'mac' string" });
 * ```
 * @module
 */
import { WasmSha256 } from "../crypto/sha256_wasm.ts";
import {
  LINE_TOO_LARGE,
  lineForm,
  MAX_ROW_BYTES,
  type RowFault,
  rowFault,
  scannedPrev,
} from "./row.ts";
import {
  LINE_PREV_EMPTY as PREV_EMPTY,
  LINE_SCANNED as SCANNED,
  LINE_TOO_LONG as TOO_LARGE,
  PREV_POS,
  SCAN_SLOTS,
} from "./scan.ts";

/** A malformed row. */
export interface RowProblem {
  /** The line is over 1 MiB. */
  tooLarge: boolean;
  /** What is wrong. */
  message: string;
}

/** Results for the complete lines of a ledger (0-based row indexes). */
export interface RowChecks {
  /** Complete lines. */
  readonly n: number;
  /** 1 when the row is well-formed and its MAC verifies. */
  readonly macOk: Uint8Array;
  /** 1 when the row's `prev` is what the chain expects (`""` first, else the previous hash). */
  readonly chainOk: Uint8Array;
  /** Malformed rows. */
  readonly problems: ReadonlyMap<number, RowProblem>;
  /** Byte offset just past the last complete line (where an unterminated fragment starts). */
  readonly completeEnd: number;
  /** Total bytes read. */
  readonly size: number;
  /** Whether every row's hash and `prev` were kept. */
  readonly retained: boolean;
  /** SHA-256 hex of a line (any row when retained, else the last two). */
  hash(i: number): string;
  /** A well-formed row's `prev` (retained only), else `null`. */
  prev(i: number): string | null;
  /**
   * The decision about row `i` on its own (`rowFault` in row.ts): `null` when it is a valid
   * signed row chaining onto the line before it.
   */
  fault(i: number): RowFault | null;
}

/** Reads into `into`, returning the byte count (0 at end of file). */
export type ReadFn = (into: Uint8Array) => number;

const NONE = 0xffffffff;
/** Rows per call into the module: small enough that its optimizing tier kicks in early. */
const BATCH = 2048;
/** Bytes read per refill. */
const CHUNK = 4 << 20;
const dec = new TextDecoder();
/** A row without a form problem: its MAC and chain bits decide (a loose one's MAC bit is 0). */
const SCANNED_FORM = { kind: "scanned" } as const;

class Grow {
  a = new Uint8Array(1024);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Uint8Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  append(src: Uint8Array): void {
    if (this.n + src.length > this.a.length) {
      let len = this.a.length * 2;
      while (len < this.n + src.length) len *= 2;
      const b = new Uint8Array(len);
      b.set(this.a.subarray(0, this.n));
      this.a = b;
    }
    this.a.set(src, this.n);
    this.n += src.length;
  }
  done(): Uint8Array {
    return this.a.subarray(0, this.n);
  }
}

/**
 * Checks every complete line of a ledger delivered by `read`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRowsStream } from "./verify_rows.ts";
 * let sent = false;
 * const c = checkRowsStream((into) => {
 *   if (sent) return 0;
 *   sent = true;
 *   return new TextEncoder().encodeInto("x\n", into).written;
 * }, new Uint8Array([1]), { retain: false });
 * assert.equal(c.n, 1);
 * ```
 */
export function checkRowsStream(
  read: ReadFn,
  key: Uint8Array,
  opts: { retain: boolean; onRows?: (rows: number) => void },
): RowChecks {
  const w = WasmSha256.create();
  w.setKey(key);
  const base = w.heapBase;
  const bufCap = CHUNK + MAX_ROW_BYTES + 2;
  const tableAt = (base + bufCap + 63) & ~63;
  const lastHashAt = tableAt + BATCH * 24;
  const hashesAt = lastHashAt + 64;
  const flagsAt = hashesAt + BATCH * 64;
  const statusAt = flagsAt + BATCH;
  const scratchAt = (statusAt + BATCH + 15) & ~15;
  w.reserve(scratchAt + BATCH * w.scratchPerRow - base);
  const mem = w.bytes;
  const table = new Uint32Array(mem.buffer, tableAt, BATCH * 6);

  const macOk = new Grow();
  const chainOk = new Grow();
  const problems = new Map<number, RowProblem>();
  const hashStore = opts.retain ? new Grow() : null;
  const prevs: (string | null)[] = [];
  const last2 = new Uint8Array(128);
  const jsPrev = new Map<number, string>();
  const scan = new Int32Array(SCAN_SLOTS);

  let n = 0; // rows completed and flushed or in the batch
  let batch = 0;
  let batchStart = 0; // row index of the batch's first row
  let firstPrevEmpty = false;
  let filled = 0; // bytes in the buffer
  let pos = 0; // first unconsumed byte in the buffer
  let offset = 0; // file offset of the buffer's first byte
  let completeEnd = 0;
  let eof = false;
  let discarding = false; // inside a line longer than the limit

  const flush = () => {
    if (batch === 0) return;
    mem.fill(0, flagsAt, flagsAt + batch);
    w.verifyRows(batch, tableAt, hashesAt, flagsAt, scratchAt, batchStart > 0);
    for (let k = 0; k < batch; k++) {
      const i = batchStart + k;
      const f = mem[flagsAt + k];
      const bad = problems.has(i);
      macOk.push(bad ? 0 : f & 1);
      const js = jsPrev.get(i);
      if (js !== undefined) {
        const at = k > 0 ? hashesAt + (k - 1) * 64 : lastHashAt;
        const expected = i === 0 ? "" : dec.decode(mem.subarray(at, at + 64));
        chainOk.push(js === expected ? 1 : 0);
        jsPrev.delete(i);
      } else {
        chainOk.push(bad ? 0 : i === 0 ? (firstPrevEmpty ? 1 : 0) : (f >> 1) & 1);
      }
    }
    const lastAt = hashesAt + (batch - 1) * 64;
    if (batch >= 2) last2.set(mem.subarray(lastAt - 64, lastAt + 64));
    else {
      last2.copyWithin(0, 64, 128);
      last2.set(mem.subarray(lastAt, lastAt + 64), 64);
    }
    hashStore?.append(mem.subarray(hashesAt, hashesAt + batch * 64));
    mem.copyWithin(lastHashAt, lastAt, lastAt + 64);
    batchStart += batch;
    batch = 0;
    opts.onRows?.(batchStart);
  };

  // The batch's row `batch` (its table words and form byte already written): what TypeScript
  // keeps of it. A line the scan could not read as a row is judged by `lineForm` (row.ts), which
  // reads it as JSON for a precise diagnosis; every other row is decided by the hashing.
  const takeRow = () => {
    const i = n++;
    const t = batch * 6;
    const st = mem[statusAt + batch];
    let prev: string | null = null;
    if (st & SCANNED) {
      if (i === 0) firstPrevEmpty = (st & PREV_EMPTY) !== 0;
      if (hashStore !== null) {
        const s = table[t];
        scan[PREV_POS] = table[t + 5] !== NONE ? table[t + 5] : st & PREV_EMPTY ? -2 : -3;
        prev = scannedPrev(mem, s, s + table[t + 1], scan);
      }
    } else {
      const s = table[t];
      const form = st & TOO_LARGE ? LINE_TOO_LARGE : lineForm(mem, s, s + table[t + 1], scan);
      if (form.kind === "loose") {
        // Not in canonical layout (so its MAC fails): its chain link is still checked, against
        // the previous line's hash, once the batch is hashed.
        prev = form.prev;
        jsPrev.set(i, prev);
      } else if (form.kind !== "scanned") {
        problems.set(i, { tooLarge: form.kind === "too-large", message: form.message });
      }
    }
    if (hashStore !== null) prevs.push(prev);
    batch++;
  };

  for (;;) {
    if (discarding) {
      // The rest of a line longer than the buffer: a too-large row, ending at the next newline.
      let e = pos < filled ? mem.indexOf(0x0a, base + pos) - base : -1;
      if (e >= filled) e = -1;
      if (e >= 0) {
        const t = batch * 6;
        table.fill(NONE, t, t + 6);
        table[t] = base + e;
        table[t + 1] = 0;
        mem[statusAt + batch] = TOO_LARGE;
        takeRow();
        if (batch === BATCH) flush();
        discarding = false;
        pos = e + 1;
        completeEnd = offset + pos;
        continue;
      }
    } else if (pos < filled) {
      // One call finds and scans the complete lines the batch has room for.
      const k = w.scanLines(
        base,
        pos,
        filled,
        tableAt + batch * 24,
        statusAt + batch,
        BATCH - batch,
        MAX_ROW_BYTES,
      );
      if (k > 0) {
        for (let j = 0; j < k; j++) takeRow();
        const t = (batch - 1) * 6;
        pos = table[t] + table[t + 1] - base + 1;
        completeEnd = offset + pos;
        if (batch === BATCH) flush();
        continue;
      }
    }
    if (eof) break;
    // The buffer holds no further complete line: hash what is queued, then make room.
    flush();
    if (discarding || filled - pos > MAX_ROW_BYTES) {
      discarding = true;
      offset += filled;
      filled = 0;
      pos = 0;
    } else {
      mem.copyWithin(base, base + pos, base + filled);
      offset += pos;
      filled -= pos;
      pos = 0;
    }
    while (filled < CHUNK) {
      const k = read(mem.subarray(base + filled, base + bufCap));
      if (k === 0) {
        eof = true;
        break;
      }
      filled += k;
    }
  }
  flush();
  const size = offset + filled;
  const hashes = hashStore?.done() ?? null;
  const macBits = macOk.done();
  const chainBits = chainOk.done();
  return {
    n,
    macOk: macBits,
    chainOk: chainBits,
    problems,
    completeEnd,
    size,
    retained: hashes !== null,
    hash: (i) => {
      if (hashes !== null) return dec.decode(hashes.subarray(i * 64, i * 64 + 64));
      const back = n - 1 - i;
      if (back < 0 || back > 1) throw new RangeError(`row ${i + 1}'s hash was not retained`);
      return dec.decode(last2.subarray(64 - back * 64, 128 - back * 64));
    },
    prev: (i) => {
      if (hashes === null) throw new RangeError(`row ${i + 1}'s prev was not retained`);
      return prevs[i];
    },
    fault: (i) => {
      const p = problems.get(i);
      const form = p === undefined
        ? SCANNED_FORM
        : { kind: p.tooLarge ? "too-large" as const : "malformed" as const, message: p.message };
      return rowFault(form, macBits[i] === 1, chainBits[i] === 1);
    },
  };
}

/**
 * Checks the complete lines of a ledger given as bytes, retaining every hash.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkLedgerBytes } from "./verify_rows.ts";
 * assert.equal(checkLedgerBytes(new Uint8Array(0), new Uint8Array([1])).n, 0);
 * ```
 */
export function checkLedgerBytes(ledger: Uint8Array, key: Uint8Array): RowChecks {
  let at = 0;
  return checkRowsStream(
    (into) => {
      const k = Math.min(into.length, ledger.length - at);
      into.set(ledger.subarray(at, at + k));
      at += k;
      return k;
    },
    key,
    { retain: true },
  );
}

/**
 * True when some well-formed row fails its chain link after a sound predecessor: naming what
 * happened then needs every hash (a `retain` run).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkLedgerBytes, needsChainDetail } from "./verify_rows.ts";
 * assert.equal(needsChainDetail(checkLedgerBytes(new Uint8Array(0), new Uint8Array([1]))), false);
 * ```
 */
export function needsChainDetail(c: RowChecks): boolean {
  for (let i = 0; i < c.n; i++) {
    if (c.chainOk[i] || c.problems.has(i)) continue;
    if (i === 0 || (c.macOk[i - 1] && !c.problems.has(i - 1))) return true;
  }
  return false;
}
