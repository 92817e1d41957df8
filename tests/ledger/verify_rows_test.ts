/**
 * The streamed per-row checker (WebAssembly batch hashing) against an independent model built on
 * node:crypto and JSON.parse, on random ledgers with random damage delivered in random read
 * sizes; and large ledgers that cross the 2048-row batch and 4 MiB chunk boundaries.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { checkLedgerBytes, checkRowsStream } from "../../lib/ledger/verify_rows.ts";
import { MAX_ROW_BYTES } from "../../lib/ledger/row.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import { canonical } from "../../lib/pycompat/canonical.ts";
import {
  buildLedger,
  headFor,
  hmacHex,
  joinLines,
  keyOf,
  pyDumps,
  removeTree,
  sha256,
  tempDir,
  utf8,
  writeState,
} from "../_helpers/mod.ts";

const KEY_TEXT = "rows-key";
const KEY = keyOf(KEY_TEXT);

/** The independent model of one complete line. */
function modelRow(line: string): { wellFormed: boolean; macOk: boolean; prev: string | null } {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return { wellFormed: false, macOk: false, prev: null };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return { wellFormed: false, macOk: false, prev: null };
  }
  const o = v as Record<string, unknown>;
  if (typeof o.mac !== "string" || typeof o.prev !== "string" || typeof o.time !== "string") {
    return { wellFormed: false, macOk: false, prev: null };
  }
  if (utf8(line).length > MAX_ROW_BYTES) return { wellFormed: false, macOk: false, prev: null };
  const { mac, ...signed } = o;
  const macOk = pyDumps(o) === line && hmacHex(KEY_TEXT, pyDumps(signed)) === mac;
  return { wellFormed: true, macOk, prev: o.prev };
}

/** A reader that hands out `bytes` in the given piece sizes (cycled). */
function chunkedReader(bytes: Uint8Array, sizes: number[]): (into: Uint8Array) => number {
  let at = 0;
  let k = 0;
  return (into) => {
    const want = Math.max(1, sizes[k++ % sizes.length]);
    const n = Math.min(want, into.length, bytes.length - at);
    into.set(bytes.subarray(at, at + n));
    at += n;
    return n;
  };
}

type Op =
  | { kind: "edit"; at: number; value: string }
  | { kind: "delete"; at: number }
  | { kind: "swap"; at: number }
  | { kind: "garbage"; at: number; text: string }
  | { kind: "dropKey"; at: number; key: "mac" | "prev" | "time" }
  | { kind: "cut"; at: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("edit" as const), at: fc.nat(), value: fc.string() }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("swap" as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant("garbage" as const),
    at: fc.nat(),
    text: fc.oneof(fc.constantFrom("", "[]", "{}", "null", '{"mac": 1}'), fc.string()),
  }),
  fc.record({
    kind: fc.constant("dropKey" as const),
    at: fc.nat(),
    key: fc.constantFrom("mac" as const, "prev" as const, "time" as const),
  }),
  fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
);

function damage(lines: string[], ops: Op[]): { text: string } {
  const ls = [...lines];
  let tail = "";
  for (const o of ops) {
    if (ls.length === 0) break;
    const i = o.at % ls.length;
    switch (o.kind) {
      case "edit": {
        try {
          const row = JSON.parse(ls[i]);
          if (typeof row === "object" && row !== null && !Array.isArray(row)) {
            row.note = o.value;
            ls[i] = canonical(row);
          }
        } catch { /* not JSON: leave it */ }
        break;
      }
      case "delete":
        ls.splice(i, 1);
        break;
      case "swap":
        if (i + 1 < ls.length) [ls[i], ls[i + 1]] = [ls[i + 1], ls[i]];
        break;
      case "garbage":
        ls.splice(i, 0, o.text.replaceAll("\n", " "));
        break;
      case "dropKey": {
        try {
          const row = JSON.parse(ls[i]);
          if (typeof row === "object" && row !== null && !Array.isArray(row)) {
            delete row[o.key];
            ls[i] = canonical(row);
          }
        } catch { /* not JSON: leave it */ }
        break;
      }
      case "cut":
        tail = ls[i].slice(0, o.at % Math.max(1, ls[i].length));
        ls.splice(i);
        break;
    }
  }
  return { text: joinLines(ls) + tail };
}

