/**
 * Operator key custody. The ledger key lives in a 0600 file inside a 0700 key directory owned by
 * the operator: `$AGENTTEAMS_KEY_DIR`, else `~/.config/agentteams/keys`. The file is
 * `$AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE` (which must lie inside the key dir), else
 * `<key dir>/proposal-ledger.key`. Its bytes, with surrounding ASCII whitespace stripped, are the
 * HMAC-SHA256 key.
 *
 * Direct (non-runner) mode may fall back to `AGENTTEAMS_PROPOSAL_LEDGER_KEY`, else
 * `AGENTTEAMS_DECISION_SIGNING_KEY` (their UTF-8 bytes, unstripped), but only when no key file is
 * present: once a file is in use the environment is ignored. The runner refuses to start while
 * any key variable is set. No key: every operation is refused (`NO_KEY`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { initKeys, loadLedgerKey } from "./keys.ts";
 * const env = { AGENTTEAMS_KEY_DIR: Deno.makeTempDirSync() + "/keys" };
 * await initKeys({ env });
 * const key = loadLedgerKey({ env, mode: "direct" });
 * assert.equal(key.source, "file");
 * ```
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "../fs/path.ts";
import { FsSafetyError, KeyError } from "../errors.ts";
import { HmacKey } from "./hash.ts";
import { generatePem, importPublicPem, keyIdOfKey } from "./ed25519.ts";
import { custodyProblem, readRegularFileSync } from "../fs/safe_read.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { fillNewFileSync, fsyncDirSync } from "../fs/atomic_write.ts";

import { type Env, homeFrom } from "../env.ts";
import { generateSealPair, type SealPair, sealPairFromPem, sealPairToPem } from "./x25519.ts";

/** Key variables that may stand in for a key file in direct mode, in order of preference. */
export const ENV_KEY_NAMES = [
  "AGENTTEAMS_PROPOSAL_LEDGER_KEY",
  "AGENTTEAMS_DECISION_SIGNING_KEY",
] as const;

/** Every variable key custody reads (the permission layer grants exactly these). */
export const KEY_ENV: readonly string[] = Object.freeze([
  "HOME",
  "AGENTTEAMS_KEY_DIR",
  "AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE",
  ...ENV_KEY_NAMES,
]);

/** The waiver ledger's HMAC key variable (lib/authz). */
export const WAIVER_KEY_ENV = "AGENTTEAMS_WAIVER_SIGNING_KEY";
/** The (non-widening) grant ledger's HMAC key variable (lib/authz). */
export const GRANT_KEY_ENV = "AGENTTEAMS_GRANT_SIGNING_KEY";
/** The decision log's HMAC key variable (its presence makes decision signing active). */
export const DECISION_KEY_ENV = ENV_KEY_NAMES[1];

/** Every variable the runner refuses to start with (they would leak a key into sessions). */
export const RUNNER_FORBIDDEN_ENV = [
  ...ENV_KEY_NAMES,
  WAIVER_KEY_ENV,
  GRANT_KEY_ENV,
] as const;

/** The decision log's HMAC key file `keys init --decision` makes (its bytes: the variable's value). */
export const DECISION_KEY_FILE = "decision-signing.key";
/** The waiver ledger's HMAC key file `keys init --waiver` makes (its bytes: the variable's value). */
export const WAIVER_KEY_FILE = "waiver-signing.key";

/**
 * The triad's HMAC signing keys `keys init` can make: for each, the file it writes in the key dir
 * and the variable the triad reads the key from (`lib/authz/signed.ts` `hmacKeyFrom`: the
 * variable's UTF-8 bytes, unstripped). The file holds exactly those bytes (64 hex characters, no
 * newline), so `VAR="$(cat FILE)"` gives the triad the key the file holds.
 */
export const TRIAD_KEYS = Object.freeze({
  decision: Object.freeze({ file: DECISION_KEY_FILE, env: DECISION_KEY_ENV }),
  waiver: Object.freeze({ file: WAIVER_KEY_FILE, env: WAIVER_KEY_ENV }),
});

/** A triad key `keys init` can make. */
export type TriadKeyKind = keyof typeof TRIAD_KEYS;

/** The key id of an SPKI PEM public key (as `generatePem` names a new pair's). */
async function keyIdOfPem(pem: string): Promise<string> {
  return await keyIdOfKey(await importPublicPem(pem));
}

