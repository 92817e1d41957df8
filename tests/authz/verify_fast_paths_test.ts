/**
 * The shortcuts a verify of many rows takes (lib/pycompat/str.ts `pyStrip`, lib/authz/table.ts
 * `counter` and `recordOf`, lib/authz/waivers.ts `waiverPayload`, lib/authz/csv.ts `splitRecords`
 * and `readCsvFile`) against independent oracles: Python's own `str.strip()` and
 * `str.split(",")`, the counter's written rule, and the record's plain definition. Each shortcut
 * must give exactly what its slow path gives, on random text rich in the characters where they
 * differ.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "../_helpers/fc.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { removeTree, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { AuthzError } from "../../lib/errors.ts";
import { pyStrip } from "../../lib/pycompat/str.ts";
import { counter, recordOf, recordsOf } from "../../lib/authz/table.ts";
import { verifyWaivers, WAIVER_COLUMNS, waiverPayload } from "../../lib/authz/waivers.ts";
import { formatCsv, readCsvFile, splitRecords } from "../../lib/authz/csv.ts";
import { mac, project } from "./_fixtures.ts";

/** Characters where a shortcut could go wrong: Python's whitespace, JavaScript's, the edges. */
const TRICKY = [
  " ",
  "\t",
  "\n",
  "\r",
  "\x0b",
  "\x0c",
  "\x1c",
  "\x1f",
  "\x20",
  "\x21",
  "\x7e",
  "\x7f",
  "\x85",
  "\xa0",
  "\u1680",
  "\u2000",
  "\u200a",
  "\u200b",
  "\u2028",
  "\u2029",
  "\u202f",
  "\u205f",
  "\u3000",
  "\ufeff",
  "a",
  "Z",
  "0",
  "9",
  "+",
  "-",
  "|",
  "é",
];

const trickyText = fc.array(fc.constantFrom(...TRICKY), { maxLength: 8 }).map((a) => a.join(""));
const anyText = fc.oneof(trickyText, fc.string({ maxLength: 8 }), fc.string({ unit: "binary" }));

