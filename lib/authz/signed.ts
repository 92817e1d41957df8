/**
 * The signed-ledger primitives the three instruments share: the payload (each value stripped as
 * Python's `str.strip()` does, joined with `|`, no escaping), the HMAC keys from the environment,
 * the Ed25519 verify-key store and the operator's signing key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signedPayload } from "./signed.ts";
 * assert.equal(signedPayload([" W-7 ", "act", ""]), "W-7|act|");
 * ```
 * @module
 */
import { AuthzError } from "../errors.ts";
import { hexEqual, HmacKey, sha256Hex } from "../crypto/hash.ts";
import { importPrivatePem, importPublicPem, keyIdOfKey, verifyHex } from "../crypto/ed25519.ts";
import type { Problem } from "./verdict.ts";
import { keyDir, readKeyFile, SIGNING_KEY_FILE, VERIFY_KEY_FILE } from "../crypto/keys.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { within } from "../fs/within.ts";
import { join } from "../fs/path.ts";
import { pyStrip } from "../pycompat/str.ts";
import type { Env } from "../env.ts";

export { DECISION_KEY_ENV, GRANT_KEY_ENV, WAIVER_KEY_ENV } from "./key_env.ts";

/** A key id: a file name in the verify-key store. */
export const KEY_ID_RE = /^[A-Za-z0-9._-]+$/;

/**
 * The signed payload of a row's values.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signedPayload } from "./signed.ts";
 * assert.equal(
 *   signedPayload(["2026-11-29", "overwrite", "PASS", "verified", "security", ""]),
 *   "2026-11-29|overwrite|PASS|verified|security|",
 * );
 * ```
 */
export function signedPayload(values: readonly string[]): string {
  // A plain loop: a chain check builds one payload per row, often before the JIT has warmed up.
  let out = values.length === 0 ? "" : pyStrip(values[0]);
  for (let i = 1; i < values.length; i++) out += "|" + pyStrip(values[i]);
  return out;
}

/**
 * An instrument's HMAC key from its variable (its UTF-8 bytes, unstripped), or `null` when unset
 * or empty: the instrument then fails closed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hmacKeyFrom, WAIVER_KEY_ENV } from "./signed.ts";
 * assert.equal(hmacKeyFrom({ [WAIVER_KEY_ENV]: "k" }, WAIVER_KEY_ENV) !== null, true);
 * assert.equal(hmacKeyFrom({}, WAIVER_KEY_ENV), null);
 * ```
 */
export function hmacKeyFrom(env: Env, name: string): HmacKey | null {
  const v = env[name];
  if (v === undefined || v === "") return null;
  // One keyed HMAC per environment and variable: a verify of 10,000 rows keys it once.
  let byName = KEYS.get(env);
  if (byName === undefined) KEYS.set(env, byName = new Map());
  const known = byName.get(name);
  if (known !== undefined && known.value === v) return known.key;
  const key = new HmacKey(new TextEncoder().encode(v));
  byName.set(name, { value: v, key });
  return key;
}

const KEYS = new WeakMap<Env, Map<string, { value: string; key: HmacKey }>>();

/**
 * The scheme a row names in `sig_scheme`: empty or `hmac` is HMAC, `ed25519` is Ed25519, anything
 * else `null` (refused).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { schemeOf } from "./signed.ts";
 * assert.equal(schemeOf({ sig_scheme: " Ed25519 " }), "ed25519");
 * assert.equal(schemeOf({}), "hmac");
 * ```
 */
export function schemeOf(rec: Record<string, string>): "hmac" | "ed25519" | null {
  const s = (Object.hasOwn(rec, "sig_scheme") ? rec.sig_scheme : "").trim().toLowerCase();
  if (s === "" || s === "hmac") return "hmac";
  return s === "ed25519" ? "ed25519" : null;
}

/** How {@link signatureProblem} checks one row. */
export interface SignatureCheck {
  /** The environment holding the HMAC key. */
  readonly env: Env;
  /** The HMAC key's variable. */
  readonly keyEnv: string;
  /** The Ed25519 verify-key store. */
  readonly store: VerifyKeyStore;
  /** What an HMAC row signs. */
  readonly payload: () => string;
  /** What an Ed25519 row signs. */
  readonly message: () => string;
  /** The instrument, for messages (`waiver`, `grant`, `decision`). */
  readonly what: string;
}

