/**
 * The CSV ledgers under `references/` (decisions, waivers, grants): an RFC 4180 reader and a
 * writer that produces what the earlier tool's `csv.DictWriter` wrote (its quoting:
 * `lib/pycompat/csv_quote.ts`), and the atomic, mode-keeping rewrite every change goes through.
 *
 * Reading: a header row is required (its cells stripped); a leading BOM is accepted and kept on
 * rewrite; records end in LF or CRLF; quoted fields may hold commas, quotes and line breaks; an
 * unterminated quote, a quote inside an unquoted field, text after a closing quote, a bare CR, a
 * duplicate column, a missing required column, a column the ledger does not know, or a row whose
 * cell count differs from the header's is refused with its line number. Blank lines are skipped
 * (as `csv.DictReader` does).
 *
 * Writing (FORMATS.md §0 correction 2): a new file ends its lines in LF; a rewrite keeps CRLF only
 * when the existing file already holds a `\r\n`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatCsv, parseCsv } from "./csv.ts";
 * const t = parseCsv('a,b\n"x,1","say ""hi"""\n', { required: ["a", "b"] });
 * assert.deepEqual(t.rows[0].cells, ["x,1", 'say "hi"']);
 * assert.equal(formatCsv(t.header, t.rows.map((r) => r.cells), { eol: "\n" }), 'a,b\n"x,1","say ""hi"""\n'); // the same text back
 * ```
 * @module
 */
