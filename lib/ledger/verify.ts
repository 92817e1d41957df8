/**
 * Ledger verification: every row's MAC, the hash chain, the head, and the dispatch store. Each
 * kind of damage gets its own code and, where it has one, the 1-based row number:
 *
 * | code | meaning |
 * | --- | --- |
 * | `ROW_MALFORMED` | a line is not a JSON object with `mac`, `prev`, `time` strings |
 * | `ROW_TOO_LARGE` | a line is over 1 MiB |
 * | `ROW_MAC_INVALID` | a row was edited (its MAC fails) |
 * | `FOREIGN_KEY` | every row and the head fail: rewritten with another key (or the wrong key) |
 * | `FIRST_ROWS_REMOVED` | the first row chains onto a row that is gone |
 * | `ROWS_REMOVED` | a row chains onto a row that is not in the ledger |
 * | `ROWS_REORDERED` | a row chains onto a row found elsewhere in the ledger |
 * | `LAST_ROW_REMOVED` | the head records one row more than the ledger holds |
 * | `TRUNCATED` | the ledger was cut (rows or part of a row missing at the end) |
 * | `TORN_TAIL` | an unterminated last line after rows that match the head: an interrupted write |
 *
 * An unterminated last line that is itself a complete signed row chaining onto the last row (all
 * of an append but its newline) is a `TORN_TAIL` that repair completes rather than removes; one
 * that is signed but chains elsewhere is a copied row (`ROWS_REORDERED`), not a torn write.
 * | `HEAD_MISSING`, `HEAD_MALFORMED`, `HEAD_MAC_INVALID`, `HEAD_MISMATCH` | the head |
 * | `LEDGER_MISSING` | no ledger while the dispatch store (or a head) exists |
 * | `DISPATCH_ROW_INVALID` | a dispatch-store row fails its MAC, is malformed, or is of no known kind |
 * | `DISPATCH_USES_REMOVED` | the ledger has more acts under a dispatch than its store rows record uses |
 * | `CHECKPOINT_MISMATCH` | (with `--checkpoint`) the ledger does not extend the checkpoint |
 * | `CHAIN_BROKEN` | (public-key mode, checkpoint.ts) a row's `prev` is not the line before's hash |
 *
 * A head one row behind a valid, chained last row (a crash between the row's fsync and the head's
 * rename) is not damage: it is reported as a note and healed by the next append.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { assessLedger } from "./verify.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const bytes = new Uint8Array([1]);
 * const key = { bytes, hmac: new HmacKey(bytes) };
 * const r = assessLedger({ ledger: null, head: null, dispatches: null }, key);
 * assert.equal(r.ok, true);
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { readAtSync } from "../fs/read_at.ts";
import { LedgerError } from "../errors.ts";
import { statePaths } from "../layout.ts";
import { type LedgerSnapshot, takeLedgerSnapshot } from "./verify_snapshot.ts";
import { type Head, HeadFormatError, headVerifies, parseHead } from "./head.ts";
import {
  checkLedgerBytes,
  checkRowsStream,
  needsChainDetail,
  type RowChecks,
} from "./verify_rows.ts";
import { judgeRow, MAX_ROW_BYTES } from "./row.ts";
import { judgeStoreLine, type StoreRow } from "./dispatch.ts";
import { countDispatchActs, dispatchTag } from "./dispatch_acts.ts";

/** The key as verification needs it: raw bytes (for the batch module) and a keyed HMAC. */
export interface VerifyKey {
  /** Raw key bytes. */
  readonly bytes: Uint8Array;
  /** HMAC keyed with `bytes`. */
  readonly hmac: HmacKey;
}

