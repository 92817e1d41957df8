/**
 * Sealed results: a box opens only for its requester, only when the runner's static key made it,
 * only for its id and request digest, and only while every clear byte is as sealed. The nonce of
 * a dispatch result never appears in the file's text.
 */
import assert from "node:assert/strict";
import { canonical } from "../../lib/pycompat/canonical.ts";
import { openSealed, sealTo } from "../../lib/crypto/seal.ts";
import { generateSealPair } from "../../lib/crypto/x25519.ts";
import { HmacKey, sha256Hex } from "../../lib/crypto/hash.ts";
import { QueueError } from "../../lib/errors.ts";
import { cutToFit, openResult, type ResultBody, resultText } from "../../lib/queue/result.ts";
import { assertRefusal } from "../_helpers/assert.ts";

const enc = new TextEncoder();
const hmac = new HmacKey(enc.encode("ledger-key"));
const ID = "a".repeat(32);
const REQ = enc.encode('{"kind":"issue-dispatch"}');
const NONCE = "0123456789abcdef0123456789abcdef";

function body(over: Partial<ResultBody> = {}): ResultBody {
  return {
    v: 1,
    id: ID,
    ok: true,
    kind: "issue-dispatch",
    exit: 0,
    queue_wait_ms: 3,
    serve_ms: 7,
    request_sha256: sha256Hex(REQ),
    result: { agent: "worker", id: "x", expires: "2026-12-02T00:00:00+00:00", compacted: 0 },
    ...over,
  };
}

Deno.test("a box opens for its requester with the runner's public key, and for nobody else", async () => {
  const runner = await generateSealPair();
  const own = await generateSealPair();
  const other = await generateSealPair();
  const clear = enc.encode("clear");
  const box = await sealTo({
    runner,
    to: own.publicRaw,
    context: "c",
    clear,
    secret: enc.encode("s"),
  });
  const open = (o: typeof own, pub: Uint8Array, context = "c", c = clear) =>
    openSealed({ own: o, runnerPublic: pub, context, clear: c, box });
  assert.equal(new TextDecoder().decode((await open(own, runner.publicRaw))!), "s");
  assert.equal(await open(other, runner.publicRaw), null, "another waiter");
  assert.equal(await open(own, other.publicRaw), null, "another runner key");
  assert.equal(await open(own, runner.publicRaw, "d"), null, "another context");
  assert.equal(await open(own, runner.publicRaw, "c", enc.encode("clEar")), null, "clear edited");
  // A box anyone can make (sealed to the waiter with a key that is not the runner's) fails.
  const forger = await generateSealPair();
  const forged = await sealTo({
    runner: forger,
    to: own.publicRaw,
    context: "c",
    clear,
    secret: enc.encode("s"),
  });
  assert.equal(
    await openSealed({ own, runnerPublic: runner.publicRaw, context: "c", clear, box: forged }),
    null,
  );
});

/** A dispatch result sealed by a fresh runner key to a fresh waiter. */
async function dispatchResult() {
  const runner = await generateSealPair();
  const own = await generateSealPair();
  const text = await resultText(body(), { nonce: NONCE }, {
    runner,
    replyKey: own.publicRaw,
    hmac,
  });
  return { runner, own, text };
}

Deno.test("a dispatch result carries its nonce only inside the box; the waiter opens it", async () => {
  const { runner, own, text } = await dispatchResult();
  assert.ok(!text.includes(NONCE), text);
  const parsed = JSON.parse(text);
  // The operator's MAC covers everything but itself.
  const { mac, ...rest } = parsed;
  assert.ok(hmac.verify(canonical(rest), mac));
  const r = await openResult(text, {
    id: ID,
    requestBytesSha256: sha256Hex(REQ),
    own,
    runnerPublic: runner.publicRaw,
  });
  assert.equal(r.secret?.nonce, NONCE);
  assert.equal(r.body.result?.agent, "worker");
});

Deno.test("every edit of a result, a replay to another waiter or request, and a forgery: RESULT_NOT_AUTHENTIC", async () => {
  const { runner, own, text } = await dispatchResult();
  const opts = { id: ID, requestBytesSha256: sha256Hex(REQ), own, runnerPublic: runner.publicRaw };
  const v = JSON.parse(text);
  const edits: [string, Record<string, unknown>][] = [
    ["exit flipped", { ...v, exit: 1 }],
    ["ok flipped", { ...v, ok: false }],
    ["result edited", { ...v, result: { ...v.result, agent: "admin" } }],
    ["field added", { ...v, extra: 1 }],
    ["seal dropped", { ...v, seal: null }],
    // Its first character changed (never to itself: "A" + the rest was no edit when it began so).
    [
      "box byte",
      {
        ...v,
        seal: { ...v.seal, box: (v.seal.box[0] === "A" ? "B" : "A") + v.seal.box.slice(1) },
      },
    ],
    ["other id", { ...v, id: "b".repeat(32) }],
  ];
  for (const [what, edited] of edits) {
    await assertRefusal(
      () => openResult(JSON.stringify(edited), opts),
      "RESULT_NOT_AUTHENTIC",
      QueueError,
      what,
    );
  }
  await assertRefusal(() => openResult("{not json", opts), "RESULT_NOT_AUTHENTIC", QueueError);
  // Replayed to another waiter (its own key) or answering other request bytes.
  const other = await generateSealPair();
  await assertRefusal(
    () => openResult(text, { ...opts, own: other }),
    "RESULT_NOT_AUTHENTIC",
    QueueError,
    "another waiter",
  );
  await assertRefusal(
    () => openResult(text, { ...opts, requestBytesSha256: sha256Hex(enc.encode("{}")) }),
    "RESULT_NOT_AUTHENTIC",
    QueueError,
    "another request",
  );
  // A result sealed to this waiter by a key that is not the runner's.
  const forger = await generateSealPair();
  const forged = await resultText(body(), { nonce: NONCE }, {
    runner: forger,
    replyKey: own.publicRaw,
    hmac,
  });
  await assertRefusal(() => openResult(forged, opts), "RESULT_NOT_AUTHENTIC", QueueError, "forged");
});

Deno.test("cutToFit: streams cut to 16 KiB, writes to 200 plus a count, then only the verdict", () => {
  const big = body({
    kind: "run-request",
    result: {
      stdout: "x".repeat(3 * 1024 * 1024),
      stderr: "e",
      truncated: false,
      undeclared_writes: Array.from({ length: 500 }, (_, i) => `f${i}`),
    },
  });
  const cut = cutToFit(big);
  assert.equal(cut.result_cut, true);
  assert.equal((cut.result?.stdout as string).length, 16 * 1024);
  assert.equal(cut.result?.truncated, true);
  const w = cut.result?.undeclared_writes as string[];
  assert.equal(w.length, 201);
  assert.equal(w[200], "... and 300 more");
  // Too large even cut (a huge field that is not a stream): only the verdict and a pointer.
  const huge = cutToFit(body({ result: { other: "y".repeat(3 * 1024 * 1024) } }));
  assert.equal(huge.result, undefined);
  assert.equal(huge.error?.code, "RESULT_TOO_LARGE");
  // Small bodies pass unchanged.
  assert.deepEqual(cutToFit(body()), body());
});