/** Largest key file read. */
export const MAX_KEY_FILE_BYTES = 64 * 1024;

/** The ledger key file's name inside the key dir. */
export const LEDGER_KEY_FILE = "proposal-ledger.key";
/** The Ed25519 private key (PKCS#8 PEM) inside the key dir. */
export const SIGNING_KEY_FILE = "operator-ed25519.pem";
/** The Ed25519 public key (SPKI PEM) inside the key dir. */
export const VERIFY_KEY_FILE = "operator-ed25519.pub.pem";
/** The runner's static X25519 private key (PKCS#8 PEM) inside the key dir: it seals results. */
export const RUNNER_SEAL_KEY_FILE = "runner-x25519.pem";
/** The runner's static X25519 public key (SPKI PEM): the one key-dir file a waiting CLI reads. */
export const RUNNER_SEAL_PUB_FILE = "runner-x25519.pub.pem";

/**
 * Every secret file the key dir may hold (not the public keys): what a session must be denied
 * reading. The runner's X25519 key opens every sealed result and authenticates results as the
 * runner's; the triad's HMAC keys sign an operator's rows (probe 22c C7: only the first two were
 * asked for).
 */
export const SECRET_KEY_FILES: readonly string[] = Object.freeze([
  LEDGER_KEY_FILE,
  SIGNING_KEY_FILE,
  RUNNER_SEAL_KEY_FILE,
  DECISION_KEY_FILE,
  WAIVER_KEY_FILE,
]);

/** A loaded ledger key. */
export interface LedgerKey {
  /** The raw key bytes. */
  readonly bytes: Uint8Array;
  /** Where it came from. */
  readonly source: "file" | "env";
  /** The key file, when `source` is `file`. */
  readonly path: string | null;
  /** The variable, when `source` is `env`. */
  readonly envName: string | null;
  /** The HMAC keyed with these bytes. */
  readonly hmac: HmacKey;
}

/**
 * The key directory: `$AGENTTEAMS_KEY_DIR`, else `~/.config/agentteams/keys`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyDir } from "./keys.ts";
 * assert.equal(keyDir({ HOME: "/home/op" }), "/home/op/.config/agentteams/keys");
 * ```
 */
export function keyDir(env: Env): string {
  const explicit = env.AGENTTEAMS_KEY_DIR;
  if (explicit !== undefined && explicit !== "") {
    if (!isAbsolute(explicit)) {
      throw new KeyError("KEY_CUSTODY", `AGENTTEAMS_KEY_DIR must be absolute, got ${explicit}`);
    }
    return resolve(explicit);
  }
  return join(homeFrom(env), ".config", "agentteams", "keys");
}

/**
 * The ledger key file path, checked to lie inside the key dir.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ledgerKeyPath } from "./keys.ts";
 * assert.equal(ledgerKeyPath({ AGENTTEAMS_KEY_DIR: "/k" }), "/k/proposal-ledger.key");
 * ```
 */
export function ledgerKeyPath(env: Env): string {
  const dir = keyDir(env);
  const named = env.AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE;
  if (named === undefined || named === "") return join(dir, LEDGER_KEY_FILE);
  const abs = resolve(dir, named);
  if (!abs.startsWith(dir + "/")) {
    throw new KeyError(
      "KEY_OUTSIDE_KEY_DIR",
      `AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE (${named}) is not inside the key dir ${dir}`,
    );
  }
  return abs;
}

function currentUid(): number {
  const uid = Deno.uid();
  if (uid === null) throw new KeyError("KEY_CUSTODY", "cannot tell the current user on this OS");
  return uid;
}

/** Checks one directory of the key dir's custody chain. */
function checkKeyDirNode(path: string, uid: number): void {
  const st = lstatOrNullSync(path);
  if (st === null) throw new KeyError("NO_KEY", `key dir ${path} does not exist`);
  const problem = custodyProblem(st, { kind: "directory", uid, forbiddenModeBits: 0o077 });
  if (problem !== null) {
    throw new KeyError("KEY_CUSTODY", `key dir ${path} ${problem.why}; refused`);
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]);

/**
 * Strips ASCII whitespace from both ends (Python's `bytes.strip()`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stripAsciiWhitespace } from "./keys.ts";
 * assert.equal(stripAsciiWhitespace(new TextEncoder().encode(" k\n")).length, 1);
 * ```
 */
