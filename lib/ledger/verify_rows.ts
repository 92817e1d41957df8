/**
 * The per-row half of ledger verification, streamed. The ledger is read in 4 MiB chunks into the
 * WebAssembly module's memory (one buffer, reused, so a 100k-row ledger costs no page faults
 * beyond the first chunk); one `scan_lines` call finds the complete lines and scans each for its
 * top-level `mac`, `prev` and `time` members (the scanner `scan.ts` runs, in the same module),
 * writing the hashing table as it goes; every 2048 rows `verify_rows` hashes the lines
 * and checks the MACs and `prev` links, four messages at a time. Only lines the scan could not read
 * as rows are examined further (with `JSON.parse`, for a precise diagnosis, through `lineForm` in
 * row.ts); a row the scan read costs no step in TypeScript, and the checks list the faulty rows so
 * that a sound ledger's judgement reads none. With `countActs`, `act_tags` counts the acts per
 * dispatch (dispatch_acts.ts) on the same lines in the same memory, so verify reads the ledger once.
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
import { ACT_LINE_MAX, addTags } from "./dispatch_acts.ts";
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
  /**
   * The rows {@link RowChecks.fault} judges (ascending): every row but those that are well-formed,
   * signed and chained. A sound ledger has none, so its judgement reads no row twice.
   */
  readonly faulty: readonly number[];
  /**
   * With `countActs`: the acts per dispatch tag in the complete lines (`dispatch_acts.ts`; lines
   * over {@link ACT_LINE_MAX} bytes are not looked at).
   */
  readonly acts?: ReadonlyMap<string, number>;
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
/** `verify_rows`'s flag bits: the row's MAC verifies; its `prev` is the previous line's hash. */
const MAC_BIT = 1;
const CHAIN_BIT = 2;
const BOTH = MAC_BIT | CHAIN_BIT;

class Grow {
  a = new Uint8Array(1024);
  n = 0;
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
  opts: { retain: boolean; onRows?: (rows: number) => void; countActs?: boolean },
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
  const tagsAt = (statusAt + BATCH + 3) & ~3;
  const scratchAt = (tagsAt + BATCH * 8 + 15) & ~15;
  w.reserve(scratchAt + BATCH * w.scratchPerRow - base);
  const mem = w.bytes;
  const table = new Uint32Array(mem.buffer, tableAt, BATCH * 6);

  const flags = new Grow(); // per row: MAC_BIT when its MAC verifies, CHAIN_BIT when it chains
  const faulty: number[] = [];
  const acts = opts.countActs ? new Map<string, number>() : undefined;
  const problems = new Map<number, RowProblem>();
  const hashStore = opts.retain ? new Grow() : null;
  const prevs: (string | null)[] = [];
  const last2 = new Uint8Array(128);
  const scan = new Int32Array(SCAN_SLOTS);
  // The batch's lines the scan could not read as rows (batch positions, ascending), and the `prev`
  // of the loose ones among them, whose chain link is decided here once the batch is hashed.
  const odd: number[] = [];
  const loose = new Map<number, string>();

  let n = 0; // rows completed and flushed or in the batch
  let batch = 0;
  let batchStart = 0; // row index of the batch's first row
  let filled = 0; // bytes in the buffer
  let pos = 0; // first unconsumed byte in the buffer
  let offset = 0; // file offset of the buffer's first byte
  let completeEnd = 0;
  let eof = false;
  let discarding = false; // inside a line longer than the limit

