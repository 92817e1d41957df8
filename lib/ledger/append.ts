/**
 * Appending to the signed ledger. Under an exclusive `flock` on the ledger file:
 *
 * 1. the tail is checked without re-reading the ledger: the last line is read from the end of the
 *    file and its SHA-256 compared with the signed head (a head one row behind, left by a crash
 *    between the row's fsync and the head's rename, is recognised and healed; anything else is
 *    `LEDGER_TAMPERED`; an unterminated last line is `TORN_TAIL` and refuses appends until
 *    `ledger repair --torn-tail`);
 * 2. the new row is written with one `write` and fsynced;
 * 3. the head is rewritten atomically, its temporary file fsynced beside the row (two fsyncs in
 *    flight at once cost about one); its rename waits for both, so a crash leaves the head as it
 *    was or one row behind, never ahead of the rows.
 *
 * So an append costs the same at 0 rows and at 100k.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { appendRow } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const r = await appendRow(root, new HmacKey(new Uint8Array([1])), { action: "note" });
 * assert.equal(r.count, 1);
 * ```
 * @module
 */
import { LedgerError } from "../errors.ts";
import { sha256Hex } from "../crypto/hash.ts";
import type { HmacKey } from "../crypto/hash.ts";
import { atomicWriteFile, atomicWriteFileSync } from "../fs/atomic_write.ts";
import {
  checkStatePath,
  ensureStateDir,
  readStateFileSync,
  type StatePaths,
  statePaths,
} from "../layout.ts";
import { HeadFormatError, headText, headVerifies, parseHead } from "./head.ts";
import {
  checkBody,
  checkRowSize,
  judgeRow,
  MAX_ROW_BYTES,
  type RowBody,
  signRow,
  utcSeconds,
} from "./row.ts";
import { withFileLock } from "./ledger_lock.ts";
import { readAtSync } from "../fs/read_at.ts";
import { anchorsAfter, anchorsPath } from "./anchor_state.ts";

/** Options of {@link appendRow}. */
export interface AppendOptions {
  /** The clock (default `() => new Date()`). */
  now?: () => Date;
}

/** What an append wrote. */
export interface AppendResult {
  /** The line written (without newline). */
  line: string;
  /** SHA-256 hex of the line: the next row's `prev`. */
  hash: string;
  /** Rows in the ledger after the append. */
  count: number;
  /** True when the append also healed a head left one row behind by a crash. */
  healedHead: boolean;
  /**
   * The ledger as the append left it, read under its lock (`fstat` once the row is written): its
   * size, its inode (`null` where the platform gives none) and where the row starts. An act that
   * runs code after its start row takes this as the stores snapshot's ledger part
   * (`lib/ledger/guard.ts` `captureStores`) instead of locking the ledger again.
   */
  end: LedgerEnd;
}

/** Where a ledger ends after an append (see {@link AppendResult.end}). */
export interface LedgerEnd {
  /** Ledger length in bytes. */
  readonly size: number;
  /** The ledger file's inode, `null` where the platform gives none. */
  readonly ino: number | null;
  /** Byte offset where the last row (the one just written) starts. */
  readonly lastStart: number;
}

/** The state of the ledger's end, as an append sees it. */
export interface TailState {
  /** Rows in the ledger (from the head, healed when one behind). */
  count: number;
  /** SHA-256 of the last line, `""` for an empty ledger. */
  prev: string;
  /** True when the head was one row behind. */
  headLag: boolean;
  /** True for a ledger with no rows and no head yet. */
  headMissing: boolean;
  /** Byte offset where the last row starts (0 for an empty ledger). */
  lastStart: number;
}

const dec = new TextDecoder("utf-8", { fatal: false });

function readHeadSync(paths: StatePaths): string | null {
  const bytes = readStateFileSync(paths.head, "ledger head", 4096);
  return bytes === null ? null : dec.decode(bytes);
}

