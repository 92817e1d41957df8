/**
 * Reading the ledger's anchors (`lib/ledger/anchor_state.ts`) without its lock: the head checked
 * against the ledger's last line as an append checks it (a head that does not verify or fit is
 * `LEDGER_TAMPERED`), then the anchors as of that end.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ledgerAnchors } from "./anchors.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.equal(ledgerAnchors(Deno.makeTempDirSync(), new HmacKey(new Uint8Array(32))).size, 0);
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { LedgerError } from "../errors.ts";
import { readAtSync } from "../fs/read_at.ts";
import { checkStatePath, readStateFileSync, type StatePaths, statePaths } from "../layout.ts";
import { HeadFormatError, headVerifies, parseHead } from "./head.ts";
import { lineVerifies } from "./row.ts";
import { checkTail } from "./append.ts";
import { type Anchors, anchorsAtEnd, lineEndingAt } from "./anchor_state.ts";

/**
 * The latest anchor of each name in a project's ledger; none when it has no ledger (and no head,
 * and no dispatch store: a ledger removed from beside them is `LEDGER_TAMPERED`). Read-only.
 *
 * @throws {LedgerError} `LEDGER_TAMPERED` (the head does not verify or fit the last line, or a
 *   row read does not verify), `TORN_TAIL`, `LEDGER_UNSAFE_PATH`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ledgerAnchors } from "./anchors.ts";
 * import { appendRow } from "./append.ts";
 * import { anchorRow } from "./anchor_state.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const k = new HmacKey(new Uint8Array(32));
 * await appendRow(root, k, anchorRow("decisions", { size: 4, sha256: "ab".repeat(32), rows: 1 }));
 * assert.equal(ledgerAnchors(root, k).get("decisions")?.size, 4);
 * ```
 */
export function ledgerAnchors(root: string, hmac: HmacKey): Anchors {
  const paths = statePaths(root);
  if (!checkStatePath(paths.dir, "dir") || !checkStatePath(paths.ledger, "file")) {
    checkTail(null, paths, hmac);
    return new Map();
  }
  const file = Deno.openSync(paths.ledger, { read: true });
  try {
    // The size and the tail from one moment: an append between the two is read again.
    for (let attempt = 1;; attempt++) {
      const offset = file.statSync().size;
      const tail = foreignKeyNamed(file, paths, hmac, () => checkTail(file, paths, hmac));
      if (attempt < 3 && lineEndingAt(file, offset) !== tail.prev) continue;
      const at = { count: tail.count, last: tail.prev, offset };
      return anchorsAtEnd(file, paths, hmac, at).anchors;
    }
  } finally {
    file.close();
  }
}

/**
 * `check`, with a head and first row that both fail their MACs named as what they far likelier
 * are, rows signed with another key (`FOREIGN_KEY`, as the dispatch store and `ledger verify`
 * name them), rather than `LEDGER_TAMPERED`.
 */
function foreignKeyNamed<T>(
  file: Deno.FsFile,
  paths: StatePaths,
  hmac: HmacKey,
  check: () => T,
): T {
  try {
    return check();
  } catch (e) {
    if (!(e instanceof LedgerError) || e.code !== "LEDGER_TAMPERED") throw e;
    let headOk = true;
    try {
      const raw = readStateFileSync(paths.head, "ledger head", 4096);
      headOk = raw === null || headVerifies(parseHead(new TextDecoder().decode(raw)), hmac);
    } catch (h) {
      if (!(h instanceof HeadFormatError)) throw h;
    }
    const buf = new Uint8Array(Math.min(file.statSync().size, 1 << 16));
    const first = buf.subarray(0, readAtSync(file, 0, buf));
    const nl = first.indexOf(0x0a);
    if (headOk || nl < 0 || lineVerifies(first.subarray(0, nl), hmac)) throw e;
    throw new LedgerError(
      "FOREIGN_KEY",
      "neither the proposal ledger's head nor its first row verifies with this key: they were " +
        "signed with another one. Is AGENTTEAMS_KEY_DIR (or the key variable) this project's? " +
        "Nothing was changed",
      { cause: e },
    );
  }
}
