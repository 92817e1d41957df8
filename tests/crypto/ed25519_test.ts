/** Ed25519 PEM handling and signatures (used by checkpoints). */
import assert from "node:assert/strict";
import { createPublicKey } from "node:crypto";
import {
  derToPem,
  generatePem,
  importPrivatePem,
  importPublicPem,
  keyIdOf,
  keyIdOfKey,
  pemToDer,
  signHex,
  verifyHex,
} from "../../lib/crypto/ed25519.ts";
import { KeyError } from "../../lib/errors.ts";
import { sha256 } from "../_helpers/mod.ts";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("PEM: DER round trip, 64-column lines, labels checked", async () => {
  const der = crypto.getRandomValues(new Uint8Array(100));
  const pem = derToPem(der, "PUBLIC KEY");
  assert.match(pem, /^-----BEGIN PUBLIC KEY-----\n/);
  assert.ok(pem.endsWith("-----END PUBLIC KEY-----\n"));
  for (const line of pem.split("\n").slice(1, -2)) assert.ok(line.length <= 64);
  assert.deepEqual(pemToDer(pem, "PUBLIC KEY"), der);
  await assertRefusal(() => pemToDer(pem, "PRIVATE KEY"), "KEY_MALFORMED", KeyError);
  await assertRefusal(() => pemToDer("garbage", "PUBLIC KEY"), "KEY_MALFORMED", KeyError);
});

Deno.test("Ed25519: generated pair signs and verifies; node:crypto reads the SPKI; key id", async () => {
  const { privatePem, publicPem, keyId } = await generatePem();
  const priv = await importPrivatePem(privatePem);
  const pub = await importPublicPem(publicPem);
  const spki = pemToDer(publicPem, "PUBLIC KEY");
  assert.equal(keyId, sha256(spki).slice(0, 16));
  assert.equal(keyIdOf(spki), keyId);
  assert.equal(await keyIdOfKey(pub), keyId);
  assert.equal(createPublicKey(publicPem).asymmetricKeyType, "ed25519");
  const sig = await signHex(priv, "m\u00e9");
  assert.match(sig, /^[0-9a-f]{128}$/);
  assert.ok(await verifyHex(pub, sig, "m\u00e9"));
  assert.ok(await verifyHex(pub, sig.toUpperCase(), new TextEncoder().encode("m\u00e9")));
  assert.ok(!await verifyHex(pub, sig, "m"));
  const flipped = (sig[0] === "0" ? "1" : "0") + sig.slice(1);
  assert.ok(!await verifyHex(pub, flipped, "m\u00e9"));
  assert.ok(!await verifyHex(pub, sig.slice(2), "m\u00e9"));
  assert.ok(!await verifyHex(pub, "zz" + sig.slice(2), "m\u00e9"));
  // Another key's signature does not verify.
  const other = await generatePem();
  assert.ok(!await verifyHex(await importPublicPem(other.publicPem), sig, "m\u00e9"));
  // Wrong kinds of PEM are KEY_MALFORMED.
  await assertRefusal(() => importPrivatePem(publicPem), "KEY_MALFORMED", KeyError);
  await assertRefusal(() => importPublicPem(privatePem), "KEY_MALFORMED", KeyError);
  await assertRefusal(
    () => importPublicPem(derToPem(new Uint8Array(44), "PUBLIC KEY")),
    "KEY_MALFORMED",
    KeyError,
  );
});