export function stripAsciiWhitespace(b: Uint8Array): Uint8Array {
  let s = 0;
  let e = b.length;
  while (s < e && WS.has(b[s])) s++;
  while (e > s && WS.has(b[e - 1])) e--;
  return b.subarray(s, e);
}

/**
 * Reads and checks a key file: regular (not a symlink, FIFO or device), owned by the user, no
 * group/other mode bits, at most 64 KiB, non-empty after stripping whitespace; every directory
 * from the key dir down to it passes the same custody checks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { initKeys, readKeyFile } from "./keys.ts";
 * const env = { AGENTTEAMS_KEY_DIR: Deno.makeTempDirSync() + "/k" };
 * const { ledgerKeyPath } = await initKeys({ env });
 * assert.equal(readKeyFile(ledgerKeyPath, env).length, 64);
 * ```
 */
export function readKeyFile(path: string, env: Env): Uint8Array {
  const uid = currentUid();
  const dir = keyDir(env);
  for (let d = dirname(path); d.length >= dir.length; d = dirname(d)) {
    checkKeyDirNode(d, uid);
    if (d === dir) break;
  }
  let bytes: Uint8Array;
  try {
    bytes = readRegularFileSync(path, {
      maxBytes: MAX_KEY_FILE_BYTES,
      ownerUid: uid,
      forbiddenModeBits: 0o077,
      what: "key file",
    }).bytes;
  } catch (e) {
    if (e instanceof FsSafetyError) {
      const code = e.code === "FILE_TOO_LARGE" ? "KEY_TOO_LARGE" : "KEY_CUSTODY";
      throw new KeyError(code, e.message, { cause: e });
    }
    throw e;
  }
  const key = stripAsciiWhitespace(bytes);
  if (key.length === 0) throw new KeyError("KEY_EMPTY", `key file ${path} is empty; refused`);
  return key.slice();
}

/** Options of {@link loadLedgerKey}. */
export interface LoadKeyOptions {
  /** The environment (e.g. `Deno.env.toObject()`). */
  env: Env;
  /** `direct`: env fallbacks allowed; `runner`: a key file only, and no key variable set. */
  mode: "direct" | "runner";
}

/**
 * Loads the ledger key under the custody rules above.
 *
 * @throws {KeyError} `NO_KEY`, `KEY_CUSTODY`, `KEY_EMPTY`, `KEY_TOO_LARGE`,
 *   `KEY_OUTSIDE_KEY_DIR`, `KEY_ENV_IN_RUNNER`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadLedgerKey } from "./keys.ts";
 * const key = loadLedgerKey({
 *   env: { HOME: "/nonexistent", AGENTTEAMS_PROPOSAL_LEDGER_KEY: "k" },
 *   mode: "direct",
 * });
 * assert.equal(key.source, "env");
 * ```
 */
export function loadLedgerKey(opts: LoadKeyOptions): LedgerKey {
  const { env, mode } = opts;
  if (mode === "runner") {
    const set = RUNNER_FORBIDDEN_ENV.filter((n) => env[n] !== undefined);
    if (set.length > 0) {
      throw new KeyError(
        "KEY_ENV_IN_RUNNER",
        `the runner refuses to start while ${set.join(", ")} is set; unset it and keep the key ` +
          `in the key file`,
      );
    }
  }
  const path = ledgerKeyPath(env);
  const named = env.AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE !== undefined &&
    env.AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE !== "";
  const present = lstatOrNullSync(path) !== null;
  if (present || named || mode === "runner") {
    if (!present) {
      throw new KeyError(
        "NO_KEY",
        `no ledger key: ${path} does not exist (run: agentteams keys init)`,
      );
    }
    const bytes = readKeyFile(path, env);
    return { bytes, source: "file", path, envName: null, hmac: new HmacKey(bytes) };
  }
  for (const name of ENV_KEY_NAMES) {
    const v = env[name];
    if (v !== undefined && v !== "") {
      const bytes = new TextEncoder().encode(v);
      return { bytes, source: "env", path: null, envName: name, hmac: new HmacKey(bytes) };
    }
  }
  throw new KeyError(
    "NO_KEY",
    `no ledger key: ${path} does not exist and no key variable is set (run: agentteams keys init)`,
  );
}