/** Codes a verification can report. */
export type VerifyCode =
  | "ROW_MALFORMED"
  | "ROW_TOO_LARGE"
  | "ROW_MAC_INVALID"
  | "FOREIGN_KEY"
  | "FIRST_ROWS_REMOVED"
  | "ROWS_REMOVED"
  | "ROWS_REORDERED"
  | "LAST_ROW_REMOVED"
  | "TRUNCATED"
  | "TORN_TAIL"
  | "HEAD_MISSING"
  | "HEAD_MALFORMED"
  | "HEAD_MAC_INVALID"
  | "HEAD_MISMATCH"
  | "LEDGER_MISSING"
  | "DISPATCH_ROW_INVALID"
  | "DISPATCH_USES_REMOVED"
  | "CHECKPOINT_MISMATCH"
  | "CHAIN_BROKEN";

/** One finding. */
export interface LedgerProblem {
  /** Stable code. */
  code: VerifyCode;
  /** 1-based row (ledger line or dispatch-store line), or `null`. */
  row: number | null;
  /** What was found. */
  message: string;
}

/** The verdict. */
export interface VerifyReport {
  /** No problems. */
  ok: boolean;
  /** Complete rows in the ledger. */
  rows: number;
  /** Findings, in file order (ledger first, then head, then dispatch store). */
  problems: LedgerProblem[];
  /** Observations that are not damage. */
  notes: string[];
  /**
   * The unterminated fragment, when the ledger ends with one; `complete` when it is a whole signed
   * row chaining onto the last complete row, missing only its newline.
   */
  tail: { offset: number; length: number; complete: boolean } | null;
}

/** What verification reads (`null` = absent). */
export interface LedgerTexts {
  /** `proposal-ledger.jsonl`, as bytes */
  ledger: Uint8Array | null;
  /** `proposal-ledger.head` */
  head: string | null;
  /** `dispatches.jsonl` */
  dispatches: string | null;
  /**
   * The ledger's unterminated fragment when `ledger` is `null` and the rows were checked elsewhere
   * (streamed); `null` when there is none or it is longer than a row can be.
   */
  fragment?: Uint8Array | null;
  /**
   * Acts per dispatch tag (`dispatch_acts.ts`) when `ledger` is `null` and the rows were streamed;
   * without it (and without `ledger`) uses are not reconciled. The store must have been read after
   * the ledger, so an act appended meanwhile shows its use (written first) and never a shortfall.
   */
  dispatchActs?: ReadonlyMap<string, number>;
}

/**
 * Splits a ledger text into complete lines and an unterminated fragment.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitLines } from "./verify.ts";
 * assert.deepEqual(splitLines("a\nb\nc"), { lines: ["a", "b"], fragment: "c" });
 * ```
 */
export function splitLines(text: string): { lines: string[]; fragment: string | null } {
  if (text === "") return { lines: [], fragment: null };
  const parts = text.split("\n");
  const last = parts.pop() as string;
  return { lines: parts, fragment: last === "" ? null : last };
}

/**
 * What an unterminated last line is: a whole signed row whose `prev` is `expectedPrev` (an append
 * that lost only its newline), a whole signed row chaining elsewhere (copied in), or a piece of a
 * row. `null` bytes (too long to be a row) are a piece. The row is judged as every row is
 * (`judgeRow`).
 */
function fragmentKind(
  bytes: Uint8Array | null,
  hmac: HmacKey,
  expectedPrev: string,
): "chained-row" | "stray-row" | "piece" {
  if (bytes === null || bytes.length >= MAX_ROW_BYTES) return "piece";
  const { fault } = judgeRow(bytes, hmac, expectedPrev);
  return fault === null ? "chained-row" : fault === "chain" ? "stray-row" : "piece";
}

/**
 * Verifies the texts of a ledger, its head and dispatch store (pure).
 * `checks` may be supplied when the per-row half ran elsewhere (e.g. on worker threads).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { assessLedger } from "./verify.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const bytes = new Uint8Array([1]);
 * const r = assessLedger(
 *   { ledger: new TextEncoder().encode("x\n"), head: null, dispatches: null },
 *   { bytes, hmac: new HmacKey(bytes) },
 * );
 * assert.deepEqual(r.problems.map((p) => p.code), ["ROW_MALFORMED", "HEAD_MISSING"]);
 * ```
 */
