/**
 * The gate reads what decides: a MAC'd index of a triad ledger's checked prefix, so that a read
 * parses only the rows that can decide and the rows appended since.
 *
 * When a ledger (the decision log, the waiver ledger) has been read whole and held (well formed,
 * and for a chained log its `prev_digest` chain unbroken), the reader keeps in the state dir
 * (`.agentteams/csv-index-<name>.json`, MAC'd with the proposal-ledger key) how many bytes it
 * checked, their SHA-256, their line and row counts, a `carry` (the chained log's hash of its
 * last payload), and, in a line table beside it (`csv-index-<name>.lines`, bound to the MAC'd
 * body by its SHA-256), for each of their lines where it starts and a 31-bit hash of the action its row names (as
 * {@link actionKey} compares actions), flagged when the line holds `halt` in any case. The next
 * read hashes those bytes once (one native SHA-256, what any check of the file's
 * integrity costs); when they are the same, it decodes and parses the rows appended since in full
 * and, of the checked prefix, only the lines the caller's {@link IndexQuery} selects (the HALT
 * lines, the lines whose action hashes as the asked one's): a row that can decide a gate is one of
 * them (a hash that collides only adds a line the decision then skips), and the rest of the prefix
 * is neither decoded nor scanned. Only a prefix without quotes, BOM or bare CR (each line one
 * record) and in ASCII (a character offset is a byte offset) is indexed.
 *
 * What the ledger is held to between the operator's writes is its latest anchor in the signed
 * proposal ledger (`lib/ledger/anchor_state.ts`, recorded by each writer with the key), or, for a
 * ledger from before anchors, this index: a file that no longer extends the prefix it records
 * (shorter than it, or its bytes changed: a row removed, edited or re-ordered, a HALT cut out
 * through another name or an open descriptor) is refused (`LEDGER_ROLLED_BACK`, naming the file
 * and what to do), never read whole instead: a ledger only grows between the operator's writers
 * (`decision sign`, `waiver issue`, a spend). An index that does not verify, none, or one that is
 * not of the anchored bytes is no index: the whole file is read (and still held to the anchor).
 * A tail that does not parse or whose chain does not continue the carry: the caller reads the
 * whole file, and reports what that read finds (the same codes, lines and reasons).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csvIndexPath } from "./csv_index.ts";
 * assert.equal(csvIndexPath("/work/p", "decisions"), "/work/p/.agentteams/csv-index-decisions.json");
 * ```
 * @module
 */
import { type HmacKey, sha256HexOnce } from "../crypto/hash.ts";
import { AuthzError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { join } from "../fs/path.ts";
import { ensureStateDir, readStateFileSync, statePaths } from "../layout.ts";
import type { Anchors, AnchorState } from "../ledger/anchor_state.ts";
import { ledgerAnchors } from "../ledger/anchors.ts";
import {
  type CsvRow,
  type CsvSchema,
  type CsvTable,
  type CsvText,
  csvTextLenient,
  parseCsv,
  readCsvText,
} from "./csv.ts";
import { actionKey, recordOf } from "./table.ts";

const PURPOSE = "agentteams-csv-index-v2";
/** The MAC purpose of the earlier format, read only for what it holds the ledger to. */
const PURPOSE_V1 = "agentteams-csv-index-v1";
const dec = new TextDecoder();

/** What an index records of a ledger's checked prefix. */
interface IndexBody {
  readonly v: 2;
  /** Which ledger (`decisions`, `waivers`): an index is never read for another. */
  readonly name: string;
  /** The prefix's length in bytes (it ends with a line's LF). */
  readonly size: number;
  /** The prefix's SHA-256 (hex). */
  readonly sha256: string;
  /** LFs in the prefix. */
  readonly newlines: number;
  /** Data rows in the prefix. */
  readonly rows: number;
  /** The caller's carry after the prefix (the chain's last payload hash, or `""`). */
  readonly carry: string;
  /** Whether the prefix holds a CRLF (a rewrite keeps the file's line ends). */
  readonly crlf: boolean;
  /**
   * The SHA-256 (hex) of the line table ({@link csvIndexLinesPath}; raw bytes in a file of their
   * own, so a read neither decodes nor parses them, and hashes them natively: a MAC over them
   * would run the WebAssembly code cold at every start, ~4 ms for 10,000 lines): two
   * little-endian uint32s per line after the header (line `k + 2` is entry `k`), the offset where
   * it starts and {@link keyHash} of its row's action, with {@link HALT_FLAG} set when the line
   * holds `halt` in any case (0: a blank line).
   */
  readonly lines: string;
}

/** The bit of an index key that marks a line holding `halt` (any case). */
const HALT_FLAG = 0x80000000;
/** The bits of an index key that hash the row's action. */
const KEY_MASK = 0x7fffffff;
/** The largest index body read. */
const MAX_INDEX_BYTES = 1 << 16;
/** The largest line table read: 8 bytes a line, and a line is at least one byte. */
const linesCap = (ledgerBytes: number): number => 8 * ledgerBytes;

/** A 31-bit FNV-1a hash of an action key's UTF-16 code units. */
function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) & KEY_MASK;
}

