/**
 * Anchors in the signed ledger: the latest statement, per name, of what a file outside the ledger
 * held when its writer last wrote it (the triad ledgers' size, SHA-256 and rows). Each is a signed,
 * chained row (`{"action": "triad-anchor", "ledger", "size", "sha256", "rows"}`), so an anchor can
 * be neither removed nor put back to an earlier one without the ledger key: the truth is in the
 * rows, and the head (count and last hash, MAC'd) is what the rows are held to.
 *
 * Finding the latest anchor must not cost the history, so every append keeps, in the state dir,
 * `.agentteams/anchors.json` (MAC'd with the ledger key): the anchors as of a ledger position
 * (rows, the last line's SHA-256, the byte offset). When it stands at the head, a read costs that
 * file and the head; when it stands earlier (an earlier tool's append, a crash, a copy put back)
 * the rows after it are read, each chained onto the one before; when it does not verify, or its
 * line is not where it says (gone, replaced, forged), every row is. So a missing or replaced file
 * is never "no anchor": it only costs a read of the rows again.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anchorRow } from "./anchor_state.ts";
 * assert.deepEqual(anchorRow("decisions", { size: 0, sha256: "", rows: 0 }), {
 *   action: "triad-anchor",
 *   ledger: "decisions",
 *   rows: 0,
 *   sha256: "",
 *   size: 0,
 * });
 * ```
 * @module
 */
import { type HmacKey, sha256Hex } from "../crypto/hash.ts";
import { LedgerError } from "../errors.ts";
import { forEachLineAt, readAtSync } from "../fs/read_at.ts";
import { readStateFileSync, type StatePaths } from "../layout.ts";
import { judgeRow, lineForm, type RowBody, scannedPrev } from "./row.ts";
import { SCAN_SLOTS } from "./scan.ts";

/** The `action` of an anchor row. */
export const ANCHOR_ACTION = "triad-anchor";

/** What an anchor says a file held at its writer's last write. */
export interface AnchorState {
  /** Its length in bytes (0: there was no file). */
  readonly size: number;
  /** Its SHA-256 (hex; `""` when there was no file). */
  readonly sha256: string;
  /** Its data rows. */
  readonly rows: number;
}

/** The anchors by name. */
export type Anchors = ReadonlyMap<string, AnchorState>;

/** A ledger position: rows up to it, the SHA-256 of the line ending there (`""` at 0), its offset. */
export interface LedgerPosition {
  readonly count: number;
  readonly last: string;
  readonly offset: number;
}

const PURPOSE = "agentteams-anchors-v1";
const CHUNK = 1 << 20;
const MARK = new TextEncoder().encode(`"${ANCHOR_ACTION}"`);
const dec = new TextDecoder("utf-8", { fatal: false });
const HEX64 = /^[0-9a-f]{64}$/;

interface SidecarBody {
  readonly v: 1;
  readonly count: number;
  readonly last: string;
  readonly offset: number;
  readonly anchors: Record<string, AnchorState>;
}

/**
 * The anchor row of a file's state (what a writer records after it wrote the file).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anchorRow } from "./anchor_state.ts";
 * assert.equal(anchorRow("waivers", { size: 9, sha256: "ab".repeat(32), rows: 1 }).ledger, "waivers");
 * ```
 */
export function anchorRow(name: string, state: AnchorState): RowBody {
  return {
    action: ANCHOR_ACTION,
    ledger: name,
    rows: state.rows,
    sha256: state.sha256,
    size: state.size,
  };
}

function validState(s: unknown): s is AnchorState {
  if (typeof s !== "object" || s === null) return false;
  const o = s as Record<string, unknown>;
  return Number.isSafeInteger(o.size) && (o.size as number) >= 0 &&
    Number.isSafeInteger(o.rows) && (o.rows as number) >= 0 && typeof o.sha256 === "string" &&
    (o.size === 0 ? o.sha256 === "" : HEX64.test(o.sha256));
}

/** The anchor a (verified) ledger line states, or `null` when it is no anchor row. */
function anchorOfLine(line: Uint8Array): [string, AnchorState] | null {
  if (!has(line, MARK)) return null;
  let row: Record<string, unknown>;
  try {
    row = JSON.parse(dec.decode(line));
  } catch {
    return null;
  }
  if (row === null || typeof row !== "object" || row.action !== ANCHOR_ACTION) return null;
  if (typeof row.ledger !== "string") return null;
  const state = { size: row.size, sha256: row.sha256, rows: row.rows };
  return validState(state) ? [row.ledger, state] : null;
}

