/**
 * X25519 key material of the result seal, without the seal itself (lib/crypto/seal.ts, which
 * loads the HPKE package): the waiter's ephemeral pairs and the runner's static pair, their PEM
 * form in the key dir, the base64 form of a public key inside a request, and a result's
 * acknowledgement token. Commands that only read a public key (queue mode, `doctor`) import this
 * file, so they never load HPKE.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateSealPair, sealPairFromPem, sealPairToPem } from "./x25519.ts";
 * const pair = await generateSealPair();
 * const { privatePem, publicPem } = await sealPairToPem(pair);
 * assert.deepEqual((await sealPairFromPem(privatePem, publicPem)).publicRaw, pair.publicRaw);
 * ```
 * @module
 */
import { KeyError } from "../errors.ts";
import { derToPem, pemToDer } from "./ed25519.ts";

const enc = new TextEncoder();

/** An X25519 pair: the private key for Diffie-Hellman, the public half as its 32 raw bytes. */
export interface SealPair {
  /** The private key (usable for `deriveBits` only). */
  readonly privateKey: CryptoKey;
  /** The public key's 32 bytes. */
  readonly publicRaw: Uint8Array;
}

function b64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/**
 * Decodes standard base64, or returns null for anything else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unb64 } from "./x25519.ts";
 * assert.deepEqual(unb64("AAE="), new Uint8Array([0, 1]));
 * assert.equal(unb64("not base64!"), null);
 * ```
 */
export function unb64(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return null;
  try {
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * A public key's base64 (its form inside a request, and a box's `eph`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { publicB64 } from "./x25519.ts";
 * assert.equal(publicB64(new Uint8Array(32)), "A".repeat(43) + "=");
 * ```
 */
export function publicB64(raw: Uint8Array): string {
  return b64(raw);
}

/**
 * A new X25519 pair.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateSealPair } from "./x25519.ts";
 * assert.equal((await generateSealPair()).publicRaw.length, 32);
 * ```
 */
export async function generateSealPair(): Promise<SealPair> {
  const pair = await crypto.subtle.generateKey({ name: "X25519" }, true, [
    "deriveBits",
  ]) as CryptoKeyPair;
  const publicRaw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return { privateKey: pair.privateKey, publicRaw };
}

/**
 * An X25519 public key from its 32 raw bytes, as WebCrypto takes it.
 *
 * @throws {KeyError} `KEY_MALFORMED` when `raw` is not 32 bytes
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { x25519PublicKey } from "./x25519.ts";
 * assert.equal((await x25519PublicKey(new Uint8Array(32).fill(9))).type, "public");
 * await assert.rejects(() => x25519PublicKey(new Uint8Array(31)), /32 bytes/);
 * ```
 */
export async function x25519PublicKey(raw: Uint8Array): Promise<CryptoKey> {
  if (raw.length !== 32) throw new KeyError("KEY_MALFORMED", "an X25519 public key is 32 bytes");
  return await crypto.subtle.importKey("raw", Uint8Array.from(raw), { name: "X25519" }, true, []);
}

async function share(priv: CryptoKey, pub: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: "X25519", public: await x25519PublicKey(pub) },
      priv,
      256,
    ),
  );
}

/** The X25519 base point (u = 9): a private key's share with it is its public key. */
const BASE_POINT = Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 9 : 0));

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The HKDF info prefix of an acknowledgement token. */
export const ACK_INFO = "agentteams-result-ack-v1";

/**
 * The acknowledgement token of one result: 32 bytes (hex) from HKDF-SHA-256 over the static
 * X25519 share of the waiter's ephemeral key and the runner's static key, bound to both public
 * keys and the context (the result's id and its request's digest). The waiter computes it with
 * its private key and the runner's public key, the runner with its static private key and the
 * request's `reply_key`; nobody else can, so an ack planted for another waiter's id is told apart.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ackToken, generateSealPair } from "./x25519.ts";
 * const runner = await generateSealPair();
 * const waiter = await generateSealPair();
 * const keys = { waiter: waiter.publicRaw, runner: runner.publicRaw };
 * const a = await ackToken(waiter.privateKey, runner.publicRaw, keys, "id:sha");
 * const b = await ackToken(runner.privateKey, waiter.publicRaw, keys, "id:sha");
 * assert.equal(a, b);
 * assert.match(a, /^[0-9a-f]{64}$/);
 * assert.notEqual(await ackToken(runner.privateKey, waiter.publicRaw, keys, "id:other"), a);
 * ```
 */
