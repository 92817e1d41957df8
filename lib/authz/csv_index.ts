/**
 * The gate reads what decides: a MAC'd index of a triad ledger's checked prefix, so that a read
 * parses only the rows that can decide and the rows appended since.
 *
 * When a ledger (the decision log, the waiver ledger) has been read whole and held (well formed,
 * and for a chained log its `prev_digest` chain unbroken), the reader keeps in the state dir
 * (`.agentteams/csv-index-<name>.json`, MAC'd with the proposal-ledger key) how many bytes it
 * checked, their SHA-256, their line and row counts, and a `carry` (the chained log's hash of its
 * last payload). The next read hashes those bytes once (one native SHA-256, what any check of the
 * file's integrity costs); when they are the same, it parses the rows appended since in full and,
 * of the checked prefix, only the lines that hold one of the caller's `needles` (the asked action
 * and `halt`, lower case): a row that can decide a gate holds one of them, and every other row is
 * skipped by the decision anyway. Only a prefix without quotes, BOM or bare CR (each line one
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
  parseCsv,
  readCsvText,
} from "./csv.ts";

const PURPOSE = "agentteams-csv-index-v1";
const dec = new TextDecoder();

/** What an index records of a ledger's checked prefix. */
interface IndexBody {
  readonly v: 1;
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
  /** `marks[k]`: the offset just past the prefix's `(k + 1) * STRIDE`-th LF (line numbers). */
  readonly marks: readonly number[];
}

/** Lines between two {@link IndexBody.marks}: a candidate's line is counted from the mark before. */
const STRIDE = 512;

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

function macOf(key: HmacKey, body: IndexBody): string {
  return key.hex(`${PURPOSE}|${JSON.stringify(body)}`);
}