function has(hay: Uint8Array, needle: Uint8Array): boolean {
  for (let i = hay.indexOf(needle[0]); i >= 0; i = hay.indexOf(needle[0], i + 1)) {
    if (i + needle.length > hay.length) return false;
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return true;
  }
  return false;
}

function sidecarPath(paths: StatePaths): string {
  return paths.anchors;
}

function macOf(hmac: HmacKey, body: SidecarBody): string {
  return hmac.hex(`${PURPOSE}|${JSON.stringify(body)}`);
}

/** The state dir's anchors file when it verifies, else `null` (none is no anchor: see the module doc). */
function readSidecar(paths: StatePaths, hmac: HmacKey): SidecarBody | null {
  try {
    const bytes = readStateFileSync(sidecarPath(paths), "ledger anchors", 1 << 20);
    if (bytes === null) return null;
    const o = JSON.parse(dec.decode(bytes)) as { body?: SidecarBody; mac?: unknown };
    const b = o.body;
    if (
      typeof o.mac !== "string" || typeof b !== "object" || b === null || b.v !== 1 ||
      !Number.isSafeInteger(b.count) || b.count < 0 || !Number.isSafeInteger(b.offset) ||
      b.offset < 0 || typeof b.last !== "string" || typeof b.anchors !== "object" ||
      b.anchors === null || !Object.values(b.anchors).every(validState)
    ) return null;
    return hmac.verify(`${PURPOSE}|${JSON.stringify(b)}`, o.mac) ? b : null;
  } catch (e) {
    if (e instanceof LedgerError) throw e; // a symlink at the name: refused, not read around
    return null;
  }
}

/**
 * The SHA-256 of the ledger line that ends (with its `\n`) at `offset`, `""` at 0, or `null`
 * (no line ends there). What an index of ledger rows checks its position with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineEndingAt } from "./anchor_state.ts";
 * import { sha256Hex } from "../crypto/hash.ts";
 * const path = Deno.makeTempDirSync() + "/l";
 * Deno.writeTextFileSync(path, "a\nbc\n");
 * const f = Deno.openSync(path);
 * assert.equal(lineEndingAt(f, 5), sha256Hex("bc"));
 * assert.equal(lineEndingAt(f, 4), null);
 * f.close();
 * ```
 */
export function lineEndingAt(file: Deno.FsFile, offset: number): string | null {
  if (offset === 0) return "";
  // A small window first (most rows are short), the ledger's whole line limit only when needed.
  for (const window of [4096, CHUNK + 1]) {
    const start = Math.max(0, offset - window);
    const buf = new Uint8Array(offset - start);
    if (readAtSync(file, start, buf) !== buf.length || buf[buf.length - 1] !== 0x0a) return null;
    const nl = buf.lastIndexOf(0x0a, buf.length - 2);
    if (nl < 0 && start > 0) continue;
    return sha256Hex(dec.decode(buf.subarray(nl + 1, buf.length - 1)));
  }
  return null;
}

/**
 * Why a ledger line read between a trusted position and the head does not hold there, or `null`:
 * each must chain onto the one before (so, from a position the anchors file's MAC or the start
 * vouches for up to the head's MAC'd last line, no byte can differ from what the key holders
 * wrote), and an anchor row's own MAC must verify too. Other rows' MACs are `ledger verify`'s to
 * check (the chain already fixes their bytes), which keeps a read of every row at a hash a row.
 */
function rowFaultAt(
  line: Uint8Array,
  hmac: HmacKey,
  expectedPrev: string,
  scan: Int32Array,
): string | null {
  if (has(line, MARK)) {
    const j = judgeRow(line, hmac, expectedPrev);
    return j.fault === null ? null : j.message;
  }
  const form = lineForm(line, 0, line.length, scan);
  if (form.kind === "too-large" || form.kind === "malformed") return form.message;
  const prev = form.kind === "loose" ? form.prev : scannedPrev(line, 0, line.length, scan);
  return prev === expectedPrev ? null : "the row does not chain onto the row before";
}

/**
 * Reads the rows from `from` to `size`, each chained onto the one before (an anchor row's MAC
 * verified too: {@link rowFaultAt}), and applies the anchors they state to `anchors`. Returns the
 * position reached.
 */