export function assessLedger(
  texts: LedgerTexts,
  key: VerifyKey,
  checks?: RowChecks,
): VerifyReport {
  const hmac = key.hmac;
  const problems: LedgerProblem[] = [];
  const notes: string[] = [];
  const add = (code: VerifyCode, row: number | null, message: string) =>
    problems.push({ code, row, message });

  const dispatchRows = texts.dispatches !== null && texts.dispatches.length > 0;
  let rows = 0;
  let foreign = false;
  let tail: VerifyReport["tail"] = null;

  if (texts.ledger === null && checks === undefined) {
    if (texts.head !== null) {
      add("LEDGER_MISSING", null, "the ledger is missing but its head exists");
    } else if (dispatchRows) {
      add("LEDGER_MISSING", null, "the ledger is missing while the dispatch store has rows");
    }
  } else {
    const c = checks ?? checkLedgerBytes(texts.ledger as Uint8Array, key.bytes);
    const n = c.n;
    rows = n;
    const fragLen = c.size - c.completeEnd;
    const fragment = fragLen > 0 ? fragLen : null;
    const fragKind = fragment === null ? "piece" : fragmentKind(
      texts.ledger !== null ? texts.ledger.subarray(c.completeEnd) : texts.fragment ?? null,
      hmac,
      n === 0 ? "" : c.hash(n - 1),
    );
    if (fragment !== null) {
      tail = { offset: c.completeEnd, length: fragLen, complete: fragKind === "chained-row" };
    }

    let head: Head | null = null;
    let headMacOk = false;
    let headProblem: [VerifyCode, string] | null = null;
    if (texts.head === null) {
      if (n > 0 || fragment !== null || dispatchRows) {
        headProblem = ["HEAD_MISSING", "the ledger head is missing"];
      }
    } else {
      try {
        head = parseHead(texts.head);
        headMacOk = headVerifies(head, hmac);
        if (!headMacOk) headProblem = ["HEAD_MAC_INVALID", "the head's MAC does not verify"];
      } catch (e) {
        if (!(e instanceof HeadFormatError)) throw e;
        headProblem = ["HEAD_MALFORMED", `the head is malformed: ${e.message}`];
      }
    }

    // Only the faulty rows can be anything but well-formed, signed and chained.
    const wellFormed = n - c.problems.size;
    let macFailures = 0;
    for (const i of c.faulty) if (!c.problems.has(i) && !c.macOk[i]) macFailures++;
    const foreignKey = wellFormed > 0 && macFailures === wellFormed && head !== null &&
      !headMacOk;
    if (foreignKey) {
      foreign = true;
      add(
        "FOREIGN_KEY",
        null,
        "every row and the head fail their MACs: these rows were signed with another key (is " +
          "AGENTTEAMS_KEY_DIR, or the key variable, this project's?), or rewritten with one",
      );
      headProblem = null;
    }

    let index: Map<string, number> | null = null;
    const indexOf = (h: string) => {
      if (index === null) {
        index = new Map();
        for (let i = 0; i < n; i++) index.set(c.hash(i), i);
      }
      return index.get(h);
    };
    for (const i of c.faulty) {
      const row = i + 1;
      // The row on its own (row.ts decides), then what its place in the ledger says.
      const fault = c.fault(i);
      if (fault === null) continue;
      if (fault === "too-large" || fault === "malformed") {
        add(
          fault === "too-large" ? "ROW_TOO_LARGE" : "ROW_MALFORMED",
          row,
          c.problems.get(i)?.message ?? fault,
        );
        continue;
      }
      if (fault === "mac" && !foreignKey) {
        add("ROW_MAC_INVALID", row, "the row's MAC does not verify: it was edited");
      }
      if (c.chainOk[i]) continue;
      // A row after an edited or malformed one cannot chain; the edit is already reported.
      if (i > 0 && (c.problems.has(i - 1) || !c.macOk[i - 1])) continue;
      const prev = c.prev(i);
      // A `prev` that cannot be read (a line that scans but is not JSON) is on an edited row,
      // already reported: where it chained cannot be said.
      if (prev === null) continue;
      const at = prev === "" ? undefined : indexOf(prev);
      if (i === 0) {
        add(
          "FIRST_ROWS_REMOVED",
          row,
          "the first row chains onto a row that is no longer in the ledger: rows were removed " +
            "from the start",
        );
      } else if (prev === "" || at !== undefined) {
        add(
          "ROWS_REORDERED",
          row,
          at === undefined
            ? "a first row appears in the middle of the ledger"
            : `the row chains onto row ${at + 1}, not row ${i}: rows were reordered`,
        );
      } else {
        add("ROWS_REMOVED", row, `the row does not chain onto row ${i}: rows were removed`);
      }
    }

    if (headProblem !== null) {
      add(headProblem[0], null, headProblem[1]);
    } else if (head !== null) {
      const h = head;
      const matches = (k: number) =>
        k >= 0 && h.count === k && h.last === (k === 0 ? null : c.hash(k - 1));
      const lagOk = n >= 1 && matches(n - 1) && c.fault(n - 1) === null;
      if (fragment !== null) {
        if (fragKind === "stray-row") {
          add(
            "ROWS_REORDERED",
            n + 1,
            "the unterminated last line is a signed row that does not chain onto row " +
              `${n}: a row copied from elsewhere, not an interrupted write`,
          );
        } else if ((matches(n) || lagOk) && fragKind === "chained-row") {
          add(
            "TORN_TAIL",
            n + 1,
            `the ledger ends with a complete signed row after ${n} rows that match the head, ` +
              "without its newline: an interrupted write (or a newline removed); " +
              "`agentteams ledger repair --torn-tail` restores the newline, keeping the row",
          );
          if (lagOk) notes.push("the head is one row behind (an append was interrupted)");
        } else if (matches(n) || lagOk) {
          add(
            "TORN_TAIL",
            n + 1,
            `the ledger ends with a ${fragment}-byte unterminated row after ${n} rows ` +
              "that match the head: an interrupted write, not tampering; " +
              "repair with `agentteams ledger repair --torn-tail`",
          );
          if (lagOk) notes.push("the head is one row behind (an append was interrupted)");
        } else {
          add(
            "TRUNCATED",
            n + 1,
            `the ledger was cut: it ends mid-row and the head records ${head.count} rows`,
          );
        }
      } else if (matches(n)) {
        // Intact.
      } else if (lagOk) {
        notes.push(
          "the head is one row behind a valid last row (an append was interrupted after its " +
            "row was written); the next append brings it up to date",
        );
      } else if (head.last === (n === 0 ? null : c.hash(n - 1))) {
        add(
          "HEAD_MISMATCH",
          null,
          `the head records ${head.count} rows but the ledger holds ${n} ending in the same row`,
        );
      } else if (head.count === n + 1) {
        // No row number: the removed row is no longer in the ledger (its number is past the end).
        add(
          "LAST_ROW_REMOVED",
          null,
          `the last row was removed: the head records ${head.count} rows, the ledger holds ${n}` +
            (n === 0 ? "" : ` (ending at row ${n})`),
        );
      } else if (head.count > n + 1) {
        add("TRUNCATED", n + 1, `the head records ${head.count} rows; the ledger has ${n}`);
      } else {
        add(
          "HEAD_MISMATCH",
          null,
          `the head (count ${head.count}) does not match the ledger's ${n} rows and last hash`,
        );
      }
    }
  }

  if (texts.dispatches !== null && texts.dispatches !== "") {
    const { lines, fragment } = splitLines(texts.dispatches);
    const valid: [number, StoreRow][] = [];
    const invalid: [number, string][] = [];
    for (let i = 0; i < lines.length; i++) {
      const row = judgeStoreLine(lines[i], hmac);
      if (typeof row === "string") invalid.push([i + 1, row]);
      else valid.push([i + 1, row]);
    }
    if (foreign && valid.length === 0 && invalid.length > 0) {
      // The same wrong key, said once: not a line per row.
      add(
        "DISPATCH_ROW_INVALID",
        null,
        `none of the dispatch store's ${invalid.length} rows verifies either: the same other key`,
      );
    } else {
      for (const [line, why] of invalid) {
        add("DISPATCH_ROW_INVALID", line, `dispatch store line ${line}: ${why}`);
      }
    }
    const acts = texts.dispatchActs ??
      (texts.ledger !== null ? countDispatchActs(texts.ledger) : null);
    if (acts !== null) {
      for (const [tag, { uses, line }] of usesByTag(valid)) {
        const n = acts.get(tag) ?? 0;
        if (n > uses) {
          add(
            "DISPATCH_USES_REMOVED",
            line,
            `the ledger records ${n} acts under dispatch ${tag} but the store holds ${uses} ` +
              "use rows: spent uses were removed (or an older store put back)",
          );
        }
      }
    }
    if (fragment !== null) {
      notes.push(
        "the dispatch store ends with an interrupted row; the next `dispatch` compacts it away",
      );
    }
  }
  return { ok: problems.length === 0, rows, problems, notes, tail };
}

