/**
 * The ledger guard's pure rules: which appended ledger bytes and which dispatch-store changes are
 * a key holder's, and which are not. (End to end, with real commands and concurrent CLI calls:
 * tests/e2e/run_shared_stores_test.ts.)
 */
import assert from "node:assert/strict";
import { HmacKey, sha256Hex } from "../../lib/crypto/hash.ts";
import { canonical } from "../../lib/pycompat/canonical.ts";
import { signRow } from "../../lib/ledger/row.ts";
import {
  appendedRowsProblem,
  captureStores,
  dispatchChangeProblem,
  storesProblem,
  type StoresSnapshot,
} from "../../lib/ledger/guard.ts";
import { headText } from "../../lib/ledger/head.ts";
import { appendRow } from "../../lib/ledger/append.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import { snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";

const keyBytes = new TextEncoder().encode("guard-test-key");
const key = new HmacKey(keyBytes);
const other = new HmacKey(new TextEncoder().encode("not-the-key"));
const enc = new TextEncoder();

function rows(n: number, prev: string, k = key): { text: string; last: string } {
  let text = "";
  let last = prev;
  for (let i = 0; i < n; i++) {
    const line = signRow({ action: "a", n: i }, k, {
      time: "2026-11-29T00:00:00+00:00",
      prev: last,
    });
    text += line + "\n";
    last = sha256Hex(line);
  }
  return { text, last };
}

function storeRow(o: Record<string, string | number>, k = key): string {
  return canonical({ ...o, mac: k.hex(canonical(o)) });
}

/** Writes a signed ledger of at least `minBytes` and its head into `root`; returns its path and text. */
function writeLedgerOf(root: string, minBytes: number): { ledger: string; text: string } {
  Deno.mkdirSync(`${root}/.agentteams`);
  const ledger = `${root}/.agentteams/proposal-ledger.jsonl`;
  let { text, last } = rows(1, "");
  let count = 1;
  while (text.length < minBytes) {
    const more = rows(2000, last);
    text += more.text;
    last = more.last;
    count += 2000;
  }
  Deno.writeTextFileSync(ledger, text);
  Deno.writeTextFileSync(`${root}/.agentteams/proposal-ledger.head`, headText(count, last, key));
  return { ledger, text };
}

/** The problem `storesProblem` names in `root`, asserting that it changed no file while finding it. */
async function problemIn(root: string, before: StoresSnapshot): Promise<string | null> {
  const files = await snapshotTree(root);
  const problem = await storesProblem(root, key, before, new Date());
  assertSameTree(files, await snapshotTree(root), `checking (${problem})`);
  return problem;
}

Deno.test("appended rows: whole, signed and chained are accepted; anything else is named", () => {
  const a = rows(3, "p0");
  const ok = appendedRowsProblem(enc.encode(a.text), "p0", key);
  assert.deepEqual(ok, { problem: null, rows: 3, last: a.last });
  assert.deepEqual(appendedRowsProblem(new Uint8Array(0), "p0", key), {
    problem: null,
    rows: 0,
    last: "p0",
  });
  // Chained onto a different row.
  assert.match(appendedRowsProblem(enc.encode(a.text), "p1", key).problem ?? "", /chain/);
  // Signed with another key.
  assert.match(
    appendedRowsProblem(enc.encode(rows(1, "p0", other).text), "p0", key).problem ?? "",
    /added row 1 does not verify/,
  );
  // Torn: the last row has no newline.
  assert.match(
    appendedRowsProblem(enc.encode(a.text.slice(0, -1)), "p0", key).problem ?? "",
    /unterminated/,
  );
  // Two good rows then a copy of the first (a replay breaks the chain).
  const first = a.text.split("\n")[0];
  assert.match(
    appendedRowsProblem(enc.encode(a.text + first + "\n"), "p0", key).problem ?? "",
    /added row 4 does not chain/,
  );
});