function scanFrom(
  file: Deno.FsFile,
  hmac: HmacKey,
  from: LedgerPosition,
  size: number,
  anchors: Map<string, AnchorState>,
): LedgerPosition {
  let { count, last, offset } = from;
  const scan = new Int32Array(SCAN_SLOTS);
  forEachLineAt(file, offset, size, (line) => {
    const fault = rowFaultAt(line, hmac, last, scan);
    if (fault !== null) {
      throw new LedgerError(
        "LEDGER_TAMPERED",
        `the ledger's row ${count + 1} does not verify (${fault}), so the anchors of the ` +
          "files it holds to cannot be read; inspect with `agentteams ledger verify`",
        { details: { row: count + 1 } },
      );
    }
    const a = anchorOfLine(line);
    if (a !== null) anchors.set(a[0], a[1]);
    count++;
    offset += line.length + 1;
    last = sha256Hex(line);
  }, CHUNK);
  return { count, last, offset };
}

/**
 * The anchors as of the ledger's end `at` (its rows, last hash and size, as the head has been
 * checked to say): from the anchors file when it stands there, else from the rows after the
 * point it stands at (or all of them). Runs on an open ledger.
 *
 * @throws {LedgerError} `LEDGER_TAMPERED` (a row read does not verify or chain),
 *   `LEDGER_UNSAFE_PATH` (a symlink at the anchors file)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anchorsAtEnd } from "./anchor_state.ts";
 * import { statePaths } from "../layout.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * Deno.mkdirSync(root + "/.agentteams");
 * const f = Deno.openSync(root + "/.agentteams/proposal-ledger.jsonl", { create: true, write: true, read: true });
 * const k = new HmacKey(new Uint8Array([1]));
 * assert.equal(anchorsAtEnd(f, statePaths(root), k, { count: 0, last: "", offset: 0 }).anchors.size, 0);
 * f.close();
 * ```
 */
export function anchorsAtEnd(
  file: Deno.FsFile,
  paths: StatePaths,
  hmac: HmacKey,
  at: LedgerPosition,
): { anchors: Anchors; current: boolean } {
  const side = readSidecar(paths, hmac);
  if (
    side !== null && side.count === at.count && side.last === at.last && side.offset === at.offset
  ) {
    return { anchors: new Map(Object.entries(side.anchors)), current: true };
  }
  const usable = side !== null && side.offset <= at.offset && side.count <= at.count &&
    lineEndingAt(file, side.offset) === side.last;
  const anchors = new Map(usable ? Object.entries(side!.anchors) : []);
  const from = usable ? side! : { count: 0, last: "", offset: 0 };
  scanFrom(file, hmac, from, at.offset, anchors);
  return { anchors, current: false };
}

/**
 * The anchors file's text after one more row (`line`, ending at `end.offset`) appended at the
 * position `before`: the anchors as of `before` (the file's, or read from the rows), with the
 * row's own anchor applied. What an append writes beside the head.
 *
 * @throws {LedgerError} `LEDGER_TAMPERED` (an earlier row read does not verify or chain)
 * @example
 * ```ts ignore
 * // Not run: it needs an open ledger under its lock (lib/ledger/append.ts calls it).
 * import { anchorsAfter, type LedgerPosition } from "./anchor_state.ts";
 * import type { StatePaths } from "../layout.ts";
 * import type { HmacKey } from "../crypto/hash.ts";
 * declare const file: Deno.FsFile, paths: StatePaths, hmac: HmacKey;
 * declare const before: LedgerPosition, end: LedgerPosition, line: string; // the row written
 * anchorsAfter(file, paths, hmac, before, line, end); // '{"body": ..., "mac": ...}'
 * ```
 */
export function anchorsAfter(
  file: Deno.FsFile,
  paths: StatePaths,
  hmac: HmacKey,
  before: LedgerPosition,
  line: string,
  end: LedgerPosition,
): string {
  const anchors = new Map(anchorsAtEnd(file, paths, hmac, before).anchors);
  const own = anchorOfLine(new TextEncoder().encode(line));
  if (own !== null) anchors.set(own[0], own[1]);
  const body: SidecarBody = {
    v: 1,
    count: end.count,
    last: end.last,
    offset: end.offset,
    anchors: Object.fromEntries([...anchors].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)),
  };
  return JSON.stringify({ body, mac: macOf(hmac, body) });
}

/**
 * Where an append keeps the anchors file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anchorsPath } from "./anchor_state.ts";
 * import { statePaths } from "../layout.ts";
 * assert.equal(anchorsPath(statePaths("/p")), "/p/.agentteams/anchors.json");
 * ```
 */
export function anchorsPath(paths: StatePaths): string {
  return sidecarPath(paths);
}
