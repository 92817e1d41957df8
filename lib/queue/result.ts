/**
 * A result file: its clear body, the box sealed to the requester (which authenticates the body
 * and carries what must stay secret, a dispatch's nonce), and the operator's MAC. Written by the
 * runner into the session-readable status folder; opened by the waiting CLI, which refuses any
 * result whose box does not open (forged, edited, replayed to another waiter, or for another
 * request).
 *
 * @module
 */
import { canonical, canonicalBytes, type JsonObject } from "../pycompat/canonical.ts";
import type { HmacKey } from "../crypto/hash.ts";
import { openSealed, type SealedBox, type SealPair, sealTo, unb64 } from "../crypto/seal.ts";
import { QueueError } from "../errors.ts";
import type { RequestKind } from "./queued_request.ts";

/** Largest result file written (and read). */
export const MAX_RESULT_BYTES = 2 * 1024 * 1024;
/** A cut result's streams keep this many characters each. */
export const CUT_STREAM_CHARS = 16 * 1024;
/** A cut result keeps this many undeclared writes. */
export const CUT_WRITES = 200;
/** A cut error message keeps this many characters. */
export const CUT_ERROR_CHARS = 4000;

/** The clear part of a result. */
export interface ResultBody {
  readonly v: 1;
  readonly id: string;
  readonly ok: boolean;
  readonly kind: RequestKind | null;
  readonly exit: number;
  readonly queue_wait_ms: number | null;
  readonly serve_ms: number;
  readonly request_sha256: string;
  readonly result?: JsonObject;
  readonly error?: JsonObject;
  readonly result_cut?: true;
}

/** A result file's whole content. */
export interface ResultFile extends ResultBody {
  readonly seal: SealedBox | null;
  readonly mac: string;
}

/**
 * The context a result's box and its acknowledgement are bound to: the result's id and its
 * request's bytes. Pure.
 *
 * @example
 * ```ts
 * import { contextOf } from "./result.ts";
 * contextOf("i", "d"); // "i:d"
 * ```
 */
export function contextOf(id: string, requestSha256: string): string {
  return `${id}:${requestSha256}`;
}

function cutStr(v: unknown, n: number): unknown {
  return typeof v === "string" && v.length > n ? v.slice(0, n) : v;
}

/**
 * The body cut to fit a result file: streams to 16 KiB, undeclared writes to 200, the error
 * message to 4000 characters (`result_cut: true`); when even that is too large, only the verdict
 * and a pointer to the ledger. Pure.
 *
 * @example
 * ```ts
 * import { cutToFit } from "./result.ts";
 * const body = { v: 1 as const, id: "0".repeat(32), ok: true, kind: "run-request" as const, exit: 0,
 *   queue_wait_ms: 1, serve_ms: 2, request_sha256: "0".repeat(64), result: { stdout: "x".repeat(3e6) } };
 * (cutToFit(body).result?.stdout as string).length; // 16384
 * ```
 */
export function cutToFit(body: ResultBody, max = MAX_RESULT_BYTES): ResultBody {
  if (canonical(body).length <= max - 1024) return body;
  const result = body.result === undefined ? undefined : { ...body.result };
  if (result !== undefined) {
    for (const k of ["stdout", "stderr"]) {
      if (k in result) result[k] = cutStr(result[k], CUT_STREAM_CHARS) as string;
    }
    const w = result.undeclared_writes;
    if (Array.isArray(w) && w.length > CUT_WRITES) {
      result.undeclared_writes = [
        ...w.slice(0, CUT_WRITES),
        `... and ${w.length - CUT_WRITES} more`,
      ];
    }
    if ("truncated" in result) result.truncated = true;
  }
  const error = body.error === undefined
    ? undefined
    : { ...body.error, message: cutStr(body.error.message, CUT_ERROR_CHARS) as string };
  const cut: ResultBody = {
    ...body,
    ...(result !== undefined ? { result } : {}),
    ...(error !== undefined ? { error } : {}),
    result_cut: true,
  };
  if (canonical(cut).length <= max - 1024) return cut;
  const { result: _r, error: _e, ...rest } = cut;
  return {
    ...rest,
    error: {
      code: "RESULT_TOO_LARGE",
      message: "the result is too large to return; see the ledger (agentteams ledger show)",
    },
  };
}

/** What sealing a result needs. */
export interface SealResultOptions {
  /** The runner's static pair. */
  readonly runner: SealPair;
  /** The requester's reply key (raw), or null when the request carried none readable. */
  readonly replyKey: Uint8Array | null;
  /** The ledger key, for the operator's MAC. */
  readonly hmac: HmacKey;
}

/**
 * A result file's text: the body cut to fit, sealed to the requester with `secret` inside (a
 * dispatch's nonce), MAC'd with the ledger key.
 *
 * @example
 * ```ts
 * import { resultText } from "./result.ts";
 * import { generateSealPair } from "../crypto/seal.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const runner = await generateSealPair();
 * const waiter = await generateSealPair();
 * const text = await resultText({ v: 1, id: "0".repeat(32), ok: true, kind: "verify-ledger", exit: 0,
 *   queue_wait_ms: 3, serve_ms: 4, request_sha256: "0".repeat(64), result: { ok: true } }, null,
 *   { runner, replyKey: waiter.publicRaw, hmac: new HmacKey(new Uint8Array(32)) });
 * JSON.parse(text).seal !== null; // true
 * ```
 */