/**
 * Checks a row's signature by the scheme it names and by that scheme only (an Ed25519 row is
 * never accepted on an HMAC key, nor the reverse): synchronously for HMAC, a promise for
 * Ed25519. `null` when it verifies.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signatureProblem, VerifyKeyStore } from "./signed.ts";
 * const p = await signatureProblem({ signature: "00" }, {
 *   env: {}, keyEnv: "AGENTTEAMS_WAIVER_SIGNING_KEY", store: new VerifyKeyStore("/none"),
 *   payload: () => "p", message: () => "m", what: "waiver",
 * });
 * assert.equal(p?.code, "NO_SIGNING_KEY");
 * ```
 */
export function signatureProblem(
  rec: Record<string, string>,
  c: SignatureCheck,
): Problem | null | Promise<Problem | null> {
  const scheme = schemeOf(rec);
  const raw = typeof rec.signature === "string" ? rec.signature : "";
  if (scheme === null) {
    return {
      code: "SCHEME_UNKNOWN",
      reason: `sig_scheme ${JSON.stringify(rec.sig_scheme)} is not hmac or ed25519`,
    };
  }
  if (scheme === "ed25519") {
    return ed25519Problem(
      c.store,
      Object.hasOwn(rec, "key_id") ? rec.key_id : "",
      raw.trim().toLowerCase(),
      c.message(),
    );
  }
  const key = hmacKeyFrom(c.env, c.keyEnv);
  if (key === null) {
    return {
      code: "NO_SIGNING_KEY",
      reason: `${c.keyEnv} is not set, so no ${c.what} row can be verified (fail closed)`,
    };
  }
  // Compared as stored first (the usual lower-case hex), then stripped and lower-cased.
  const mac = key.hex(c.payload());
  return hexEqual(mac, raw) || hexEqual(mac, raw.trim().toLowerCase())
    ? null
    : { code: "SIGNATURE_INVALID", reason: "the HMAC signature does not verify" };
}

async function ed25519Problem(
  store: VerifyKeyStore,
  keyId: string,
  sig: string,
  message: string,
): Promise<Problem | null> {
  let key: CryptoKey;
  try {
    key = await store.key(keyId);
  } catch (e) {
    if (e instanceof AuthzError) return { code: e.code as Problem["code"], reason: e.message };
    throw e;
  }
  return await verifyHex(key, sig, message)
    ? null
    : { code: "SIGNATURE_INVALID", reason: "the Ed25519 signature does not verify" };
}

/** Where else a {@link VerifyKeyStore} looks, and what it refuses to trust. */
export interface VerifyKeyStoreOptions {
  /** Further trusted directories, after the first (e.g. the project's, behind the key dir's). */
  readonly also?: readonly string[];
  /**
   * A directory whose keys are not trusted here (a project store no deny rule keeps sessions
   * from writing, under the switch): a key found only there is refused with `why`
   * (`VERIFY_KEY_UNTRUSTED`), never read.
   */
  readonly untrusted?: { readonly dir: string; readonly why: string };
  /**
   * The operator's own verify key (`<key dir>/operator-ed25519.pub.pem`): trusted for the key id
   * it has, when no trusted directory holds that id.
   */
  readonly operator?: string;
}

/**
 * Reads `<store>/<key_id>.pub.pem` as Ed25519 public keys, each once per store: a key file
 * swapped after it was first read is not read again (the key a gate decided with is the key it
 * consumes with: a command, or one act of the runner, reads each key once).
 */
export class VerifyKeyStore {
  readonly #dir: string;
  readonly #dirs: readonly string[];
  readonly #untrusted: { readonly dir: string; readonly why: string } | null;
  readonly #operator: string | null;
  readonly #cache = new Map<string, Promise<CryptoKey>>();