Deno.test("dispatch store: appends and compaction are a key holder's; removing a live row is not", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  const live = storeRow({
    agent: "w",
    expires: "2026-11-30T00:00:00+00:00",
    id: "L",
    max_uses: 25,
  });
  const dead = storeRow({
    agent: "w",
    expires: "2026-11-28T00:00:00+00:00",
    id: "D",
    max_uses: 25,
  });
  const useL = storeRow({ use: "L" });
  const useD = storeRow({ use: "D" });
  const attemptL = storeRow({ attempt: "L" });
  const before = [dead, useD, live, useL];
  // Appends (including a copy of an existing use row: it only spends budget).
  assert.equal(dispatchChangeProblem(before, [...before, attemptL, useL], key, now), null);
  // Compaction: the expired dispatch and its rows dropped, a new dispatch appended.
  const fresh = storeRow({
    agent: "w",
    expires: "2026-11-30T01:00:00+00:00",
    id: "F",
    max_uses: 25,
  });
  assert.equal(dispatchChangeProblem(before, [live, useL, fresh], key, now), null);
  // Compaction also drops rows naming no dispatch.
  const forged = storeRow({ use: "L" }, other);
  const orphan = storeRow({ use: "gone" });
  assert.equal(dispatchChangeProblem([...before, orphan], before, key, now), null);
  // It never drops a row that does not verify (key holders refuse such a store): its removal
  // is not theirs, even when other rows change alongside.
  assert.match(
    dispatchChangeProblem([...before, forged, orphan], before, key, now) ?? "",
    /does not verify was removed/,
  );
  assert.match(
    dispatchChangeProblem([forged, ...before], [...before, attemptL], key, now) ?? "",
    /does not verify was removed/,
  );
  // Left in place, it is no change of the command's (it was there before).
  assert.equal(dispatchChangeProblem([...before, forged], [...before, forged], key, now), null);
  // A live dispatch's use removed: a use given back.
  assert.match(
    dispatchChangeProblem(before, [dead, useD, live], key, now) ?? "",
    /live dispatch was removed/,
  );
  // The live dispatch row itself removed.
  assert.match(
    dispatchChangeProblem(before, [dead, useD, useL], key, now) ?? "",
    /live dispatch was removed/,
  );
  // A row the command cannot sign.
  assert.match(
    dispatchChangeProblem(before, [...before, forged], key, now) ?? "",
    /does not verify was added/,
  );
  // A line signed with the key that is not a store row (a ledger row copied in) is no append a
  // key holder makes.
  const ledgerRow = rows(1, "p0").text.trimEnd();
  assert.match(
    dispatchChangeProblem(before, [...before, ledgerRow], key, now) ?? "",
    /does not verify was added/,
  );
  // An expiry moved later by a forged dispatch row does not make its old rows removable.
  const extended = storeRow({
    agent: "w",
    expires: "2027-01-01T00:00:00+00:00",
    id: "D",
    max_uses: 99,
  }, other);
  assert.match(
    dispatchChangeProblem(before, [...before, extended], key, now) ?? "",
    /does not verify was added/,
  );
});