/** What {@link initKeys} created. */
export interface InitKeysResult {
  /** The key dir. */
  dir: string;
  /** The HMAC ledger key file. */
  ledgerKeyPath: string;
  /** The Ed25519 private key (PKCS#8 PEM). */
  signingKeyPath: string;
  /** The Ed25519 public key (SPKI PEM). */
  verifyKeyPath: string;
  /** The runner's X25519 private key (it seals results). */
  runnerKeyPath: string;
  /** The runner's X25519 public key (the waiting CLI reads it). */
  runnerPublicKeyPath: string;
  /** First 16 hex of SHA-256 of the public key's SPKI DER. */
  keyId: string;
  /**
   * Whether the ledger key and the Ed25519 pair were made now (`false`: they were there already,
   * and only triad keys were asked for; they were kept as they are).
   */
  made: boolean;
  /** The triad keys made now, each with the variable the triad reads it from. */
  triad: { kind: TriadKeyKind; path: string; env: string }[];
}

function writeNewFile(path: string, text: string, mode: number): void {
  let file: Deno.FsFile;
  try {
    // O_CREAT | O_EXCL: never replaces a file, never follows a symlink.
    file = Deno.openSync(path, { write: true, createNew: true, mode });
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) {
      throw new KeyError("KEY_EXISTS", `${path} already exists; refusing to replace a key`);
    }
    throw e;
  }
  try {
    // The umask can only narrow the mode; it is widened back by name, inside the operator's own
    // 0700 key directory.
    fillNewFileSync(
      file,
      path,
      new TextEncoder().encode(text),
      mode,
      () => new KeyError("KEY_CUSTODY", `${path} was replaced while being written`),
    );
  } finally {
    file.close();
  }
}

function ensureKeyDir(dir: string, uid: number): void {
  const st = lstatOrNullSync(dir);
  if (st === null) {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    Deno.chmodSync(dir, 0o700);
    fsyncDirSync(dirname(dir));
  }
  checkKeyDirNode(dir, uid);
}

/**
 * Creates the key dir (0700) and, inside it, the ledger key (32 random bytes as 64 hex
 * characters) and an Ed25519 signing pair, each written exclusively as 0600 (the public key
 * 0644). Refuses to replace any existing key (`KEY_EXISTS`). With `triad` (`keys init --decision
 * --waiver`), also each named triad HMAC key ({@link TRIAD_KEYS}: 32 random bytes as 64 hex
 * characters, no newline, 0600, exclusively); then a ledger key and Ed25519 pair that are all
 * there already are kept (only some of them there is still `KEY_EXISTS`), and a triad key that
 * exists is `KEY_EXISTS`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { initKeys } from "./keys.ts";
 * const r = await initKeys({ env: { AGENTTEAMS_KEY_DIR: Deno.makeTempDirSync() + "/k" } });
 * assert.equal(r.keyId.length, 16);
 * ```
 */
export async function initKeys(
  opts: { env: Env; triad?: readonly TriadKeyKind[] },
): Promise<InitKeysResult> {
  const uid = currentUid();
  const dir = keyDir(opts.env);
  const ledgerPath = ledgerKeyPath(opts.env);
  const signingPath = join(dir, SIGNING_KEY_FILE);
  const verifyPath = join(dir, VERIFY_KEY_FILE);
  const triad = [...new Set(opts.triad ?? [])].map((kind) => ({
    kind,
    path: join(dir, TRIAD_KEYS[kind].file),
    env: TRIAD_KEYS[kind].env,
  }));
  ensureKeyDir(dir, uid);
  if (dirname(ledgerPath) !== dir) ensureKeyDir(dirname(ledgerPath), uid);
  const base = [ledgerPath, signingPath, verifyPath];
  const present = base.filter((p) => lstatOrNullSync(p) !== null);
  // Asked only for triad keys, a complete set already there is kept, never replaced.
  const keep = triad.length > 0 && present.length === base.length;
  if (!keep && present.length > 0) {
    throw new KeyError("KEY_EXISTS", `${present[0]} already exists; refusing to replace a key`);
  }
  for (const t of triad) {
    if (lstatOrNullSync(t.path) !== null) {
      throw new KeyError("KEY_EXISTS", `${t.path} already exists; refusing to replace a key`);
    }
  }
  let keyId: string;
  if (keep) {
    // The public half (0644, not a secret): a regular file of the operator's, never a link.
    const pub = readRegularFileSync(verifyPath, {
      maxBytes: MAX_KEY_FILE_BYTES,
      ownerUid: uid,
      what: "verify key",
    });
    keyId = await keyIdOfPem(new TextDecoder().decode(pub.bytes));
  } else {
    const raw = crypto.getRandomValues(new Uint8Array(32));
    const hex = raw.toHex();
    const pair = await generatePem();
    writeNewFile(ledgerPath, hex + "\n", 0o600);
    writeNewFile(signingPath, pair.privatePem, 0o600);
    writeNewFile(verifyPath, pair.publicPem, 0o644);
    keyId = pair.keyId;
  }
  for (const t of triad) {
    writeNewFile(t.path, crypto.getRandomValues(new Uint8Array(32)).toHex(), 0o600);
  }
  fsyncDirSync(dir);
  await runnerSealPair(opts.env);
  return {
    dir,
    ledgerKeyPath: ledgerPath,
    signingKeyPath: signingPath,
    verifyKeyPath: verifyPath,
    runnerKeyPath: join(dir, RUNNER_SEAL_KEY_FILE),
    runnerPublicKeyPath: join(dir, RUNNER_SEAL_PUB_FILE),
    keyId,
    made: !keep,
    triad,
  };
}