export async function ackToken(
  own: CryptoKey,
  peer: Uint8Array,
  keys: { waiter: Uint8Array; runner: Uint8Array },
  context: string,
): Promise<string> {
  const ikm = await crypto.subtle.importKey(
    "raw",
    Uint8Array.from(await share(own, peer)),
    "HKDF",
    false,
    ["deriveBits"],
  );
  const info = concat(enc.encode(ACK_INFO + "\0"), keys.waiter, keys.runner, enc.encode(context));
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(32), info },
    ikm,
    256,
  );
  return new Uint8Array(bits).toHex();
}

const PRIVATE_LABEL = "PRIVATE KEY";
const PUBLIC_LABEL = "PUBLIC KEY";

/**
 * A pair as PEM text (PKCS#8 private, SPKI public), for the key dir.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateSealPair, sealPairToPem } from "./x25519.ts";
 * const pems = await sealPairToPem(await generateSealPair());
 * assert.ok(pems.publicPem.startsWith("-----BEGIN PUBLIC KEY-----"));
 * assert.ok(pems.privatePem.startsWith("-----BEGIN PRIVATE KEY-----"));
 * ```
 */
export async function sealPairToPem(
  pair: SealPair,
): Promise<{ privatePem: string; publicPem: string }> {
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const spki = new Uint8Array(
    await crypto.subtle.exportKey("spki", await x25519PublicKey(pair.publicRaw)),
  );
  return { privatePem: derToPem(pkcs8, PRIVATE_LABEL), publicPem: derToPem(spki, PUBLIC_LABEL) };
}

/**
 * The runner's pair from its PEM files' text; the two halves must belong together (the private
 * key's share with the X25519 base point is the public key).
 *
 * @throws {KeyError} `KEY_MALFORMED` when either is not an X25519 key, or the halves differ
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateSealPair, sealPairFromPem, sealPairToPem } from "./x25519.ts";
 * const a = await sealPairToPem(await generateSealPair());
 * const b = await sealPairToPem(await generateSealPair());
 * assert.equal((await sealPairFromPem(a.privatePem, a.publicPem)).publicRaw.length, 32);
 * await assert.rejects(() => sealPairFromPem(a.privatePem, b.publicPem), /keys differ/);
 * ```
 */
export async function sealPairFromPem(privatePem: string, publicPem: string): Promise<SealPair> {
  try {
    const privateKey = await crypto.subtle.importKey(
      "pkcs8",
      pemToDer(privatePem, PRIVATE_LABEL).slice(),
      { name: "X25519" },
      false,
      ["deriveBits"],
    );
    const publicRaw = await sealPublicFromPem(publicPem);
    const derived = await share(privateKey, BASE_POINT);
    if (derived.toHex() !== publicRaw.toHex()) {
      throw new KeyError("KEY_MALFORMED", "the X25519 private and public keys differ");
    }
    return { privateKey, publicRaw };
  } catch (e) {
    if (e instanceof KeyError) throw e;
    throw new KeyError("KEY_MALFORMED", `not an X25519 key: ${(e as Error).message}`);
  }
}

/**
 * The 32 raw bytes of an X25519 public key in SPKI PEM.
 *
 * @throws {KeyError} `KEY_MALFORMED`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateSealPair, sealPairToPem, sealPublicFromPem } from "./x25519.ts";
 * const p = await generateSealPair();
 * assert.deepEqual(await sealPublicFromPem((await sealPairToPem(p)).publicPem), p.publicRaw);
 * ```
 */
export async function sealPublicFromPem(publicPem: string): Promise<Uint8Array> {
  try {
    const key = await crypto.subtle.importKey(
      "spki",
      pemToDer(publicPem, PUBLIC_LABEL).slice(),
      { name: "X25519" },
      true,
      [],
    );
    return new Uint8Array(await crypto.subtle.exportKey("raw", key));
  } catch (e) {
    if (e instanceof KeyError) throw e;
    throw new KeyError("KEY_MALFORMED", `not an X25519 public key: ${(e as Error).message}`);
  }
}
