/**
 * Spent stays spent: what the triad's consumption rests on beyond the rows themselves. A waiver
 * row put back to `uses=0` with its old signature, or a clearance row put back without
 * `consumed`, verifies again: the rows cannot tell. The signed, chained proposal ledger can (an
 * agent cannot roll it back: its head is MAC'd, and truncating it is `LEDGER_TAMPERED`), and every
 * spend records a `gate-pass` row there, before the CSV is rewritten, naming what it spent:
 * `spent: "waiver:<waiver_id>"` or `spent: "clearance:<sha256 of the row's signed payload>"`.
 *
 * {@link spentCounts} counts those rows (an earlier tool's `gate-pass` row without `spent` counts
 * for its waiver by `ref`). An act's cost must not grow with history, so the counts are kept in
 * an index in the state dir (`.agentteams/spent-index.json`, MAC'd with the ledger key), holding
 * the byte offset it has counted to and the SHA-256 of the line ending there: a read counts only
 * the rows appended since. An index that does not verify, or whose line is not where it says, is
 * rebuilt from the start; an index put back to an earlier state only makes the next read count
 * more rows again (never fewer). Counting never lowers a count: a row that could not be parsed
 * counts nothing, and a row forged into the ledger could only make something spent (fail closed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spentCounts, waiverSpentKey } from "./spent.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const counts = spentCounts(Deno.makeTempDirSync(), new HmacKey(new Uint8Array(32)));
 * assert.equal(counts.get(waiverSpentKey("W-1")) ?? 0, 0); // how many times W-1 was spent: a new project, never
 * ```
 * @module
 */
import { type HmacKey, sha256Hex } from "../crypto/hash.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { forEachLineAt } from "../fs/read_at.ts";
import { lineEndingAt } from "../ledger/anchor_state.ts";
import { join } from "../fs/path.ts";
import { checkStatePath, readStateFileSync, statePaths } from "../layout.ts";

/** The index's file name in the state dir. */
export const SPENT_INDEX_FILE = "spent-index.json";

const PURPOSE = "agentteams-spent-v1";
const CHUNK = 1 << 20;
const MARK = new TextEncoder().encode('"gate-pass"');
const dec = new TextDecoder("utf-8", { fatal: false });

/**
 * The spent key of a waiver.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { waiverSpentKey } from "./spent.ts";
 * assert.equal(waiverSpentKey(" W-1 "), "waiver:W-1");
 * ```
 */
export function waiverSpentKey(waiverId: string): string {
  return `waiver:${waiverId.trim()}`;
}

/**
 * The spent key of a clearance: the SHA-256 of the decision row's signed payload (which holds
 * its chain position, so two rows never share one in a chained log).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clearanceSpentKey } from "./spent.ts";
 * assert.equal(clearanceSpentKey("2026-11-29|delete:a|PASS|verified|security|").startsWith("clearance:"), true);
 * ```
 */
export function clearanceSpentKey(payload: string): string {
  return `clearance:${sha256Hex(payload)}`;
}

/** What the index holds. */
interface IndexBody {
  readonly v: 1;
  readonly offset: number;
  readonly last: string;
  readonly counts: Record<string, number>;
}

function macOf(hmac: HmacKey, body: IndexBody): string {
  return hmac.hex(`${PURPOSE}|${JSON.stringify(body)}`);
}

function readIndex(path: string, hmac: HmacKey): IndexBody | null {
  let bytes: Uint8Array | null;
  try {
    bytes = readStateFileSync(path, "spent index", 64 * 1024 * 1024);
  } catch {
    return null;
  }
  if (bytes === null) return null;
  try {
    const o = JSON.parse(dec.decode(bytes)) as Record<string, unknown>;
    const body = o.body as IndexBody;
    if (
      typeof o.mac !== "string" || typeof body !== "object" || body === null || body.v !== 1 ||
      !Number.isSafeInteger(body.offset) || body.offset < 0 || typeof body.last !== "string" ||
      typeof body.counts !== "object" || body.counts === null
    ) return null;
    if (macOf(hmac, body) !== o.mac) return null;
    for (const v of Object.values(body.counts)) if (!Number.isSafeInteger(v) || v < 0) return null;
    return body;
  } catch {
    return null;
  }
}

function has(hay: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** The key a `gate-pass` row spent, or `null`. */
function keyOfRow(line: Uint8Array): string | null {
  let row: Record<string, unknown>;
  try {
    row = JSON.parse(dec.decode(line));
  } catch {
    return null;
  }
  if (row === null || typeof row !== "object" || row.action !== "gate-pass") return null;
  if (typeof row.spent === "string" && row.spent !== "") return row.spent;
  // The earlier rows (no `spent`): a waiver's id is its `ref`.
  if (row.by === "waiver" && typeof row.ref === "string") return waiverSpentKey(row.ref);
  return null;
}

/** Options of {@link spentCounts}. */
export interface SpentOptions {
  /** Keep the counts for the next read (write the index; needs write access to the state dir). */
  readonly persist?: boolean;
}

/**
 * How many times each instrument was spent, from the proposal ledger's `gate-pass` rows (see the
 * module doc). No ledger: nothing spent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spentCounts } from "./spent.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.equal(spentCounts("/nonexistent", new HmacKey(new Uint8Array(32))).size, 0);
 * ```
 */
export function spentCounts(
  root: string,
  hmac: HmacKey,
  opts: SpentOptions = {},
): ReadonlyMap<string, number> {
  const paths = statePaths(root);
  if (!checkStatePath(paths.ledger, "file")) return new Map();
  const indexPath = join(paths.dir, SPENT_INDEX_FILE);
  const file = Deno.openSync(paths.ledger, { read: true });
  try {
    const size = file.statSync().size;
    let index = readIndex(indexPath, hmac);
    if (
      index !== null && (index.offset > size || lineEndingAt(file, index.offset) !== index.last)
    ) {
      index = null;
    }
    const counts = new Map<string, number>(Object.entries(index?.counts ?? {}));
    let offset = index?.offset ?? 0;
    let last = index?.last ?? "";
    forEachLineAt(file, offset, size, (line) => {
      if (has(line, MARK)) {
        const key = keyOfRow(line);
        if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      offset += line.length + 1;
      last = sha256Hex(dec.decode(line));
    }, CHUNK);
    if (opts.persist && (index === null || index.offset !== offset)) {
      const body: IndexBody = { v: 1, offset, last, counts: Object.fromEntries(counts) };
      try {
        atomicWriteFileSync(indexPath, JSON.stringify({ body, mac: macOf(hmac, body) }), {
          forceMode: 0o600,
        });
      } catch (e) {
        // The index is a cache: a read that cannot keep it still counted every row.
        if (e instanceof Deno.errors.NotCapable) throw e;
      }
    }
    return counts;
  } finally {
    file.close();
  }
}
