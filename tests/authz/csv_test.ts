/**
 * The CSV ledgers' reader and writer (lib/authz/csv.ts): RFC 4180 quoting, header rules with line
 * numbers, BOM and CRLF, the earlier tool's line-end rules on rewrite, atomic mode-keeping
 * rewrites, and 10,000 rows; Python's csv module is the oracle for what reads back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "../_helpers/fc.ts";
import { assertRefusal } from "../_helpers/assert.ts";
import { removeTree, tempDir } from "../_helpers/mod.ts";
import { AuthzError } from "../../lib/errors.ts";
import {
  formatCsv,
  parseCsv,
  readCsvFile,
  rewriteCsvFile,
  splitRecords,
} from "../../lib/authz/csv.ts";

const S = { required: ["a", "b"], what: "t.csv" };

Deno.test("csv: quoted fields with commas, quotes and newlines round-trip", () => {
  const text = 'a,b\n"x,1","say ""hi"""\n"multi\nline",plain\n';
  const t = parseCsv(text, S);
  assert.deepEqual(t.rows.map((r) => r.cells), [["x,1", 'say "hi"'], ["multi\nline", "plain"]]);
  assert.deepEqual(t.rows.map((r) => r.line), [2, 3]);
  assert.equal(formatCsv(t.header, t.rows.map((r) => r.cells), { eol: "\n" }), text);
});

Deno.test("csv: a record of one empty cell is written quoted, and blank lines are skipped", () => {
  assert.equal(formatCsv(["a"], [[""]], { eol: "\n" }), 'a\n""\n');
  const t = parseCsv('a\n""\n\n', { required: ["a"] });
  assert.deepEqual(t.rows.map((r) => r.cells), [[""]]);
  assert.deepEqual(splitRecords("a,b\n\n\n1,2\n", "x").map((r) => r.line), [1, 4]);
});

Deno.test("csv: BOM and CRLF are read and kept; a rewrite of an LF file stays LF", async () => {
  const dir = await tempDir("csv-eol");
  try {
    const p = join(dir, "x.csv");
    await Deno.writeTextFile(p, "\ufeffa,b\r\n1,2\r\n");
    const t = readCsvFile(p, S)!;
    assert.equal(t.bom, true);
    assert.equal(t.crlf, true);
    assert.deepEqual(t.header, ["a", "b"]);
    rewriteCsvFile(p, t.header, [...t.rows.map((r) => r.cells), ["3", "4"]], t);
    assert.equal(await Deno.readTextFile(p), "\ufeffa,b\r\n1,2\r\n3,4\r\n");
    const q = join(dir, "y.csv");
    await Deno.writeTextFile(q, "a,b\n1,2\n");
    const u = readCsvFile(q, S)!;
    rewriteCsvFile(q, u.header, [["5", "6"]], u);
    assert.equal(await Deno.readTextFile(q), "a,b\n5,6\n");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv: a new file is LF, its directory created; the first-row exception; mode kept", async () => {
  const dir = await tempDir("csv-new");
  try {
    const p = join(dir, "references", "n.csv");
    rewriteCsvFile(p, ["a"], [["1"], ["2"]], null, { firstRowEol: "\r\n" });
    assert.equal(await Deno.readTextFile(p), "a\n1\r\n2\n");
    assert.equal((await Deno.stat(p)).mode! & 0o777, 0o644);
    await Deno.chmod(p, 0o600);
    const t = readCsvFile(p, { required: ["a"] })!;
    assert.equal(t.crlf, true);
    rewriteCsvFile(p, t.header, [["9"]], t);
    assert.equal((await Deno.stat(p)).mode! & 0o777, 0o600);
    assert.equal(await Deno.readTextFile(p), "a\r\n9\r\n");
    // No temp file is left behind.
    assert.deepEqual([...Deno.readDirSync(join(dir, "references"))].map((e) => e.name), ["n.csv"]);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv: malformed input is refused with its line number", () => {
  const cases: [string, string, RegExp][] = [
    ['a,b\n1,2\n"open,3\n4,5\n', "CSV_MALFORMED", /line 3: a quoted field is never closed/],
    ['a,b\n1,x"y\n', "CSV_MALFORMED", /line 2: a quote inside an unquoted field/],
    ['a,b\n"1"x,2\n', "CSV_MALFORMED", /line 2: text after a closing quote/],
    ["a,b\n1,2\r3,4\n", "CSV_MALFORMED", /line 2: a carriage return without LF/],
    ["a,b\n1,2\n3\n", "CSV_MALFORMED", /line 3: 1 cell\(s\) where the header has 2 columns/],
    ["a,b\n1,2,3\n", "CSV_MALFORMED", /line 2: 3 cell\(s\)/],
    ["", "CSV_COLUMNS", /line 1: no header row/],
    ["a\n1\n", "CSV_COLUMNS", /line 1: missing column\(s\) b/],
    ["a,b,a\n", "CSV_COLUMNS", /line 1: column "a" twice/],
  ];
  for (const [text, code, re] of cases) {
    const e = assertRefusal(() => parseCsv(text, S), code, AuthzError, JSON.stringify(text));
    assert.match(e.message, re);
  }
  const e = assertRefusal(
    () => parseCsv("a,b,zz\n", { ...S, known: ["a", "b"] }),
    "CSV_COLUMNS",
    AuthzError,
  );
  assert.match(e.message, /line 1: unknown column\(s\) zz/);
  // The line of an unterminated quote that spans lines is the line it opened on.
  const m = assertRefusal(() => parseCsv('a,b\n1,"x\ny\nz\n', S), "CSV_MALFORMED", AuthzError);
  assert.match(m.message, /line 2:/);
});

Deno.test("csv: a file that is not UTF-8, or a symlink, is refused", async () => {
  const dir = await tempDir("csv-bad");
  try {
    const p = join(dir, "x.csv");
    await Deno.writeFile(p, new Uint8Array([0x61, 0x2c, 0x62, 0x0a, 0xff, 0x2c, 0x31, 0x0a]));
    assertRefusal(() => readCsvFile(p, S), "CSV_MALFORMED", AuthzError);
    await Deno.writeTextFile(join(dir, "real.csv"), "a,b\n");
    await Deno.symlink(join(dir, "real.csv"), join(dir, "link.csv"));
    assertRefusal(() => readCsvFile(join(dir, "link.csv"), S), "SYMLINK");
    assert.equal(readCsvFile(join(dir, "absent.csv"), S), null);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv: 10,000 rows round-trip, and Python's csv module reads what we write", async () => {
  const dir = await tempDir("csv-big");
  try {
    const rows: string[][] = [];
    for (let i = 0; i < 10_000; i++) rows.push([`id-${i}`, i % 7 === 0 ? `x,"${i}"\n` : `${i}`]);
    const p = join(dir, "big.csv");
    rewriteCsvFile(p, ["a", "b"], rows, null);
    const t = readCsvFile(p, S)!;
    assert.equal(t.rows.length, 10_000);
    assert.deepEqual(t.rows.map((r) => r.cells), rows);
    const py = new Deno.Command("python3", {
      args: [
        "-c",
        "import csv,json,sys\nr=list(csv.reader(open(sys.argv[1],newline='')))\n" +
        "print(json.dumps(r[1:]))",
        p,
      ],
      stdout: "piped",
    }).outputSync();
    assert.equal(py.code, 0);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(py.stdout)), rows);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv: any cells round-trip through format and parse (property)", () => {
  const cell = fc.string({ unit: fc.constantFrom("a", ",", '"', "\n", "\r\n", " ", "é", "") });
  fc.assert(fc.property(fc.array(fc.tuple(cell, cell), { maxLength: 20 }), (rows) => {
    const text = formatCsv(["a", "b"], rows, { eol: "\r\n" });
    const back = parseCsv(text, S).rows.map((r) => r.cells);
    // A wholly blank record cannot exist here: two cells always write a comma.
    assert.deepEqual(back, rows);
  }));
});
