/**
 * The queue's request kinds, each a strict schema: unknown kinds and extra fields are refused.
 * Every request carries `reply_key`, the waiting process's ephemeral X25519 public key (base64),
 * to which its result is sealed. A request never names a root, a brief or a policy: the runner's
 * own are used. On disk a request is never plain: its file is a {@link SealedRequestFile}, whose
 * box (sealed to the runner's key, lib/queue/request_seal.ts) holds the request's JSON, so a
 * session that reads the queue learns no nonce.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRequest } from "./queued_request.ts";
 * const r = parseRequest({ kind: "verify-ledger", reply_key: btoa("k".repeat(32)) }, "orchestrator");
 * assert.equal(r.kind, "verify-ledger");
 * ```
 * @module
 */
import { z } from "zod";
import { QueueError } from "../errors.ts";
import { SLUG_RE } from "../layout.ts";
import type { Channel } from "./queue_paths.ts";

/** Largest request file the runner reads. */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** The longest command timeout on the tool-server channel, in seconds. */
export const MCP_TIMEOUT_CAP_S = 120;

const replyKey = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, "a base64 X25519 public key (32 bytes)");
const artifact = z.record(z.string(), z.unknown());
const viaAgent = z.string().regex(SLUG_RE);
/**
 * When the waiter stops waiting, plus {@link REQUEST_GRACE_S}: a runner that claims the request
 * later refuses it (`REQUEST_EXPIRED`) instead of acting for a waiter long gone. Optional, so a
 * request written by an earlier client is still served.
 */
const expires = z.string().regex(
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?Z$/,
  "an ISO-8601 UTC time (YYYY-MM-DDTHH:MM:SS[.mmm]Z)",
).optional();

/** How long after its waiter stops waiting a request may still be served, in seconds. */
export const REQUEST_GRACE_S = 30;

/** `issue-dispatch`: a nonce for an agent the brief names. */
export const IssueDispatchRequest = z.strictObject({
  kind: z.literal("issue-dispatch"),
  agent: z.string().regex(SLUG_RE),
  reply_key: replyKey,
  expires,
});
/** `apply-proposal`: a change or deletion proposal. */
export const ApplyProposalRequest = z.strictObject({
  kind: z.literal("apply-proposal"),
  artifact,
  dry_run: z.boolean(),
  reply_key: replyKey,
  expires,
});
/** `run-request`: a command request (on the tool-server channel with `via_agent`). */
export const RunRequestRequest = z.strictObject({
  kind: z.literal("run-request"),
  artifact,
  dry_run: z.boolean().optional(),
  via_agent: viaAgent.optional(),
  reply_key: replyKey,
  expires,
});
/**
 * `stage-proposal`: a change or deletion proposal on the tool-server channel only, with its
 * `via_agent`. The runner decides by the brief's `mcp_grants` whether it is written at once
 * (`approval: "direct"`, changes only) or staged for the orchestrator's approval.
 */
export const StageProposalRequest = z.strictObject({
  kind: z.literal("stage-proposal"),
  artifact,
  dry_run: z.boolean().optional(),
  via_agent: viaAgent,
  reply_key: replyKey,
  expires,
});
/** `verify-ledger`: the ledger, its head and the dispatch store, verified by the runner. */
export const VerifyLedgerRequest = z.strictObject({
  kind: z.literal("verify-ledger"),
  reply_key: replyKey,
  expires,
});

/** The version of the sealed request file (the plain form of earlier versions is refused). */
export const SEALED_REQUEST_V = 2;

/**
 * A request file as written into the queue: `to`, the first 16 hex of the SHA-256 of the runner
 * public key it is sealed to (so a box sealed to another key says so); `reply_key`, the waiter's
 * per-request public key, which is also the box's sender key (HPKE `mode_auth`); `eph` and `box`,
 * the HPKE encapsulation and ciphertext of the request's JSON. `v`, `to` and `reply_key` are
 * authenticated with the box; its `info` binds the request's channel and id.
 */