export async function resultText(
  body: ResultBody,
  secret: JsonObject | null,
  opts: SealResultOptions,
): Promise<string> {
  const fit = cutToFit(body);
  const seal = opts.replyKey === null ? null : await sealTo({
    runner: opts.runner,
    to: opts.replyKey,
    context: contextOf(fit.id, fit.request_sha256),
    clear: canonicalBytes(fit),
    secret: secret === null ? new Uint8Array() : canonicalBytes(secret),
  });
  const signed = { ...fit, seal };
  const mac = opts.hmac.hex(canonical(signed));
  return JSON.stringify({ ...signed, mac }) + "\n";
}

/** An opened result: the body, and the secret the box carried (parsed), if any. */
export interface OpenedResult {
  readonly body: ResultBody;
  readonly secret: JsonObject | null;
}

/** What the waiter checks a result against. */
export interface OpenResultOptions {
  /** The id it waits for. */
  readonly id: string;
  /** The SHA-256 (hex) of the exact bytes of the request it wrote. */
  readonly requestBytesSha256: string;
  /** Its own ephemeral pair. */
  readonly own: SealPair;
  /** The runner's static public key, from the operator's key dir. */
  readonly runnerPublic: Uint8Array;
}

function notAuthentic(why: string): QueueError {
  return new QueueError(
    "RESULT_NOT_AUTHENTIC",
    `the result is not authentic (${why}): it was not sealed by this project's runner for this ` +
      "request; nothing it says was taken; look at the runner's ledger (agentteams ledger show)",
  );
}

/**
 * Opens a result file's text as the waiter: refuses (`RESULT_NOT_AUTHENTIC`) one whose id or
 * request digest is not its own, or whose box does not open with its key and the runner's.
 *
 * @throws {QueueError} `RESULT_NOT_AUTHENTIC`
 * @example
 * ```ts
 * import { openResult, resultText } from "./result.ts";
 * import { generateSealPair } from "../crypto/seal.ts";
 * import { HmacKey, sha256Hex } from "../crypto/hash.ts";
 * const runner = await generateSealPair();
 * const own = await generateSealPair();
 * const requestBytes = new TextEncoder().encode("{}");
 * const id = "0".repeat(32);
 * const text = await resultText({ v: 1, id, ok: true, kind: "issue-dispatch", exit: 0, queue_wait_ms: 1,
 *   serve_ms: 1, request_sha256: sha256Hex(requestBytes), result: { agent: "w" } }, { nonce: "n" },
 *   { runner, replyKey: own.publicRaw, hmac: new HmacKey(new Uint8Array(32)) });
 * const r = await openResult(text, {
 *   id, requestBytesSha256: sha256Hex(requestBytes), own, runnerPublic: runner.publicRaw,
 * });
 * r.secret?.nonce; // "n"
 * ```
 */
export async function openResult(text: string, opts: OpenResultOptions): Promise<OpenedResult> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw notAuthentic("it is not JSON");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw notAuthentic("it is not an object");
  }
  const { seal, mac: _mac, ...body } = parsed as Record<string, unknown>;
  if (body.id !== opts.id) throw notAuthentic("it names another request");
  const digest = opts.requestBytesSha256;
  if (body.request_sha256 !== digest) throw notAuthentic("it answers another request's bytes");
  if (seal === null || typeof seal !== "object") throw notAuthentic("it carries no seal");
  const box = seal as Record<string, unknown>;
  if (typeof box.eph !== "string" || typeof box.iv !== "string" || typeof box.box !== "string") {
    throw notAuthentic("its seal is malformed");
  }
  let clear: Uint8Array;
  try {
    clear = canonicalBytes(body);
  } catch {
    throw notAuthentic("its body cannot be encoded");
  }
  const opened = await openSealed({
    own: opts.own,
    runnerPublic: opts.runnerPublic,
    context: contextOf(opts.id, digest),
    clear,
    box: { eph: box.eph, iv: box.iv, box: box.box },
  });
  if (opened === null) throw notAuthentic("its seal does not open");
  let secret: JsonObject | null = null;
  if (opened.length > 0) secret = JSON.parse(new TextDecoder().decode(opened)) as JsonObject;
  return { body: body as unknown as ResultBody, secret };
}

/**
 * The reply key of a request as far as it can be read, even when the rest is refused (so a
 * refusal still reaches its waiter sealed), else null.
 *
 * @example
 * ```ts
 * import { replyKeyOf } from "./result.ts";
 * replyKeyOf({ reply_key: btoa("k".repeat(32)) })?.length; // 32
 * replyKeyOf({ reply_key: "short" }); // null
 * ```
 */
export function replyKeyOf(value: unknown): Uint8Array | null {
  if (value === null || typeof value !== "object") return null;
  const k = (value as { reply_key?: unknown }).reply_key;
  if (typeof k !== "string") return null;
  const raw = unb64(k);
  return raw !== null && raw.length === 32 ? raw : null;
}