/** The line table of {@link IndexBody.lines}, from each line's start and key. */
function lineTable(starts: readonly number[], keys: readonly number[]): Uint8Array<ArrayBuffer> {
  const view = new DataView(new ArrayBuffer(starts.length * 8));
  starts.forEach((v, k) => {
    view.setUint32(k * 8, v, true);
    view.setUint32(k * 8 + 4, keys[k], true);
  });
  return new Uint8Array(view.buffer);
}

/**
 * The index file of a ledger in a project's state dir.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csvIndexPath } from "./csv_index.ts";
 * assert.equal(csvIndexPath("/p", "waivers"), "/p/.agentteams/csv-index-waivers.json");
 * ```
 */
export function csvIndexPath(root: string, name: string): string {
  return join(statePaths(root).dir, `csv-index-${name}.json`);
}

/**
 * The line table of a ledger's index ({@link IndexBody.lines}), beside {@link csvIndexPath}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csvIndexLinesPath } from "./csv_index.ts";
 * assert.equal(csvIndexLinesPath("/p", "waivers"), "/p/.agentteams/csv-index-waivers.lines");
 * ```
 */
export function csvIndexLinesPath(root: string, name: string): string {
  return join(statePaths(root).dir, `csv-index-${name}.lines`);
}

function macOf(key: HmacKey, body: IndexBody): string {
  return key.hex(`${PURPOSE}|${JSON.stringify(body)}`);
}

/** An index as read: what it holds the ledger to, and (format 2) its body and line table. */
interface ReadIndex {
  /** The checked prefix: its size, SHA-256 and rows. */
  readonly held: AnchorState;
  /** The whole body, `null` for an index in the earlier format (it only holds the ledger). */
  readonly body: IndexBody | null;
}

/**
 * The ledger's valid index, or `null`. One in the earlier format (1, without line tables: what a
 * writer before this one kept) still holds the ledger to its bytes, as it did, until a writer
 * replaces it; no read goes through it.
 */