export const SealedRequestFile = z.strictObject({
  v: z.literal(SEALED_REQUEST_V),
  to: z.string().regex(/^[0-9a-f]{16}$/, "16 hex of the runner key's SHA-256"),
  reply_key: replyKey,
  eph: replyKey.describe("the HPKE encapsulated key (32 bytes, base64)"),
  box: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "base64").min(24),
});
/** A sealed request file. */
export type SealedRequestFileT = z.infer<typeof SealedRequestFile>;

/** A staged proposal's id (`.agentteams/staged/<sid>.json`): 32 lower-case hex. */
export const SID_RE: RegExp = /^[0-9a-f]{32}$/;
const sid = z.string().regex(SID_RE, "a staged proposal's id (32 lower-case hex)");

/** `list-staged`: the staged proposals waiting for approval (the expired ones purged). */
export const ListStagedRequest = z.strictObject({
  kind: z.literal("list-staged"),
  reply_key: replyKey,
  expires,
});
/** `show-staged`: one staged proposal's record, content included. */
export const ShowStagedRequest = z.strictObject({
  kind: z.literal("show-staged"),
  sid,
  reply_key: replyKey,
  expires,
});
/** `apply-staged`: the orchestrator's approval; every check and gate re-run, as the record's agent. */
export const ApplyStagedRequest = z.strictObject({
  kind: z.literal("apply-staged"),
  sid,
  reply_key: replyKey,
  expires,
});
/** `reject-staged`: the orchestrator's rejection, with its reason (recorded, 300 characters kept). */
export const RejectStagedRequest = z.strictObject({
  kind: z.literal("reject-staged"),
  sid,
  reason: z.string().max(4000),
  reply_key: replyKey,
  expires,
});

/** Any request. */
export const QueueRequest = z.discriminatedUnion("kind", [
  IssueDispatchRequest,
  ApplyProposalRequest,
  RunRequestRequest,
  StageProposalRequest,
  VerifyLedgerRequest,
  ListStagedRequest,
  ShowStagedRequest,
  ApplyStagedRequest,
  RejectStagedRequest,
]);
/** A validated request. */
export type QueueRequestT = z.infer<typeof QueueRequest>;
/** A request's kind. */
export type RequestKind = QueueRequestT["kind"];
/** Every kind, in order (the union's own, so a kind added there is known here). */
export const REQUEST_KINDS: readonly RequestKind[] = QueueRequest.options.map((o) =>
  o.shape.kind.value
);

/**
 * Whether a request's deadline has passed at `now` (a request without one never expires). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isExpired } from "./queued_request.ts";
 * assert.equal(isExpired({ expires: "2026-12-01T10:00:00Z" }, new Date("2026-12-01T10:00:01Z")), true);
 * assert.equal(isExpired({}, new Date()), false);
 * ```
 */
export function isExpired(req: { readonly expires?: string }, now: Date): boolean {
  if (req.expires === undefined) return false;
  const t = Date.parse(req.expires);
  return !Number.isFinite(t) || t < now.getTime();
}

/**
 * The request's kind when it names a known one (for a refusal's result), else null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kindOf } from "./queued_request.ts";
 * assert.equal(kindOf({ kind: "run-request" }), "run-request");
 * assert.equal(kindOf({ kind: "rm -rf" }), null);
 * ```
 */
export function kindOf(value: unknown): RequestKind | null {
  if (value === null || typeof value !== "object") return null;
  const k = (value as { kind?: unknown }).kind;
  return (REQUEST_KINDS as readonly unknown[]).includes(k) ? k as RequestKind : null;
}

/** The kinds the tool-server channel carries, each with its `via_agent`. */
export const MCP_REQUEST_KINDS: readonly RequestKind[] = Object.freeze([
  "run-request",
  "stage-proposal",
]);

