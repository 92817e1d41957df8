/**
 * A request sealed to the runner: the waiter seals the request's JSON to the runner's X25519 key
 * (HPKE `mode_auth`, its per-request pair as the sender key, lib/crypto/seal.ts), bound to the
 * request's channel and id; the runner opens it with its static pair. A session that reads the
 * queue (a folder it may rename away from its deny rules and back) learns a request's size and
 * its waiter's public key, never its kind, agent, artifact or nonce. A box sealed to another key, cut, changed, or moved under another
 * id or channel is refused unread, each with its code; the plain form of earlier versions too
 * (no runner of this tool ever read it: the Python runner's plain requests carry no reply key).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRequest, sealRequest } from "./request_seal.ts";
 * import { generateSealPair } from "../crypto/x25519.ts";
 * const runner = await generateSealPair();
 * const waiter = await generateSealPair();
 * const id = "0".repeat(32);
 * const bytes = await sealRequest({ kind: "verify-ledger" }, {
 *   waiter, runnerPublic: runner.publicRaw, id, channel: "orchestrator",
 * });
 * const opened = await openRequest(JSON.parse(new TextDecoder().decode(bytes)), {
 *   runner, id, channel: "orchestrator",
 * });
 * assert.equal((opened as { kind: string }).kind, "verify-ledger");
 * ```
 * @module
 */
import { canonicalBytes } from "../pycompat/canonical.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { openRequestBox, sealRequestTo } from "../crypto/seal.ts";
import { publicB64, type SealPair, unb64 } from "../crypto/x25519.ts";
import { QueueError } from "../errors.ts";
import { readJson } from "../json/reader.ts";
import type { Channel } from "./queue_paths.ts";
import { SEALED_REQUEST_V, SealedRequestFile } from "./queued_request.ts";

/**
 * The `to` of a request sealed to `runnerPublic`: the first 16 hex of its SHA-256. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runnerKeyTag } from "./request_seal.ts";
 * assert.equal(runnerKeyTag(new Uint8Array(32)).length, 16);
 * ```
 */
export function runnerKeyTag(runnerPublic: Uint8Array): string {
  return sha256Hex(runnerPublic).slice(0, 16);
}

/** The context a request's box is bound to: its channel and id. */
function requestContext(channel: Channel, id: string): string {
  return `${channel}:${id}`;
}

/** What sealing a request needs. */
export interface SealRequestOptions {
  /** The waiter's per-request pair (its public half is the request's `reply_key`). */
  readonly waiter: SealPair;
  /** The runner's static public key, as the waiter read it. */
  readonly runnerPublic: Uint8Array;
  /** The request's id (its file name). */
  readonly id: string;
  /** The channel it is queued on (its folder). */
  readonly channel: Channel;
}

/**
 * A request file's bytes: `request` (the waiter's `reply_key` added) sealed to the runner.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sealRequest } from "./request_seal.ts";
 * import { generateSealPair } from "../crypto/x25519.ts";
 * const bytes = await sealRequest({ kind: "issue-dispatch", agent: "worker" }, {
 *   waiter: await generateSealPair(), runnerPublic: (await generateSealPair()).publicRaw,
 *   id: "0".repeat(32), channel: "orchestrator",
 * });
 * assert.equal(new TextDecoder().decode(bytes).includes("worker"), false);
 * ```
 */
export async function sealRequest(
  request: Record<string, unknown>,
  opts: SealRequestOptions,
): Promise<Uint8Array> {
  const reply_key = publicB64(opts.waiter.publicRaw);
  const clear = { v: SEALED_REQUEST_V, to: runnerKeyTag(opts.runnerPublic), reply_key };
  const box = await sealRequestTo({
    waiter: opts.waiter,
    runnerPublic: opts.runnerPublic,
    context: requestContext(opts.channel, opts.id),
    clear: canonicalBytes(clear),
    request: new TextEncoder().encode(JSON.stringify({ ...request, reply_key })),
  });
  return new TextEncoder().encode(JSON.stringify({ ...clear, ...box }));
}

/** What opening a request needs. */
export interface OpenRequestOptions {
  /** The runner's static pair. */
  readonly runner: SealPair;
  /** The id of the file the request was claimed from. */
  readonly id: string;
  /** The folder it was claimed from. */
  readonly channel: Channel;
}

/**
 * Opens a request file's parsed JSON as the runner: the request inside (parsed, not yet
 * validated: `parseRequest` does that), whose `reply_key` must be the file's.
 *
 * @throws {QueueError} `REQUEST_NOT_SEALED` (a plain request, or not the sealed shape),
 *   `REQUEST_WRONG_KEY` (sealed to another runner key than this runner's),
 *   `REQUEST_SEAL_BROKEN` (the box does not open: cut, changed, or moved under another id or
 *   channel), `REQUEST_INVALID` (what it opens to is not JSON, or names another reply key)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRequest } from "./request_seal.ts";
 * import { generateSealPair } from "../crypto/x25519.ts";
 * const runner = await generateSealPair();
 * await assert.rejects(
 *   openRequest({ kind: "verify-ledger" }, { runner, id: "0".repeat(32), channel: "orchestrator" }),
 *   (e: Error & { code?: string }) => e.code === "REQUEST_NOT_SEALED",
 * );
 * ```
 */
export async function openRequest(value: unknown, opts: OpenRequestOptions): Promise<unknown> {
  const r = SealedRequestFile.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const at = issue.path.length ? issue.path.join(".") + ": " : "";
    throw new QueueError(
      "REQUEST_NOT_SEALED",
      `the request is not sealed to the runner (${at}${issue.message}); refused unread. A ` +
        "request must be written by this version's agentteams submit or MCP server, which " +
        "seal it to the runner's public key",
    );
  }
  const f = r.data;
  const mine = runnerKeyTag(opts.runner.publicRaw);
  if (f.to !== mine) {
    throw new QueueError(
      "REQUEST_WRONG_KEY",
      `the request is sealed to another runner key (${f.to}, this runner's is ${mine}); ` +
        "refused unread. Its waiter read a public key that is not this runner's: a stale copy, " +
        'or one planted in .agentteams-status/; see docs/runner.md "The runner\'s public key"',
      { details: { to: f.to, runner: mine } },
    );
  }
  const opened = await openRequestBox({
    runner: opts.runner,
    waiterPublic: unb64(f.reply_key) ?? new Uint8Array(),
    context: requestContext(opts.channel, opts.id),
    clear: canonicalBytes({ v: f.v, to: f.to, reply_key: f.reply_key }),
    box: { eph: f.eph, box: f.box },
  });
  if (opened === null) {
    throw new QueueError(
      "REQUEST_SEAL_BROKEN",
      `request ${opts.id}'s box does not open: it was cut or changed, or moved from another ` +
        "request's name or channel; refused unread, nothing acted on",
    );
  }
  let inner: unknown;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(opened);
    inner = readJson(text, { dialect: "json" }).value;
  } catch (e) {
    throw new QueueError(
      "REQUEST_INVALID",
      `the sealed request is not JSON: ${(e as Error).message}`,
    );
  }
  if (
    inner === null || typeof inner !== "object" ||
    (inner as { reply_key?: unknown }).reply_key !== f.reply_key
  ) {
    throw new QueueError(
      "REQUEST_INVALID",
      "the sealed request names another reply key than its file's; refused",
    );
  }
  return inner;
}