import { AuthzError, FsSafetyError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { basename, dirname } from "../fs/path.ts";
import { formatRecord } from "../pycompat/csv_quote.ts";

/** Largest CSV ledger read (64 MiB: some hundred thousand rows). */
export const MAX_CSV_BYTES = 64 * 1024 * 1024;

/** One data record. */
export interface CsvRow {
  /** The line the record starts on (the header is line 1, or later after blank lines). */
  readonly line: number;
  /** Its cells, as many as the header has columns. */
  readonly cells: string[];
}

/** A parsed ledger. */
export interface CsvTable {
  /** Column names (stripped). */
  readonly header: string[];
  /** Data records in file order. */
  readonly rows: CsvRow[];
  /** The file held a `\r\n` (a rewrite keeps CRLF). */
  readonly crlf: boolean;
  /** The file started with a byte-order mark (a rewrite keeps it). */
  readonly bom: boolean;
}

/** What a ledger's header must and may hold. */
export interface CsvSchema {
  /** Columns that must be present (else refused, naming line 1). */
  readonly required: readonly string[];
  /** Every column allowed; omitted: any. */
  readonly known?: readonly string[];
  /** Name used in messages (e.g. the file's path). */
  readonly what?: string;
}

function malformed(what: string, line: number, problem: string): AuthzError {
  return new AuthzError("CSV_MALFORMED", `${what}: line ${line}: ${problem}`, {
    details: { line },
  });
}

/**
 * Splits CSV text into records of cells (RFC 4180, LF or CRLF), each with its starting line.
 *
 * @throws {AuthzError} `CSV_MALFORMED` naming the line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitRecords } from "./csv.ts";
 * assert.deepEqual(splitRecords('a,"b\nc"\r\nd,e\n', "x.csv").map((r) => r.cells), [["a", "b\nc"], ["d", "e"]]);
 * ```
 */
export function splitRecords(text: string, what: string): CsvRow[] {
  if (text.indexOf('"') < 0 && text.indexOf("\r") < 0) return splitPlain(text);
  // Fast path: a text with no quote at all is lines of comma-separated cells.
  if (text.indexOf('"') < 0) {
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    const fast: CsvRow[] = [];
    const cr = text.indexOf("\r") >= 0;
    for (let k = 0; k < lines.length; k++) {
      let l = lines[k];
      if (cr && l.endsWith("\r")) l = l.slice(0, -1);
      if (cr && l.indexOf("\r") >= 0) return splitSlow(text, what);
      if (l !== "") fast.push({ line: k + 1, cells: l.split(",") });
    }
    // A last line ending in a bare CR (no LF after it) is the slow path's to refuse.
    if (text.endsWith("\r")) return splitSlow(text, what);
    return fast;
  }
  return splitSlow(text, what);
}

/**
 * The commonest ledger: no quote and no CR, so LF ends every line and every comma separates.
 * One pass: each LF and each comma is found once (the next comma is remembered across lines, so
 * a line without one costs no search), and only the cells are cut from the text.
 */
function splitPlain(text: string): CsvRow[] {
  const out: CsvRow[] = [];
  const n = text.length;
  let comma = text.indexOf(",");
  let i = 0;
  let line = 1;
  while (i < n) {
    let nl = text.indexOf("\n", i);
    if (nl < 0) nl = n;
    if (nl > i) {
      const cells: string[] = [];
      let from = i;
      while (comma >= 0 && comma < nl) {
        cells.push(text.slice(from, comma));
        from = comma + 1;
        comma = text.indexOf(",", from);
      }
      cells.push(text.slice(from, nl));
      out.push({ line, cells });
    }
    i = nl + 1;
    line++;
  }
  return out;
}

function splitSlow(text: string, what: string): CsvRow[] {
  const out: CsvRow[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const start = line;
    // Fast path: a whole line with no quote and no bare CR splits on commas as it stands.
    const nl = text.indexOf("\n", i);
    const end = nl < 0 ? n : nl;
    const body = end > i && text.charCodeAt(end - 1) === 0x0d ? end - 1 : end;
    const seg = text.slice(i, body);
    if (seg.indexOf('"') < 0 && seg.indexOf("\r") < 0 && (body === end || nl >= 0)) {
      if (seg !== "") out.push({ line: start, cells: seg.split(",") });
      i = nl < 0 ? n : nl + 1;
      line++;
      continue;
    }
    const cells: string[] = [];
    let cell = "";
    let blank = true;
    for (;;) {
      if (i < n && text.charCodeAt(i) === 0x22) {
        // A quoted field.
        blank = false;
        const quoteLine = line;
        i++;
        for (;;) {
          if (i >= n) throw malformed(what, quoteLine, "a quoted field is never closed");
          const c = text[i];
          if (c === '"') {
            if (text[i + 1] === '"') {
              cell += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === "\n") line++;
          cell += c;
          i++;
        }
        if (i < n && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") {
          throw malformed(what, line, "text after a closing quote (quote the whole field)");
        }
      } else {
        const from = i;
        while (i < n) {
          const c = text.charCodeAt(i);
          if (c === 0x2c || c === 0x0a || c === 0x0d) break;
          if (c === 0x22) {
            throw malformed(what, line, 'a quote inside an unquoted field (write it as "")');
          }
          i++;
        }
        cell = text.slice(from, i);
        if (cell !== "") blank = false;
      }
      cells.push(cell);
      cell = "";
      if (i >= n) break;
      const c = text[i];
      if (c === ",") {
        blank = false;
        i++;
        continue;
      }
      if (c === "\r") {
        if (text[i + 1] !== "\n") throw malformed(what, line, "a carriage return without LF");
        i += 2;
      } else i++;
      line++;
      break;
    }
    if (!blank) out.push({ line: start, cells });
  }
  return out;
}

/**
 * Parses a ledger's text against its schema.
 *
 * @throws {AuthzError} `CSV_MALFORMED` (syntax, cell counts) or `CSV_COLUMNS` (header), naming
 *   the line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCsv } from "./csv.ts";
 * assert.equal(parseCsv("\ufeffa,b\r\n1,2\r\n", { required: ["a"] }).bom, true);
 * ```
 */
export function parseCsv(text: string, schema: CsvSchema): CsvTable {
  const what = schema.what ?? "CSV";
  const bom = text.charCodeAt(0) === 0xfeff;
  const body = bom ? text.slice(1) : text;
  const records = splitRecords(body, what);
  if (records.length === 0) {
    throw new AuthzError("CSV_COLUMNS", `${what}: line 1: no header row`, { details: { line: 1 } });
  }
  const head = records[0];
  const header = head.cells.map((c) => c.trim());
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h)) {
      throw new AuthzError("CSV_COLUMNS", `${what}: line ${head.line}: column "${h}" twice`, {
        details: { line: head.line },
      });
    }
    seen.add(h);
  }
  const missing = schema.required.filter((r) => !seen.has(r));
  if (missing.length > 0) {
    throw new AuthzError(
      "CSV_COLUMNS",
      `${what}: line ${head.line}: missing column(s) ${missing.join(", ")} (the header must hold ` +
        `${schema.required.join(",")})`,
      { details: { line: head.line, missing } },
    );
  }
  if (schema.known !== undefined) {
    const known = new Set(schema.known);
    const unknown = header.filter((h) => !known.has(h));
    if (unknown.length > 0) {
      throw new AuthzError(
        "CSV_COLUMNS",
        `${what}: line ${head.line}: unknown column(s) ${unknown.join(", ")}; remove them or ` +
          "fix their spelling",
        { details: { line: head.line, unknown } },
      );
    }
  }
  const rows = records.slice(1);
  for (const r of rows) {
    if (r.cells.length !== header.length) {
      throw malformed(
        what,
        r.line,
        `${r.cells.length} cell(s) where the header has ${header.length} columns`,
      );
    }
  }
  return { header, rows, crlf: body.includes("\r\n"), bom };
}

