/**
 * Sealed results: a box only one waiting process can open, and only the runner can have made.
 *
 * The waiting CLI makes an ephemeral X25519 pair per request and puts the public half in it. The
 * runner holds a static X25519 pair whose public half lies in the operator's key dir. For each
 * result the runner makes a fresh ephemeral pair and derives an AES-256-GCM key with HKDF-SHA-256
 * from both Diffie-Hellman shares (its ephemeral with the requester's, its static with the
 * requester's), bound to every public key and a context string (the result's id and its request's
 * digest). Whoever lacks the requester's private key cannot open the box; whoever lacks the
 * runner's static private key cannot make one the requester accepts (the static share is the
 * authenticator, as in Noise's K pattern). The box's additional data carries the result's clear
 * fields, so they are authenticated too.
 *
 * @example
 * ```ts
 * import { generateSealPair, openSealed, sealTo } from "./seal.ts";
 * const runner = await generateSealPair();
 * const waiter = await generateSealPair();
 * const box = await sealTo({
 *   runner, to: waiter.publicRaw, context: "id-1", clear: new Uint8Array([1]), secret: new Uint8Array([42]),
 * });
 * const out = await openSealed({
 *   own: waiter, runnerPublic: runner.publicRaw, context: "id-1", clear: new Uint8Array([1]), box,
 * });
 * out?.[0]; // 42
 * ```
 * @module
 */
import { KeyError } from "../errors.ts";
import { derToPem, pemToDer } from "./ed25519.ts";

const enc = new TextEncoder();

/** The HKDF info prefix: the construction's name and version. */
export const SEAL_INFO = "agentteams-result-seal-v1";

/** An X25519 pair: the private key for Diffie-Hellman, the public half as its 32 raw bytes. */
export interface SealPair {
  /** The private key (usable for `deriveBits` only). */
  readonly privateKey: CryptoKey;
  /** The public key's 32 bytes. */
  readonly publicRaw: Uint8Array;
}

/** A sealed box as it is written into a result (base64 fields). */
export interface SealedBox {
  /** The runner's ephemeral public key for this box. */
  readonly eph: string;
  /** The AES-GCM nonce (12 bytes). */
  readonly iv: string;
  /** Ciphertext and tag. */
  readonly box: string;
}

function b64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/**
 * Decodes standard base64, or returns null for anything else.
 *
 * @example
 * ```ts
 * import { unb64 } from "./seal.ts";
 * unb64("AAE=")?.length; // 2
 * unb64("not base64!"); // null
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
 * A new X25519 pair.
 *
 * @example
 * ```ts
 * import { generateSealPair } from "./seal.ts";
 * (await generateSealPair()).publicRaw.length; // 32
 * ```
 */
export async function generateSealPair(): Promise<SealPair> {
  const pair = await crypto.subtle.generateKey({ name: "X25519" }, true, [
    "deriveBits",
  ]) as CryptoKeyPair;
  const publicRaw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return { privateKey: pair.privateKey, publicRaw };
}

async function publicKeyOf(raw: Uint8Array): Promise<CryptoKey> {
  if (raw.length !== 32) throw new KeyError("KEY_MALFORMED", "an X25519 public key is 32 bytes");
  return await crypto.subtle.importKey("raw", Uint8Array.from(raw), { name: "X25519" }, true, []);
}

async function share(priv: CryptoKey, pub: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.deriveBits({ name: "X25519", public: await publicKeyOf(pub) }, priv, 256),
  );
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function boxKey(
  ee: Uint8Array,
  se: Uint8Array,
  keys: { requester: Uint8Array; eph: Uint8Array; runner: Uint8Array },
  context: string,
): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey("raw", Uint8Array.from(concat(ee, se)), "HKDF", false, [
    "deriveKey",
  ]);
  const info = concat(
    enc.encode(SEAL_INFO + "\0"),
    keys.requester,
    keys.eph,
    keys.runner,
    enc.encode(context),
  );
  return await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(32), info: Uint8Array.from(info) },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** What `sealTo` needs. */
export interface SealInput {
  /** The runner's static pair. */
  readonly runner: SealPair;
  /** The requester's ephemeral public key (32 bytes). */
  readonly to: Uint8Array;
  /** What the box is bound to (the result id, the request digest). */
  readonly context: string;
  /** The clear fields, authenticated as additional data. */
  readonly clear: Uint8Array;
  /** The secret bytes (empty when nothing is secret). */
  readonly secret: Uint8Array;
}

/**
 * Seals `secret` (and authenticates `clear`) to the requester's public key.
 *
 * @example
 * ```ts
 * import { generateSealPair, sealTo } from "./seal.ts";
 * const runner = await generateSealPair();
 * const to = (await generateSealPair()).publicRaw;
 * const box = await sealTo({ runner, to, context: "c", clear: new Uint8Array(), secret: new Uint8Array() });
 * typeof box.box; // "string"
 * ```
 */