function readIndexFile(path: string, name: string, key: HmacKey): ReadIndex | null {
  try {
    const bytes = readStateFileSync(path, "csv index", MAX_INDEX_BYTES);
    if (bytes === null) return null;
    // Either format's body: the fields both hold are checked first, then the format's own.
    const o = JSON.parse(dec.decode(bytes)) as {
      body?: Partial<Omit<IndexBody, "v">> & { v?: number };
      mac?: unknown;
    };
    const b = o.body;
    if (
      typeof o.mac !== "string" || typeof b !== "object" || b === null || b.name !== name ||
      !Number.isSafeInteger(b.size) || b.size! <= 0 || typeof b.sha256 !== "string" ||
      !Number.isSafeInteger(b.newlines) || b.newlines! < 1 || !Number.isSafeInteger(b.rows) ||
      typeof b.carry !== "string"
    ) return null;
    const held = { size: b.size!, sha256: b.sha256, rows: b.rows! };
    if (b.v === 1) {
      return key.verify(`${PURPOSE_V1}|${JSON.stringify(b)}`, o.mac) ? { held, body: null } : null;
    }
    if (b.v !== 2 || typeof b.crlf !== "boolean" || typeof b.lines !== "string") return null;
    return key.verify(`${PURPOSE}|${JSON.stringify(b)}`, o.mac)
      ? { held, body: b as IndexBody }
      : null;
  } catch {
    // A cache that cannot be read is no cache: the whole file is read.
    return null;
  }
}

/** Where a ledger's index lives and what it is keyed with. */
export interface CsvIndexRef {
  /** The project (the index is {@link csvIndexPath} of it and `name`). */
  readonly root: string;
  /** The ledger's name in it. */
  readonly name: string;
  /** The MAC key (the proposal-ledger key). */
  readonly key: HmacKey;
  /** The ledger's path, for refusals (default: the schema's name for it). */
  readonly file?: string;
  /**
   * The signed ledger's anchors as the caller read them once for one decision that reads both
   * triad ledgers (the gate), so both are held to one reading; default: read now.
   */
  readonly anchors?: Anchors;
}

/** A ledger read through its index. */
export interface IndexedTable {
  /**
   * The header, then the prefix's rows the query selected, then every row after the prefix, in
   * file order with their true lines.
   */
  readonly table: CsvTable;
  /** `table.rows[tail..]` are the rows after the prefix. */
  readonly tail: number;
  /** The prefix's data rows (all of them, as counted when it was checked). */
  readonly prefixRows: number;
  /** The carry recorded for the prefix. */
  readonly carry: string;
}

/**
 * Which of an indexed prefix's rows a read wants: those holding `halt` (any case), and those whose
 * action is `action` as {@link actionKey} compares them (`null`: none by action).
 */
export interface IndexQuery {
  /** The rows holding `halt`, in any case (the HALT scan's). */
  readonly halts: boolean;
  /** The asked action (`null`: no row by its action). */
  readonly action: string | null;
}

/**
 * The rows that can decide, through a valid index (see the module doc), or `null`: no index, one
 * that does not verify, or a tail that does not parse (the caller reads the whole file and
 * reports it). Of the prefix, the lines `query` selects; every row after it. A file that no longer
 * extends the prefix a valid index recorded is refused.
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK`: the file is shorter than the recorded prefix, or
 *   the prefix's bytes changed
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readIndexed } from "./csv_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const ref = { root: "/nonexistent", name: "waivers", key: new HmacKey(new Uint8Array(32)) };
 * assert.equal(await readIndexed({ bytes: new Uint8Array(0), text: "" }, ref, { required: [] }, { halts: true, action: "x" }), null);
 * ```
 */
export async function readIndexed(
  read: CsvText,
  ref: CsvIndexRef,
  schema: CsvSchema,
  query: IndexQuery,
): Promise<IndexedTable | null> {
  // The check of the anchored prefix is started first and awaited before anything read is
  // returned (a file that no longer extends its anchor is refused, parsed or not).
  const started = startExtended(read, { ...ref, file: ref.file ?? schema.what ?? ref.name });
  let table: IndexedTable | null = null;
  try {
    const body = started.index?.body ?? null;
    const lines = body === null ? null : await checkedLines(ref, body, read.bytes.length);
    if (lines !== null) table = indexedTable(read.bytes, body!, lines, schema, query);
  } finally {
    await started.anchored;
  }
  return table;
}

/**
 * The index's line table when it is the one its MAC'd body names (its SHA-256) and has an entry
 * for each line after the header, else `null` (the file is read whole).
 */
