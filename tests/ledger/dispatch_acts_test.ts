/**
 * Spent uses reconciled: each act's row names its dispatch, and verify counts a dispatch's acts
 * against the `use` rows its store holds. Deleting use rows (or putting back an older store) shows
 * as DISPATCH_USES_REMOVED, through the streaming verify and the in-memory one alike; an intact
 * state, and rows without the field (the earlier tool's), pass.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendRow } from "../../lib/ledger/append.ts";
import { countDispatchActs, dispatchTag } from "../../lib/ledger/dispatch_acts.ts";
import { checkRowsStream } from "../../lib/ledger/verify_rows.ts";
import { issueDispatch, resolveDispatch } from "../../lib/ledger/dispatch.ts";
import { assessLedger, readLedgerTexts, verifyLedgerAt } from "../../lib/ledger/verify.ts";
import { FIXTURE_KEY, withSandbox } from "./_fixture.ts";
import fc from "../_helpers/fc.ts";

const enc = new TextEncoder();

/** The batch verifier's act counts of `bytes`, its reads `chunk` bytes at most at a time. */
function streamedActs(bytes: Uint8Array, chunk: number): ReadonlyMap<string, number> | undefined {
  let at = 0;
  return checkRowsStream(
    (into) => {
      const n = Math.min(into.length, bytes.length - at, chunk);
      into.set(bytes.subarray(at, at + n));
      at += n;
      return n;
    },
    FIXTURE_KEY.bytes,
    { retain: false, countActs: true },
  ).acts;
}

Deno.test("countDispatchActs: one count per act row, across any chunking; look-alikes, other rows and an unterminated line do not count", () => {
  const row = (tag: string, action = "apply-proposal") =>
    `{"action": "${action}", "agent": "w", "dispatch": "${tag}", "mac": "m"}\n`;
  const text = row("0123456789ab") + row("0123456789ab", "run-request-start") +
    row("ffffffffffff", "delete-proposal") +
    // Not the field: escaped inside a string, a short tag, upper-case hex, no closing quote.
    '{"action": "apply-proposal", "rationale": "\\"dispatch\\": \\"0123456789ab\\""}\n' +
    '{"action": "apply-proposal", "dispatch": "0123456789a"}\n' +
    '{"action": "apply-proposal", "dispatch": "0123456789AB"}\n' +
    '{"action": "apply-proposal", "dispatch": "0123456789abc"}\n' +
    // Not an act: a row of another action naming a dispatch, even at the top level.
    '{"action": "note", "dispatch": "0123456789ab", "x": {"dispatch": "0123456789ab"}}\n' +
    // An act counts once, whatever follows its own field.
    '{"action": "apply-proposal", "dispatch": "ffffffffffff", "x": {"dispatch": "ffffffffffff"}}\n' +
    // An unterminated last line never counted as a row.
    '{"action": "apply-proposal", "dispatch": "0123456789ab"}';
  const bytes = enc.encode(text);
  const want = new Map([["0123456789ab", 2], ["ffffffffffff", 2]]);
  assert.deepEqual(countDispatchActs(bytes), want);
  // The batch verifier counts the same, however its reads come.
  for (const chunk of [1, 2, 5, 13, 25, 26, 27, 100, 4096]) {
    assert.deepEqual(streamedActs(bytes, chunk), want, `chunk ${chunk}`);
  }
});

Deno.test("countDispatchActs: a piece of nothing but the shortest tagged lines counts each", () => {
  const line = '{"action": "apply-proposal", "dispatch": "0123456789ab"\n';
  assert.equal(line.length, 56);
  const bytes = enc.encode(line.repeat(100_000));
  assert.deepEqual(countDispatchActs(bytes), new Map([["0123456789ab", 100_000]]));
});

Deno.test("countDispatchActs: runs of one dispatch and lines that alternate (a run a line, the most the module writes) count each line once", () => {
  const line = (tag: string) => `{"action": "apply-proposal", "dispatch": "${tag}"\n`;
  const [a, b] = ["aaaaaaaaaaaa", "bbbbbbbbbbbb"];
  const runs = line(a).repeat(3) + line(b) + line(a).repeat(2);
  assert.deepEqual(countDispatchActs(enc.encode(runs)), new Map([[a, 5], [b, 1]]));
  // Every line another tag than the one before it: 100,000 runs of one line, across pieces.
  const alternating = (line(a) + line(b)).repeat(50_000);
  assert.deepEqual(countDispatchActs(enc.encode(alternating)), new Map([[a, 50_000], [b, 50_000]]));
  // The batch verifier, reading a run's lines in separate calls, counts them the same.
  const bytes = enc.encode(runs + (line(a) + line(b)).repeat(1000));
  for (const chunk of [7, 56, 57, 4096]) {
    assert.deepEqual(streamedActs(bytes, chunk), new Map([[a, 1005], [b, 1001]]), `chunk ${chunk}`);
  }
});

