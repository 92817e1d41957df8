/**
 * `ledger repair --torn-tail`: removes the unterminated fragment an interrupted write left at the
 * end of the ledger, and only that, then records a `ledger-repair` row naming the bytes removed
 * and their SHA-256. It refuses unless verification finds a torn tail and nothing else.
 *
 * @example
 * ```ts
 * import { repairTornTail } from "./repair.ts";
 * // await repairTornTail(root, key); // throws NO_TORN_TAIL on an intact ledger
 * ```
 * @module
 */
import { LedgerError } from "../errors.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { checkStatePath, statePaths } from "./paths.ts";
import { withFileLock } from "./lock.ts";
import { type AppendResult, checkTail, writeRowLocked } from "./append.ts";
import { type VerifyKey, verifyLedgerAt } from "./verify.ts";
import { readAtSync } from "../fs/read_at.ts";

/** What a repair removed and recorded. */
export interface RepairResult {
  /** Bytes removed from the end of the ledger. */
  removedBytes: number;
  /** SHA-256 hex of the removed fragment. */
  fragmentSha256: string;
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
 * import { repairTornTail } from "./repair.ts";
 * import { appendRow } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const bytes = new Uint8Array([1]);
 * const key = { bytes, hmac: new HmacKey(bytes) };
 * const root = Deno.makeTempDirSync();
 * await appendRow(root, key.hmac, { action: "note" });
 * await Deno.writeTextFile(`${root}/.agentteams/proposal-ledger.jsonl`, '{"act', { append: true });
 * (await repairTornTail(root, key)).removedBytes; // 5
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
    const report = verifyLedgerAt(root, key);
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
    const { offset, length } = report.tail;
    const fragment = new Uint8Array(length);
    if (readAtSync(file, offset, fragment) !== length) {
      throw new LedgerError("LEDGER_TAMPERED", "the ledger changed during repair");
    }
    file.truncateSync(offset);
    file.syncSync();
    const tail = checkTail(file, paths, key.hmac);
    const fragmentSha256 = sha256Hex(fragment);
    const row = writeRowLocked(file, paths, key.hmac, tail, {
      action: "ledger-repair",
      repair: "torn-tail",
      removed_bytes: length,
      fragment_sha256: fragmentSha256,
    }, opts.now ?? (() => new Date()));
    return { removedBytes: length, fragmentSha256, row };
  });
}
