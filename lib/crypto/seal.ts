/**
 * Sealed results: a box only one waiting process can open, and only the runner can have made;
 * and sealed requests: a box only the runner can open, bound to the waiter's key.
 *
 * The box is RFC 9180 HPKE in its authenticated mode (`mode_auth`) with the suite
 * DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM (the RFC's Appendix A.1 suite, whose
 * official vectors tests/crypto/seal_test.ts checks), from `@hpke/core` on WebCrypto. The
 * waiting CLI makes an ephemeral X25519 pair per request and puts the public half in it (the
 * recipient key). The runner holds a static X25519 pair whose public half lies in the operator's
 * key dir (the sender's authentication key). For each result the runner's HPKE encapsulation makes
 * a fresh ephemeral pair (its public half is `eph`, HPKE's `enc`); the key schedule binds every
 * public key, and `info` binds the context (the result's id and its request's digest). Whoever
 * lacks the requester's private key cannot open the box; whoever lacks the runner's static private
 * key cannot make one the requester accepts. The box's additional data carries the result's clear
 * fields, so they are authenticated too. One box is one HPKE single-shot seal (sequence 0: the
 * nonce is the key schedule's base nonce, so none is sent). The key material (pairs, PEM, the
 * acknowledgement token) is lib/crypto/x25519.ts: only what seals or opens a box loads HPKE.
 *
 * Requests go the other way with the same construction ({@link sealRequestTo},
 * {@link openRequestBox}): the waiter's per-request pair is the sender's key, the runner's static
 * key the recipient, under their own `info` prefix ({@link REQUEST_SEAL_INFO}), so no box of one
 * direction opens as the other.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openSealed, sealTo } from "./seal.ts";
 * import { generateSealPair } from "./x25519.ts";
 * const runner = await generateSealPair();
 * const waiter = await generateSealPair();
 * const box = await sealTo({
 *   runner, to: waiter.publicRaw, context: "id-1", clear: new Uint8Array([1]), secret: new Uint8Array([42]),
 * });
 * const out = await openSealed({
 *   own: waiter, runnerPublic: runner.publicRaw, context: "id-1", clear: new Uint8Array([1]), box,
 * });
 * assert.deepEqual(out, new Uint8Array([42]));
 * ```
 * @module
 */
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from "@hpke/core";
import { type SealPair, unb64, x25519PublicKey } from "./x25519.ts";

const enc = new TextEncoder();

/**
 * The prefix of the HPKE `info` of a result's box: the construction's name and version (v1 was
 * the hand-built box before HPKE, with a random nonce sent as `iv`; no v1 box opens as v2).
 */
export const SEAL_INFO = "agentteams-result-seal-v2";

/** A sealed box as it is written into a result (base64 fields). */
export interface SealedBox {
  /** The runner's ephemeral public key for this box (HPKE's `enc`, 32 bytes). */
  readonly eph: string;
  /** Ciphertext and tag (HPKE's `ct`). */
  readonly box: string;
}

/**
 * The HPKE suite of every box: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM (RFC 9180
 * ids 0x0020, 0x0001, 0x0001). AES-128 matches X25519's ~128-bit strength; every box has its own
 * ephemeral key, so a key never encrypts twice.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SEAL_SUITE } from "./seal.ts";
 * assert.deepEqual([SEAL_SUITE.kem.id, SEAL_SUITE.kdf.id, SEAL_SUITE.aead.id], [0x20, 1, 1]);
 * ```
 */
export const SEAL_SUITE: CipherSuite = new CipherSuite({
  kem: new DhkemX25519HkdfSha256(),
  kdf: new HkdfSha256(),
  aead: new Aes128Gcm(),
});

/** A pair as HPKE takes it (its public half given, so nothing is derived from the private key). */
async function keyPairOf(pair: SealPair): Promise<CryptoKeyPair> {
  return { privateKey: pair.privateKey, publicKey: await x25519PublicKey(pair.publicRaw) };
}

/**
 * The HPKE `info` of a box bound to `context`: {@link SEAL_INFO}, a NUL, the context. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sealInfo } from "./seal.ts";
 * assert.equal(new TextDecoder().decode(sealInfo("id:sha")), "agentteams-result-seal-v2\0id:sha");
 * ```
 */