/**
 * Validates a parsed request for its channel: the tool-server channel carries only command
 * requests and proposals ({@link MCP_REQUEST_KINDS}), each with its `via_agent`; the
 * orchestrator's never carries `via_agent` nor a `stage-proposal`.
 *
 * @throws {QueueError} `REQUEST_INVALID`, naming the first problem
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRequest } from "./queued_request.ts";
 * assert.throws(
 *   () => parseRequest({ kind: "verify-ledger", reply_key: btoa("k".repeat(32)) }, "mcp"),
 *   { message: "the tool-server channel takes only run-request and stage-proposal (got verify-ledger)" },
 * );
 * ```
 */
export function parseRequest(value: unknown, channel: Channel): QueueRequestT {
  const r = QueueRequest.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const at = issue.path.length ? issue.path.join(".") + ": " : "";
    throw new QueueError("REQUEST_INVALID", `the request is invalid: ${at}${issue.message}`);
  }
  const req = r.data;
  if (channel === "mcp") {
    if (req.kind !== "run-request" && req.kind !== "stage-proposal") {
      throw new QueueError(
        "REQUEST_INVALID",
        `the tool-server channel takes only ${MCP_REQUEST_KINDS.join(" and ")} (got ${req.kind})`,
      );
    }
    if (req.via_agent === undefined) {
      throw new QueueError("REQUEST_INVALID", "a tool-server request must carry via_agent");
    }
  } else if (req.kind === "stage-proposal") {
    throw new QueueError(
      "REQUEST_INVALID",
      "stage-proposal belongs to the tool-server channel only: the orchestrator applies a " +
        "proposal with apply-proposal",
    );
  } else if (req.kind === "run-request" && req.via_agent !== undefined) {
    throw new QueueError("REQUEST_INVALID", "via_agent belongs to the tool-server channel only");
  }
  return req;
}

/**
 * The `agentteams_runner` tool (one of `MCP_RUNNER_TOOLS`) a tool-server request stands for: the
 * name an agent's `mcp_grants` entry must list. A proposal's kind decides between `write_file`
 * and `delete_file`; anything else is no tool (`null`). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolOfRequest } from "./queued_request.ts";
 * assert.equal(toolOfRequest({ kind: "stage-proposal", artifact: { kind: "delete-proposal" } }), "delete_file");
 * assert.equal(toolOfRequest({ kind: "run-request", artifact: {} }), "run_command");
 * ```
 */
export function toolOfRequest(
  req: { readonly kind: string; readonly artifact?: Record<string, unknown> },
): "run_command" | "write_file" | "delete_file" | null {
  if (req.kind === "run-request") return "run_command";
  if (req.kind !== "stage-proposal") return null;
  const k = req.artifact?.kind;
  return k === "change-proposal" ? "write_file" : k === "delete-proposal" ? "delete_file" : null;
}

/**
 * The queue request's JSON Schema (for `agentteams schema queue-request` and `schemas/`): the
 * sealed file as it lies in the queue, with the request its box opens to under `$defs.request`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requestJsonSchema } from "./queued_request.ts";
 * assert.equal(requestJsonSchema().$id, "https://agentteams.invalid/schemas/queue-request.schema.json");
 * ```
 */
export function requestJsonSchema(): Record<string, unknown> {
  const opts = { target: "draft-2020-12" } as const;
  const file = z.toJSONSchema(SealedRequestFile, opts) as Record<string, unknown>;
  const inner = z.toJSONSchema(QueueRequest, opts) as Record<string, unknown>;
  return {
    $schema: file.$schema,
    $id: "https://agentteams.invalid/schemas/queue-request.schema.json",
    title: "queue-request",
    description: "A request file in .agentteams-queue/: its box, sealed to the runner's X25519 " +
      "key (HPKE mode_auth from reply_key, info agentteams-request-seal-v1 NUL channel:id, the " +
      "canonical JSON of {v, to, reply_key} as additional data), opens to $defs.request",
    ...Object.fromEntries(Object.entries(file).filter(([k]) => k !== "$schema")),
    $defs: {
      request: Object.fromEntries(Object.entries(inner).filter(([k]) => k !== "$schema")),
    },
  };
}