  // Hashes the batch and keeps its flags. The module decides every row the scan read but the
  // first row's link (to nothing: its `prev` must be `""`); the odd lines are decided here. No
  // row costs a step in TypeScript unless it is odd or faulty.
  const flush = () => {
    if (batch === 0) return;
    w.verifyRows(batch, tableAt, hashesAt, flagsAt, scratchAt, batchStart > 0);
    const f = mem.subarray(flagsAt, flagsAt + batch);
    if (batchStart === 0) {
      const st = mem[statusAt];
      f[0] = (f[0] & MAC_BIT) | (st & SCANNED && st & PREV_EMPTY ? CHAIN_BIT : 0);
    }
    for (const j of odd) {
      // A malformed or too-large line has neither bit; a loose row's MAC fails (it is not in the
      // canonical layout) and its link is checked against the previous line's hash.
      const p = loose.get(j);
      if (p === undefined) {
        f[j] = 0;
        continue;
      }
      const at = j > 0 ? hashesAt + (j - 1) * 64 : lastHashAt;
      const expected = batchStart + j === 0 ? "" : dec.decode(mem.subarray(at, at + 64));
      f[j] = p === expected ? CHAIN_BIT : 0;
    }
    flags.append(f);
    const from = faulty.length;
    for (let v = 0; v < BOTH; v++) {
      for (let j = f.indexOf(v); j >= 0; j = f.indexOf(v, j + 1)) faulty.push(batchStart + j);
    }
    if (faulty.length - from > 1) {
      const sorted = faulty.slice(from).sort((x, y) => x - y);
      faulty.length = from;
      for (const i of sorted) faulty.push(i);
    }
    const lastAt = hashesAt + (batch - 1) * 64;
    if (batch >= 2) last2.set(mem.subarray(lastAt - 64, lastAt + 64));
    else {
      last2.copyWithin(0, 64, 128);
      last2.set(mem.subarray(lastAt, lastAt + 64), 64);
    }
    hashStore?.append(mem.subarray(hashesAt, hashesAt + batch * 64));
    mem.copyWithin(lastHashAt, lastAt, lastAt + 64);
    odd.length = 0;
    loose.clear();
    batchStart += batch;
    batch = 0;
    opts.onRows?.(batchStart);
  };

  // The batch's row at position `j` (its table words and form byte already written): what
  // TypeScript keeps of it. A line the scan could not read as a row is judged by `lineForm`
  // (row.ts), which reads it as JSON for a precise diagnosis; every other row is decided by the
  // hashing, and needs a step here only when its `prev` is retained.
  const examine = (j: number) => {
    const t = j * 6;
    const st = mem[statusAt + j];
    let prev: string | null = null;
    if (st & SCANNED) {
      if (hashStore !== null) {
        const s = table[t];
        scan[PREV_POS] = table[t + 5] !== NONE ? table[t + 5] : st & PREV_EMPTY ? -2 : -3;
        prev = scannedPrev(mem, s, s + table[t + 1], scan);
      }
    } else {
      odd.push(j);
      const s = table[t];
      const form = st & TOO_LARGE ? LINE_TOO_LARGE : lineForm(mem, s, s + table[t + 1], scan);
      if (form.kind === "loose") {
        prev = form.prev;
        loose.set(j, prev);
      } else if (form.kind !== "scanned") {
        problems.set(batchStart + j, {
          tooLarge: form.kind === "too-large",
          message: form.message,
        });
      }
    }
    if (hashStore !== null) prevs.push(prev);
  };

  // The batch's next `k` lines, found and scanned. Without `retain`, only the odd ones are
  // examined: form byte 0 (not a row) or LINE_TOO_LONG; the scanned ones are 1 or 3.
  const takeRows = (k: number) => {
    if (hashStore !== null) {
      for (let j = batch; j < batch + k; j++) examine(j);
    } else {
      const st = mem.subarray(statusAt + batch, statusAt + batch + k);
      let a = st.indexOf(0);
      let b = st.indexOf(TOO_LARGE);
      while (a >= 0 || b >= 0) {
        if (b < 0 || (a >= 0 && a < b)) {
          examine(batch + a);
          a = st.indexOf(0, a + 1);
        } else {
          examine(batch + b);
          b = st.indexOf(TOO_LARGE, b + 1);
        }
      }
    }
    n += k;
    batch += k;
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
        takeRows(1);
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
        takeRows(k);
        const t = (batch - 1) * 6;
        const from = pos;
        pos = table[t] + table[t + 1] - base + 1;
        if (acts !== undefined) {
          // The same k lines' dispatch tags, from the same bytes (dispatch_acts.ts).
          const m = w.actTags(base, from, pos, tagsAt, k, ACT_LINE_MAX);
          addTags(mem, new Uint32Array(mem.buffer, tagsAt, 2 * m), acts);
        }
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
  const bits = flags.done();
  let macBits: Uint8Array | null = null;
  let chainBits: Uint8Array | null = null;
  return {
    n,
    // Made on first use: a sound ledger's judgement reads neither.
    get macOk() {
      return macBits ??= bits.map((f) => f & MAC_BIT);
    },
    get chainOk() {
      return chainBits ??= bits.map((f) => (f & CHAIN_BIT) >> 1);
    },
    faulty,
    acts,
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
      return rowFault(form, (bits[i] & MAC_BIT) !== 0, (bits[i] & CHAIN_BIT) !== 0);
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
  for (const i of c.faulty) {
    if (c.chainOk[i] || c.problems.has(i)) continue;
    if (i === 0 || (c.macOk[i - 1] && !c.problems.has(i - 1))) return true;
  }
  return false;
}