export function sealInfo(context: string): Uint8Array<ArrayBuffer> {
  return enc.encode(`${SEAL_INFO}\0${context}`);
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
 * Seals `secret` (and authenticates `clear`) to the requester's public key: one HPKE `mode_auth`
 * single-shot seal with the runner's static pair as the sender's key.
 *
 * @throws {KeyError} `KEY_MALFORMED` when `to` is not 32 bytes
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sealTo } from "./seal.ts";
 * import { generateSealPair, unb64 } from "./x25519.ts";
 * const runner = await generateSealPair();
 * const to = (await generateSealPair()).publicRaw;
 * const box = await sealTo({ runner, to, context: "c", clear: new Uint8Array(), secret: new Uint8Array(3) });
 * assert.equal(unb64(box.eph)?.length, 32);
 * assert.equal(unb64(box.box)?.length, 3 + 16); // the secret and the AES-GCM tag
 * ```
 */
export async function sealTo(input: SealInput): Promise<SealedBox> {
  return await sealAuth(input.runner, input.to, sealInfo(input.context), input.clear, input.secret);
}

/** One HPKE `mode_auth` single-shot seal of `pt` from `sender` to `to`, `aad` authenticated. */
async function sealAuth(
  sender: SealPair,
  to: Uint8Array,
  info: Uint8Array<ArrayBuffer>,
  aad: Uint8Array,
  pt: Uint8Array,
): Promise<SealedBox> {
  const recipientPublicKey = await x25519PublicKey(to);
  const out = await SEAL_SUITE.seal(
    { recipientPublicKey, senderKey: await keyPairOf(sender), info },
    pt.slice(),
    aad.slice(),
  );
  return { eph: new Uint8Array(out.enc).toBase64(), box: new Uint8Array(out.ct).toBase64() };
}

/** Opens what {@link sealAuth} made: the plaintext, or null when anything does not match. */
async function openAuth(
  own: SealPair,
  senderPublic: Uint8Array,
  info: Uint8Array<ArrayBuffer>,
  aad: Uint8Array,
  sealed: SealedBox,
): Promise<Uint8Array | null> {
  const eph = unb64(sealed.eph);
  const ct = unb64(sealed.box);
  if (eph === null || eph.length !== 32 || ct === null || senderPublic.length !== 32) {
    return null;
  }
  try {
    const pt = await SEAL_SUITE.open(
      {
        recipientKey: await keyPairOf(own),
        enc: eph.slice(),
        senderPublicKey: await x25519PublicKey(senderPublic),
        info,
      },
      ct.slice(),
      aad.slice(),
    );
    return new Uint8Array(pt);
  } catch {
    return null;
  }
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
 * import assert from "node:assert/strict";
 * import { openSealed, sealTo } from "./seal.ts";
 * import { generateSealPair } from "./x25519.ts";
 * const runner = await generateSealPair();
 * const own = await generateSealPair();
 * const clear = new Uint8Array([7]);
 * const box = await sealTo({ runner, to: own.publicRaw, context: "c", clear, secret: new Uint8Array() });
 * assert.equal((await openSealed({ own, runnerPublic: runner.publicRaw, context: "c", clear, box }))?.length, 0);
 * assert.equal(await openSealed({ own, runnerPublic: runner.publicRaw, context: "d", clear, box }), null);
 * ```
 */
export async function openSealed(input: OpenInput): Promise<Uint8Array | null> {
  return await openAuth(
    input.own,
    input.runnerPublic,
    sealInfo(input.context),
    input.clear,
    input.box,
  );
}

/**
 * The prefix of the HPKE `info` of a request's box (the other direction: a waiter to the
 * runner), so no result box ever opens as a request and no request box as a result.
 */
export const REQUEST_SEAL_INFO = "agentteams-request-seal-v1";

/**
 * The HPKE `info` of a request's box bound to `context` (its channel and id): {@link
 * REQUEST_SEAL_INFO}, a NUL, the context. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requestSealInfo } from "./seal.ts";
 * assert.equal(new TextDecoder().decode(requestSealInfo("mcp:ab")), "agentteams-request-seal-v1\0mcp:ab");
 * ```
 */
export function requestSealInfo(context: string): Uint8Array<ArrayBuffer> {
  return enc.encode(`${REQUEST_SEAL_INFO}\0${context}`);
}

/** What `sealRequestTo` needs. */
export interface RequestSealInput {
  /** The waiter's per-request pair (HPKE's sender key: the runner learns which waiter sent it). */
  readonly waiter: SealPair;
  /** The runner's static public key (32 bytes). */
  readonly runnerPublic: Uint8Array;
  /** What the box is bound to (the request's channel and id). */
  readonly context: string;
  /** Clear bytes authenticated with the box (the request file's clear fields). */
  readonly clear: Uint8Array;
  /** The request's bytes. */
  readonly request: Uint8Array;
}

/**
 * Seals a request's bytes to the runner's static key: one HPKE `mode_auth` single-shot seal with
 * the waiter's per-request pair as the sender's key, so only the runner opens it, and only for
 * that waiter's key and that context.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRequestBox, sealRequestTo } from "./seal.ts";
 * import { generateSealPair } from "./x25519.ts";
 * const runner = await generateSealPair();
 * const waiter = await generateSealPair();
 * const clear = new Uint8Array([1]);
 * const box = await sealRequestTo({ waiter, runnerPublic: runner.publicRaw, context: "c", clear,
 *   request: new Uint8Array([7]) });
 * const out = await openRequestBox({ runner, waiterPublic: waiter.publicRaw, context: "c", clear, box });
 * assert.deepEqual(out, new Uint8Array([7]));
 * ```
 */
export async function sealRequestTo(input: RequestSealInput): Promise<SealedBox> {
  return await sealAuth(
    input.waiter,
    input.runnerPublic,
    requestSealInfo(input.context),
    input.clear,
    input.request,
  );
}

/** What `openRequestBox` needs. */
export interface RequestOpenInput {
  /** The runner's static pair. */
  readonly runner: SealPair;
  /** The waiter's public key the request names (its reply key). */
  readonly waiterPublic: Uint8Array;
  /** The context the box must be bound to. */
  readonly context: string;
  /** The clear bytes as received. */
  readonly clear: Uint8Array;
  /** The box as received. */
  readonly box: SealedBox;
}

/**
 * Opens a request's box as the runner: its bytes, or null when it does not open (sealed to
 * another key, by another waiter's key, for another context, or any byte changed or cut).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRequestBox, sealRequestTo } from "./seal.ts";
 * import { generateSealPair } from "./x25519.ts";
 * const runner = await generateSealPair();
 * const waiter = await generateSealPair();
 * const clear = new Uint8Array();
 * const box = await sealRequestTo({ waiter, runnerPublic: runner.publicRaw, context: "a", clear,
 *   request: new Uint8Array([7]) });
 * assert.equal(await openRequestBox({ runner, waiterPublic: waiter.publicRaw, context: "b", clear, box }), null);
 * ```
 */
export async function openRequestBox(input: RequestOpenInput): Promise<Uint8Array | null> {
  return await openAuth(
    input.runner,
    input.waiterPublic,
    requestSealInfo(input.context),
    input.clear,
    input.box,
  );
}