  /**
   * A store rooted at `dir` (e.g. `<team dir>/references/authorized-verify-keys`), looking in
   * `opts.also` after it.
   */
  constructor(dir: string, opts: VerifyKeyStoreOptions = {}) {
    this.#dir = dir;
    this.#dirs = [dir, ...(opts.also ?? [])];
    this.#untrusted = opts.untrusted ?? null;
    this.#operator = opts.operator ?? null;
  }

  /** Every trusted directory, in the order a key is looked up. */
  get dirs(): readonly string[] {
    return this.#dirs;
  }

  /** The store's directory. */
  get dir(): string {
    return this.#dir;
  }

  /**
   * The SHA-256 of each key file's text in the store (`*.pub.pem`), sorted; `"unreadable"` for
   * one that is not a readable regular file. What a runner recorded trusting at its start.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { VerifyKeyStore } from "./signed.ts";
   * assert.deepEqual(new VerifyKeyStore("/nonexistent/authorized-verify-keys").fingerprints(), []);
   * ```
   */
  fingerprints(): string[] {
    let names: string[];
    try {
      names = [...Deno.readDirSync(this.#dir)].map((e) => e.name).filter((n) =>
        n.endsWith(".pub.pem")
      );
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw e;
    }
    return names.map((n) => {
      try {
        const { bytes } = readRegularFileSync(join(this.#dir, n), {
          maxBytes: 64 * 1024,
          what: "verify key",
        });
        return sha256Hex(new TextDecoder().decode(bytes));
      } catch {
        return "unreadable";
      }
    }).sort();
  }

  /**
   * The public key named by `keyId`.
   *
   * @throws {AuthzError} `KEY_ID_INVALID` (not `[A-Za-z0-9._-]+`, or escaping the store),
   *   `VERIFY_KEY_INVALID` (missing, a symlink, not an Ed25519 SPKI PEM).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { VerifyKeyStore } from "./signed.ts";
   * const store = new VerifyKeyStore("/t/references/authorized-verify-keys");
   * assert.equal(await store.key("../x").catch((e) => e.code), "KEY_ID_INVALID");
   * ```
   */
  key(keyId: string): Promise<CryptoKey> {
    const id = keyId.trim();
    let p = this.#cache.get(id);
    if (p === undefined) {
      p = this.#load(id);
      this.#cache.set(id, p);
    }
    return p;
  }

  /** The operator's own verify key when its id is `id`, else `null`. */
  async #operatorKey(id: string): Promise<CryptoKey | null> {
    const p = this.#operator;
    if (p === null || lstatOrNullSync(p) === null) return null;
    try {
      const pem = new TextDecoder().decode(
        readRegularFileSync(p, { maxBytes: 64 * 1024, what: "operator verify key" }).bytes,
      );
      const key = await importPublicPem(pem);
      return (await keyIdOfKey(key)) === id ? key : null;
    } catch {
      return null;
    }
  }

  async #load(id: string): Promise<CryptoKey> {
    const first = join(this.#dir, `${id}.pub.pem`);
    if (!KEY_ID_RE.test(id) || !within(first, this.#dir) || first === this.#dir) {
      throw new AuthzError(
        "KEY_ID_INVALID",
        `key_id ${JSON.stringify(id)} is not a key file name ([A-Za-z0-9._-]+)`,
      );
    }
    const path = this.#dirs.map((d) => join(d, `${id}.pub.pem`)).find((p) =>
      lstatOrNullSync(p) !== null
    );
    if (path === undefined) {
      const own = await this.#operatorKey(id);
      if (own !== null) return own;
      const u = this.#untrusted;
      if (u !== null && lstatOrNullSync(join(u.dir, `${id}.pub.pem`)) !== null) {
        throw new AuthzError(
          "VERIFY_KEY_UNTRUSTED",
          `the verify key for key_id ${id} is only in ${u.dir}, which is not trusted here: ${u.why}`,
        );
      }
      throw new AuthzError(
        "VERIFY_KEY_INVALID",
        `no verify key ${first} for key_id ${id} (put the signer's public key PEM there)`,
      );
    }
    let pem: string;
    try {
      pem = new TextDecoder().decode(
        readRegularFileSync(path, { maxBytes: 64 * 1024, what: "verify key", singleName: true })
          .bytes,
      );
    } catch (e) {
      throw new AuthzError("VERIFY_KEY_INVALID", `verify key ${path}: ${(e as Error).message}`);
    }
    try {
      return await importPublicPem(pem);
    } catch (e) {
      throw new AuthzError(
        "VERIFY_KEY_INVALID",
        `verify key ${path} is not an Ed25519 public key PEM: ${(e as Error).message}`,
      );
    }
  }
}