/**
 * The runner's static X25519 pair, made on first use (both files absent) in the key dir: the
 * private half 0600 and custody-checked like every key, the public half 0644 for the waiting CLI.
 * One file without the other is refused.
 *
 * @throws {KeyError} `KEY_CUSTODY`, `KEY_MALFORMED`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runnerSealPair } from "./keys.ts";
 * const env = { AGENTTEAMS_KEY_DIR: Deno.makeTempDirSync() + "/k" };
 * Deno.mkdirSync(env.AGENTTEAMS_KEY_DIR, { mode: 0o700 });
 * assert.equal((await runnerSealPair(env)).publicRaw.length, 32);
 * ```
 */
export async function runnerSealPair(env: Env): Promise<SealPair> {
  const dir = keyDir(env);
  const priv = join(dir, RUNNER_SEAL_KEY_FILE);
  const pub = join(dir, RUNNER_SEAL_PUB_FILE);
  const has = [lstatOrNullSync(priv) !== null, lstatOrNullSync(pub) !== null];
  if (!has[0] && !has[1]) {
    checkKeyDirNode(dir, currentUid());
    const pems = await sealPairToPem(await generateSealPair());
    writeNewFile(priv, pems.privatePem, 0o600);
    writeNewFile(pub, pems.publicPem, 0o644);
    fsyncDirSync(dir);
  } else if (!has[0] || !has[1]) {
    throw new KeyError(
      "KEY_CUSTODY",
      `${has[0] ? pub : priv} is missing beside ${has[0] ? priv : pub}; restore it or remove ` +
        "both (a new pair is then made, and waiting CLIs read the new public key)",
    );
  }
  const dec = new TextDecoder();
  return await sealPairFromPem(dec.decode(readKeyFile(priv, env)), readRunnerPublicText(env));
}

/**
 * The runner's public key file's text, as a waiting CLI reads it: a regular file (not a symlink)
 * owned by the user and writable by no one else. Only this one file of the key dir is read, so
 * a CLI granted no other read of the key dir can still check who sealed its result.
 *
 * @throws {KeyError} `NO_KEY` (no runner key yet: start `agentteams serve` once), `KEY_CUSTODY`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readRunnerPublicText, runnerSealPair } from "./keys.ts";
 * const env = { AGENTTEAMS_KEY_DIR: Deno.makeTempDirSync() + "/k" };
 * Deno.mkdirSync(env.AGENTTEAMS_KEY_DIR, { mode: 0o700 });
 * await runnerSealPair(env);
 * assert.equal(readRunnerPublicText(env).startsWith("-----BEGIN PUBLIC KEY-----"), true);
 * ```
 */
export function readRunnerPublicText(env: Env): string {
  const path = join(keyDir(env), RUNNER_SEAL_PUB_FILE);
  try {
    const { bytes } = readRegularFileSync(path, {
      maxBytes: 4096,
      ownerUid: currentUid(),
      forbiddenModeBits: 0o022,
      what: "runner public key",
    });
    return new TextDecoder().decode(bytes);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new KeyError(
        "NO_KEY",
        `no runner public key at ${path}: the runner makes it when it first starts ` +
          "(agentteams serve), or agentteams keys init",
      );
    }
    if (e instanceof FsSafetyError) throw new KeyError("KEY_CUSTODY", e.message, { cause: e });
    throw e;
  }
}
