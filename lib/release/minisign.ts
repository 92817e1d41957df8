/**
 * minisign's file formats (https://jedisct1.github.io/minisign/), so a release signed here
 * verifies with `minisign -V` and one signed by `minisign -S` verifies here.
 *
 * - Public key: `untrusted comment: ...` then base64(`"Ed"` || key id (8 bytes) || Ed25519
 *   public key (32 bytes)).
 * - Signature: `untrusted comment: ...`, base64(algorithm (2) || key id (8) || signature (64)),
 *   `trusted comment: ...`, base64(global signature (64)). The algorithm is `ED` (pre-hashed: the
 *   signature is Ed25519 over BLAKE2b-512 of the file, minisign's default since 0.10) or `Ed`
 *   (legacy: Ed25519 over the file itself). The global signature is Ed25519 over the signature's
 *   64 bytes followed by the trusted comment's bytes, so the trusted comment cannot be edited.
 *
 * This module signs pre-hashed (`ED`) only and verifies both. Ed25519 is WebCrypto's, BLAKE2b-512
 * `node:crypto`'s. A key made by `keys init` (PKCS#8 PEM) signs; its minisign key id is the first
 * 8 bytes of the SHA-256 of its SPKI (the `key_id` checkpoints and grants name, as bytes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { minisignPublicKeyText, signMinisign, verifyMinisign } from "./minisign.ts";
 * import { generatePem } from "../crypto/ed25519.ts";
 * const { privatePem } = await generatePem();
 * const data = new TextEncoder().encode("abc  agentteams-x\n");
 * const sig = await signMinisign(privatePem, data, "timestamp:0\tfile:SHA256SUMS\thashed");
 * const pub = await minisignPublicKeyText(privatePem);
 * assert.equal((await verifyMinisign(pub, sig, data)).trustedComment, "timestamp:0\tfile:SHA256SUMS\thashed");
 * ```
 * @module
 */
import { createHash } from "node:crypto";
import { keyIdOf, pemToDer } from "../crypto/ed25519.ts";
import { ReleaseError } from "../errors.ts";

const enc = new TextEncoder();
const UNTRUSTED = "untrusted comment: ";
const TRUSTED = "trusted comment: ";

/** A parsed minisign public key. */
export interface MinisignPublicKey {
  /** The 8-byte key id. */
  readonly keyId: Uint8Array;
  /** The raw 32-byte Ed25519 public key. */
  readonly key: Uint8Array;
}

/** A parsed minisign signature file. */
export interface MinisignSignature {
  /** `ED` (pre-hashed, BLAKE2b-512) or `Ed` (legacy, the file itself). */
  readonly algorithm: "ED" | "Ed";
  /** The 8-byte id of the key that signed. */
  readonly keyId: Uint8Array;
  /** The 64-byte signature over the file (or its hash). */
  readonly signature: Uint8Array;
  /** The trusted comment's text (after `trusted comment: `). */
  readonly trustedComment: string;
  /** The 64-byte signature over `signature` || the trusted comment. */
  readonly globalSignature: Uint8Array;
}

function b64decode(s: string, what: string, length: number): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(s.trim()), (c) => c.charCodeAt(0));
  } catch {
    throw new ReleaseError("RELEASE_MALFORMED", `${what} is not base64`);
  }
  if (bytes.length !== length) {
    throw new ReleaseError(
      "RELEASE_MALFORMED",
      `${what} holds ${bytes.length} bytes, not the ${length} minisign's format has`,
    );
  }
  return bytes;
}

