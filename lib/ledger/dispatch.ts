/**
 * Dispatch nonces. The orchestrator issues a nonce per agent task; the agent's artifact carries
 * it back, and the agent's identity is read from the signed dispatch record, never from the
 * artifact. The nonce (32 hex characters) is printed once; the store
 * `.agentteams/dispatches.jsonl` keeps only `id = HMAC(key, "dispatch:" + nonce)`, so reading it
 * reveals no usable nonce.
 *
 * Store rows, each signed like ledger rows (`mac` over the canonical row without `mac`):
 * `{agent, expires, id, max_uses}`, `{use: id}`, `{attempt: id}`.
 *
 * Limits: a dispatch lives 24 hours and allows 25 uses (an artifact that acts) and 100 attempts
 * (every validated arrival, dry runs and refusals included). Every issue compacts away expired
 * dispatches and their rows. All of it serializes on `.agentteams/dispatches.lock`, a file that
 * is never replaced, so the last use cannot be spent twice however many processes race.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { issueDispatch, resolveDispatch } from "./dispatch.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const hmac = new HmacKey(new TextEncoder().encode("k"));
 * const { nonce } = await issueDispatch(root, hmac, "worker");
 * assert.equal((await resolveDispatch(root, hmac, nonce, { count: "attempt" })).agent, "worker");
 * ```
 * @module
 */