/** Where a store with no trusted directory looks (nothing is ever there). */
export const NO_KEYS_DIR = "/nonexistent/agentteams-no-trusted-verify-keys";

/**
 * A verify-key store that trusts no key: what a HALT check with no trust roots at hand reads
 * with (no Ed25519 retraction is authenticated, so every HALT stands: fail closed).
 */
export const NO_TRUSTED_KEYS: VerifyKeyStore = new VerifyKeyStore(NO_KEYS_DIR);

/** The operator's Ed25519 signing key (from `keys init`) with its key id. */
export interface OperatorSigner {
  /** The private key. */
  readonly key: CryptoKey;
  /** Its key id (16 hex of SHA-256 of the public key's SPKI). */
  readonly keyId: string;
  /** The public key PEM text (for the verify-key store). */
  readonly publicPem: string;
}

/**
 * Where an Ed25519 re-signing gets the operator's key: the key itself, none (`null`), or a loader
 * called only when a row signed with Ed25519 is actually re-signed (so a spend of an HMAC row
 * never reads the operator's private key).
 */
export type SignerSource = OperatorSigner | null | (() => Promise<OperatorSigner | null>);

/**
 * The signer a {@link SignerSource} names, loaded now when it is a loader.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signerOf } from "./signed.ts";
 * assert.equal(await signerOf(null), null);
 * assert.equal(await signerOf(() => Promise.resolve(null)), null);
 * ```
 */
export async function signerOf(source: SignerSource | undefined): Promise<OperatorSigner | null> {
  return typeof source === "function" ? await source() : source ?? null;
}

/**
 * Loads the operator's signing pair from the key dir under the key-custody rules (a 0600 file
 * owned by the user in a 0700 dir).
 *
 * @throws {KeyError} `NO_KEY` (run `agentteams keys init`), `KEY_CUSTODY`, ...
 * @example
 * ```ts ignore
 * // Not run: it needs the operator's key dir under /home/op/.config/agentteams/keys
 * import assert from "node:assert/strict";
 * import { operatorSigner } from "./signed.ts";
 * const s = await operatorSigner({ AGENTTEAMS_KEY_DIR: "/home/op/.config/agentteams/keys" });
 * assert.equal(s.keyId.length, 16);
 * ```
 */
export async function operatorSigner(env: Env): Promise<OperatorSigner> {
  const dir = keyDir(env);
  const privPath = join(dir, SIGNING_KEY_FILE);
  const pubPath = join(dir, VERIFY_KEY_FILE);
  const dec = new TextDecoder();
  const key = await importPrivatePem(dec.decode(readKeyFile(privPath, env)));
  const publicPem = dec.decode(
    readRegularFileSync(pubPath, { maxBytes: 64 * 1024, what: "operator verify key" }).bytes,
  );
  const keyId = await keyIdOfKey(await importPublicPem(publicPem));
  return { key, keyId, publicPem };
}

/**
 * {@link operatorSigner}, or `null` when the key dir holds no operator signing key (nothing at its
 * name): for a command that re-signs an Ed25519 row only when it meets one, and works without
 * the pair otherwise. A key that is there but fails its custody rules is refused, as
 * {@link operatorSigner} refuses it.
 *
 * @throws {KeyError} `KEY_CUSTODY`, ...
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { operatorSignerIfAny } from "./signed.ts";
 * assert.equal(await operatorSignerIfAny({ AGENTTEAMS_KEY_DIR: Deno.makeTempDirSync() }), null);
 * ```
 */
export async function operatorSignerIfAny(env: Env): Promise<OperatorSigner | null> {
  if (lstatOrNullSync(join(keyDir(env), SIGNING_KEY_FILE)) === null) return null;
  return await operatorSigner(env);
}