function b64encode(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** The lines of a minisign file (a final newline and CRs before newlines allowed). */
function linesOf(text: string): string[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * A key id as minisign prints it: the 8 bytes read as a little-endian integer, 16 upper-case hex.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyIdText } from "./minisign.ts";
 * assert.equal(keyIdText(new Uint8Array([1, 0, 0, 0, 0, 0, 0, 0xab])), "AB00000000000001");
 * ```
 */
export function keyIdText(keyId: Uint8Array): string {
  return [...keyId].reverse().map((b) => b.toString(16).padStart(2, "0")).join("").toUpperCase();
}

/**
 * Parses a minisign public key file (or its base64 line alone, as `minisign -P` takes it).
 *
 * @throws {ReleaseError} `RELEASE_MALFORMED` when it is not one.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMinisignPublicKey } from "./minisign.ts";
 * const k = parseMinisignPublicKey("RWQBAgMEBQYHCAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
 * assert.deepEqual(k.keyId, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
 * ```
 */
export function parseMinisignPublicKey(text: string): MinisignPublicKey {
  const lines = linesOf(text).filter((l) => l.trim() !== "");
  const body = lines.length === 2 && lines[0].startsWith(UNTRUSTED)
    ? lines[1]
    : lines.length === 1
    ? lines[0]
    : null;
  if (body === null) {
    throw new ReleaseError(
      "RELEASE_MALFORMED",
      "the public key is not a minisign public key (an `untrusted comment:` line, then one " +
        "base64 line)",
    );
  }
  const bytes = b64decode(body, "the public key", 42);
  if (bytes[0] !== 0x45 || bytes[1] !== 0x64) {
    throw new ReleaseError("RELEASE_MALFORMED", "the public key is not an Ed25519 (Ed) key");
  }
  return { keyId: bytes.slice(2, 10), key: bytes.slice(10) };
}

/**
 * Parses a minisign signature file.
 *
 * @throws {ReleaseError} `RELEASE_MALFORMED` when it is not one.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMinisignSignature } from "./minisign.ts";
 * assert.throws(() => parseMinisignSignature("not a signature"), { code: "RELEASE_MALFORMED" });
 * ```
 */
export function parseMinisignSignature(text: string): MinisignSignature {
  const lines = linesOf(text);
  if (
    lines.length !== 4 || !lines[0].startsWith(UNTRUSTED) || !lines[2].startsWith(TRUSTED)
  ) {
    throw new ReleaseError(
      "RELEASE_MALFORMED",
      "the signature is not a minisign signature (four lines: untrusted comment, signature, " +
        "trusted comment, global signature)",
    );
  }
  const sig = b64decode(lines[1], "the signature line", 74);
  const alg = String.fromCharCode(sig[0], sig[1]);
  if (alg !== "ED" && alg !== "Ed") {
    throw new ReleaseError(
      "RELEASE_MALFORMED",
      `the signature's algorithm is ${JSON.stringify(alg)}, neither ED nor Ed`,
    );
  }
  return {
    algorithm: alg,
    keyId: sig.slice(2, 10),
    signature: sig.slice(10),
    trustedComment: lines[2].slice(TRUSTED.length),
    globalSignature: b64decode(lines[3], "the global signature line", 64),
  };
}

function blake2b512(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("blake2b512").update(data).digest());
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The signing key and its minisign key id, from a PKCS#8 PEM Ed25519 private key. */
async function signingKey(
  privatePem: string,
): Promise<{ key: CryptoKey; keyId: Uint8Array; pub: Uint8Array }> {
  const der = pemToDer(privatePem, "PRIVATE KEY");
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("pkcs8", der as BufferSource, { name: "Ed25519" }, true, [
      "sign",
    ]);
  } catch (e) {
    throw new ReleaseError(
      "RELEASE_MALFORMED",
      `the key is not an Ed25519 private key: ${(e as Error).message}`,
    );
  }
  const jwk = await crypto.subtle.exportKey("jwk", key);
  const pub = Uint8Array.from(
    atob((jwk.x ?? "").replace(/-/g, "+").replace(/_/g, "/")),
    (c) => c.charCodeAt(0),
  );
  const pubKey = await crypto.subtle.importKey(
    "raw",
    pub as BufferSource,
    { name: "Ed25519" },
    true,
    [
      "verify",
    ],
  );
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pubKey));
  return { key, keyId: Uint8Array.fromHex(keyIdOf(spki)), pub };
}

/**
 * The minisign public key file for a PKCS#8 PEM Ed25519 private key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { minisignPublicKeyText } from "./minisign.ts";
 * import { generatePem } from "../crypto/ed25519.ts";
 * assert.equal((await minisignPublicKeyText((await generatePem()).privatePem)).startsWith(
 *   "untrusted comment: minisign public key ",
 * ), true);
 * ```
 */