async function checkedLines(
  ref: CsvIndexRef,
  body: IndexBody,
  ledgerBytes: number,
): Promise<Uint32Array | null> {
  let bytes: Uint8Array | null;
  try {
    const path = csvIndexLinesPath(ref.root, ref.name);
    bytes = readStateFileSync(path, "csv index lines", linesCap(ledgerBytes));
  } catch {
    return null; // a cache that cannot be read is no cache
  }
  if (bytes === null || bytes.length !== (body.newlines - 1) * 8) return null;
  if (!LITTLE_ENDIAN_HOST || await sha256HexOnce(bytes) !== body.lines) return null;
  // Read as the host's uint32s (the table is little-endian, and so is the host), from an aligned
  // copy when the bytes are not: a typed array's loop is what the walk below costs.
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  return new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.length / 4);
}

/** Whether this host stores a uint32 little-endian (the line table's order; else it is not read). */
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** {@link readIndexed}'s rows, from the bytes and their valid index. */
function indexedTable(
  bytes: Uint8Array,
  body: IndexBody,
  lines: Uint32Array,
  schema: CsvSchema,
  query: IndexQuery,
): IndexedTable | null {
  const wanted = query.action === null ? null : actionKey(query.action);
  if (wanted === "" || wanted?.includes("\n")) return null;
  const headerEnd = bytes.indexOf(0x0a) + 1;
  if (headerEnd <= 0 || headerEnd > body.size) return null;
  // The prefix is ASCII (it was indexed): the rest is decoded as a whole read decodes it (a BOM
  // there is a character of its first cell), and one that is not plainly UTF-8 is left to that
  // read.
  const rest = csvTextLenient(bytes.subarray(body.size));
  if (rest.includes("\ufffd")) return null;
  let parsed: CsvTable;
  try {
    parsed = parseCsv(csvTextLenient(bytes.subarray(0, headerEnd)) + rest, schema);
  } catch {
    return null;
  }
  const rows = prefixCandidates(bytes, body, lines, headerEnd, {
    halts: query.halts,
    key: wanted === null ? null : keyHash(wanted),
  });
  if (rows === null) return null;
  const shift = body.newlines - 1;
  const tailAt = rows.length;
  for (const r of parsed.rows) rows.push({ line: r.line + shift, cells: r.cells });
  return {
    table: { header: parsed.header, rows, crlf: body.crlf || rest.includes("\r\n"), bom: false },
    tail: tailAt,
    prefixRows: body.rows,
    carry: body.carry,
  };
}

/**
 * The ledger's valid index when it is of the bytes the ledger is held to (`null`: none, or one not
 * of them, read around), and the check that `read` extends those bytes, started (rejects
 * `LEDGER_ROLLED_BACK`); await it before using anything read from the file.
 */
function startExtended(
  read: CsvText,
  ref: CsvIndexRef,
): { readonly index: ReadIndex | null; readonly anchored: Promise<void> } {
  const index = readIndexFile(csvIndexPath(ref.root, ref.name), ref.name, ref.key);
  const held = heldTo(ref, index);
  if (held === null) return { index: null, anchored: Promise.resolve() };
  const anchored = requireAnchored(read, ref, held);
  anchored.catch(() => {}); // awaited by the caller
  // The index only speeds the read: one that is not of the held bytes (gone, older, another's)
  // is read around.
  const body = index?.body ?? null;
  const usable = body !== null && body.size === held.size && body.sha256 === held.sha256;
  return { index: usable ? index : null, anchored };
}

/**
 * What a ledger is held to: the signed ledger's latest anchor of it, else (a ledger from before
 * anchors, or none) its valid index, else nothing.
 */
function heldTo(ref: CsvIndexRef, index: ReadIndex | null): AnchorState | null {
  return (ref.anchors ?? ledgerAnchors(ref.root, ref.key)).get(ref.name) ?? index?.held ?? null;
}

