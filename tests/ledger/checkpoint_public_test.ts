/**
 * Public-key verification (issue 27 item 3): `verifyWithPublicKey` checks the chain, the head's
 * count and last hash and an Ed25519-signed checkpoint with no HMAC key; each bad input of the
 * issue (a checkpoint from another ledger, newer than the ledger, past its end, forged) is refused
 * with its reason, and reading writes nothing.
 */
import assert from "node:assert/strict";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { generatePem, importPrivatePem, importPublicPem } from "../../lib/crypto/ed25519.ts";
import {
  type Checkpoint,
  parseCheckpoint,
  signCheckpoint,
  verifyWithPublicKey,
} from "../../lib/ledger/checkpoint.ts";
import { readLedgerTexts, verifyLedgerAt } from "../../lib/ledger/verify.ts";
import {
  buildLedger,
  headFor,
  joinLines,
  sha256,
  snapshotTree,
  tempDir,
  writeState,
} from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";

const keyBytes = new TextEncoder().encode("k".repeat(32));
const hmac = new HmacKey(keyBytes);
const key = { bytes: keyBytes, hmac };
const pair = await generatePem();
const priv = await importPrivatePem(pair.privatePem);
const pub = await importPublicPem(pair.publicPem);

const bodies = (n: number, tag = "a") =>
  Array.from({ length: n }, (_, i) => ({ action: "note", agent: "w", n: i + 1, tag }));

/** A checkpoint of the first `count` lines, signed by `signer` (the operator's key by default). */
function checkpointOf(lines: string[], count: number, signer = priv): Promise<Checkpoint> {
  return signCheckpoint({
    count,
    last: count === 0 ? null : sha256(lines[count - 1]),
    time: "2026-12-02T04:00:00+00:00",
    key_id: pair.keyId,
  }, signer);
}