Deno.test("captureStores / storesProblem: appends by a key holder pass; a rewrite does not; nothing is created", async () => {
  const root = Deno.makeTempDirSync({ prefix: "at-guard-" });
  try {
    await appendRow(root, key, { action: "first" });
    const before = await captureStores(root, key);
    assert.equal(before.ledgerCount, 1);
    await appendRow(root, key, { action: "second" });
    await appendRow(root, key, { action: "third" });
    assert.equal(await storesProblem(root, key, before, new Date()), null);
    const ledger = `${root}/.agentteams/proposal-ledger.jsonl`;
    const text = Deno.readTextFileSync(ledger);
    Deno.writeTextFileSync(ledger, text.replace('"first"', '"FIRST"'));
    assert.match(await storesProblem(root, key, before, new Date()) ?? "", /changed|head/);
    Deno.writeTextFileSync(ledger, text);
    assert.equal(await storesProblem(root, key, before, new Date()), null);
    // The dispatch lock file is never written or replaced by a key holder; its removal is named
    // too, and checking does not recreate it.
    const lock = `${root}/.agentteams/dispatches.lock`;
    // Replaced by a copy of the same bytes (another file): named, and left as it is.
    Deno.writeFileSync(`${lock}.copy`, Deno.readFileSync(lock));
    Deno.renameSync(`${lock}.copy`, lock);
    assert.match(await problemIn(root, before) ?? "", /lock file was replaced/);
    Deno.writeTextFileSync(lock, "x");
    assert.match(await problemIn(root, before) ?? "", /lock file/);
    Deno.removeSync(lock);
    assert.match(await problemIn(root, before) ?? "", /lock file/);
    assert.throws(() => Deno.lstatSync(lock), Deno.errors.NotFound);
    // A removed ledger is named, and the check creates nothing in its place.
    Deno.removeSync(ledger);
    assert.equal(await storesProblem(root, key, before, new Date()), "the ledger was removed");
    assert.throws(() => Deno.lstatSync(ledger), Deno.errors.NotFound);
    Deno.removeSync(`${root}/.agentteams`, { recursive: true });
    assert.equal(await storesProblem(root, key, before, new Date()), "the ledger was removed");
    assert.throws(() => Deno.lstatSync(`${root}/.agentteams`), Deno.errors.NotFound);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("storesProblem: a replayed shorter ledger, a miscounted head, an unterminated or unreadable dispatch store are named; checking writes nothing", async () => {
  const root = Deno.makeTempDirSync({ prefix: "at-guard-rules-" });
  const state = `${root}/.agentteams`;
  const ledger = `${state}/proposal-ledger.jsonl`;
  const head = `${state}/proposal-ledger.head`;
  const store = `${state}/dispatches.jsonl`;
  const problemOf = (before: StoresSnapshot) => problemIn(root, before);
  try {
    await issueDispatch(root, key, "worker");
    // A signed ledger and head a command could save now and copy back later.
    const oldLedger = Deno.readFileSync(ledger);
    const oldHead = Deno.readFileSync(head);
    await appendRow(root, key, { action: "second" });
    const before = await captureStores(root, key);
    assert.equal(before.ledgerCount, 2);
    assert.equal(await problemOf(before), null);

    // The older pair, each half valid and matching the other: rows were taken back.
    const ledgerNow = Deno.readFileSync(ledger);
    const headNow = Deno.readFileSync(head);
    Deno.writeFileSync(ledger, oldLedger);
    Deno.writeFileSync(head, oldHead);
    assert.equal(await problemOf(before), "the ledger is shorter than before");
    Deno.writeFileSync(ledger, ledgerNow);

    // A head over the same last row that counts one row more than there are.
    Deno.writeTextFileSync(head, headText(3, before.ledgerLast, key));
    assert.equal(await problemOf(before), "the head counts 3 rows, not 2");
    Deno.writeFileSync(head, headNow);
    assert.equal(await problemOf(before), null);

    // An unterminated line added to the dispatch store (the next key holder's append would cut
    // it, but it is not a key holder's doing): named, and left in place.
    const storeNow = Deno.readFileSync(store);
    Deno.writeTextFileSync(store, '{"use": "', { append: true });
    assert.equal(
      await problemOf(before),
      "the dispatch store's unterminated row was added or changed",
    );
    // One already there when the stores were captured is no change of the command's.
    const withFragment = await captureStores(root, key);
    assert.equal(withFragment.dispatchFragment, enc.encode('{"use": "').toHex());
    assert.equal(await problemOf(withFragment), null);
    Deno.writeFileSync(store, storeNow);

    // Bytes compared, not a lenient decoding of them: a fragment ending in 0xFF, rewritten to end
    // in 0xFE, reads as the same text ("\uFFFD" at the end) but is a change.
    Deno.writeFileSync(store, new Uint8Array([...storeNow, 0x7b, 0xff]));
    const withBadFragment = await captureStores(root, key);
    assert.equal(await problemOf(withBadFragment), null);
    Deno.writeFileSync(store, new Uint8Array([...storeNow, 0x7b, 0xfe]));
    assert.equal(
      await problemOf(withBadFragment),
      "the dispatch store's unterminated row was added or changed",
    );
    // A byte-order mark put in front is a change too (decoding must not drop it).
    Deno.writeFileSync(store, new Uint8Array([0xef, 0xbb, 0xbf, ...storeNow]));
    assert.equal(
      await problemOf(before),
      "a dispatch-store row that does not verify was added",
    );
    // A complete line that is not UTF-8 is never a key holder's (they write ASCII JSON).
    Deno.writeFileSync(store, new Uint8Array([...storeNow, 0xff, 0x0a]));
    assert.equal(
      await problemOf(before),
      "the dispatch store cannot be read: the dispatch store holds bytes that are not UTF-8",
    );
    Deno.writeFileSync(store, storeNow);

    // A dispatch store the guard cannot read safely (a directory in its place).
    Deno.removeSync(store);
    Deno.mkdirSync(store);
    assert.match(await problemOf(before) ?? "", /^the dispatch store cannot be read: /);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("storesProblem: the act checks the tail it appends to (last row, inode, size, head); a byte changed deeper in the history is `ledger verify`'s to find", async () => {
  const root = Deno.makeTempDirSync({ prefix: "at-guard-big-" });
  try {
    // ~2.5 MiB of history.
    const { ledger } = writeLedgerOf(root, 2.5 * 1024 * 1024);
    const before = await captureStores(root, key);
    assert.ok(before.ledgerLastStart > 2 * 1024 * 1024);
    await appendRow(root, key, { action: "alongside" });
    assert.equal(await problemIn(root, before), null);
    const grown = Deno.readFileSync(ledger);
    const flipAt = (at: number): Uint8Array => {
      const flipped = grown.slice();
      // The first "1" past `at` (in a field, a hash or a MAC): same size, different bytes.
      const digit = flipped.indexOf(0x30 + 1, at);
      flipped[digit] = flipped[digit] === 0x31 ? 0x32 : 0x31;
      return flipped;
    };
    // Deep in the history, in place (same inode, same size): not the act's to notice...
    for (const at of [1000, 1024 * 1024 + 1000]) {
      Deno.writeFileSync(ledger, flipAt(at));
      assert.equal(await problemIn(root, before), null, `a flip past byte ${at}`);
      // ... and `ledger verify` names the row.
      const report = verifyLedgerAt(root, { bytes: keyBytes, hmac: key });
      assert.ok(
        report.problems.some((p) => p.code === "ROW_MAC_INVALID"),
        JSON.stringify(report.problems),
      );
    }
    // The row the act found last, changed in place: named.
    Deno.writeFileSync(ledger, flipAt(before.ledgerLastStart));
    assert.equal(
      await problemIn(root, before),
      "rows already written were changed (the last row before the command)",
    );
    // The same bytes in another file put in its place: named.
    Deno.writeFileSync(`${ledger}.copy`, grown);
    Deno.renameSync(`${ledger}.copy`, ledger);
    assert.equal(await problemIn(root, before), "the ledger was replaced by another file");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