import { canonical } from "../pycompat/canonical.ts";
import type { HmacKey } from "../crypto/hash.ts";
import { DispatchError, LedgerError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { appendRow } from "./append.ts";
import { withFileLock } from "./ledger_lock.ts";
import {
  checkStatePath,
  ensureStateDir,
  slugProblem,
  type StatePaths,
  statePaths,
} from "../layout.ts";
import { lineVerifies, utcSeconds } from "./row.ts";
import { dispatchTag } from "./dispatch_acts.ts";

/** Largest dispatch store read into memory (by key holders, the run guard and `verify` alike). */
export const MAX_DISPATCH_STORE_BYTES = 256 * 1024 * 1024;
/** Hours a dispatch lives. */
export const DISPATCH_TTL_HOURS = 24;
/** Uses (acting artifacts) per dispatch. */
export const DISPATCH_MAX_USES = 25;
/** Attempts (validated arrivals) per dispatch: four times the use cap. */
export const DISPATCH_MAX_ATTEMPTS = 100;
/** Nonces. */
export const NONCE_RE = /^[0-9a-f]{32}$/;

/** A dispatch as the store records it, with its counters. */
export interface DispatchRecord {
  /** `HMAC(key, "dispatch:" + nonce)`, 64 hex. */
  id: string;
  /** The agent the nonce was issued to. */
  agent: string;
  /** Use cap. */
  maxUses: number;
  /** Expiry, ISO 8601 with offset. */
  expires: string;
  /** Uses spent. */
  uses: number;
  /** Attempts counted. */
  attempts: number;
}

/** Options shared by the dispatch calls. */
export interface DispatchOptions {
  /** The clock (default `() => new Date()`). */
  now?: () => Date;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * The stored id of a nonce.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dispatchId } from "./dispatch.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.equal(dispatchId(new HmacKey(new Uint8Array([1])), "0".repeat(32)).length, 64);
 * ```
 */
export function dispatchId(hmac: HmacKey, nonce: string): string {
  return hmac.hex("dispatch:" + nonce);
}

/**
 * Store lines known to verify under a key: those of its last whole read, plus the rows of one
 * dispatch verified since and those signed since. A run resolves its nonce twice (the attempt,
 * then the use), and the second read re-verifies only what other processes appended in between.
 * Bounded by the store: each whole read replaces the set, and a dispatch's own rows are at most
 * its uses and attempts.
 */
const verifiedLines = new WeakMap<HmacKey, Set<string>>();

function signStoreRow(hmac: HmacKey, row: Record<string, string | number>): string {
  const line = canonical({ ...row, mac: hmac.hex(canonical(row)) });
  verifiedLines.get(hmac)?.add(line);
  return line;
}

/** A parsed store: verified rows only. */
export interface Store {
  /** Dispatch rows by id. */
  dispatches: Map<string, { agent: string; expires: string; maxUses: number; line: string }>;
  /** `use` rows per id. */
  uses: Map<string, number>;
  /** `attempt` rows per id. */
  attempts: Map<string, number>;
  /** Verified lines, in order, with the id each one belongs to. */
  lines: { id: string; line: string }[];
  /** 1-based numbers of complete lines that do not verify. */
  invalid: number[];
  /** Bytes of complete lines: where the next row goes (an unterminated rest is cut there). */
  end: number;
}

/** A verified dispatch-store row. */
export type StoreRow =
  | {
    readonly kind: "dispatch";
    readonly id: string;
    readonly agent: string;
    readonly expires: string;
    readonly maxUses: number;
  }
  | { readonly kind: "use" | "attempt"; readonly id: string };

/**
 * Judges one dispatch-store line (no newline): the row it is, or why it is not one (not a JSON
 * object, no `mac` string, a MAC that does not verify under `hmac`, or none of the three kinds).
 * Every reader of the store decides with it: lookups, issues and the run guard (through
 * {@link parseStore}) and `ledger verify`. `macVerified` skips the MAC for a line already seen to
 * verify under the same key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { judgeStoreLine } from "./dispatch.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.equal(judgeStoreLine("[]", new HmacKey(new Uint8Array([1]))), "not a JSON object");
 * ```
 */
export function judgeStoreLine(
  line: string,
  hmac: HmacKey,
  macVerified = false,
): StoreRow | string {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return "not JSON";
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "not a JSON object";
  const o = v as Record<string, unknown>;
  if (typeof o.mac !== "string") return "no 'mac' string";
  if (!macVerified && !lineVerifies(line, hmac)) return "its MAC does not verify";
  if (
    typeof o.id === "string" && typeof o.agent === "string" && typeof o.expires === "string" &&
    typeof o.max_uses === "number"
  ) {
    return { kind: "dispatch", id: o.id, agent: o.agent, expires: o.expires, maxUses: o.max_uses };
  }
  if (typeof o.use === "string") return { kind: "use", id: o.use };
  if (typeof o.attempt === "string") return { kind: "attempt", id: o.attempt };
  return "a signed row that is neither a dispatch, a use nor an attempt";
}

/** Records one verified store row in `store` (a dispatch, or a use or attempt counted). */
function addRow(store: Store, row: StoreRow, line: string): void {
  if (row.kind === "dispatch") {
    store.dispatches.set(row.id, {
      agent: row.agent,
      expires: row.expires,
      maxUses: row.maxUses,
      line,
    });
  } else {
    const counts = row.kind === "use" ? store.uses : store.attempts;
    counts.set(row.id, (counts.get(row.id) ?? 0) + 1);
  }
  store.lines.push({ id: row.id, line });
}

/**
 * Parses complete dispatch-store lines (no newlines): each one must be a row
 * ({@link judgeStoreLine}), else its number is listed in `invalid`. Lines seen to verify under the
 * same key before are not verified again (see `verifiedLines`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseStore } from "./dispatch.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.deepEqual(parseStore(["{}"], new HmacKey(new Uint8Array([1]))).invalid, [1]);
 * ```
 */
export function parseStore(lines: readonly string[], hmac: HmacKey): Store {
  const store: Store = {
    dispatches: new Map(),
    uses: new Map(),
    attempts: new Map(),
    lines: [],
    invalid: [],
    end: 0,
  };
  const known = verifiedLines.get(hmac);
  const verified = new Set<string>();
  lines.forEach((line, i) => {
    const row = judgeStoreLine(line, hmac, known?.has(line) ?? false);
    if (typeof row === "string") {
      store.invalid.push(i + 1);
      return;
    }
    verified.add(line);
    addRow(store, row, line);
  });
  verifiedLines.set(hmac, verified);
  return store;
}

/** The store's complete lines and where they end (an unterminated rest is not a line). */
function readStoreLines(paths: StatePaths): { parts: string[]; end: number } {
  if (!checkStatePath(paths.dispatches, "file")) return { parts: [], end: 0 };
  const bytes = readRegularFileSync(paths.dispatches, {
    maxBytes: MAX_DISPATCH_STORE_BYTES,
    what: "dispatch store",
  }).bytes;
  const end = bytes.lastIndexOf(0x0a) + 1;
  // An unterminated last line is an interrupted append: it never counted, and is dropped.
  const parts = dec.decode(bytes.subarray(0, end)).split("\n");
  parts.pop();
  return { parts, end };
}

function readStore(paths: StatePaths, hmac: HmacKey): Store {
  const { parts, end } = readStoreLines(paths);
  return { ...parseStore(parts, hmac), end };
}

/**
 * The rows of dispatch `id` alone, each verified: a row names its dispatch by the id's 64 hex
 * characters, so a line without them is none of this dispatch's and is not judged (its MAC is
 * `ledger verify`'s to check). Any line naming the id that does not verify, or no dispatch row
 * for it, and the whole store is judged as before, so the refusal is the one it always was
 * (`LEDGER_TAMPERED`, `FOREIGN_KEY` or `DISPATCH_UNKNOWN`).
 */
function readOwnRows(paths: StatePaths, hmac: HmacKey, id: string): Store {
  const { parts, end } = readStoreLines(paths);
  const own: Store = {
    dispatches: new Map(),
    uses: new Map(),
    attempts: new Map(),
    lines: [],
    invalid: [],
    end,
  };
  // The attempt's read verified this dispatch's rows (and signed the one it added): the use's
  // read judges them without their MACs, and verifies only what was appended since.
  const known = verifiedLines.get(hmac);
  const verified = new Set<string>();
  for (let i = 0; i < parts.length; i++) {
    const line = parts[i];
    if (!line.includes(id)) continue;
    const row = judgeStoreLine(line, hmac, known?.has(line) ?? false);
    if (typeof row === "string") {
      own.invalid.push(i + 1);
      continue;
    }
    verified.add(line);
    if (row.id !== id) continue;
    addRow(own, row, line);
  }
  if (known === undefined) verifiedLines.set(hmac, verified);
  else for (const line of verified) known.add(line);
  if (own.invalid.length === 0 && own.dispatches.has(id)) return own;
  const whole = { ...parseStore(parts, hmac), end };
  if (whole.invalid.length > 0) throw storeTampered(whole);
  return whole;
}

function storeTampered(store: Store): LedgerError {
  const lines = store.invalid;
  if (store.lines.length === 0) {
    // Not one row verifies: far likelier the wrong key than tampering. Nothing is to be removed.
    return new LedgerError(
      "FOREIGN_KEY",
      `none of the dispatch store's ${lines.length} rows verifies with this key: they were ` +
        "signed with another one. Is AGENTTEAMS_KEY_DIR (or the key variable) this project's? " +
        "Nothing was changed",
    );
  }
  return new LedgerError(
    "LEDGER_TAMPERED",
    `the dispatch store has rows that do not verify (line ${lines.join(", ")}) among rows that ` +
      "do; inspect with `agentteams ledger verify`, then remove them by hand once understood",
  );
}

/**
 * A dispatch row's `expires` in ms since the epoch; unreadable is already expired.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expiresAt } from "./dispatch.ts";
 * assert.equal(expiresAt("not a date"), -Infinity);
 * ```
 */
export function expiresAt(expires: string): number {
  const t = Date.parse(expires);
  return Number.isNaN(t) ? -Infinity : t;
}

function randomNonce(): string {
  return crypto.getRandomValues(new Uint8Array(16)).toHex();
}

/** What {@link issueDispatch} returns. */
export interface IssuedDispatch {
  /** The nonce: shown once, never stored. */
  nonce: string;
  /** Its stored id. */
  id: string;
  /** Expiry. */
  expires: string;
  /** Dispatches dropped by compaction (expired). */
  compacted: number;
}

/**
 * Why a dispatch's limits are refused, or `null`: `maxUses` a whole number from 1 to
 * {@link DISPATCH_MAX_USES}, `ttlHours` a number above 0 and at most {@link DISPATCH_TTL_HOURS}
 * (a nonce allows 25 artifacts within 24 hours; a dispatch may allow fewer, never more).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { limitsProblem } from "./dispatch.ts";
 * assert.equal(limitsProblem({ maxUses: 3, ttlHours: 1 }), null);
 * assert.equal(limitsProblem({ maxUses: 26 }), "maxUses must be a whole number from 1 to 25, got 26");
 * ```
 */
export function limitsProblem(opts: { maxUses?: number; ttlHours?: number }): string | null {
  const { maxUses, ttlHours } = opts;
  if (
    maxUses !== undefined &&
    !(Number.isInteger(maxUses) && maxUses >= 1 && maxUses <= DISPATCH_MAX_USES)
  ) {
    return `maxUses must be a whole number from 1 to ${DISPATCH_MAX_USES}, got ${maxUses}`;
  }
  if (
    ttlHours !== undefined &&
    !(Number.isFinite(ttlHours) && ttlHours > 0 && ttlHours <= DISPATCH_TTL_HOURS)
  ) {
    return `ttlHours must be above 0 and at most ${DISPATCH_TTL_HOURS}, got ${ttlHours}`;
  }
  return null;
}

/**
 * Issues a nonce for `agent`: records the `issue-dispatch` ledger row (the intent), then rewrites
 * the store atomically with expired dispatches compacted away and the new dispatch added.
 *
 * @throws {DispatchError} `BAD_SLUG`, `BAD_LIMITS` (a `maxUses` or `ttlHours` beyond the spec's
 *   caps). {@link LedgerError} when the ledger refuses the row, and
 *   `LEDGER_TAMPERED` when a store line does not verify (the store is left as evidence).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { issueDispatch } from "./dispatch.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const d = await issueDispatch(Deno.makeTempDirSync(), new HmacKey(new Uint8Array([1])), "worker");
 * assert.equal(d.nonce.length, 32);
 * ```
 */
export function issueDispatch(
  root: string,
  hmac: HmacKey,
  agent: string,
  opts: DispatchOptions & { ttlHours?: number; maxUses?: number } = {},
): Promise<IssuedDispatch> {
  const bad = slugProblem(agent);
  if (bad !== null) return Promise.reject(new DispatchError("BAD_SLUG", bad));
  const limits = limitsProblem(opts);
  if (limits !== null) return Promise.reject(new DispatchError("BAD_LIMITS", limits));
  const now = opts.now ?? (() => new Date());
  const paths = ensureStateDir(root);
  return withFileLock(paths.dispatchLock, async () => {
    const t = now();
    const store = readStore(paths, hmac);
    if (store.invalid.length > 0) throw storeTampered(store);
    const nonce = randomNonce();
    const id = dispatchId(hmac, nonce);
    const expires = utcSeconds(
      new Date(t.getTime() + (opts.ttlHours ?? DISPATCH_TTL_HOURS) * 3600_000),
    );
    const live = new Set<string>();
    for (const [did, d] of store.dispatches) {
      if (expiresAt(d.expires) >= t.getTime()) live.add(did);
    }
    const kept = store.lines.filter((l) => live.has(l.id)).map((l) => l.line);
    const row = signStoreRow(hmac, {
      agent,
      expires,
      id,
      max_uses: opts.maxUses ?? DISPATCH_MAX_USES,
    });
    await appendRow(root, hmac, { action: "issue-dispatch", agent, id: dispatchTag(id) }, {
      now: () => t,
    });
    atomicWriteFileSync(paths.dispatches, [...kept, row].join("\n") + "\n", { mode: 0o600 });
    return {
      nonce,
      id,
      expires,
      compacted: store.dispatches.size - live.size,
    };
  });
}

/** What to count while resolving a nonce. */
export type CountKind = "none" | "attempt" | "use";

/**
 * Appends a row at `store.end`, the end of the complete lines the locked read found, and fsyncs
 * it; with `later`, the fsync is started and its promise returned (the file closed once it is
 * done), for a caller with work to do before anything depends on the row being durable.
 */
function appendStoreLine(
  paths: StatePaths,
  store: Store,
  line: string,
  later = false,
): Promise<void> | null {
  checkStatePath(paths.dispatches, "file");
  const f = Deno.openSync(paths.dispatches, { append: true, create: true, mode: 0o600 });
  let synced: Promise<void> | null = null;
  try {
    // An unterminated last line is an append that was interrupted: it never counted. Cut it,
    // so this row starts on a line of its own.
    if (f.statSync().size > store.end) f.truncateSync(store.end);
    const b = enc.encode(line + "\n");
    if (f.writeSync(b) !== b.length) throw new Error("short write to the dispatch store");
    if (later) synced = f.sync().finally(() => f.close());
    else f.syncSync();
    store.end += b.length;
    return synced;
  } finally {
    if (synced === null) f.close();
  }
}

/** A resolved dispatch, and when the attempt it counted is durable. */
export interface ResolvedDispatch extends DispatchRecord {
  /**
   * Settles once the row this resolve appended is on disk (at once when it appended none, or
   * fsynced it before returning); rejects with the fsync's error.
   */
  readonly durable: Promise<void>;
}

/**
 * Resolves a nonce to its signed dispatch record, refusing unknown, expired and exhausted ones,
 * and counts an attempt or spends a use, all under the dispatch lock.
 *
 * - `attempt`: refuses when 100 attempts were counted, else appends `{attempt: id}`;
 * - `use`: refuses when the use cap is reached, else appends `{use: id}`;
 * - `none`: counts nothing.
 *
 * When `expectAgent` is given, a record for another agent is refused (`AGENT_MISMATCH`) after the
 * attempt is counted.
 *
 * @throws {DispatchError} `BAD_NONCE`, `DISPATCH_UNKNOWN`, `DISPATCH_EXPIRED`,
 *   `DISPATCH_EXHAUSTED`, `ATTEMPTS_EXHAUSTED`, `AGENT_MISMATCH`;
 *   {@link LedgerError} `LEDGER_TAMPERED` when a store row does not verify.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { issueDispatch, resolveDispatch } from "./dispatch.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const k = new HmacKey(new Uint8Array([1]));
 * const { nonce } = await issueDispatch(root, k, "worker");
 * assert.equal((await resolveDispatch(root, k, nonce, { count: "use" })).uses, 1);
 * ```
 */
export function resolveDispatch(
  root: string,
  hmac: HmacKey,
  nonce: string,
  opts: DispatchOptions & {
    count: CountKind;
    expectAgent?: string;
    /**
     * Return once the attempt row is written, its fsync still running (`durable` says when it is
     * done): the act's checks overlap it. A caller awaits `durable` before anything that depends
     * on the attempt being counted on disk (the use, a refusal row, its answer).
     */
    attemptSyncLater?: boolean;
  },
): Promise<ResolvedDispatch> {
  if (typeof nonce !== "string" || !NONCE_RE.test(nonce)) {
    return Promise.reject(
      new DispatchError("BAD_NONCE", "a dispatch nonce is 32 lower-case hex characters"),
    );
  }
  const now = opts.now ?? (() => new Date());
  const paths = statePaths(root);
  try {
    // No store, no dispatch: refuse without creating any state.
    if (!checkStatePath(paths.dir, "dir") || !checkStatePath(paths.dispatches, "file")) {
      throw new DispatchError("DISPATCH_UNKNOWN", "no dispatch was issued for this nonce");
    }
  } catch (e) {
    return Promise.reject(e);
  }
  return withFileLock(paths.dispatchLock, async () => {
    const id = dispatchId(hmac, nonce);
    const store = readOwnRows(paths, hmac, id);
    const d = store.dispatches.get(id);
    if (d === undefined) {
      throw new DispatchError("DISPATCH_UNKNOWN", "no dispatch was issued for this nonce");
    }
    let durable: Promise<void> = Promise.resolve();
    const rec: DispatchRecord = {
      id,
      agent: d.agent,
      maxUses: d.maxUses,
      expires: d.expires,
      uses: store.uses.get(id) ?? 0,
      attempts: store.attempts.get(id) ?? 0,
    };
    if (expiresAt(d.expires) < now().getTime()) {
      throw new DispatchError("DISPATCH_EXPIRED", `the dispatch expired at ${d.expires}`);
    }
    if (rec.uses >= rec.maxUses) {
      throw new DispatchError(
        "DISPATCH_EXHAUSTED",
        `the dispatch has spent all ${rec.maxUses} of its uses`,
      );
    }
    const mismatch = opts.expectAgent !== undefined && opts.expectAgent !== rec.agent;
    if (opts.count === "attempt") {
      // Every validated arrival counts, a mismatched claim included.
      if (rec.attempts >= DISPATCH_MAX_ATTEMPTS) {
        throw new DispatchError(
          "ATTEMPTS_EXHAUSTED",
          `the dispatch has had ${rec.attempts} attempts, the limit`,
        );
      }
      durable = appendStoreLine(
        paths,
        store,
        signStoreRow(hmac, { attempt: id }),
        opts.attemptSyncLater === true,
      ) ?? durable;
      durable.catch(() => {}); // the caller's to await
      rec.attempts++;
    }
    if (mismatch) {
      // The refusal follows the attempt: it is counted on disk first.
      await durable;
      throw new DispatchError(
        "AGENT_MISMATCH",
        `the artifact claims agent '${opts.expectAgent}' but the nonce was issued to ` +
          `'${rec.agent}'`,
        { details: { agent: rec.agent, claimed: opts.expectAgent } },
      );
    }
    if (opts.count === "use") {
      // Only an act spends a use, and only an act whose identity holds.
      appendStoreLine(paths, store, signStoreRow(hmac, { use: id }));
      rec.uses++;
    }
    return { ...rec, durable };
  });
}

/**
 * The agent a nonce was issued to, counting nothing (the library's `agentFor`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentFor, issueDispatch } from "./dispatch.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const k = new HmacKey(new Uint8Array([1]));
 * assert.equal(await agentFor(root, k, (await issueDispatch(root, k, "qa")).nonce), "qa");
 * ```
 */
export async function agentFor(root: string, hmac: HmacKey, nonce: string): Promise<string> {
  return (await resolveDispatch(root, hmac, nonce, { count: "none" })).agent;
}