Deno.test("property: the streamed checker agrees with an independent model, whatever the read sizes", () => {
  const body = fc.record({
    action: fc.constantFrom("note", "apply-proposal", "run-request"),
    text: fc.string({ unit: "grapheme", maxLength: 40 }),
    n: fc.integer({ min: -5, max: 5 }),
  });
  fc.assert(
    fc.property(
      fc.array(body, { maxLength: 25 }),
      fc.array(op, { maxLength: 4 }),
      fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 5 }),
      (bodies, ops, sizes) => {
        const built = buildLedger(bodies, KEY.hmac);
        const { text } = damage(built.lines, ops);
        const bytes = utf8(text);
        const c = checkRowsStream(chunkedReader(bytes, sizes), KEY.bytes, { retain: true });
        const parts = text.split("\n");
        const fragment = parts.pop() as string;
        assert.equal(c.n, parts.length);
        assert.equal(c.size, bytes.length);
        assert.equal(c.completeEnd, bytes.length - utf8(fragment).length);
        const faulty: number[] = [];
        for (let i = 0; i < parts.length; i++) {
          const m = modelRow(parts[i]);
          assert.equal(c.problems.has(i), !m.wellFormed, `row ${i + 1} well-formed`);
          assert.equal(c.macOk[i], m.macOk ? 1 : 0, `row ${i + 1} mac`);
          const expectPrev = i === 0 ? "" : sha256(parts[i - 1]);
          assert.equal(
            c.chainOk[i],
            m.wellFormed && m.prev === expectPrev ? 1 : 0,
            `row ${i + 1} chain`,
          );
          assert.equal(c.hash(i), sha256(parts[i]));
          if (m.wellFormed) assert.equal(c.prev(i), m.prev);
          if (!(m.wellFormed && m.macOk && m.prev === expectPrev)) faulty.push(i);
          assert.equal(c.fault(i) === null, !faulty.includes(i), `row ${i + 1} fault`);
        }
        assert.deepEqual(c.faulty, faulty);
        // Without retain, the same flags and the last two hashes.
        const lean = checkRowsStream(chunkedReader(bytes, sizes), KEY.bytes, { retain: false });
        assert.deepEqual(lean.macOk, c.macOk);
        assert.deepEqual(lean.chainOk, c.chainOk);
        assert.deepEqual(lean.faulty, c.faulty);
        assert.deepEqual([...lean.problems], [...c.problems]);
        for (let i = Math.max(0, c.n - 2); i < c.n; i++) assert.equal(lean.hash(i), c.hash(i));
      },
    ),
    { numRuns: 120 },
  );
});

