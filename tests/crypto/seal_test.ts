/**
 * The result seal is RFC 9180 HPKE (mode_auth, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
 * AES-256-GCM): the suite it uses reproduces the RFC's official test vector for that suite and
 * mode (tests/testdata/hpke/, copied from the CFRG draft repository's test-vectors.json); a box
 * this version sealed and committed keeps opening; a box of the earlier hand-built seal never
 * opens, and a result carrying one is refused saying why.
 */
import assert from "node:assert/strict";
import { openSealed, SEAL_SUITE, sealInfo, sealTo } from "../../lib/crypto/seal.ts";
import { sealPairFromPem } from "../../lib/crypto/x25519.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { QueueError } from "../../lib/errors.ts";
import { openResult } from "../../lib/queue/result.ts";
import { assertRefusal } from "../_helpers/assert.ts";

const DATA = new URL("../testdata/hpke/", import.meta.url);
const enc = new TextEncoder();

interface Vector {
  mode: number;
  kem_id: number;
  kdf_id: number;
  aead_id: number;
  info: string;
  ikmE: string;
  ikmR: string;
  ikmS: string;
  skRm: string;
  skSm: string;
  pkRm: string;
  pkSm: string;
  pkEm: string;
  enc: string;
  base_nonce: string;
  encryptions: {
    sequence_number: number;
    aad: string;
    ciphertext: string;
    nonce: string;
    plaintext: string;
  }[];
  exports: { exportContext: string; exportLength: number; exportValue: string }[];
}

function hex(b: ArrayBuffer | Uint8Array): string {
  return new Uint8Array(b).toHex();
}

function unhex(s: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.fromHex(s) as Uint8Array<ArrayBuffer>;
}

/** An X25519 private key's raw 32 bytes as WebCrypto imports them (PKCS#8, as the key dir). */
async function importRawPrivate(raw: Uint8Array): Promise<CryptoKey> {
  const prefix = unhex("302e020100300506032b656e04220420");
  const der = new Uint8Array(prefix.length + raw.length);
  der.set(prefix);
  der.set(raw, prefix.length);
  return await crypto.subtle.importKey("pkcs8", der, { name: "X25519" }, false, ["deriveBits"]);
}

const vectors = JSON.parse(
  Deno.readTextFileSync(new URL("rfc9180-a13-auth-x25519-sha256-aes128gcm.json", DATA)),
) as Vector[];

Deno.test("the seal's suite reproduces RFC 9180's vector A.1.3 (mode_auth) for its suite", async () => {
  assert.equal(vectors.length, 1);
  const v = vectors[0];
  const suite = SEAL_SUITE;
  assert.deepEqual(
    [v.mode, v.kem_id, v.kdf_id, v.aead_id],
    [2, suite.kem.id, suite.kdf.id, suite.aead.id],
  );
  const r = await suite.kem.deriveKeyPair(unhex(v.ikmR).buffer);
  const s = await suite.kem.deriveKeyPair(unhex(v.ikmS).buffer);
  assert.equal(hex(await suite.kem.serializePublicKey(r.publicKey)), v.pkRm);
  assert.equal(hex(await suite.kem.serializePublicKey(s.publicKey)), v.pkSm);
  assert.equal(hex(await suite.kem.serializePrivateKey(r.privateKey)), v.skRm);
  assert.equal(hex(await suite.kem.serializePrivateKey(s.privateKey)), v.skSm);
  const info = unhex(v.info);
  // The sender, with the vector's ephemeral seed: the same enc, ciphertexts and exports.
  const sender = await suite.createSenderContext({
    recipientPublicKey: r.publicKey,
    senderKey: s,
    info,
    ekm: unhex(v.ikmE),
  });
  assert.equal(hex(sender.enc), v.enc);
  assert.equal(v.enc, v.pkEm);
  // The recipient holds its private key as the key dir's PKCS#8 import makes it (not
  // extractable), with its public half given: as `openSealed` passes it.
  const recipientKey = {
    privateKey: await importRawPrivate(unhex(v.skRm)),
    publicKey: r.publicKey,
  };
  const recipient = await suite.createRecipientContext({
    recipientKey,
    enc: unhex(v.enc),
    senderPublicKey: s.publicKey,
    info,
  });
  // The vector lists some sequence numbers (0, 1, 2, 4, 255, 256): both sides step through all.
  const last = v.encryptions[v.encryptions.length - 1].sequence_number;
  const listed = new Map(v.encryptions.map((e) => [e.sequence_number, e]));
  const pt = unhex(v.encryptions[0].plaintext);
  let checked = 0;
  for (let seq = 0; seq <= last; seq++) {
    const e = listed.get(seq);
    const aad = enc.encode(`Count-${seq}`);
    const ct = await sender.seal(pt, aad);
    assert.deepEqual(new Uint8Array(await recipient.open(ct, aad)), pt, `round trip ${seq}`);
    if (e === undefined) continue;
    assert.equal(hex(aad), e.aad, `aad ${seq}`);
    assert.equal(e.plaintext, v.encryptions[0].plaintext);
    assert.equal(hex(ct), e.ciphertext, `ciphertext ${seq}`);
    checked++;
  }
  assert.equal(checked, v.encryptions.length);
  for (const x of v.exports) {
    const ctx = unhex(x.exportContext);
    assert.equal(hex(await sender.export(ctx, x.exportLength)), x.exportValue);
    assert.equal(hex(await recipient.export(ctx, x.exportLength)), x.exportValue);
  }
  // The single-shot open of sequence 0 (what `openSealed` does), then with one bit flipped, or
  // authenticated by another sender key: refused.
  const first = v.encryptions[0];
  const open = async (ct: Uint8Array<ArrayBuffer>, senderPublicKey: CryptoKey) =>
    new Uint8Array(
      await suite.open(
        { recipientKey, enc: unhex(v.enc), senderPublicKey, info },
        ct,
        unhex(first.aad),
      ),
    );
  assert.equal(hex(await open(unhex(first.ciphertext), s.publicKey)), first.plaintext);
  const flipped = unhex(first.ciphertext);
  flipped[0] ^= 1;
  await assert.rejects(() => open(flipped, s.publicKey));
  const other = await suite.kem.generateKeyPair();
  await assert.rejects(() => open(unhex(first.ciphertext), other.publicKey));
});

