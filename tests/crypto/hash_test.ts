/**
 * HMAC-SHA256 and SHA-256: lib's HmacKey (node:crypto with precomputed pads) against the RFC 4231
 * vectors and against node:crypto's own createHmac; the WebAssembly module (WasmSha256) against
 * node:crypto on random inputs, with lengths around every padding boundary.
 */
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import fc from "../_helpers/fc.ts";
import { hexEqual, HmacKey, sha256Hex } from "../../lib/crypto/hash.ts";
import { WasmSha256 } from "../../lib/crypto/sha256_wasm.ts";

const enc = new TextEncoder();

function hexBytes(h: string): Uint8Array {
  return Uint8Array.from(h.match(/../g) ?? [], (x) => parseInt(x, 16));
}

function rep(byte: number, n: number): Uint8Array {
  return new Uint8Array(n).fill(byte);
}

/** RFC 4231 section 4, HMAC-SHA-256 results. */
const RFC4231: { name: string; key: Uint8Array; data: Uint8Array; mac: string }[] = [
  {
    name: "4.2",
    key: rep(0x0b, 20),
    data: enc.encode("Hi There"),
    mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
  },
  {
    name: "4.3",
    key: enc.encode("Jefe"),
    data: enc.encode("what do ya want for nothing?"),
    mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
  },
  {
    name: "4.4",
    key: rep(0xaa, 20),
    data: rep(0xdd, 50),
    mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
  },
  {
    name: "4.5",
    key: hexBytes("0102030405060708090a0b0c0d0e0f10111213141516171819"),
    data: rep(0xcd, 50),
    mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
  },
  {
    // The RFC gives only the first 128 bits for this case.
    name: "4.6 (truncated to 128 bits)",
    key: rep(0x0c, 20),
    data: enc.encode("Test With Truncation"),
    mac: "a3b6167473100ee06e0c796c2955552b",
  },
  {
    name: "4.7 (131-byte key)",
    key: rep(0xaa, 131),
    data: enc.encode("Test Using Larger Than Block-Size Key - Hash Key First"),
    mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
  },
  {
    name: "4.8 (131-byte key, long data)",
    key: rep(0xaa, 131),
    data: enc.encode(
      "This is a test using a larger than block-size key and a larger than block-size data. " +
        "The key needs to be hashed before being used by the HMAC algorithm.",
    ),
    mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
  },
];

Deno.test("HmacKey: RFC 4231 test vectors", () => {
  for (const v of RFC4231) {
    const k = new HmacKey(v.key);
    const got = k.hex(v.data);
    assert.equal(got.slice(0, v.mac.length), v.mac, `RFC 4231 ${v.name}`);
    assert.equal(got.length, 64);
    if (v.mac.length === 64) assert.ok(k.verify(v.data, v.mac), v.name);
  }
});

Deno.test("WasmSha256.hmacHex: RFC 4231 test vectors", () => {
  const w = WasmSha256.create();
  for (const v of RFC4231) {
    w.setKey(v.key);
    assert.equal(w.hmacHex(v.data).slice(0, v.mac.length), v.mac, `RFC 4231 ${v.name}`);
  }
});