/**
 * For each dispatch row among verified store rows (with their 1-based line numbers), its tag, its
 * use rows and its line.
 */
function usesByTag(
  rows: readonly (readonly [number, StoreRow])[],
): Map<string, { uses: number; line: number }> {
  const out = new Map<string, { uses: number; line: number }>();
  const uses = new Map<string, number>();
  for (const [at, row] of rows) {
    if (row.kind === "use") uses.set(row.id, (uses.get(row.id) ?? 0) + 1);
    else if (row.kind === "dispatch") out.set(row.id, { uses: 0, line: at });
  }
  return new Map(
    [...out].map(([id, v]) => [dispatchTag(id), { uses: uses.get(id) ?? 0, line: v.line }]),
  );
}

/**
 * Why a dispatch-store line is not a store row, or `null` when it is one (`judgeStoreLine` in
 * dispatch.ts, which the store's other readers use too).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dispatchRowProblem } from "./verify.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.equal(dispatchRowProblem("[]", new HmacKey(new Uint8Array([1]))), "not a JSON object");
 * ```
 */
export function dispatchRowProblem(line: string, hmac: HmacKey): string | null {
  const row = judgeStoreLine(line, hmac);
  return typeof row === "string" ? row : null;
}

/** Largest ledger `verify` reads into memory. */
export const MAX_LEDGER_BYTES = 2 * 1024 * 1024 * 1024 - 1;