interface BoxFixture {
  runner_private_pem: string;
  runner_public_pem: string;
  waiter_private_pem: string;
  waiter_public_pem: string;
  context: string;
  clear: string;
  secret: string;
  box: Record<string, string>;
}

function fixture(name: string): BoxFixture {
  return JSON.parse(Deno.readTextFileSync(new URL(name, DATA))) as BoxFixture;
}

Deno.test("a box this version sealed (committed) still opens, and only as it was sealed", async () => {
  const f = fixture("seal-v2-box.json");
  const runner = await sealPairFromPem(f.runner_private_pem, f.runner_public_pem);
  const own = await sealPairFromPem(f.waiter_private_pem, f.waiter_public_pem);
  const box = { eph: f.box.eph, box: f.box.box };
  const open = (context: string, clear: string) =>
    openSealed({ own, runnerPublic: runner.publicRaw, context, clear: enc.encode(clear), box });
  assert.equal(new TextDecoder().decode((await open(f.context, f.clear))!), f.secret);
  assert.equal(await open(f.context + "x", f.clear), null, "another context");
  assert.equal(await open(f.context, f.clear + " "), null, "clear fields edited");
  assert.equal(
    await openSealed({
      own: runner,
      runnerPublic: runner.publicRaw,
      context: f.context,
      clear: enc.encode(f.clear),
      box,
    }),
    null,
    "another recipient",
  );
  // The box is HPKE's single-shot seal of the secret under this info and aad: the suite opens it
  // directly, with nothing of seal.ts's own in between.
  const suite = SEAL_SUITE;
  const viaPair = await suite.open(
    {
      recipientKey: {
        privateKey: own.privateKey,
        publicKey: await suite.kem.deserializePublicKey(own.publicRaw.slice().buffer),
      },
      enc: Uint8Array.fromBase64(f.box.eph),
      senderPublicKey: await suite.kem.deserializePublicKey(runner.publicRaw.slice().buffer),
      info: sealInfo(f.context),
    },
    Uint8Array.fromBase64(f.box.box),
    enc.encode(f.clear),
  );
  assert.equal(new TextDecoder().decode(viaPair), f.secret);
});

Deno.test("a box of the earlier hand-built seal never opens; a result carrying one is refused saying so", async () => {
  const f = fixture("seal-v1-box.json");
  assert.ok("iv" in f.box, "the fixture is of the earlier format");
  const runner = await sealPairFromPem(f.runner_private_pem, f.runner_public_pem);
  const own = await sealPairFromPem(f.waiter_private_pem, f.waiter_public_pem);
  assert.equal(
    await openSealed({
      own,
      runnerPublic: runner.publicRaw,
      context: f.context,
      clear: enc.encode(f.clear),
      box: { eph: f.box.eph, box: f.box.box },
    }),
    null,
  );
  const id = "a".repeat(32);
  const requestBytesSha256 = sha256Hex(enc.encode("{}"));
  const text = JSON.stringify({
    v: 1,
    id,
    ok: true,
    kind: "verify-ledger",
    exit: 0,
    queue_wait_ms: 1,
    serve_ms: 1,
    request_sha256: requestBytesSha256,
    result: { ok: true },
    seal: f.box,
    mac: "0".repeat(64),
  });
  const e = await assertRefusal(
    () => openResult(text, { id, requestBytesSha256, own, runnerPublic: runner.publicRaw }),
    "RESULT_NOT_AUTHENTIC",
    QueueError,
  );
  assert.match(e.message, /earlier hand-built box .* restart `agentteams serve`/);
});

Deno.test("a low-order ephemeral or runner key (an all-zero X25519 share) opens nothing", async () => {
  const f = fixture("seal-v2-box.json");
  const runner = await sealPairFromPem(f.runner_private_pem, f.runner_public_pem);
  const own = await sealPairFromPem(f.waiter_private_pem, f.waiter_public_pem);
  const zero = new Uint8Array(32);
  const clear = enc.encode(f.clear);
  const base = { own, runnerPublic: runner.publicRaw, context: f.context, clear };
  const eph = btoa(String.fromCharCode(...zero));
  assert.equal(await openSealed({ ...base, box: { eph, box: f.box.box } }), null, "eph");
  assert.equal(
    await openSealed({ ...base, runnerPublic: zero, box: { eph: f.box.eph, box: f.box.box } }),
    null,
    "runner key",
  );
  await assert.rejects(() =>
    sealTo({ runner, to: zero, context: "c", clear, secret: new Uint8Array() })
  );
});