Deno.test("sha256Hex: FIPS 180 examples, string and bytes agree", () => {
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(
    sha256Hex("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
  assert.equal(sha256Hex("caf\u00e9"), sha256Hex(enc.encode("caf\u00e9")));
});

Deno.test("HmacKey: string data is UTF-8, the key object is reusable, verify is strict", () => {
  const k = new HmacKey(enc.encode("key"));
  assert.equal(
    k.hex("The quick brown fox jumps over the lazy dog"),
    "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",
  );
  // Reuse after many calls gives the same answer (the pads are copied, not consumed).
  const first = k.hex("m");
  for (let i = 0; i < 50; i++) k.hex("x".repeat(i));
  assert.equal(k.hex("m"), first);
  assert.equal(k.hex("\u2603"), createHmac("sha256", "key").update("\u2603", "utf8").digest("hex"));
  // verify: exact lower-case hex, as compare_digest; any other spelling or change fails.
  assert.ok(k.verify("m", first));
  assert.ok(!k.verify("m", first.toUpperCase()), "strict, as compare_digest");
  assert.ok(!k.verify("m", ` ${first}\n`));
  assert.ok(!k.verify("m", first.slice(0, 63)));
  assert.ok(!k.verify("m", first.slice(0, 63) + (first[63] === "0" ? "1" : "0")));
  assert.ok(!k.verify("n", first));
  assert.ok(!k.verify("m", ""));
  // Keys that differ only past byte 64 are different keys when both are over the block size.
  const a = rep(0x61, 65);
  const b = rep(0x61, 65);
  b[64] = 0x62;
  assert.notEqual(new HmacKey(a).hex("m"), new HmacKey(b).hex("m"));
  // The empty key is a key.
  assert.equal(
    new HmacKey(new Uint8Array(0)).hex("m"),
    createHmac("sha256", "").update("m").digest("hex"),
  );
});

Deno.test("hexEqual: equal, unequal, different lengths", () => {
  assert.ok(hexEqual("ab", "ab"));
  assert.ok(!hexEqual("ab", "ac"));
  assert.ok(!hexEqual("ab", "abc"));
  assert.ok(hexEqual("", ""));
});

/** Lengths that exercise the padding: one and two blocks, the 55/56 length-field edge, etc. */
const EDGES = [
  0,
  1,
  54,
  55,
  56,
  57,
  63,
  64,
  65,
  118,
  119,
  120,
  121,
  127,
  128,
  129,
  183,
  184,
  191,
  192,
  255,
  256,
  1000,
  4095,
  4096,
  4097,
];

Deno.test("WasmSha256.sha256Hex equals node:crypto at every block-boundary length", () => {
  const w = WasmSha256.create();
  for (const n of EDGES) {
    const data = crypto.getRandomValues(new Uint8Array(n));
    assert.equal(w.sha256Hex(data), createHash("sha256").update(data).digest("hex"), `len ${n}`);
  }
});

Deno.test("WasmSha256.hmacHex equals node:crypto at every boundary, keys of 0..200 bytes", () => {
  const w = WasmSha256.create();
  for (const klen of [0, 1, 31, 32, 55, 56, 63, 64, 65, 100, 128, 131, 200]) {
    const key = crypto.getRandomValues(new Uint8Array(klen));
    w.setKey(key);
    for (const n of EDGES) {
      const data = crypto.getRandomValues(new Uint8Array(n));
      assert.equal(
        w.hmacHex(data),
        createHmac("sha256", key).update(data).digest("hex"),
        `key ${klen}, len ${n}`,
      );
    }
  }
});

Deno.test("property: WasmSha256 sha256Hex and hmacHex equal node:crypto on random inputs", () => {
  const w = WasmSha256.create();
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ maxLength: 2100 }),
      (key, data) => {
        assert.equal(w.sha256Hex(data), createHash("sha256").update(data).digest("hex"));
        w.setKey(key);
        assert.equal(w.hmacHex(data), createHmac("sha256", key).update(data).digest("hex"));
        // And lib's HmacKey agrees too.
        assert.equal(
          new HmacKey(key).hex(data),
          createHmac("sha256", key).update(data).digest("hex"),
        );
      },
    ),
    { numRuns: 600 },
  );
});

Deno.test("WasmSha256: memory growth keeps results right; instances do not share keys", () => {
  const w = WasmSha256.create();
  w.setKey(enc.encode("first"));
  const big = crypto.getRandomValues(new Uint8Array(65536)).map((_, i) => i & 0xff);
  const huge = new Uint8Array(3 * 1024 * 1024 + 17).fill(0x5a);
  assert.equal(w.sha256Hex(huge), createHash("sha256").update(huge).digest("hex"));
  // The key survives the growth of linear memory.
  assert.equal(w.hmacHex(big), createHmac("sha256", "first").update(big).digest("hex"));
  assert.equal(w.hmacHex(new Uint8Array(0)), createHmac("sha256", "first").digest("hex"));
  const other = WasmSha256.create();
  other.setKey(enc.encode("second"));
  assert.equal(w.hmacHex(enc.encode("m")), createHmac("sha256", "first").update("m").digest("hex"));
  assert.equal(
    other.hmacHex(enc.encode("m")),
    createHmac("sha256", "second").update("m").digest("hex"),
  );
  assert.ok(w.heapBase > 0 && w.heapBase % 64 === 0);
  assert.ok(other.scratchPerRow > 0);
});
