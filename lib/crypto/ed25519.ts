/**
 * Ed25519 keys in PEM (PKCS#8 private, SPKI public) through WebCrypto, for checkpoints and
 * grants. Signatures are lower-case hex (128 characters).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generatePem, importPrivatePem, importPublicPem, signHex, verifyHex } from "./ed25519.ts";
 * const { privatePem, publicPem } = await generatePem();
 * const sig = await signHex(await importPrivatePem(privatePem), "hello");
 * assert.equal(await verifyHex(await importPublicPem(publicPem), sig, "hello"), true);
 * ```
 * @module
 */
import { KeyError } from "../errors.ts";
import { sha256Hex } from "./hash.ts";

const enc = new TextEncoder();

/**
 * The DER bytes inside a PEM block with the given label.
 *
 * @throws {KeyError} `KEY_MALFORMED`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pemToDer } from "./ed25519.ts";
 * assert.deepEqual(pemToDer("-----BEGIN X-----\nAAEC\n-----END X-----\n", "X"), new Uint8Array([0, 1, 2]));
 * ```
 */
export function pemToDer(pem: string, label: string): Uint8Array {
  const m = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`)
    .exec(pem);
  if (m === null) throw new KeyError("KEY_MALFORMED", `not a PEM ${label}`);
  const s = atob(m[1].replace(/\s+/g, ""));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/**
 * A PEM block for DER bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { derToPem } from "./ed25519.ts";
 * assert.equal(derToPem(new Uint8Array([0, 1, 2]), "X"), "-----BEGIN X-----\nAAEC\n-----END X-----\n");
 * ```
 */
export function derToPem(der: Uint8Array, label: string): string {
  const s = btoa(String.fromCharCode(...der));
  let body = "";
  for (let i = 0; i < s.length; i += 64) body += s.slice(i, i + 64) + "\n";
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}

/**
 * A new pair as PEM text, with its key id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generatePem } from "./ed25519.ts";
 * const { publicPem, keyId } = await generatePem();
 * assert.equal(publicPem.startsWith("-----BEGIN PUBLIC KEY-----"), true);
 * assert.equal(keyId.length, 16);
 * ```
 */
export async function generatePem(): Promise<
  { privatePem: string; publicPem: string; keyId: string }
> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
  return {
    privatePem: derToPem(pkcs8, "PRIVATE KEY"),
    publicPem: derToPem(spki, "PUBLIC KEY"),
    keyId: keyIdOf(spki),
  };
}

/**
 * A key id: the first 16 hex characters of SHA-256 of the public key's SPKI DER.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyIdOf } from "./ed25519.ts";
 * assert.equal(keyIdOf(new Uint8Array(44)).length, 16);
 * ```
 */
export function keyIdOf(spkiDer: Uint8Array): string {
  return sha256Hex(spkiDer).slice(0, 16);
}

/**
 * Imports a PKCS#8 PEM private key for signing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generatePem, importPrivatePem } from "./ed25519.ts";
 * const key = await importPrivatePem((await generatePem()).privatePem);
 * assert.deepEqual(key.usages, ["sign"]);
 * ```
 */
export async function importPrivatePem(pem: string): Promise<CryptoKey> {
  try {
    return await crypto.subtle.importKey(
      "pkcs8",
      pemToDer(pem, "PRIVATE KEY") as BufferSource,
      { name: "Ed25519" },
      false,
      ["sign"],
    );
  } catch (e) {
    if (e instanceof KeyError) throw e;
    throw new KeyError("KEY_MALFORMED", `not an Ed25519 private key: ${(e as Error).message}`);
  }
}

/**
 * Imports an SPKI PEM public key for verifying.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generatePem, importPublicPem } from "./ed25519.ts";
 * const key = await importPublicPem((await generatePem()).publicPem);
 * assert.deepEqual(key.usages, ["verify"]);
 * ```
 */
export async function importPublicPem(pem: string): Promise<CryptoKey> {
  try {
    return await crypto.subtle.importKey(
      "spki",
      pemToDer(pem, "PUBLIC KEY") as BufferSource,
      { name: "Ed25519" },
      true,
      ["verify"],
    );
  } catch (e) {
    if (e instanceof KeyError) throw e;
    throw new KeyError("KEY_MALFORMED", `not an Ed25519 public key: ${(e as Error).message}`);
  }
}

/**
 * The key id of a public key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generatePem, importPublicPem, keyIdOfKey } from "./ed25519.ts";
 * const { publicPem, keyId } = await generatePem();
 * assert.equal((await keyIdOfKey(await importPublicPem(publicPem))) === keyId, true);
 * ```
 */
export async function keyIdOfKey(pub: CryptoKey): Promise<string> {
  return keyIdOf(new Uint8Array(await crypto.subtle.exportKey("spki", pub)));
}

/**
 * Signs a message (string as UTF-8); returns 128 hex characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generatePem, importPrivatePem, signHex } from "./ed25519.ts";
 * const key = await importPrivatePem((await generatePem()).privatePem);
 * assert.equal((await signHex(key, "hello")).length, 128);
 * ```
 */
export async function signHex(key: CryptoKey, message: string | Uint8Array): Promise<string> {
  const data = typeof message === "string" ? enc.encode(message) : message;
  const sig = new Uint8Array(await crypto.subtle.sign("Ed25519", key, data as BufferSource));
  return sig.toHex();
}

/**
 * Verifies a hex signature; false for malformed hex.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generatePem, importPublicPem, verifyHex } from "./ed25519.ts";
 * const key = await importPublicPem((await generatePem()).publicPem);
 * assert.equal(await verifyHex(key, "not hex", "hello"), false);
 * ```
 */
export async function verifyHex(
  key: CryptoKey,
  sigHex: string,
  message: string | Uint8Array,
): Promise<boolean> {
  const h = sigHex.trim().toLowerCase();
  if (!/^[0-9a-f]{128}$/.test(h)) return false;
  const sig = Uint8Array.fromHex(h);
  const data = typeof message === "string" ? enc.encode(message) : message;
  return await crypto.subtle.verify("Ed25519", key, sig as BufferSource, data as BufferSource);
}
