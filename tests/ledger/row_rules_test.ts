/**
 * One decision about a row (lib/ledger/row.ts: `lineForm`, `rowFault`, `judgeRow`), used by
 * every place that judges one: the batch verifier (`verify_rows.ts`, hashing in WebAssembly),
 * verify's unterminated last line, the append's tail check, the run guard's appended rows. And
 * one decision about a dispatch-store row (`judgeStoreLine`), used by lookups, issues, the guard
 * and verify.
 *
 * - the single-line judgement and the batch verifier agree on every kind of line;
 * - the places that used to decide by themselves now agree with verify: a signed row without a
 *   `time` is not a row for the guard, nor a torn row for verify (so repair removes it instead of
 *   completing it into a row verify then refuses); a signed store row of no known kind is
 *   `DISPATCH_ROW_INVALID` for verify as it is `LEDGER_TAMPERED` for a lookup;
 * - a line that scans but is not JSON no longer crashes verify.
 */
import assert from "node:assert/strict";
import { canonical } from "../../lib/pycompat/canonical.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { LedgerError } from "../../lib/errors.ts";
import { appendedRowsProblem } from "../../lib/ledger/guard.ts";
import { dispatchId, judgeStoreLine, resolveDispatch } from "../../lib/ledger/dispatch.ts";
import { repairTornTail } from "../../lib/ledger/repair.ts";
import { judgeRow, lineForm, MAX_ROW_BYTES, signRow } from "../../lib/ledger/row.ts";
import { SCAN_SLOTS } from "../../lib/ledger/scan.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import { checkLedgerBytes } from "../../lib/ledger/verify_rows.ts";
import { headText } from "../../lib/ledger/head.ts";
import { keyOf, snapshotTree, stateFiles, utf8 } from "../_helpers/mod.ts";
import { copyFixture, FIXTURE_KEY, withSandbox } from "./_fixture.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";

const KEY = keyOf("row-rules");
const OTHER = keyOf("another key");
const TIME = "2026-11-29T18:02:10+00:00";

/** Signs `o` (which may lack `time` or `prev`) the way rows are signed: mac over the rest. */
function signed(o: Record<string, string | number>, k = KEY): string {
  return canonical({ ...o, mac: k.hmac.hex(canonical(o)) });
}

const first = signRow({ action: "a", n: 1 }, KEY.hmac, { time: TIME, prev: "" });
const firstHash = sha256Hex(first);

/** Lines to judge as row 2, after `first`. */
const LINES: [string, string][] = [
  ["a valid row", signRow({ action: "b" }, KEY.hmac, { time: TIME, prev: firstHash })],
  ["a valid row chaining elsewhere", signRow({ action: "b" }, KEY.hmac, { time: TIME, prev: "" })],
  ["a valid row with a prev that is not a hash", signed({ action: "b", prev: "p0", time: TIME })],
  [
    "signed with another key",
    signRow({ action: "b" }, OTHER.hmac, { time: TIME, prev: firstHash }),
  ],
  [
    "a value edited",
    signRow({ action: "b" }, KEY.hmac, { time: TIME, prev: firstHash }).replace('"b"', '"c"'),
  ],
  [
    "its layout edited",
    signRow({ action: "b" }, KEY.hmac, { time: TIME, prev: firstHash }).replace(": ", ":"),
  ],
  ["signed, without time", signed({ action: "b", prev: firstHash })],
  ["signed, without prev", signed({ action: "b", time: TIME })],
  ["a mac that is not 64 characters", `{"action": "b", "mac": "ab", "prev": "", "time": "t"}`],
  ["scans but is not JSON", `{"mac": "${"0".repeat(64)}", "prev": "abc", "time": "t", "x": 1x}`],
  ["not JSON", "{nope"],
  ["an array", "[1, 2]"],
  ["an empty line", ""],
  ["over 1 MiB", `{"action": "${"x".repeat(MAX_ROW_BYTES)}", "mac": "", "prev": "", "time": ""}`],
];

Deno.test("judgeRow and the batch verifier decide every kind of line alike", () => {
  for (const [name, line] of LINES) {
    const batch = checkLedgerBytes(utf8(`${first}\n${line}\n`), KEY.bytes);
    const single = judgeRow(utf8(line), KEY.hmac, firstHash);
    assert.equal(single.fault, batch.fault(1), name);
    // As a first row (expected prev ""), too.
    const alone = checkLedgerBytes(utf8(`${line}\n`), KEY.bytes);
    assert.equal(judgeRow(utf8(line), KEY.hmac, "").fault, alone.fault(0), `${name}, first`);
  }
  const faults = Object.fromEntries(
    LINES.map(([name, line]) => [name, judgeRow(utf8(line), KEY.hmac, firstHash).fault]),
  );
  assert.deepEqual(faults, {
    "a valid row": null,
    "a valid row chaining elsewhere": "chain",
    "a valid row with a prev that is not a hash": "chain",
    "signed with another key": "mac",
    "a value edited": "mac",
    "its layout edited": "mac",
    "signed, without time": "malformed",
    "signed, without prev": "malformed",
    "a mac that is not 64 characters": "mac",
    "scans but is not JSON": "mac",
    "not JSON": "malformed",
    "an array": "malformed",
    "an empty line": "malformed",
    "over 1 MiB": "too-large",
  });
  // A prev that is not a hash chains where it says: the guard's rows onto "p0".
  const p0 = signed({ action: "b", prev: "p0", time: TIME });
  assert.equal(judgeRow(utf8(p0), KEY.hmac, "p0").fault, null);
  // lineForm names what is wrong with a malformed line, as verify reports it.
  const scan = new Int32Array(SCAN_SLOTS);
  const noTime = utf8(signed({ action: "b", prev: "" }));
  assert.deepEqual(lineForm(noTime, 0, noTime.length, scan), {
    kind: "malformed",
    message: "the row has no 'time' string",
  });
});