/**
 * Refuses a ledger (at `ref.file`) that no longer extends its valid index, or is gone while one
 * stands: what each writer checks before it writes, so that a write never makes a rolled-back
 * file the operator's (its new index would accept it).
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK`; what `readCsvText` throws
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keepIndex, requireExtends } from "./csv_index.ts";
 * import { parseCsv } from "./csv.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const file = root + "/log.csv";
 * const ref = { root, name: "decisions", key: new HmacKey(new Uint8Array(32)), file };
 * const text = "a,b\n1,2\n";
 * Deno.writeTextFileSync(file, text);
 * const table = parseCsv(text, { required: [] });
 * await keepIndex({ bytes: Deno.readFileSync(file), text }, ref, table, "", (r) => r.a);
 * Deno.writeTextFileSync(file, "a,b\n1,2\n3,4\n");
 * await requireExtends(ref); // appended to: it extends
 * Deno.writeTextFileSync(file, "a,b\n");
 * await assert.rejects(requireExtends(ref), /no longer extends/);
 * ```
 */
export async function requireExtends(ref: CsvIndexRef & { readonly file: string }): Promise<void> {
  await requireReadExtends(readCsvText(ref.file), ref);
}

/**
 * {@link requireExtends} of the bytes a writer read (`null`: no file), so that what it then
 * parses and rewrites is what was checked, not a later read a session could have cut.
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keepIndex, requireReadExtends } from "./csv_index.ts";
 * import { parseCsv } from "./csv.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const ref = { root: Deno.makeTempDirSync(), name: "decisions", key: new HmacKey(new Uint8Array(32)) };
 * await requireReadExtends(null, ref); // no file, and nothing holds one: nothing to refuse
 * const text = "a,b\n1,2\n";
 * const read = { bytes: new TextEncoder().encode(text), text };
 * await keepIndex(read, ref, parseCsv(text, { required: [] }), "", (r) => r.a);
 * await assert.rejects(requireReadExtends(null, ref), /it is gone/);
 * ```
 */
export async function requireReadExtends(read: CsvText | null, ref: CsvIndexRef): Promise<void> {
  if (read === null) refuseGoneIndexed(ref);
  else await startExtended(read, ref).anchored;
}

/**
 * Refuses a ledger that is gone while a valid index of it stands (it held rows at the operator's
 * last write: a HALT log removed is a HALT removed). No index: nothing to refuse.
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keepIndex, refuseGoneIndexed } from "./csv_index.ts";
 * import { parseCsv } from "./csv.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const ref = { root: Deno.makeTempDirSync(), name: "decisions", key: new HmacKey(new Uint8Array(32)) };
 * refuseGoneIndexed(ref); // no index: nothing to refuse
 * const text = "a,b\n1,2\n";
 * const table = parseCsv(text, { required: [] });
 * await keepIndex({ bytes: new TextEncoder().encode(text), text }, ref, table, "", (r) => r.a);
 * assert.throws(() => refuseGoneIndexed(ref), /it is gone/);
 * ```
 */
export function refuseGoneIndexed(ref: CsvIndexRef): void {
  const held = heldTo(ref, readIndexFile(csvIndexPath(ref.root, ref.name), ref.name, ref.key));
  // Nothing held, or anchored as absent (accepted so): nothing to refuse.
  if (held === null || held.size === 0) return;
  throw rolledBack(
    ref,
    `it is gone, and it held ${held.rows} rows (${held.size} bytes) at the operator's last write`,
  );
}