/** Runs `fn` on a project holding `lines` (and their head). */
async function withProject(
  lines: string[],
  fn: (root: string) => Promise<void>,
): Promise<void> {
  const root = await tempDir("cp-public");
  try {
    await writeState(root, { ledger: joinLines(lines), head: headFor(lines, hmac) });
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Verifies `root` publicly, asserting nothing under it changed; returns the report. */
async function verifyPublic(root: string, cp: Checkpoint | null) {
  const before = await snapshotTree(root);
  const r = await verifyWithPublicKey(readLedgerTexts(root), cp, pub);
  assertSameTree(before, await snapshotTree(root));
  return r;
}

const codes = (r: { problems: { code: string }[] }) => r.problems.map((p) => p.code);

Deno.test("public key: a ledger that grew since its checkpoint verifies, without the HMAC key", async () => {
  const { lines } = buildLedger(bodies(6), hmac);
  const cp = await checkpointOf(lines, 4);
  await withProject(lines, async (root) => {
    const r = await verifyPublic(root, cp);
    assert.deepEqual(r.problems, []);
    assert.equal(r.ok, true);
    assert.equal(r.rows, 6);
    assert.equal(r.checkpoint?.count, 4);
    assert.ok(r.notes.some((n) => /MACs .* were not checked/.test(n)), r.notes.join("\n"));
    assert.ok(r.notes.some((n) => /rows 5\.\.6/.test(n)), r.notes.join("\n"));
  });
});

Deno.test("public key: a rollback by the HMAC key's holder passes plain verify and is caught", async () => {
  const { lines } = buildLedger(bodies(6), hmac);
  const cp = await checkpointOf(lines, 6);
  // Rows 5 and 6 dropped and the head re-signed: everything the HMAC key can check still holds.
  await withProject(lines.slice(0, 4), async (root) => {
    assert.equal(verifyLedgerAt(root, key).ok, true);
    const r = await verifyPublic(root, cp);
    assert.equal(r.ok, false);
    assert.deepEqual(codes(r), ["CHECKPOINT_MISMATCH"]);
    assert.match(r.problems[0].message, /4 rows, fewer than the checkpoint's 6: .*rolled back/);
  });
});

Deno.test("public key: a checkpoint newer than the ledger (an older state put back) is caught", async () => {
  // The project's state at 3 rows, copied aside; 3 more rows; a checkpoint of all 6; then the
  // copy put back. No key is needed for this rollback: the old files were genuine.
  const { lines } = buildLedger(bodies(6), hmac);
  const cp = await checkpointOf(lines, 6);
  await withProject(lines.slice(0, 3), async (root) => {
    assert.equal(verifyLedgerAt(root, key).ok, true);
    const r = await verifyPublic(root, cp);
    assert.deepEqual(codes(r), ["CHECKPOINT_MISMATCH"]);
    assert.match(r.problems[0].message, /3 rows, fewer than the checkpoint's 6/);
  });
});

Deno.test("public key: a checkpoint from another ledger (same key, same length) is refused", async () => {
  const mine = buildLedger(bodies(4, "mine"), hmac).lines;
  const other = buildLedger(bodies(4, "other"), hmac).lines;
  await withProject(mine, async (root) => {
    const r = await verifyPublic(root, await checkpointOf(other, 4));
    assert.deepEqual(codes(r), ["CHECKPOINT_MISMATCH"]);
    assert.match(r.problems[0].message, /row 4 is not the row the checkpoint recorded/);
    assert.match(r.problems[0].message, /another ledger/);
  });
});

Deno.test("public key: a checkpoint past the ledger's end (its last row torn) is refused", async () => {
  const { lines } = buildLedger(bodies(5), hmac);
  const cp = await checkpointOf(lines, 5);
  await withProject(lines, async (root) => {
    // The ledger ends in the first half of row 5; the head still says 5 rows.
    const text = joinLines(lines);
    await writeState(root, { ledger: text.slice(0, text.length - 40) });
    const r = await verifyPublic(root, cp);
    assert.equal(r.ok, false);
    assert.ok(codes(r).includes("TORN_TAIL"), codes(r).join());
    const cpp = r.problems.find((p) => p.code === "CHECKPOINT_MISMATCH");
    assert.match(cpp?.message ?? "", /row 5 is past the ledger's end: .*4 complete rows/);
  });
});

Deno.test("public key: a forged checkpoint is refused: edited fields, another signer, not one at all", async () => {
  const { lines } = buildLedger(bodies(4), hmac);
  const real = await checkpointOf(lines, 4);
  const stranger = await importPrivatePem((await generatePem()).privatePem);
  await withProject(lines, async (root) => {
    // Edited: a count that would pass (the ledger has 4 rows, row 3 is real), signature unchanged.
    const edited = { ...real, count: 3, last: sha256(lines[2]) };
    let r = await verifyPublic(root, edited);
    assert.deepEqual(codes(r), ["CHECKPOINT_MISMATCH"]);
    assert.match(r.problems[0].message, /signature does not verify/);
    // Signed by another key that claims the operator's key id.
    r = await verifyPublic(root, await checkpointOf(lines, 4, stranger));
    assert.deepEqual(codes(r), ["CHECKPOINT_MISMATCH"]);
    assert.match(r.problems[0].message, /signature does not verify/);
    // Another key id.
    r = await verifyPublic(root, { ...real, key_id: "0".repeat(16) });
    assert.match(r.problems[0].message, /signed by key 0{16}, not by the verify key given/);
    // Not a checkpoint.
    r = await verifyPublic(root, parseCheckpoint("{}"));
    assert.match(r.problems[0].message, /not a checkpoint/);
  });
});

Deno.test("public key: an edited row breaks the chain after it; a head that lies about the count shows", async () => {
  const { lines } = buildLedger(bodies(5), hmac);
  const cp = await checkpointOf(lines, 2);
  await withProject(lines, async (root) => {
    // Row 3 edited (its MAC is not checked here): row 4's prev no longer matches.
    const edited = [...lines];
    edited[2] = edited[2].replace('"n": 3', '"n": 33');
    await writeState(root, { ledger: joinLines(edited), head: headFor(edited, hmac) });
    let r = await verifyPublic(root, cp);
    assert.deepEqual(codes(r), ["CHAIN_BROKEN"]);
    assert.equal(r.problems[0].row, 4);
    // The last row dropped, the head left alone: it records 5 rows.
    await writeState(root, { ledger: joinLines(lines.slice(0, 4)), head: headFor(lines, hmac) });
    r = await verifyPublic(root, cp);
    assert.deepEqual(codes(r), ["HEAD_MISMATCH"]);
    assert.match(r.problems[0].message, /head records 5 rows, but the ledger holds 4/);
  });
});