/** Runs Python on JSON in, JSON out. */
async function python(script: string, input: unknown): Promise<unknown> {
  const child = new Deno.Command("python3", {
    args: ["-c", `import json, sys\ndata = json.load(sys.stdin)\n${script}`],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(JSON.stringify(input)));
  await w.close();
  const out = await child.output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test("fast paths: pyStrip is Python's str.strip() on 2,000 random texts", async () => {
  const texts = fc.sample(anyText, { numRuns: 2_000, seed: 17 });
  // Lone surrogates do not survive JSON to Python: strip them from the sample (the shortcut only
  // looks at the two ends, and a surrogate is never printable ASCII, so the slow path takes it).
  const clean = texts.map((t) => t.replace(/[\ud800-\udfff]/g, "s"));
  const expected = await python("json.dump([t.strip() for t in data], sys.stdout)", clean);
  assert.deepEqual(clean.map(pyStrip), expected);
  // And the surrogate ends themselves, through the slow path, unchanged.
  assert.equal(pyStrip("\ud800x\udfff"), "\ud800x\udfff");
  assert.equal(pyStrip(" \ud800 "), "\ud800");
});

Deno.test("fast paths: counter is int(v or 0) on digits as the rule says, one digit or many", () => {
  const reference = (v: string): number | null => {
    const s = v.trim();
    if (s === "") return 0;
    return /^[+-]?\d{1,15}$/.test(s) ? Number(s) : null;
  };
  const digits = fc.array(fc.constantFrom("0", "1", "5", "9", " ", "+", "-", "x", "\u0660"), {
    maxLength: 4,
  }).map((a) => a.join(""));
  fc.assert(
    fc.property(fc.oneof(digits, anyText), (v) => {
      assert.equal(counter(v), reference(v), JSON.stringify(v));
    }),
    { numRuns: 3_000, seed: 17 },
  );
  for (const d of ["0", "7", "9"]) assert.equal(counter(d), Number(d));
  for (const d of ["/", ":", "\u0660", " "]) assert.equal(counter(d), reference(d));
});

Deno.test("fast paths: recordOf is the plain record, __proto__ and constructor columns included", () => {
  const header = ["a", "constructor", "__proto__", "toString", "b"];
  const cells = ["1", "2", "3", "4", "5"];
  const r = recordOf(header, cells);
  const plain: Record<string, string> = {};
  for (let i = 0; i < header.length; i++) plain[header[i]] = cells[i];
  assert.deepEqual(Object.entries(r), Object.entries(plain));
  assert.equal(Object.getPrototypeOf(r), Object.prototype);
  assert.deepEqual(
    recordsOf({ header, rows: [{ line: 2, cells }], crlf: false, bom: false }).map((x) =>
      Object.entries(x)
    ),
    [Object.entries(plain)],
  );
});

Deno.test("fast paths: waiverPayload is columns 2 to 10, each stripped as Python strips, joined", async () => {
  // The columns as the ledger names them (FORMATS.md §5.1), the list waiverPayload reads too; their
  // order is held by the Python-signed vectors (waivers_test.ts), the stripping and joining here.
  const signedColumns = WAIVER_COLUMNS.slice(1, 10);
  const recs = fc.sample(
    fc.dictionary(
      fc.constantFrom(...WAIVER_COLUMNS),
      anyText.map((t) => t.replace(/[\ud800-\udfff]/g, "s")),
    ),
    { numRuns: 500, seed: 17 },
  );
  const expected = await python(
    `cols = ${JSON.stringify(signedColumns)}\n` +
      `json.dump(["|".join(r.get(c, "").strip() for c in cols) for r in data], sys.stdout)`,
    recs,
  );
  assert.deepEqual(recs.map((r) => waiverPayload(r)), expected);
  // An inherited name is not a field; the scheme parts follow the nine fields.
  assert.equal(waiverPayload({}), "||||||||");
  assert.equal(
    waiverPayload({ waiver_id: " W ", sig_scheme: " ed25519 ", key_id: " k1 " }),
    "W|||||||||sig_scheme=ed25519|key_id=k1",
  );
});

Deno.test("fast paths: splitRecords on quote-free text is Python's line and comma split", async () => {
  const cell = fc.array(fc.constantFrom("a", "b", " ", "\t", "é", "\u2028", ""), { maxLength: 3 })
    .map((a) => a.join(""));
  const line = fc.array(cell, { minLength: 1, maxLength: 4 }).map((a) => a.join(","));
  const texts = fc.sample(
    fc.tuple(fc.array(line, { maxLength: 6 }), fc.constantFrom("\n", "\r\n"), fc.boolean()).map((
      [ls, eol, last],
    ) => ls.join(eol) + (last && ls.length > 0 ? eol : "")),
    { numRuns: 500, seed: 17 },
  );
  const expected = await python(
    "out = []\nfor t in data:\n" +
      "    ls = t.split('\\n')\n" +
      "    if ls and ls[-1] == '': ls.pop()\n" +
      "    out.append([[k + 1, l[:-1].split(',') if l.endswith('\\r') else l.split(',')] " +
      "for k, l in enumerate(ls) if l not in ('', '\\r')])\n" +
      "json.dump(out, sys.stdout)",
    texts,
  );
  assert.deepEqual(
    texts.map((t) => splitRecords(t, "x.csv").map((r) => [r.line, r.cells])),
    expected,
  );
  // What the fast path leaves to the slow one is still refused there, naming the line.
  for (const bad of ["a,b\r", "a,b\nc\rd\n", "a\r\r\n"]) {
    assertRefusal(() => splitRecords(bad, "x.csv"), "CSV_MALFORMED", AuthzError);
  }
});

Deno.test("fast paths: a ledger holding U+FFFD reads; one invalid byte beside it is refused, read-only", async () => {
  const dir = await tempDir("fp-fffd");
  try {
    const p = await project(dir, "security\n");
    const file = join(p, "references", "security-waivers.log.csv");
    const r: Record<string, string> = {
      timestamp: "2026-11-29T10:00:00Z",
      waiver_id: "W-\ufffd",
      action_reviewed: "delete:a\ufffd.txt",
      expires_at: "2099-01-01T00:00:00Z",
      max_uses: "3",
      uses: "0",
      approver: "security",
      ticket_id: "OPS-1",
      reason_code: "r",
      conditions_verified: "verified",
    };
    r.signature = mac("k", WAIVER_COLUMNS.slice(1, 10).map((c) => r[c]).join("|"));
    const text = formatCsv(WAIVER_COLUMNS, [WAIVER_COLUMNS.map((c) => r[c])], { eol: "\n" });
    await Deno.writeTextFile(file, text);
    const env = { AGENTTEAMS_WAIVER_SIGNING_KEY: "k" };
    const now = new Date("2026-11-30T12:00:00Z");
    const before = await snapshotTree(dir);
    const rows = await verifyWaivers(p, { env, now });
    assert.deepEqual(rows.map((x) => [x.id, x.valid, x.code]), [["W-\ufffd", true, null]]);
    assert.equal(readCsvFile(file, { required: ["waiver_id"] })!.rows[0].cells[1], "W-\ufffd");
    assertSameTree(before, await snapshotTree(dir), "after a verify");
    // The same file with one byte that is not UTF-8 (0xff) in the last cell: refused.
    const bytes = new TextEncoder().encode(text);
    const bad = new Uint8Array([...bytes.subarray(0, bytes.length - 2), 0xff, 0x0a]);
    await Deno.writeFile(file, bad);
    const before2 = await snapshotTree(dir);
    const m = assertRefusal(
      () => readCsvFile(file, { required: ["waiver_id"] }),
      "CSV_MALFORMED",
      AuthzError,
    );
    assert.match(m.message, /not UTF-8 text/);
    await assert.rejects(() => verifyWaivers(p, { env, now }), AuthzError);
    assertSameTree(before2, await snapshotTree(dir), "after a refused verify");
  } finally {
    await removeTree(dir);
  }
});