function readBody(path: string, name: string, key: HmacKey): IndexBody | null {
  try {
    const bytes = readStateFileSync(path, "csv index", 1 << 16);
    if (bytes === null) return null;
    const o = JSON.parse(dec.decode(bytes)) as { body?: IndexBody; mac?: unknown };
    const b = o.body;
    if (
      typeof o.mac !== "string" || typeof b !== "object" || b === null || b.v !== 1 ||
      b.name !== name || !Number.isSafeInteger(b.size) || b.size <= 0 ||
      typeof b.sha256 !== "string" || !Number.isSafeInteger(b.newlines) ||
      !Number.isSafeInteger(b.rows) || typeof b.carry !== "string" || !Array.isArray(b.marks) ||
      b.marks.length !== Math.floor(b.newlines / STRIDE) ||
      !b.marks.every((m, k) =>
        Number.isSafeInteger(m) && m <= b.size && (k === 0 || m > b.marks[k - 1])
      )
    ) return null;
    return key.verify(`${PURPOSE}|${JSON.stringify(b)}`, o.mac) ? b : null;
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
   * The header, then the prefix's rows that hold a needle, then every row after the prefix, in
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
 * The rows that can decide, through a valid index (see the module doc), or `null`: no index, one
 * that does not verify, or a tail that does not parse (the caller reads the whole file and
 * reports it). `needles` are in lower case (a row is a candidate when its lower-case text holds
 * one). A file that no longer extends the prefix a valid index recorded is refused.
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
 * assert.equal(await readIndexed({ bytes: new Uint8Array(0), text: "" }, ref, { required: [] }, ["x"]), null);
 * ```
 */
export async function readIndexed(
  read: CsvText,
  ref: CsvIndexRef,
  schema: CsvSchema,
  needles: readonly string[],
): Promise<IndexedTable | null> {
  // The prefix's hash runs off this thread while the rows are read; nothing read is returned
  // before it is checked (a file that no longer extends its anchor is refused, parsed or not).
  const started = startExtended(read, { ...ref, file: ref.file ?? schema.what ?? ref.name });
  let table: IndexedTable | null;
  try {
    table = started.body === null ? null : indexedTable(read.text, started.body, schema, needles);
  } finally {
    await started.anchored;
  }
  return table;
}

/** {@link readIndexed}'s rows, from the text and its valid index. */
function indexedTable(
  text: string,
  body: IndexBody,
  schema: CsvSchema,
  needles: readonly string[],
): IndexedTable | null {
  if (needles.some((n) => n === "" || n.includes("\n"))) return null;
  const headerEnd = text.indexOf("\n") + 1;
  if (headerEnd <= 0 || headerEnd > body.size) return null;
  let parsed: CsvTable;
  try {
    parsed = parseCsv(text.slice(0, headerEnd) + text.slice(body.size), schema);
  } catch {
    return null;
  }
  const shift = body.newlines - 1;
  const tail: CsvRow[] = parsed.rows.map((r) => ({ line: r.line + shift, cells: r.cells }));
  const rows = prefixCandidates(text, headerEnd, body.size, needles, body.marks);
  const tailAt = rows.length;
  for (const r of tail) rows.push(r);
  return {
    table: { header: parsed.header, rows, crlf: text.includes("\r\n"), bom: false },
    tail: tailAt,
    prefixRows: body.rows,
    carry: body.carry,
  };
}

/**
 * The valid index of a ledger whose bytes extend it, or null (no index, or one that does not
 * verify); a file that does not extend it is refused.
 */
async function extendedBody(read: CsvText, ref: CsvIndexRef): Promise<IndexBody | null> {
  const started = startExtended(read, ref);
  await started.anchored;
  return started.body;
}

/**
 * {@link extendedBody} started: the index when it is of the bytes the ledger is held to (`null`:
 * none, or one not of them, read around), and the check that the file extends them, running
 * (rejects `LEDGER_ROLLED_BACK`); await it before using anything read from the file.
 */
function startExtended(
  read: CsvText,
  ref: CsvIndexRef,
): { readonly body: IndexBody | null; readonly anchored: Promise<void> } {
  const body = readBody(csvIndexPath(ref.root, ref.name), ref.name, ref.key);
  const held = heldTo(ref, body);
  if (held === null) return { body: null, anchored: Promise.resolve() };
  const anchored = requireAnchored(read, ref, held);
  anchored.catch(() => {}); // awaited by the caller
  // The index only speeds the read: one that is not of the held bytes (gone, older, another's)
  // is read around.
  const usable = body !== null && body.size === held.size && body.sha256 === held.sha256;
  return { body: usable ? body : null, anchored };
}

/**
 * What a ledger is held to: the signed ledger's latest anchor of it, else (a ledger from before
 * anchors, or none) its valid index, else nothing.
 */
function heldTo(ref: CsvIndexRef, body: IndexBody | null): AnchorState | null {
  return (ref.anchors ?? ledgerAnchors(ref.root, ref.key)).get(ref.name) ?? body;
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
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const file = root + "/log.csv";
 * const ref = { root, name: "decisions", key: new HmacKey(new Uint8Array(32)), file };
 * Deno.writeTextFileSync(file, "a,b\n1,2\n");
 * await keepIndex({ bytes: Deno.readFileSync(file), text: "a,b\n1,2\n" }, ref, 1, "");
 * Deno.writeTextFileSync(file, "a,b\n1,2\n3,4\n");
 * await requireExtends(ref); // appended to: it extends
 * Deno.writeTextFileSync(file, "a,b\n");
 * await assert.rejects(requireExtends(ref), /no longer extends/);
 * ```
 */
export async function requireExtends(ref: CsvIndexRef & { readonly file: string }): Promise<void> {
  const read = readCsvText(ref.file);
  if (read === null) refuseGoneIndexed(ref);
  else await extendedBody(read, ref);
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
 * import { HmacKey } from "../crypto/hash.ts";
 * const ref = { root: Deno.makeTempDirSync(), name: "decisions", key: new HmacKey(new Uint8Array(32)) };
 * refuseGoneIndexed(ref); // no index: nothing to refuse
 * const text = "a,b\n1,2\n";
 * await keepIndex({ bytes: new TextEncoder().encode(text), text }, ref, 1, "");
 * assert.throws(() => refuseGoneIndexed(ref), /it is gone/);
 * ```
 */
export function refuseGoneIndexed(ref: CsvIndexRef): void {
  const held = heldTo(ref, readBody(csvIndexPath(ref.root, ref.name), ref.name, ref.key));
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
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const text = "a,b\n1,2\n";
 * await keepIndex({ bytes: new TextEncoder().encode(text), text }, { root, name: "x", key: new HmacKey(new Uint8Array(32)) }, 1, "");
 * dropIndex(root, "x");
 * assert.throws(() => Deno.statSync(csvIndexPath(root, "x")), Deno.errors.NotFound);
 * dropIndex(root, "x"); // nothing there: nothing done
 * ```
 */
export function dropIndex(root: string, name: string): void {
  try {
    Deno.removeSync(csvIndexPath(root, name));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/**
 * The lines of `text[from, to)` that hold a needle (ASCII, case-insensitive), as rows in file
 * order; `marks` as {@link IndexBody.marks}. Their line numbers are counted when one is first
 * read (only a refusal or a decision's row asks for one), for all of them at once.
 */
function prefixCandidates(
  text: string,
  from: number,
  to: number,
  needles: readonly string[],
  marks: readonly number[],
): CsvRow[] {
  // One case-insensitive search for all the needles (no lower-case copy of the text).
  const re = new RegExp(
    needles.map((n) => n.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")).join("|"),
    "gi",
  );
  const starts: number[] = [];
  re.lastIndex = from;
  for (let m = re.exec(text); m !== null && m.index < to; m = re.exec(text)) {
    const s = text.lastIndexOf("\n", m.index) + 1;
    if (starts.length === 0 || starts[starts.length - 1] !== s) starts.push(s);
    const e = text.indexOf("\n", m.index);
    if (e < 0 || e >= to) break;
    re.lastIndex = e + 1;
  }
  let lines: number[] | null = null;
  const lineOf = (i: number): number => (lines ??= lineNumbers(text, starts, marks))[i];
  const out: CsvRow[] = [];
  for (let i = 0; i < starts.length; i++) {
    const s = starts[i];
    let e = text.indexOf("\n", s);
    if (e < 0 || e > to) e = to;
    let l = text.slice(s, e);
    if (l.endsWith("\r")) l = l.slice(0, -1);
    if (l === "") continue;
    out.push({
      cells: l.split(","),
      get line() {
        return lineOf(i);
      },
    });
  }
  return out;
}

/** The line each of `starts` (ascending line-start offsets) begins, counted from the marks. */
function lineNumbers(text: string, starts: readonly number[], marks: readonly number[]): number[] {
  const lines: number[] = [];
  let k = -1; // the last mark at or before the current start
  let at = 0; // counted up to here...
  let line = 1; // ...which starts this line
  for (const s of starts) {
    while (k + 1 < marks.length && marks[k + 1] <= s) k++;
    if (k >= 0 && marks[k] > at) {
      at = marks[k];
      line = (k + 1) * STRIDE + 1;
    }
    for (let nl = text.indexOf("\n", at); nl >= 0 && nl < s; nl = text.indexOf("\n", nl + 1)) {
      line++;
      at = nl + 1;
    }
    at = s;
    lines.push(line);
  }
  return lines;
}

/**
 * Keeps the index of a ledger read whole and held (`rows` data rows, `carry` after the last),
 * when its text can be indexed (see the module doc); a cache, so a write that fails for any
 * reason but a missing permission is let go.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csvIndexPath, keepIndex } from "./csv_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const text = "a,b\n1,2\n";
 * const ref = { root, name: "x", key: new HmacKey(new Uint8Array(32)) };
 * await keepIndex({ bytes: new TextEncoder().encode(text), text }, ref, 1, "");
 * assert.equal(Deno.statSync(csvIndexPath(root, "x")).isFile, true);
 * ```
 */
export async function keepIndex(
  read: CsvText,
  ref: CsvIndexRef,
  rows: number,
  carry: string,
): Promise<void> {
  const { bytes, text } = read;
  if (!indexable(bytes, text)) {
    // An index it cannot keep is none: the last one would refuse the file just written.
    dropIndex(ref.root, ref.name);
    return;
  }
  let newlines = 0;
  const marks: number[] = [];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) {
    if (++newlines % STRIDE === 0) marks.push(i + 1);
  }
  const body: IndexBody = {
    v: 1,
    name: ref.name,
    size: bytes.length,
    sha256: await sha256HexOnce(bytes),
    newlines,
    rows,
    carry,
    marks,
  };
  try {
    ensureStateDir(ref.root);
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