export async function sealTo(input: SealInput): Promise<SealedBox> {
  const eph = await generateSealPair();
  const key = await boxKey(
    await share(eph.privateKey, input.to),
    await share(input.runner.privateKey, input.to),
    { requester: input.to, eph: eph.publicRaw, runner: input.runner.publicRaw },
    input.context,
  );
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: input.clear.slice() },
      key,
      input.secret.slice(),
    ),
  );
  return { eph: b64(eph.publicRaw), iv: b64(iv), box: b64(ct) };
}

/** What `openSealed` needs. */
export interface OpenInput {
  /** The requester's own ephemeral pair. */
  readonly own: SealPair;
  /** The runner's static public key, read from the operator's key dir. */
  readonly runnerPublic: Uint8Array;
  /** The context the box must be bound to. */
  readonly context: string;
  /** The clear fields as received. */
  readonly clear: Uint8Array;
  /** The box as received. */
  readonly box: SealedBox;
}

/**
 * Opens a box: its secret bytes, or null when it is not authentic (not made by the runner's
 * static key for this requester and context, or any byte of it or of the clear fields changed).
 *
 * @example
 * ```ts
 * import { generateSealPair, openSealed, sealTo } from "./seal.ts";
 * const runner = await generateSealPair();
 * const own = await generateSealPair();
 * const clear = new Uint8Array([7]);
 * const box = await sealTo({ runner, to: own.publicRaw, context: "c", clear, secret: new Uint8Array() });
 * (await openSealed({ own, runnerPublic: runner.publicRaw, context: "c", clear, box }))?.length; // 0
 * await openSealed({ own, runnerPublic: runner.publicRaw, context: "d", clear, box }); // null
 * ```
 */
export async function openSealed(input: OpenInput): Promise<Uint8Array | null> {
  const eph = unb64(input.box.eph);
  const ivRaw = unb64(input.box.iv);
  const ctRaw = unb64(input.box.box);
  const iv = ivRaw === null ? null : Uint8Array.from(ivRaw);
  const ct = ctRaw === null ? null : Uint8Array.from(ctRaw);
  if (eph === null || eph.length !== 32 || iv === null || iv.length !== 12 || ct === null) {
    return null;
  }
  try {
    const key = await boxKey(
      await share(input.own.privateKey, eph),
      await share(input.own.privateKey, input.runnerPublic),
      { requester: input.own.publicRaw, eph, runner: input.runnerPublic },
      input.context,
    );
    return new Uint8Array(
      await crypto.subtle.decrypt(
        { name: "AES-GCM", iv, additionalData: input.clear.slice() },
        key,
        ct,
      ),
    );
  } catch {
    return null;
  }
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
 * import { ackToken, generateSealPair } from "./seal.ts";
 * const runner = await generateSealPair();
 * const waiter = await generateSealPair();
 * const a = await ackToken(waiter.privateKey, runner.publicRaw,
 *   { waiter: waiter.publicRaw, runner: runner.publicRaw }, "id:sha");
 * const b = await ackToken(runner.privateKey, waiter.publicRaw,
 *   { waiter: waiter.publicRaw, runner: runner.publicRaw }, "id:sha");
 * a === b; // true
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
 * import { generateSealPair, sealPairToPem } from "./seal.ts";
 * const pems = await sealPairToPem(await generateSealPair());
 * pems.publicPem.startsWith("-----BEGIN PUBLIC KEY-----"); // true
 * ```
 */
export async function sealPairToPem(
  pair: SealPair,
): Promise<{ privatePem: string; publicPem: string }> {
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const spki = new Uint8Array(
    await crypto.subtle.exportKey("spki", await publicKeyOf(pair.publicRaw)),
  );
  return { privatePem: derToPem(pkcs8, PRIVATE_LABEL), publicPem: derToPem(spki, PUBLIC_LABEL) };
}

/**
 * The runner's pair from its PEM files' text.
 *
 * @throws {KeyError} `KEY_MALFORMED` when either is not an X25519 key
 * @example
 * ```ts
 * import { generateSealPair, sealPairFromPem, sealPairToPem } from "./seal.ts";
 * const p = await generateSealPair();
 * const { privatePem, publicPem } = await sealPairToPem(p);
 * (await sealPairFromPem(privatePem, publicPem)).publicRaw.length; // 32
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
    // The two halves must belong together: a box sealed with them opens with them.
    const probe = await generateSealPair();
    const box = await sealTo({
      runner: { privateKey, publicRaw },
      to: probe.publicRaw,
      context: "pair-check",
      clear: new Uint8Array(),
      secret: new Uint8Array(),
    });
    const ok = await openSealed({
      own: probe,
      runnerPublic: publicRaw,
      context: "pair-check",
      clear: new Uint8Array(),
      box,
    });
    if (ok === null) {
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
 * import { generateSealPair, sealPairToPem, sealPublicFromPem } from "./seal.ts";
 * const p = await generateSealPair();
 * (await sealPublicFromPem((await sealPairToPem(p)).publicPem)).length; // 32
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

/**
 * The public key as base64 (its form inside a request).
 *
 * @example
 * ```ts
 * import { publicB64 } from "./seal.ts";
 * publicB64(new Uint8Array(32)).length; // 44
 * ```
 */
export function publicB64(raw: Uint8Array): string {
  return b64(raw);
}
