/**
 * The WebAssembly SHA-256 (lib/crypto/wasm/sha256.c) against NIST's vectors, through both of its
 * paths: the one-message `sha256_hex` (sha256Hex, WasmSha256) and the four-lane `verify_rows`
 * batch the ledger and the decision log's chain check use (firstChainBreak: a row's `prev` is
 * the hash of the row before, compared inside the module). The vectors: FIPS 180-4's examples
 * (NIST's "SHA256.pdf": "abc", the 448- and 896-bit messages, a million "a") and the first
 * lengths of the CAVP SHA256ShortMsg file (byte-oriented). tests/crypto/hash_test.ts holds the
 * comparison with node:crypto on random inputs around every padding boundary.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { WasmSha256 } from "../../lib/crypto/sha256_wasm.ts";
import { firstChainBreak } from "../../lib/crypto/chain.ts";

const enc = new TextEncoder();

/** FIPS 180-4 example messages (ASCII) and their digests. */
const FIPS: { msg: string; md: string }[] = [
  { msg: "abc", md: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
  {
    msg: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
    md: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  },
  {
    msg: "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopq" +
      "rlmnopqrsmnopqrstnopqrstu",
    md: "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
  },
  {
    msg: "a".repeat(1_000_000),
    md: "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
  },
];

/** CAVP SHA256ShortMsg.rsp, Len = 0, 8, 16, 24, 32 (hex messages). */
const SHORT: { msg: string; md: string }[] = [
  { msg: "", md: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
  { msg: "d3", md: "28969cdfa74a12c82f3bad960b0b000aca2ac329deea5c2328ebc6f2ba9802c1" },
  { msg: "11af", md: "5ca7133fa735326081558ac312c620eeca9970d1e70a4b95533d956f072d1f98" },
  { msg: "b4190e", md: "dff2e73091f6c05e528896c4c831b9448653dc2ff043528f6769437bc7b975c2" },
  { msg: "74ba2521", md: "b16aa56be3880d18cd41e68384cf1ec8c17680c45a02b1575dc1518923ae8b0e" },
];

Deno.test("WebAssembly SHA-256, one message: the FIPS 180-4 examples and CAVP short messages", () => {
  const w = WasmSha256.create();
  for (const v of FIPS) {
    assert.equal(sha256Hex(v.msg), v.md, `${v.msg.slice(0, 12)}... (${v.msg.length} bytes)`);
    assert.equal(w.sha256Hex(enc.encode(v.msg)), v.md);
  }
  for (const v of SHORT) {
    assert.equal(w.sha256Hex(Uint8Array.fromHex(v.msg)), v.md, `ShortMsg ${v.msg || "(empty)"}`);
  }
});

Deno.test("WebAssembly SHA-256, four lanes (verify_rows): the FIPS 180-4 examples", () => {
  // Each vector as a row's payload; the next row's prev is the vector's digest: the chain holds
  // exactly when the batch computed it. Five rows a batch, so lanes finish at different blocks.
  const msgs = FIPS.map((v) => v.msg);
  const payloads = [...msgs, "end"];
  const prevs = ["", ...FIPS.map((v) => v.md)];
  assert.equal(firstChainBreak(payloads, prevs), null);
  // A digest one bit off at each place: the break is found there, and only there.
  for (let i = 0; i < FIPS.length; i++) {
    const wrong = [...prevs];
    const last = parseInt(wrong[i + 1].at(-1)!, 16) ^ 1;
    wrong[i + 1] = wrong[i + 1].slice(0, -1) + last.toString(16);
    assert.equal(firstChainBreak(payloads, wrong), i + 1, `vector ${i}`);
  }
});