/** How {@link formatCsv} ends lines. */
export interface FormatOptions {
  /** Every line's end. */
  readonly eol: "\n" | "\r\n";
  /** The first data row's end, when it differs (the decision log's creation, FORMATS.md §0). */
  readonly firstRowEol?: "\n" | "\r\n";
  /** Start with a byte-order mark. */
  readonly bom?: boolean;
}

/**
 * A whole file's text: the header, then each row, every line ended.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatCsv } from "./csv.ts";
 * assert.equal(formatCsv(["a", "b"], [["1", "x,y"]], { eol: "\n" }), 'a,b\n1,"x,y"\n');
 * ```
 */
export function formatCsv(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  opts: FormatOptions,
): string {
  let out = (opts.bom ? "\ufeff" : "") + formatRecord(header) + opts.eol;
  rows.forEach((r, i) => {
    out += formatRecord(r) + (i === 0 ? (opts.firstRowEol ?? opts.eol) : opts.eol);
  });
  return out;
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Refuses a ledger whose folder (`references/`) is a symlink or not a directory: a session can
 * make that name a link to a folder of its own (the deny rules cover what is below
 * `references/`, not a link in its place), and a HALT written or read through it is one the
 * session can delete (probe 22 Q3). A missing folder passes (it is created on first use).
 *
 * @throws {FsSafetyError} `SYMLINK`, `NOT_DIRECTORY`.
 */
function refuseLinkedFolder(path: string): void {
  const dir = dirname(path);
  const st = lstatOrNullSync(dir);
  if (st === null) return;
  if (st.isSymlink) {
    throw new FsSafetyError(
      "SYMLINK",
      `${dir} is a symlink: the triad's ledgers are never read or written through a link (an ` +
        `agent session can make one); remove it, and keep ${basename(dir)}/ a real directory`,
    );
  }
  if (!st.isDirectory) {
    throw new FsSafetyError("NOT_DIRECTORY", `${dir} is not a directory`);
  }
}

/**
 * Reads a ledger file, or `null` when it does not exist (a ledger's absence is normal: it is
 * created on first use). Never through a symlink; at most {@link MAX_CSV_BYTES}.
 *
 * @throws {AuthzError} `CSV_MALFORMED` (not UTF-8, syntax), `CSV_COLUMNS`; `FsSafetyError` for a
 *   symlink or a non-regular file.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readCsvFile } from "./csv.ts";
 * assert.equal(readCsvFile("/nonexistent/x.csv", { required: ["a"] }), null);
 * ```
 */
export function readCsvFile(path: string, schema: CsvSchema): CsvTable | null {
  return parseCsvRead(readCsvText(path), { ...schema, what: schema.what ?? path });
}

/**
 * A ledger as read ({@link readCsvText}), parsed: what {@link readCsvFile} returns, for a writer
 * that checked those very bytes first (`null`: no file).
 *
 * @throws {AuthzError} what {@link readCsvFile} throws.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCsvRead } from "./csv.ts";
 * const text = "a\n1\n";
 * assert.equal(parseCsvRead({ bytes: new TextEncoder().encode(text), text }, { required: ["a"] })?.rows.length, 1);
 * assert.equal(parseCsvRead(null, { required: ["a"] }), null);
 * ```
 */
export function parseCsvRead(read: CsvText | null, schema: CsvSchema): CsvTable | null {
  return read === null ? null : parseCsv(read.text, schema);
}

/** A ledger file's bytes and their text, as {@link readCsvText} read them. */
export interface CsvText {
  /** The bytes read. */
  readonly bytes: Uint8Array;
  /** Their UTF-8 text (a BOM kept); `CSV_MALFORMED` when they are not UTF-8. */
  readonly text: string;
}

/**
 * A ledger file's bytes and text, or `null` when it does not exist, read as {@link readCsvFile}
 * reads it (never through a symlink, at most {@link MAX_CSV_BYTES}, UTF-8 only), unparsed. The
 * text is decoded when first read (its `text` throws `CSV_MALFORMED` for bytes that are not
 * UTF-8).
 *
 * @throws {FsSafetyError} for a symlink or a non-regular file.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readCsvText } from "./csv.ts";
 * const p = Deno.makeTempDirSync() + "/x.csv";
 * Deno.writeTextFileSync(p, "a\n1\n");
 * assert.equal(readCsvText(p)?.text, "a\n1\n");
 * ```
 */
export function readCsvText(path: string): CsvText | null {
  if (lstatOrNullSync(path) === null) return null;
  refuseLinkedFolder(path);
  const bytes = readRegularFileSync(path, {
    maxBytes: MAX_CSV_BYTES,
    what: "CSV ledger",
    singleName: true,
  }).bytes;
  // Decoded when first asked for: a read through the ledger's index decodes only what it parses.
  let text: string | undefined;
  return {
    bytes,
    get text() {
      return text ??= csvTextOf(bytes, path);
    },
  };
}

/**
 * Ledger bytes as a read decodes them first: UTF-8, a BOM kept (a cell holds it, as Python's csv
 * module reads it), each invalid sequence as U+FFFD (a text holding one is decoded again strictly,
 * or read around).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csvTextLenient } from "./csv.ts";
 * assert.equal(csvTextLenient(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), "\ufeffa");
 * ```
 */
export function csvTextLenient(bytes: Uint8Array): string {
  return lenient.decode(bytes);
}

/** A ledger's bytes as text, or `CSV_MALFORMED` when they are not UTF-8. */
function csvTextOf(bytes: Uint8Array, path: string): string {
  // The lenient decoder is several times faster; it marks any invalid sequence with U+FFFD, so
  // only a text holding one is decoded again strictly (a U+FFFD written in the file is valid).
  const text = csvTextLenient(bytes);
  if (!text.includes("\ufffd")) return text;
  try {
    return strict.decode(bytes);
  } catch {
    throw new AuthzError("CSV_MALFORMED", `${path}: not UTF-8 text`);
  }
}

/**
 * Rewrites a whole ledger atomically, keeping its mode, its BOM and (when it held one) its CRLF
 * line ends; a new file gets LF (or `firstRowEol` for its first row) and mode 0644, and its
 * directory is created. `existing` is the table as read (`null`: the file is new). Returns what
 * it wrote (what the writer's index and anchor are then of, not a later read).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rewriteCsvFile } from "./csv.ts";
 * const p = Deno.makeTempDirSync() + "/references/x.csv";
 * assert.equal(rewriteCsvFile(p, ["a"], [["1"]], null).text, "a\n1\n");
 * assert.equal(Deno.readTextFileSync(p), "a\n1\n");
 * ```
 */
export function rewriteCsvFile(
  path: string,
  header: readonly string[],
  rows: readonly (readonly string[])[],
  existing: Pick<CsvTable, "crlf" | "bom"> | null,
  opts: { firstRowEol?: "\n" | "\r\n" } = {},
): CsvText {
  refuseLinkedFolder(path);
  if (existing === null) Deno.mkdirSync(dirname(path), { recursive: true });
  refuseLinkedFolder(path);
  const text = existing === null
    ? formatCsv(header, rows, { eol: "\n", firstRowEol: opts.firstRowEol })
    : formatCsv(header, rows, { eol: existing.crlf ? "\r\n" : "\n", bom: existing.bom });
  const bytes = new TextEncoder().encode(text);
  atomicWriteFileSync(path, bytes, { mode: 0o644 });
  return { bytes, text };
}