Deno.test("verify: use rows removed from the dispatch store (or an older store put back) are DISPATCH_USES_REMOVED; intact passes", async () => {
  await withSandbox("uses-removed", async (sb) => {
    const hmac = FIXTURE_KEY.hmac;
    const { nonce } = await issueDispatch(sb.project, hmac, "worker");
    const store = join(sb.project, ".agentteams", "dispatches.jsonl");
    const older = await Deno.readTextFile(store);
    // Two acts, as apply and run record them: the use in the store, then the row naming it.
    for (let i = 0; i < 2; i++) {
      const rec = await resolveDispatch(sb.project, hmac, nonce, { count: "use" });
      await appendRow(sb.project, hmac, {
        action: "apply-proposal",
        agent: "worker",
        dispatch: dispatchTag(rec.id),
      });
    }
    // A row of the earlier tool's shape (no dispatch field) counts nothing.
    await appendRow(sb.project, hmac, { action: "apply-proposal", agent: "worker" });
    const codes = () => verifyLedgerAt(sb.project, FIXTURE_KEY).problems.map((p) => p.code);
    const inMemory = () =>
      assessLedger(readLedgerTexts(sb.project), FIXTURE_KEY).problems.map((p) => p.code);
    assert.deepEqual(codes(), []);
    assert.deepEqual(inMemory(), []);
    const spent = await Deno.readTextFile(store);
    // One use row deleted: the uses come back.
    const lines = spent.split("\n");
    const useAt = lines.findIndex((l) => l.includes('"use"'));
    await Deno.writeTextFile(store, lines.filter((_, i) => i !== useAt).join("\n"));
    assert.deepEqual(codes(), ["DISPATCH_USES_REMOVED"]);
    assert.deepEqual(inMemory(), ["DISPATCH_USES_REMOVED"]);
    assert.match(verifyLedgerAt(sb.project, FIXTURE_KEY).problems[0].message, /2 acts .* 1 use/);
    // The store as it was before the acts.
    await Deno.writeTextFile(store, older);
    assert.deepEqual(codes(), ["DISPATCH_USES_REMOVED"]);
    // Put right again.
    await Deno.writeTextFile(store, spent);
    assert.deepEqual(codes(), []);
  });
});

/** The rule as the TypeScript reader stated it before it moved into the module: the model. */
function modelTag(line: Uint8Array): string | null {
  const starts = ["apply-proposal", "delete-proposal", "run-request-start"].map((a) =>
    enc.encode(`{"action": "${a}", `)
  );
  const has = (at: number, p: Uint8Array) =>
    line.length - at >= p.length && p.every((x, k) => line[at + k] === x);
  if (!starts.some((p) => has(0, p))) return null;
  const prefix = enc.encode('"dispatch": "');
  for (let at = 0;;) {
    const i = line.indexOf(0x22, at);
    if (i < 0 || i + prefix.length + 13 > line.length) return null;
    at = i + 1;
    if (!has(i, prefix)) continue;
    const t = i + prefix.length;
    const tag = new TextDecoder().decode(line.subarray(t, t + 12));
    return /^[0-9a-f]{12}$/.test(tag) && line[t + 12] === 0x22 ? tag : null;
  }
}

Deno.test("property: the module's tag counts equal the model's, on lines of look-alikes at every offset", () => {
  const piece = fc.constantFrom(
    '{"action": "apply-proposal", ',
    '{"action": "run-request-start", ',
    '{"action": "delete-proposal", ',
    '{"action": "note", ',
    '"dispatch": "',
    '"dispatch": ',
    '"dispatc',
    '"d',
    "0123456789ab",
    "abcdef01234",
    "ABCDEF012345",
    '"',
    '\\"',
    "x",
    "  ",
    "0",
    '"dispatch": "0123456789ab"',
    '"dispatch": "ffffffffffff"',
  );
  const act = fc.constantFrom('{"action": "apply-proposal", ', '{"action": "run-request-start", ');
  const line = fc.tuple(fc.option(act, { freq: 3 }), fc.array(piece, { maxLength: 14 })).map((
    [a, ps],
  ) => (a ?? "") + ps.join(""));
  let tagged = 0;
  fc.assert(
    fc.property(fc.array(line, { maxLength: 30 }), fc.boolean(), (lines, open) => {
      const text = lines.map((l) => l + "\n").join("") + (open ? lines[0] ?? "" : "");
      const want = new Map<string, number>();
      for (const l of lines) {
        const tag = modelTag(enc.encode(l));
        if (tag !== null) want.set(tag, (want.get(tag) ?? 0) + 1);
      }
      const bytes = enc.encode(text);
      assert.deepEqual(countDispatchActs(bytes), want);
      assert.deepEqual(streamedActs(bytes, 7), want);
      tagged += want.size;
    }),
    { numRuns: 400 },
  );
  assert.ok(tagged > 100, `the runs named ${tagged} tags: too few to compare`);
});