Deno.test("property: an undamaged ledger always verifies, any damage never does", () => {
  const body = fc.record({ action: fc.constant("note"), text: fc.string({ maxLength: 20 }) });
  fc.assert(
    fc.property(
      fc.array(body, { minLength: 1, maxLength: 12 }),
      fc.array(op, { minLength: 1, maxLength: 3 }),
      (bodies, ops) => {
        const built = buildLedger(bodies, KEY.hmac);
        const { text } = damage(built.lines, ops);
        const c = checkLedgerBytes(utf8(text), KEY.bytes);
        const intact = text === built.text;
        const allOk = c.n === built.lines.length && c.completeEnd === c.size &&
          Array.from(c.macOk).every((x) => x === 1) &&
          Array.from(c.chainOk).every((x) => x === 1) &&
          c.problems.size === 0 &&
          (c.n === 0 || c.hash(c.n - 1) === sha256(built.lines[built.lines.length - 1]));
        assert.equal(allOk, intact, JSON.stringify(ops));
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("large ledgers: rows across the 2048-row batch and 4 MiB chunk boundaries", async () => {
  const dir = await tempDir("rows-large");
  try {
    const pad = "p".repeat(900);
    const bodies = Array.from({ length: 5000 }, (_, i) => ({ action: "note", i, pad }));
    const built = buildLedger(bodies, KEY.hmac);
    assert.ok(built.text.length > 4 * 1024 * 1024 + 100_000, "the ledger spans two chunks");
    const project = `${dir}/p`;
    await writeState(project, { ledger: built.text, head: built.head });
    let r = verifyLedgerAt(project, KEY);
    assert.equal(r.ok, true);
    assert.equal(r.rows, 5000);

    // Which row straddles the 4 MiB chunk boundary? Damage that one, and rows at the batch edges.
    let off = 0;
    let straddle = -1;
    for (let i = 0; i < built.lines.length; i++) {
      const end = off + built.lines[i].length + 1;
      if (off < 4 << 20 && end > 4 << 20) straddle = i;
      off = end;
    }
    assert.ok(straddle > 0);
    for (const i of [2047, 2048, 4095, 4096, straddle, 4999]) {
      const ls = [...built.lines];
      ls[i] = ls[i].replace('"i": ', '"i": 1');
      await writeState(project, { ledger: joinLines(ls), head: built.head });
      r = verifyLedgerAt(project, KEY);
      const expect: [string, number | null][] = [["ROW_MAC_INVALID", i + 1]];
      if (i === 4999) expect.push(["HEAD_MISMATCH", null]);
      assert.deepEqual(r.problems.map((p) => [p.code, p.row]), expect, `edited row ${i + 1}`);
    }
    // Odd lines in several batches, unretained: only they and the rows after them are faulty. A
    // loose row (re-spaced) at a batch's first position chains onto the batch before but fails its
    // MAC; the row after it, as the row after a malformed one, no longer chains.
    {
      const ls = [...built.lines];
      ls[2047] = "{not json";
      ls[4096] = JSON.stringify(JSON.parse(ls[4096]));
      ls[straddle] = ls[straddle].replace('"i": ', '"i": 1');
      const c = checkRowsStream(chunkedReader(utf8(joinLines(ls)), [1 << 20]), KEY.bytes, {
        retain: false,
      });
      const expect = new Set([2047, 2048, 4096, 4097, straddle, straddle + 1]);
      assert.deepEqual(c.faulty, [...expect].sort((a, b) => a - b));
      assert.deepEqual([...c.problems.keys()], [2047]);
      assert.deepEqual([c.fault(4096), c.chainOk[4096], c.fault(4097)], ["mac", 1, "chain"]);
      assert.deepEqual([c.fault(0), c.fault(2048), c.fault(4999)], [null, "chain", null]);
    }
    // Acts' dispatch tags counted in the same pass, across batches and chunks.
    {
      const tag = (i: number) => `${i % 7}`.repeat(12);
      const acts = buildLedger(
        bodies.map((b, i) => ({ action: "apply-proposal", dispatch: tag(i), pad: b.pad })),
        KEY.hmac,
      );
      const c = checkRowsStream(chunkedReader(utf8(acts.text), [1 << 20]), KEY.bytes, {
        retain: false,
        countActs: true,
      });
      const want = new Map<string, number>();
      for (let i = 0; i < 5000; i++) want.set(tag(i), (want.get(tag(i)) ?? 0) + 1);
      assert.deepEqual(c.acts, want);
      assert.equal(c.faulty.length, 0);
    }
    for (const i of [2048, straddle]) {
      const ls = [...built.lines.slice(0, i), ...built.lines.slice(i + 1)];
      await writeState(project, { ledger: joinLines(ls), head: built.head });
      r = verifyLedgerAt(project, KEY);
      assert.deepEqual(
        r.problems.map((p) => [p.code, p.row]),
        [["ROWS_REMOVED", i + 1], ["HEAD_MISMATCH", null]],
        `removed row ${i + 1}`,
      );
    }
    // A 5 MiB line (longer than a read chunk) at row 3000: reported there, later rows unaffected.
    const ls = [...built.lines];
    ls[2999] = "x".repeat(5 * 1024 * 1024);
    await writeState(project, { ledger: joinLines(ls), head: built.head });
    r = verifyLedgerAt(project, KEY);
    assert.equal(r.rows, 5000);
    assert.deepEqual(r.problems.map((p) => [p.code, p.row]), [["ROW_TOO_LARGE", 3000]]);
    // The same line as the last one, unterminated: a cut, not a torn tail of a valid ledger.
    await writeState(project, {
      ledger: joinLines(built.lines.slice(0, 4999)) + "x".repeat(5 * 1024 * 1024),
      head: built.head,
    });
    r = verifyLedgerAt(project, KEY);
    assert.deepEqual(r.problems.map((p) => [p.code, p.row]), [["TRUNCATED", 5000]]);
    // A torn tail after all 5000 rows.
    await writeState(project, { ledger: built.text + '{"action": "no', head: built.head });
    r = verifyLedgerAt(project, KEY);
    assert.deepEqual(r.problems.map((p) => [p.code, p.row]), [["TORN_TAIL", 5001]]);
    assert.deepEqual(r.tail, { offset: utf8(built.text).length, length: 14, complete: false });
    // The head for fewer rows, re-signed: the head check catches it.
    await writeState(project, {
      ledger: built.text,
      head: headFor(built.lines.slice(0, 2500), KEY.hmac),
    });
    assert.equal(verifyLedgerAt(project, KEY).ok, false);
  } finally {
    await removeTree(dir);
  }
});