/**
 * Reads a project's ledger, head and dispatch store as one state (`verify_snapshot.ts`), refusing
 * symlinks and non-regular files. The ledger's bytes are those its snapshot counts.
 *
 * @throws {LedgerError} `LEDGER_UNSAFE_PATH` for a symlinked `.agentteams` or state file, or a
 *   ledger over {@link MAX_LEDGER_BYTES}; `LEDGER_BUSY` when no consistent state could be read.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readLedgerTexts } from "./verify.ts";
 * assert.equal(readLedgerTexts(Deno.makeTempDirSync()).ledger, null);
 * ```
 */
export function readLedgerTexts(root: string): LedgerTexts {
  const snap = takeLedgerSnapshot(root);
  try {
    if (snap.file === null) return { ledger: null, head: snap.head, dispatches: snap.dispatches };
    if (snap.size > MAX_LEDGER_BYTES) {
      throw new LedgerError(
        "LEDGER_UNSAFE_PATH",
        `ledger ${statePaths(root).ledger} is ${snap.size} bytes, over the ` +
          `${MAX_LEDGER_BYTES}-byte limit`,
      );
    }
    const bytes = new Uint8Array(snap.size);
    const n = readAtSync(snap.file, 0, bytes);
    return { ledger: bytes.subarray(0, n), head: snap.head, dispatches: snap.dispatches };
  } finally {
    snap.close();
  }
}

/** Streams the snapshot's bytes of the ledger through the row checker (positional reads). */
function streamSnapshot(
  snap: LedgerSnapshot,
  key: Uint8Array,
  retain: boolean,
  onRows?: (rows: number) => void,
  countActs = false,
): RowChecks {
  const file = snap.file as Deno.FsFile;
  let at = 0;
  return checkRowsStream(
    (into) => {
      const n = readAtSync(file, at, into.subarray(0, Math.min(into.length, snap.size - at)));
      at += n;
      return n;
    },
    key,
    { retain, onRows, countActs },
  );
}

