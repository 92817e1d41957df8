/**
 * `ledger repair --torn-tail`: removes the unterminated fragment an interrupted write left at the
 * end of the ledger, and only that, then records a `ledger-repair` row naming the bytes removed
 * and their SHA-256. A fragment that is a complete signed row chaining onto the last row (an
 * append that lost only its newline, or a newline someone removed) is kept: its newline is
 * restored instead, and the row records that. It refuses unless verification finds a torn tail
 * and nothing else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { repairTornTail } from "./repair.ts";
 * import { ensureStateDir } from "../layout.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * ensureStateDir(root);
 * // An intact (here empty) ledger has no torn tail to remove.
 * const bytes = new Uint8Array([1]);
 * await assert.rejects(repairTornTail(root, { bytes, hmac: new HmacKey(bytes) }), { code: "NO_TORN_TAIL" });
 * ```
 * @module
 */
import { LedgerError } from "../errors.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { checkStatePath, statePaths } from "../layout.ts";
import { withFileLock } from "./ledger_lock.ts";
import { type AppendResult, checkTail, type TailState, writeRowLocked } from "./append.ts";
import { type VerifyKey, verifyLedgerUnderLock } from "./verify.ts";
import { readAtSync } from "../fs/read_at.ts";

/** What a repair removed (or completed) and recorded. */
export interface RepairResult {
  /** Bytes removed from the end of the ledger (0 when the newline was restored). */
  removedBytes: number;
  /** SHA-256 hex of the fragment. */
  fragmentSha256: string;
  /** Whether the fragment was a complete signed row, kept by restoring its newline. */
  restoredNewline: boolean;
  /** The `ledger-repair` row. */
  row: AppendResult;
}

/**
 * Truncates a torn tail and records the repair (see the module doc).
 *
 * @throws {LedgerError} `NO_TORN_TAIL` when there is none; `LEDGER_TAMPERED` when verification
 *   finds anything besides the torn tail.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { repairTornTail } from "./repair.ts";
 * import { appendRow } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const bytes = new Uint8Array([1]);
 * const key = { bytes, hmac: new HmacKey(bytes) };
 * const root = Deno.makeTempDirSync();
 * await appendRow(root, key.hmac, { action: "note" });
 * await Deno.writeTextFile(`${root}/.agentteams/proposal-ledger.jsonl`, '{"act', { append: true });
 * assert.equal((await repairTornTail(root, key)).removedBytes, 5);
 * ```
 */
export function repairTornTail(
  root: string,
  key: VerifyKey,
  opts: { now?: () => Date } = {},
): Promise<RepairResult> {
  const paths = statePaths(root);
  // Refuse a symlinked state dir or ledger before anything is opened or created.
  if (!checkStatePath(paths.dir, "dir") || !checkStatePath(paths.ledger, "file")) {
    return Promise.reject(new LedgerError("NO_TORN_TAIL", "there is no ledger to repair"));
  }
  return withFileLock(paths.ledger, (file) => {
    // Verified through this lock's descriptor: a second lock on the ledger would wait for it.
    const report = verifyLedgerUnderLock(root, key, file);
    const others = report.problems.filter((p) => p.code !== "TORN_TAIL");
    if (others.length > 0) {
      throw new LedgerError(
        "LEDGER_TAMPERED",
        `the ledger has problems besides a torn tail (${others.map((p) => p.code).join(", ")}); ` +
          "repair only removes an interrupted write",
      );
    }
    if (report.tail === null || report.problems.length === 0) {
      throw new LedgerError("NO_TORN_TAIL", "the ledger has no torn tail to repair");
    }
    const { offset, length, complete } = report.tail;
    const fragment = new Uint8Array(length);
    if (readAtSync(file, offset, fragment) !== length) {
      throw new LedgerError("LEDGER_TAMPERED", "the ledger changed during repair");
    }
    // A signed row is never thrown away: the file was opened for append, so this lands at the end.
    if (complete) file.writeSync(new Uint8Array([0x0a]));
    else file.truncateSync(offset);
    file.syncSync();
    const fragmentSha256 = sha256Hex(fragment);
    // Verification just found, under this lock, every row valid and chained, the kept row
    // chaining onto them and the head at most one row behind them: the head is brought up to date
    // with the kept row before the repair row goes in.
    const tail: TailState = complete
      ? {
        count: report.rows + 1,
        prev: fragmentSha256,
        headLag: true,
        headMissing: false,
        lastStart: offset,
      }
      : checkTail(file, paths, key.hmac);
    const row = writeRowLocked(
      file,
      paths,
      key.hmac,
      tail,
      complete
        ? { action: "ledger-repair", repair: "newline-restored", row_sha256: fragmentSha256 }
        : {
          action: "ledger-repair",
          repair: "torn-tail",
          removed_bytes: length,
          fragment_sha256: fragmentSha256,
        },
      opts.now ?? (() => new Date()),
    );
    return { removedBytes: complete ? 0 : length, fragmentSha256, restoredNewline: complete, row };
  });
}