/** Refuses `read` when it does not start with the bytes it is held to ({@link heldTo}). */
async function requireAnchored(
  read: CsvText,
  ref: CsvIndexRef,
  anchor: AnchorState,
): Promise<void> {
  if (anchor.size > read.bytes.length) {
    throw rolledBack(
      ref,
      `it is ${read.bytes.length} bytes, shorter than the ${anchor.size} bytes (${anchor.rows} ` +
        "rows) it held at the operator's last write",
    );
  }
  if (
    anchor.size > 0 && await sha256HexOnce(read.bytes.subarray(0, anchor.size)) !== anchor.sha256
  ) {
    throw rolledBack(
      ref,
      `its first ${anchor.size} bytes (${anchor.rows} rows, as the operator's last write left ` +
        "them) changed",
    );
  }
}

/**
 * What a ledger holds now, as its anchor records it (`lib/ledger/anchor_state.ts`): its size,
 * SHA-256 and data rows (`rows`); `null` (no file) is size 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anchorStateOf } from "./csv_index.ts";
 * assert.deepEqual(await anchorStateOf(null, 0), { size: 0, sha256: "", rows: 0 });
 * ```
 */
export async function anchorStateOf(read: CsvText | null, rows: number): Promise<AnchorState> {
  if (read === null || read.bytes.length === 0) return { size: 0, sha256: "", rows: 0 };
  return { size: read.bytes.length, sha256: await sha256HexOnce(read.bytes), rows };
}

/** The refusal of a ledger that no longer extends its index. */
function rolledBack(ref: CsvIndexRef, why: string): AuthzError {
  const file = ref.file ?? ref.name;
  const accept = ref.name === "waivers" ? "waiver accept" : "decision accept";
  return new AuthzError(
    "LEDGER_ROLLED_BACK",
    `${file} no longer extends what was last checked: ${why}. A row was removed or rewritten ` +
      "outside the operator's writers (decision sign, waiver issue, a spend), so every act that " +
      "reads it is refused. Restore the file from its copy (git show, a backup); if the operator " +
      "changed it on purpose, review the change and accept the file as it is now with " +
      `\`agentteams ${accept}\``,
    { details: { file, reason: why } },
  );
}

/**
 * Removes a ledger's index (what a writer without the key leaves: an index it cannot keep would
 * refuse the file it just wrote). Nothing there: nothing done.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csvIndexPath, dropIndex, keepIndex } from "./csv_index.ts";
 * import { parseCsv } from "./csv.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const text = "a,b\n1,2\n";
 * const ref = { root, name: "x", key: new HmacKey(new Uint8Array(32)) };
 * const table = parseCsv(text, { required: [] });
 * await keepIndex({ bytes: new TextEncoder().encode(text), text }, ref, table, "", (r) => r.a);
 * dropIndex(root, "x");
 * assert.throws(() => Deno.statSync(csvIndexPath(root, "x")), Deno.errors.NotFound);
 * dropIndex(root, "x"); // nothing there: nothing done
 * ```
 */
