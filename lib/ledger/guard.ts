/**
 * Telling a key holder's appends from tampering, around an act that runs code (a command
 * request). The ledger and the dispatch store are shared: while one command runs, another
 * `agentteams` process may append a row, count a use or issue a dispatch (compacting the store).
 * Those changes are signed with the key; a command without the key can only change the files in
 * ways this module refuses.
 *
 * {@link captureStores} records both files under their locks before the act (the ledger's part,
 * for an act that appended its start row just before, as that append found it under its own lock:
 * no second hold of the same lock); {@link storesProblem} reads them again under the same locks
 * afterwards and accepts exactly:
 *
 * - **ledger**: the same file (inode), no shorter, its last row as it was (the same bytes at the
 *   same offset), followed by whole rows that each verify and chain onto the one before; the head
 *   verifies and counts exactly those rows (one behind is a writer's crash window, as an append
 *   accepts it);
 * - **dispatch store**: every added line verifies; every removed line is one compaction drops (it
 *   names no dispatch, or its dispatch expired); a line that does not verify stays (key holders
 *   refuse such a store rather than compact it); no new unterminated line;
 * - **dispatch lock**: the same file, unwritten (it is never replaced).
 *
 * Identical `use` and `attempt` rows have identical MACs, so a copy of an existing one is
 * indistinguishable from a real use: it can only spend budget, never grant any.
 *
 * The cost is the tail's, never the history's: rows before the last one are not read (a row
 * rewritten in place deep in the history is `ledger verify`'s to find, which it does: every MAC
 * and the whole chain), and only the dispatch-store lines that changed are MAC-checked. See
 * docs/ledger.md, "What an act notices".
 *
 * @example
 * ```ts ignore
 * // Not run: it needs root, hmac, which it declares rather than makes.
 * import { captureStores, storesProblem } from "./guard.ts";
 * import type { HmacKey } from "../crypto/hash.ts";
 * declare const root: string; // the project root
 * declare const hmac: HmacKey; // the ledger key
 * const before = await captureStores(root, hmac);
 * // ... the command runs ...
 * const problem = await storesProblem(root, hmac, before, new Date()); // null: only appends
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { LedgerError } from "../errors.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { readAtSync } from "../fs/read_at.ts";
import { type AppendResult, withLedgerLock } from "./append.ts";
import { withFileLock } from "./ledger_lock.ts";
import { expiresAt, judgeStoreLine, MAX_DISPATCH_STORE_BYTES, parseStore } from "./dispatch.ts";
import { checkStatePath, readStateFileSync, statePaths } from "../layout.ts";
import { judgeRow } from "./row.ts";

/** The shared stores as an act found them. */
export interface StoresSnapshot {
  /** Ledger length in bytes. */
  readonly ledgerSize: number;
  /** The ledger file's inode (`null` where the platform gives none): key holders never replace it. */
  readonly ledgerIno: number | null;
  /** Byte offset of the last row (0 for an empty ledger). */
  readonly ledgerLastStart: number;
  /** Rows, as the head counts them. */
  readonly ledgerCount: number;
  /** SHA-256 of the last row (`""` for an empty ledger). */
  readonly ledgerLast: string;
  /** The dispatch store's complete lines (`[]` when absent). */
  readonly dispatchLines: readonly string[];
  /** Its unterminated last line, if any, as hex. */
  readonly dispatchFragment: string | null;
  /** The lock file's identity (inode, size, times), `null` when absent: it is never replaced. */
  readonly lockId: string | null;
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The dispatch store's complete lines and its unterminated fragment, compared byte for byte: the
 * lines are decoded strictly (key holders write ASCII JSON, so bytes that are not UTF-8 are never
 * theirs, and a lenient decoding could make two different byte strings one text), and the
 * fragment, never counted, is kept as hex.
 */
function readDispatchLines(root: string): { lines: string[]; fragment: string | null } {
  const bytes = readStateFileSync(
    statePaths(root).dispatches,
    "dispatch store",
    MAX_DISPATCH_STORE_BYTES,
  );
  if (bytes === null) return { lines: [], fragment: null };
  const end = bytes.lastIndexOf(0x0a) + 1;
  let text: string;
  try {
    text = strict.decode(bytes.subarray(0, end));
  } catch {
    throw new LedgerError("LEDGER_TAMPERED", "the dispatch store holds bytes that are not UTF-8");
  }
  const lines = text.split("\n");
  lines.pop();
  return { lines, fragment: end < bytes.length ? bytes.subarray(end).toHex() : null };
}

function lockIdOf(root: string): string | null {
  const st = lstatOrNullSync(statePaths(root).dispatchLock);
  return st === null
    ? null
    : `${st.isFile} ${st.ino} ${st.size} ${st.mtime?.getTime()} ${st.ctime?.getTime()}`;
}

function withDispatchLock<T>(root: string, fn: () => T): Promise<T> {
  const paths = statePaths(root);
  if (!checkStatePath(paths.dir, "dir")) return Promise.resolve(fn());
  return withFileLock(paths.dispatchLock, fn);
}

/**
 * Reads the ledger's tail (under its lock, tail and head checked as an append checks them) and
 * the dispatch store (under its lock). Throws what an append would throw on a ledger already broken.
 * With `appended`, the result of an append this act just made (its start row), the ledger's part
 * is what that append found and wrote under the lock (its tail checked, its row the last one):
 * the ledger is not locked and read again. Signed appends by other writers since are told apart
 * afterwards as they are after the capture.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { captureStores } from "./guard.ts";
 * import { appendRow } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const k = new HmacKey(new Uint8Array([1]));
 * assert.equal((await captureStores(root, k)).ledgerCount, 0);
 * const start = await appendRow(root, k, { action: "x-start" });
 * assert.deepEqual(await captureStores(root, k, start), await captureStores(root, k));
 * ```
 */
export async function captureStores(
  root: string,
  hmac: HmacKey,
  appended?: AppendResult,
): Promise<StoresSnapshot> {
  const ledger = appended !== undefined
    ? {
      ledgerSize: appended.end.size,
      ledgerIno: appended.end.ino,
      ledgerLastStart: appended.end.lastStart,
      ledgerCount: appended.count,
      ledgerLast: appended.hash,
    }
    : await withLedgerLock(root, hmac, (file, tail) => {
      const st = file.statSync();
      return {
        ledgerSize: st.size,
        ledgerIno: st.ino,
        ledgerLastStart: tail.lastStart,
        ledgerCount: tail.count,
        ledgerLast: tail.prev,
      };
    });
  const store = await withDispatchLock(root, () => readDispatchLines(root));
  return {
    ...ledger,
    dispatchLines: store.lines,
    dispatchFragment: store.fragment,
    lockId: lockIdOf(root),
  };
}

/**
 * Why `appended` (bytes after a ledger's known end) is not a run of whole, signed rows chained
 * onto `prev`, or `null` with the rows' count and the last one's hash.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { appendedRowsProblem } from "./guard.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.equal(appendedRowsProblem(new Uint8Array(0), "", new HmacKey(new Uint8Array([1]))).rows, 0);
 * ```
 */
export function appendedRowsProblem(
  appended: Uint8Array,
  prev: string,
  hmac: HmacKey,
): { problem: string | null; rows: number; last: string } {
  let last = prev;
  let rows = 0;
  let start = 0;
  while (start < appended.length) {
    const end = appended.indexOf(0x0a, start);
    if (end < 0) return { problem: "an unterminated row was added", rows, last };
    const line = appended.subarray(start, end);
    const judged = judgeRow(line, hmac, last);
    if (judged.fault === "chain") {
      return { problem: `added row ${rows + 1} does not chain onto the row before`, rows, last };
    }
    if (judged.fault !== null) {
      return { problem: `added row ${rows + 1} does not verify (${judged.message})`, rows, last };
    }
    last = sha256Hex(line);
    rows++;
    start = end + 1;
  }
  return { problem: null, rows, last };
}

/**
 * Why the change from `before` to `after` (complete dispatch-store lines) is not what key holders
 * do (append signed rows; compact away expired dispatches and rows naming none), or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dispatchChangeProblem } from "./guard.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([1]));
 * assert.equal(dispatchChangeProblem([], [], k, Date.now()), null);
 * assert.equal(dispatchChangeProblem(["x"], [], k, Date.now()), "a dispatch-store row that does not verify was removed");
 * ```
 */
export function dispatchChangeProblem(
  before: readonly string[],
  after: readonly string[],
  hmac: HmacKey,
  nowMs: number,
): string | null {
  const left = new Map<string, number>();
  for (const l of before) left.set(l, (left.get(l) ?? 0) + 1);
  // Only the lines that changed are judged: an added one must verify.
  for (const l of after) {
    const n = left.get(l) ?? 0;
    if (n > 0) left.set(l, n - 1);
    else if (typeof judgeStoreLine(l, hmac) === "string") {
      return "a dispatch-store row that does not verify was added";
    }
  }
  let removed = false;
  for (const n of left.values()) removed ||= n > 0;
  if (!removed) return null;
  // What is left was removed (a compaction, when a dispatch was issued meanwhile): only what
  // compaction removes (a row whose dispatch is unknown or expired). A row that does not verify
  // is never removed by a key holder: a store holding one is refused, not compacted.
  const was = parseStore(before, hmac);
  const is = parseStore(after, hmac);
  for (const n of was.invalid) {
    if ((left.get(before[n - 1]) ?? 0) > 0) {
      return "a dispatch-store row that does not verify was removed";
    }
  }
  for (const { id, line } of was.lines) {
    if ((left.get(line) ?? 0) === 0) continue;
    const d = was.dispatches.get(id) ?? is.dispatches.get(id);
    if (d !== undefined && expiresAt(d.expires) >= nowMs) {
      return "a row of a live dispatch was removed from the dispatch store";
    }
  }
  return null;
}

/**
 * Reads the stores again under their locks and says why they are not `before` plus what key
 * holders write (see the module doc), or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { captureStores, storesProblem } from "./guard.ts";
 * import { appendRow } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const k = new HmacKey(new Uint8Array([1]));
 * const before = await captureStores(root, k);
 * await appendRow(root, k, { action: "note" }); // a key holder's append
 * assert.equal(await storesProblem(root, k, before, new Date()), null);
 * ```
 */
export async function storesProblem(
  root: string,
  hmac: HmacKey,
  before: StoresSnapshot,
  now: Date,
): Promise<string | null> {
  const paths = statePaths(root);
  let ledgerProblem: string | null;
  try {
    // Checked first: the lock would create a missing ledger (and a missing state directory).
    if (!checkStatePath(paths.dir, "dir") || !checkStatePath(paths.ledger, "file")) {
      return before.ledgerSize === 0 ? null : "the ledger was removed";
    }
    // Read before the lock is taken again (taking it creates a missing lock file).
    if (before.lockId !== null && lockIdOf(root) !== before.lockId) {
      return "the dispatch store's lock file was replaced or changed";
    }
    ledgerProblem = await withLedgerLock(root, hmac, (file, tail) => {
      const st = file.statSync();
      const size = st.size;
      if (size < before.ledgerSize) return "the ledger is shorter than before";
      if (st.ino !== before.ledgerIno) return "the ledger was replaced by another file";
      if (before.ledgerSize > 0) {
        // The row the command found last: the same bytes where they were (what is before it is
        // `ledger verify`'s to check).
        const was = new Uint8Array(before.ledgerSize - before.ledgerLastStart);
        if (readAtSync(file, before.ledgerLastStart, was) !== was.length) {
          return "the ledger changed size while read";
        }
        if (was.at(-1) !== 0x0a || sha256Hex(was.subarray(0, -1)) !== before.ledgerLast) {
          return "rows already written were changed (the last row before the command)";
        }
      }
      const appended = new Uint8Array(size - before.ledgerSize);
      if (readAtSync(file, before.ledgerSize, appended) !== appended.length) {
        return "the ledger changed size while read";
      }
      const added = appendedRowsProblem(appended, before.ledgerLast, hmac);
      if (added.problem !== null) return added.problem;
      // The head verified against the last row when the lock was taken (one behind allowed, as
      // an append allows it); it must count exactly the rows there are.
      if (tail.count !== before.ledgerCount + added.rows) {
        return `the head counts ${tail.count} rows, not ${before.ledgerCount + added.rows}`;
      }
      return null;
    });
  } catch (e) {
    ledgerProblem = (e as Error).message;
  }
  if (ledgerProblem !== null) return ledgerProblem;
  let store: { lines: string[]; fragment: string | null };
  try {
    store = await withDispatchLock(root, () => readDispatchLines(root));
  } catch (e) {
    return `the dispatch store cannot be read: ${(e as Error).message}`;
  }
  if (store.fragment !== null && store.fragment !== before.dispatchFragment) {
    return "the dispatch store's unterminated row was added or changed";
  }
  return dispatchChangeProblem(before.dispatchLines, store.lines, hmac, now.getTime());
}