export async function minisignPublicKeyText(privatePem: string): Promise<string> {
  const { keyId, pub } = await signingKey(privatePem);
  const body = new Uint8Array([0x45, 0x64, ...keyId, ...pub]);
  return `${UNTRUSTED}minisign public key ${keyIdText(keyId)}\n${b64encode(body)}\n`;
}

/**
 * A pre-hashed (`ED`) minisign signature of `data`, with `trustedComment` (one line) signed too.
 *
 * @throws {ReleaseError} `RELEASE_MALFORMED` for a key that is not an Ed25519 PKCS#8 PEM, or a
 *   trusted comment holding a line break.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signMinisign } from "./minisign.ts";
 * import { generatePem } from "../crypto/ed25519.ts";
 * const sig = await signMinisign((await generatePem()).privatePem, new Uint8Array(), "t");
 * assert.equal(sig.split("\n")[2], "trusted comment: t");
 * ```
 */
export async function signMinisign(
  privatePem: string,
  data: Uint8Array,
  trustedComment: string,
): Promise<string> {
  if (/[\r\n]/.test(trustedComment)) {
    throw new ReleaseError("RELEASE_MALFORMED", "a trusted comment is one line");
  }
  const { key, keyId } = await signingKey(privatePem);
  const sign = async (m: Uint8Array) =>
    new Uint8Array(await crypto.subtle.sign("Ed25519", key, m as BufferSource));
  const signature = await sign(blake2b512(data));
  const global = await sign(new Uint8Array([...signature, ...enc.encode(trustedComment)]));
  const line = new Uint8Array([0x45, 0x44, ...keyId, ...signature]);
  return `${UNTRUSTED}signature from agentteams secret key ${keyIdText(keyId)}\n` +
    `${b64encode(line)}\n${TRUSTED}${trustedComment}\n${b64encode(global)}\n`;
}

/**
 * Verifies a minisign signature (`ED` or `Ed`) of `data` under a minisign public key, the global
 * signature over the trusted comment included; returns what was signed about it.
 *
 * @throws {ReleaseError} `RELEASE_MALFORMED` for a file that is not a key or a signature;
 *   `RELEASE_WRONG_KEY` when another key signed; `RELEASE_SIGNATURE_INVALID` when the signature
 *   or the global signature does not verify (the data or the trusted comment were changed).
 * @example
 * ```ts ignore
 * // Not run: it needs pub, which it declares rather than makes.
 * import { verifyMinisign } from "./minisign.ts";
 * declare const pub: string, sig: string, data: Uint8Array;
 * (await verifyMinisign(pub, sig, data)).algorithm; // "ED"
 * ```
 */
export async function verifyMinisign(
  publicKeyText: string,
  signatureText: string,
  data: Uint8Array,
): Promise<{ algorithm: "ED" | "Ed"; trustedComment: string; keyId: string }> {
  const pub = parseMinisignPublicKey(publicKeyText);
  const sig = parseMinisignSignature(signatureText);
  if (!sameBytes(pub.keyId, sig.keyId)) {
    throw new ReleaseError(
      "RELEASE_WRONG_KEY",
      `the signature was made by key ${keyIdText(sig.keyId)}, not by the public key given ` +
        `(${keyIdText(pub.keyId)})`,
    );
  }
  const key = await crypto.subtle.importKey(
    "raw",
    pub.key as BufferSource,
    { name: "Ed25519" },
    false,
    [
      "verify",
    ],
  );
  const verify = (s: Uint8Array, m: Uint8Array) =>
    crypto.subtle.verify("Ed25519", key, s as BufferSource, m as BufferSource);
  const message = sig.algorithm === "ED" ? blake2b512(data) : data;
  if (!await verify(sig.signature, message)) {
    throw new ReleaseError(
      "RELEASE_SIGNATURE_INVALID",
      "the signature does not verify: the signed file was changed, or the signature was",
    );
  }
  const comment = enc.encode(sig.trustedComment);
  if (!await verify(sig.globalSignature, new Uint8Array([...sig.signature, ...comment]))) {
    throw new ReleaseError(
      "RELEASE_SIGNATURE_INVALID",
      "the trusted comment's signature does not verify: the comment was changed",
    );
  }
  return {
    algorithm: sig.algorithm,
    trustedComment: sig.trustedComment,
    keyId: keyIdText(sig.keyId),
  };
}