Deno.test("the run guard takes a signed, chained row without `time` for what verify takes it: not a row", () => {
  const row = signed({ action: "b", prev: "p0" });
  const r = appendedRowsProblem(utf8(row + "\n"), "p0", KEY.hmac);
  assert.match(r.problem ?? "", /added row 1 does not verify \(the row has no 'time' string\)/);
  assert.equal(r.rows, 0);
  // And verify: the same row in a ledger is ROW_MALFORMED.
  const line = signed({ action: "b", prev: "" });
  const c = checkLedgerBytes(utf8(line + "\n"), KEY.bytes);
  assert.equal(c.fault(0), "malformed");
});

Deno.test("an unterminated signed row without `time` is a torn piece, not a row to complete: repair removes it and the ledger verifies", async () => {
  await withSandbox("rule-frag", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const stray = signed(
      { action: "note", prev: sha256Hex(f.lines[f.lines.length - 1]) },
      FIXTURE_KEY,
    );
    await Deno.writeTextFile(p.ledger, stray, { append: true });
    const v = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.deepEqual(v.problems.map((x) => [x.code, x.row]), [["TORN_TAIL", 7]]);
    assert.equal(v.tail?.complete, false);
    const r = await repairTornTail(sb.project, FIXTURE_KEY);
    assert.equal(r.restoredNewline, false);
    assert.equal(r.removedBytes, utf8(stray).length);
    const after = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.deepEqual(after.problems, []);
    assert.equal(after.rows, f.lines.length + 1);
  });
});

Deno.test("the append's tail check accepts a head one behind only for a row judgeRow accepts", async () => {
  await withSandbox("rule-tail", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const last = sha256Hex(f.lines[f.lines.length - 1]);
    // A signed row chaining onto the last one, but without `time`: the head is left as it is.
    await Deno.writeTextFile(p.ledger, signed({ action: "note", prev: last }, FIXTURE_KEY) + "\n", {
      append: true,
    });
    const before = await snapshotTree(sb.dir);
    const { appendRow } = await import("../../lib/ledger/append.ts");
    await assertRefusal(
      () => appendRow(sb.project, FIXTURE_KEY.hmac, { action: "x" }),
      "LEDGER_TAMPERED",
      LedgerError,
    );
    assertSameTree(before, await snapshotTree(sb.dir));
    assert.deepEqual(
      verifyLedgerAt(sb.project, FIXTURE_KEY).problems.map((x) => [x.code, x.row]),
      [["ROW_MALFORMED", 7], ["HEAD_MISMATCH", null]],
    );
  });
});

Deno.test("a signed dispatch-store row of no known kind: verify reports DISPATCH_ROW_INVALID, as lookups refuse it", async () => {
  await withSandbox("rule-store", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    // It names the nonce's dispatch, so a lookup of that nonce judges it (rows naming other
    // dispatches are `ledger verify`'s alone: tests/ledger/dispatch_test.ts).
    const id = dispatchId(FIXTURE_KEY.hmac, f.nonce);
    const odd = canonical({ note: id, mac: FIXTURE_KEY.hmac.hex(canonical({ note: id })) });
    assert.equal(typeof judgeStoreLine(odd, FIXTURE_KEY.hmac), "string");
    await Deno.writeTextFile(p.dispatches, odd + "\n", { append: true });
    const before = await snapshotTree(sb.dir);
    await assertRefusal(
      () => resolveDispatch(sb.project, FIXTURE_KEY.hmac, f.nonce, { count: "use" }),
      "LEDGER_TAMPERED",
      LedgerError,
    );
    assertSameTree(before, await snapshotTree(sb.dir));
    const v = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.deepEqual(v.problems.map((x) => [x.code, x.row]), [["DISPATCH_ROW_INVALID", 2]]);
    assert.match(v.problems[0].message, /neither a dispatch, a use nor an attempt/);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("a line that scans but is not JSON, after a chain break: reported, no crash", async () => {
  await withSandbox("rule-scan", async (sb) => {
    const p = stateFiles(sb.project);
    await Deno.mkdir(p.dir, { recursive: true });
    const r1 = signRow({ action: "a" }, KEY.hmac, { time: TIME, prev: "" });
    const r2 = `{"mac": "${"0".repeat(64)}", "prev": "abc", "time": "t", "x": 1x}`;
    await Deno.writeTextFile(p.ledger, `${r1}\n${r2}\n`);
    await Deno.writeTextFile(p.head, headText(2, sha256Hex(r2), KEY.hmac));
    const before = await snapshotTree(sb.dir);
    const v = verifyLedgerAt(sb.project, KEY);
    assert.deepEqual(v.problems.map((x) => [x.code, x.row]), [["ROW_MAC_INVALID", 2]]);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});