function tampered(message: string, details: Record<string, unknown> = {}): LedgerError {
  return new LedgerError("LEDGER_TAMPERED", message + "; inspect with `agentteams ledger verify`", {
    details,
  });
}

function dispatchStoreHasRows(paths: StatePaths): boolean {
  try {
    return Deno.lstatSync(paths.dispatches).size > 0;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/**
 * Reads the last line of an open ledger through its descriptor (at most 1 MiB + 2 bytes from the
 * end) and checks it against the head. Exported for tests; runs under the caller's lock.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkTail } from "./append.ts";
 * import { statePaths } from "../layout.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * assert.deepEqual(checkTail(null, statePaths(root), new HmacKey(new Uint8Array([1]))), {
 *   count: 0,
 *   prev: "",
 *   headLag: false,
 *   headMissing: true,
 *   lastStart: 0,
 * });
 * ```
 */
export function checkTail(file: Deno.FsFile | null, paths: StatePaths, hmac: HmacKey): TailState {
  const size = file === null ? 0 : file.statSync().size;
  const headRaw = readHeadSync(paths);
  if (size === 0) {
    if (headRaw !== null) {
      let head;
      try {
        head = parseHead(headRaw);
      } catch (e) {
        throw tampered(`the ledger is empty and the head is malformed (${(e as Error).message})`);
      }
      if (head.count !== 0) {
        throw tampered(`the ledger is empty but its head records ${head.count} rows`);
      }
      if (!headVerifies(head, hmac)) throw tampered("the head's MAC does not verify");
    } else if (dispatchStoreHasRows(paths)) {
      throw tampered("the ledger is missing while the dispatch store has rows");
    }
    return { count: 0, prev: "", headLag: false, headMissing: headRaw === null, lastStart: 0 };
  }
  if (file === null) throw tampered("the ledger vanished while being read");
  // Read backwards from the end in growing windows until the last line's start is found: rows
  // are a few hundred bytes, so one 4 KiB read usually suffices, and no append reads more than
  // the last row plus 2 bytes (1 MiB at most).
  let window = Math.min(size, 4096);
  let buf: Uint8Array;
  let start: number;
  for (;;) {
    buf = new Uint8Array(window);
    if (readAtSync(file, size - window, buf) !== window) {
      throw tampered("the ledger changed size while being read");
    }
    if (buf[window - 1] !== 0x0a) {
      throw new LedgerError(
        "TORN_TAIL",
        "the ledger ends with an unterminated row (an interrupted write); " +
          "run `agentteams ledger repair --torn-tail` after `ledger verify`",
      );
    }
    start = buf.lastIndexOf(0x0a, window - 2) + 1;
    if (start > 0 || window === size) break;
    if (window >= MAX_ROW_BYTES + 2) {
      throw new LedgerError("LEDGER_ROW_TOO_LARGE", "the ledger's last row is over 1 MiB");
    }
    window = Math.min(size, window * 4, MAX_ROW_BYTES + 2);
  }
  const lastBytes = buf.subarray(start, window - 1);
  const lastHash = sha256Hex(lastBytes);
  const lastStart = size - window + start;
  if (headRaw === null) throw tampered("the ledger head is missing");
  let head;
  try {
    head = parseHead(headRaw);
  } catch (e) {
    if (e instanceof HeadFormatError) throw tampered(`the head is malformed: ${e.message}`);
    throw e;
  }
  if (!headVerifies(head, hmac)) throw tampered("the head's MAC does not verify");
  if (head.last === lastHash) {
    return { count: head.count, prev: lastHash, headLag: false, headMissing: false, lastStart };
  }
  // A crash between the row's fsync and the head's rename leaves the head one row behind: the
  // last row is then a valid signed row chaining onto the head's `last`.
  if (judgeRow(lastBytes, hmac, head.last ?? "").fault === null) {
    return {
      count: head.count + 1,
      prev: lastHash,
      headLag: true,
      headMissing: false,
      lastStart,
    };
  }
  throw tampered("the ledger's last row does not match its head", { count: head.count });
}

/**
 * Opens the ledger for append under its lock, refusing a symlinked `.agentteams` or ledger.
 * Runs `fn` with the open file and the checked tail.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withLedgerLock } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * assert.equal(await withLedgerLock(root, new HmacKey(new Uint8Array([1])), (_file, tail) => tail.count), 0);
 * ```
 */
export function withLedgerLock<T>(
  root: string,
  hmac: HmacKey,
  fn: (file: Deno.FsFile, tail: TailState, paths: StatePaths) => T | Promise<T>,
): Promise<T> {
  const paths = statePaths(root);
  // Refuse before creating anything: a refused append leaves no state dir and no empty ledger.
  if (!checkStatePath(paths.dir, "dir") || !checkStatePath(paths.ledger, "file")) {
    try {
      checkTail(null, paths, hmac);
    } catch (e) {
      // Another writer may have made the ledger, its first row and its head between the look
      // and the check (this check holds no lock): then the check under the lock decides.
      if (!checkStatePath(paths.ledger, "file")) throw e;
    }
  }
  ensureStateDir(root);
  return withFileLock(paths.ledger, (file) => fn(file, checkTail(file, paths, hmac), paths));
}

/** A row signed onto a tail, ready to write, and what the ledger is once it is. */
interface PreparedRow {
  readonly line: string;
  readonly bytes: Uint8Array;
  readonly hash: string;
  readonly count: number;
  readonly end: LedgerEnd;
}

/**
 * Signs `body` onto `tail`, brings a head left behind (or missing, before a first row) up to
 * date, and writes the row with one `write`: the steps both writers share before the row is made
 * durable.
 */
function writeRowBytes(
  file: Deno.FsFile,
  paths: StatePaths,
  hmac: HmacKey,
  tail: TailState,
  body: RowBody,
  now: () => Date,
): PreparedRow {
  const line = signRow(body, hmac, { time: utcSeconds(now()), prev: tail.prev });
  const bytes = new TextEncoder().encode(line + "\n");
  checkRowSize(bytes.length);
  // The head never falls more than one row behind: before a row is written, a head left behind
  // by an interrupted append is brought up to date, and a first row gets a count-0 head first.
  // A crash at any point then leaves a state verify explains (intact, one behind, or torn).
  if (tail.headLag || tail.headMissing) {
    atomicWriteFileSync(
      paths.head,
      headText(tail.count, tail.prev === "" ? null : tail.prev, hmac),
      {
        mode: 0o644,
      },
    );
  }
  const n = file.writeSync(bytes);
  if (n !== bytes.length) {
    throw new LedgerError("TORN_TAIL", `short write: ${n} of ${bytes.length} bytes of a row`);
  }
  const st = file.statSync();
  return {
    line,
    bytes,
    hash: sha256Hex(line),
    count: tail.count + 1,
    end: { size: st.size, ino: st.ino, lastStart: st.size - bytes.length },
  };
}

/**
 * Writes one line and the new head; the caller holds the lock and has checked the tail. The
 * row's fsync and the head's temporary file's are in flight together (two fsyncs at once cost
 * about one); the head is renamed into place only once both are durable, so a crash leaves it as
 * it was or one row behind, never ahead of the rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withLedgerLock, writeRowLocked } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([1]));
 * const r = await withLedgerLock(Deno.makeTempDirSync(), k, (file, tail, paths) =>
 *   writeRowLocked(file, paths, k, tail, { action: "note" }, () => new Date()));
 * assert.equal(r.count, 1);
 * ```
 */
export async function writeRowLocked(
  file: Deno.FsFile,
  paths: StatePaths,
  hmac: HmacKey,
  tail: TailState,
  body: RowBody,
  now: () => Date,
): Promise<AppendResult> {
  const row = writeRowBytes(file, paths, hmac, tail, body, now);
  const anchors = anchorsText(file, paths, hmac, tail, row);
  await atomicWriteFile(
    paths.head,
    headText(row.count, row.hash, hmac),
    { mode: 0o644 },
    file.sync(),
  );
  keepAnchors(paths, anchors);
  return appendResult(row, tail);
}

/** What an append reports of the row it wrote onto `tail`. */
function appendResult(row: PreparedRow, tail: TailState): AppendResult {
  return {
    line: row.line,
    hash: row.hash,
    count: row.count,
    healedHead: tail.headLag,
    end: row.end,
  };
}

/**
 * Writes the anchors file after the head: a cache of the rows (lib/ledger/anchor_state.ts), so
 * without an fsync, and a failure to write it (but a missing permission) costs a later read of
 * the rows, never the append.
 */
function keepAnchors(paths: StatePaths, text: string | null): void {
  if (text === null) return;
  try {
    atomicWriteFileSync(anchorsPath(paths), text, { forceMode: 0o600, durable: false });
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
  }
}

/**
 * The anchors file's text once `row` is written onto `tail` (at its `end.lastStart`), or `null` when the rows
 * before it do not verify (the reader that needs the anchors refuses then; the append stands).
 */
function anchorsText(
  file: Deno.FsFile,
  paths: StatePaths,
  hmac: HmacKey,
  tail: TailState,
  row: PreparedRow,
): string | null {
  const offset = row.end.lastStart;
  try {
    return anchorsAfter(
      file,
      paths,
      hmac,
      { count: tail.count, last: tail.prev, offset },
      row.line,
      { count: row.count, last: row.hash, offset: row.end.size },
    );
  } catch (e) {
    if (e instanceof LedgerError) return null;
    throw e;
  }
}

/**
 * {@link writeRowLocked}, synchronously (the row fsynced, then the head written): for a writer
 * that must not yield while it holds the lock (`ledger repair`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withLedgerLock, writeRowLockedSync } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([1]));
 * const r = await withLedgerLock(Deno.makeTempDirSync(), k, (file, tail, paths) =>
 *   writeRowLockedSync(file, paths, k, tail, { action: "note" }, () => new Date()));
 * assert.equal(r.count, 1);
 * ```
 */
export function writeRowLockedSync(
  file: Deno.FsFile,
  paths: StatePaths,
  hmac: HmacKey,
  tail: TailState,
  body: RowBody,
  now: () => Date,
): AppendResult {
  const row = writeRowBytes(file, paths, hmac, tail, body, now);
  const anchors = anchorsText(file, paths, hmac, tail, row);
  file.syncSync();
  atomicWriteFileSync(paths.head, headText(row.count, row.hash, hmac), { mode: 0o644 });
  keepAnchors(paths, anchors);
  return appendResult(row, tail);
}

/**
 * Appends one signed row (see the module doc for the protocol).
 *
 * @throws {LedgerError} `LEDGER_TAMPERED`, `TORN_TAIL`, `LEDGER_UNSAFE_PATH`, `ROW_INVALID`,
 *   `LEDGER_ROW_TOO_LARGE`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { appendRow } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([1]));
 * const root = Deno.makeTempDirSync();
 * await appendRow(root, k, { action: "a" });
 * assert.equal((await appendRow(root, k, { action: "b" })).count, 2);
 * ```
 */
export function appendRow(
  root: string,
  hmac: HmacKey,
  body: RowBody,
  opts: AppendOptions = {},
): Promise<AppendResult> {
  const now = opts.now ?? (() => new Date());
  try {
    checkBody(body);
  } catch (e) {
    return Promise.reject(e);
  }
  return withLedgerLock(
    root,
    hmac,
    (file, tail, paths) => writeRowLocked(file, paths, hmac, tail, body, now),
  );
}