/** The ledger's unterminated fragment, read again, when it is short enough to be a row. */
function readFragment(file: Deno.FsFile, checks: RowChecks): Uint8Array | null {
  const length = checks.size - checks.completeEnd;
  if (length <= 0 || length >= MAX_ROW_BYTES) return null;
  const out = new Uint8Array(length);
  return readAtSync(file, checks.completeEnd, out) === length ? out : null;
}

/** Judges a snapshot, then closes it. */
function verifySnapshot(
  snap: LedgerSnapshot,
  key: VerifyKey,
  onRows?: (rows: number) => void,
): VerifyReport {
  try {
    if (snap.file === null) {
      return assessLedger({ ledger: null, head: snap.head, dispatches: snap.dispatches }, key);
    }
    // The acts per dispatch are counted in the same pass, over the complete lines the checks
    // see: the store, read after the snapshot, shows the use of every act counted (written first).
    const dispatches = snap.dispatches;
    const countActs = dispatches?.includes('"max_uses"') ?? false;
    let checks = streamSnapshot(snap, key.bytes, false, onRows, countActs);
    const dispatchActs = checks.acts;
    if (needsChainDetail(checks)) checks = streamSnapshot(snap, key.bytes, true);
    return assessLedger(
      {
        ledger: null,
        head: snap.head,
        dispatches,
        fragment: readFragment(snap.file, checks),
        dispatchActs,
      },
      key,
      checks,
    );
  } finally {
    snap.close();
  }
}

/**
 * Verifies a project's ledger (see the module doc for the codes). It judges one state, taken
 * while appends and dispatch operations go on (`verify_snapshot.ts`): the ledger's length and head read
 * under a shared lock on the ledger, held only for that (kept to the end when the ledger ends
 * mid-line), and the dispatch store read after them. Rows appended meanwhile are not judged. The
 * ledger is streamed, so memory stays small however long it is. Nothing is written.
 *
 * @throws {LedgerError} `LEDGER_UNSAFE_PATH` for a symlinked or non-regular state path;
 *   `LEDGER_BUSY` when no consistent state could be read (no lock, and the files kept changing).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyLedgerAt } from "./verify.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const bytes = new Uint8Array([1]);
 * assert.equal(verifyLedgerAt(Deno.makeTempDirSync(), { bytes, hmac: new HmacKey(bytes) }).ok, true);
 * ```
 */
export function verifyLedgerAt(
  root: string,
  key: VerifyKey,
  opts: { readonly onRows?: (rows: number) => void } = {},
): VerifyReport {
  return verifySnapshot(takeLedgerSnapshot(root), key, opts.onRows);
}

/**
 * {@link verifyLedgerAt} for a caller that holds the ledger's lock on `locked` (repair): the state
 * is read through it, with no lock of its own (a second lock on the ledger from this process
 * would wait for this one), and the dispatch store without its lock.
 *
 * @throws {LedgerError} as {@link verifyLedgerAt}; `LEDGER_TAMPERED` when the ledger's path no
 *   longer names `locked`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyLedgerUnderLock } from "./verify.ts";
 * import { withFileLock } from "./ledger_lock.ts";
 * import { appendRow } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const bytes = new Uint8Array([1]);
 * const key = { bytes, hmac: new HmacKey(bytes) };
 * const root = Deno.makeTempDirSync();
 * await appendRow(root, key.hmac, { action: "note" });
 * const path = `${root}/.agentteams/proposal-ledger.jsonl`;
 * assert.equal(await withFileLock(path, (file) => verifyLedgerUnderLock(root, key, file).ok), true);
 * ```
 */
export function verifyLedgerUnderLock(
  root: string,
  key: VerifyKey,
  locked: Deno.FsFile,
): VerifyReport {
  return verifySnapshot(takeLedgerSnapshot(root, { held: locked }), key);
}