export function dropIndex(root: string, name: string): void {
  for (const path of [csvIndexPath(root, name), csvIndexLinesPath(root, name)]) {
    try {
      Deno.removeSync(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
}

/**
 * The prefix's rows the index selects (`key`: an action's {@link keyHash}), in file order, each
 * decoded alone; `null` when the index's tables do not fit the prefix (read whole instead).
 */
function prefixCandidates(
  bytes: Uint8Array,
  body: IndexBody,
  table: Uint32Array,
  headerEnd: number,
  want: { readonly halts: boolean; readonly key: number | null },
): CsvRow[] | null {
  const lines = body.newlines - 1;
  const size = body.size;
  // A HALT line's key has the flag; a key that is no action's (-1) selects nothing by its action.
  const halts = want.halts ? HALT_FLAG : 0;
  const key = want.key ?? -1;
  const out: CsvRow[] = [];
  let prev = headerEnd - 1;
  for (let k = 0; k < lines; k++) {
    const start = table[2 * k];
    if (start <= prev || start >= size) return null;
    prev = start;
    const h = table[2 * k + 1];
    if ((h & halts) === 0 && (h & KEY_MASK) !== key) continue;
    const end = k + 1 < lines ? table[2 * k + 2] : size;
    if (end <= start) return null;
    let l = csvTextLenient(bytes.subarray(start, end - 1));
    if (l.endsWith("\r")) l = l.slice(0, -1);
    if (l !== "") out.push({ line: k + 2, cells: l.split(",") });
  }
  return out;
}

/**
 * Keeps the index of a ledger read whole and held (`table`, its parse; `carry` after its last
 * row), when its text can be indexed (see the module doc); a cache, so a write that fails for any
 * reason but a missing permission is let go. `actionOf` names the action of a row's record, as
 * the ledger's readers choose rows by it (the decision log's `actionOf`, a waiver's
 * `action_reviewed`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csvIndexPath, keepIndex } from "./csv_index.ts";
 * import { parseCsv } from "./csv.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const text = "a,b\n1,2\n";
 * const ref = { root, name: "x", key: new HmacKey(new Uint8Array(32)) };
 * const read = { bytes: new TextEncoder().encode(text), text };
 * await keepIndex(read, ref, parseCsv(text, { required: [] }), "", (r) => r.a);
 * assert.equal(Deno.statSync(csvIndexPath(root, "x")).isFile, true);
 * ```
 */
export async function keepIndex(
  read: CsvText,
  ref: CsvIndexRef,
  table: CsvTable,
  carry: string,
  actionOf: (rec: Record<string, string>) => string,
): Promise<void> {
  const { bytes, text } = read;
  if (!indexable(bytes, text)) {
    // An index it cannot keep is none: the last one would refuse the file just written.
    dropIndex(ref.root, ref.name);
    return;
  }
  // Each line after the header: where it starts, and whether it holds `halt`.
  const starts: number[] = [];
  const keys: number[] = [];
  for (let at = text.indexOf("\n") + 1; at < text.length;) {
    const nl = text.indexOf("\n", at);
    starts.push(at);
    keys.push(/halt/i.test(text.slice(at, nl)) ? HALT_FLAG : 0);
    at = nl + 1;
  }
  // Each row's action, from the cells the whole read parsed (line k + 2 is entry k).
  for (const r of table.rows) {
    const k = r.line - 2;
    keys[k] = (keys[k] | keyHash(actionKey(actionOf(recordOf(table.header, r.cells))))) >>> 0;
  }
  const lines = lineTable(starts, keys);
  const body: IndexBody = {
    v: 2,
    name: ref.name,
    size: bytes.length,
    sha256: await sha256HexOnce(bytes),
    newlines: starts.length + 1,
    rows: table.rows.length,
    carry,
    crlf: text.includes("\r\n"),
    lines: await sha256HexOnce(lines),
  };
  try {
    ensureStateDir(ref.root);
    // The table first: a body is what makes it read, and one that names another table's hash
    // (a crash between the two writes) is read around.
    atomicWriteFileSync(csvIndexLinesPath(ref.root, ref.name), lines, { forceMode: 0o600 });
    const path = csvIndexPath(ref.root, ref.name);
    atomicWriteFileSync(path, JSON.stringify({ body, mac: macOf(ref.key, body) }), {
      forceMode: 0o600,
    });
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
  }
}

/** One record a line, ASCII, ends with LF, starts with its header: what an index may cover. */
function indexable(bytes: Uint8Array, text: string): boolean {
  if (bytes.length === 0 || bytes.length !== text.length) return false;
  if (text.charCodeAt(text.length - 1) !== 0x0a) return false;
  const c0 = text.charCodeAt(0);
  if (c0 === 0x0a || c0 === 0x0d || c0 === 0xfeff) return false;
  if (text.indexOf('"') >= 0) return false;
  for (let i = text.indexOf("\r"); i >= 0; i = text.indexOf("\r", i + 1)) {
    if (text.charCodeAt(i + 1) !== 0x0a) return false;
  }
  return true;
}
