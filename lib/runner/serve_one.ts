/**
 * One claimed request served: read (a regular file, at most 1 MiB, strict JSON), validated for
 * its channel, named in a write-ahead ledger row, acted on through the same functions the CLI
 * uses (the act pipeline, the dispatch act, the verifier), and answered with a result sealed to
 * its requester. Every failure becomes a result: nothing here stops the loop.
 *
 * @module
 */
import type { JsonObject } from "../pycompat/canonical.ts";
import { sha256Hex } from "../crypto/hash.ts";
import type { LedgerKey } from "../crypto/keys.ts";
import type { SealPair } from "../crypto/x25519.ts";
import type { Env } from "../env.ts";
import {
  AgentTeamsError,
  DispatchError,
  otherRefusal,
  QueueError,
  refusalCode,
} from "../errors.ts";
import { describeKind } from "../fs/entry.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { readJson } from "../json/reader.ts";
import { appendRow } from "../ledger/append.ts";
import { NONCE_RE, resolveDispatch } from "../ledger/dispatch.ts";
import { ledgerText, refusalRow } from "../ledger/row_text.ts";
import { verifyLedgerAt } from "../ledger/verify.ts";
import type { Policy } from "../policy/types.ts";
import { applyAct } from "../acts/apply_act.ts";
import { issueBriefDispatch } from "../acts/dispatch_act.ts";
import { performAct } from "../acts/pipeline.ts";
import { runAct, runActWith, runExit } from "../acts/run_act.ts";
import { type SessionGrants, sessionOf } from "../acts/session.ts";
import type { Backend } from "../sandbox/backend_choice.ts";
import type { Channel } from "../queue/queue_paths.ts";
import {
  isExpired,
  kindOf,
  MAX_REQUEST_BYTES,
  MCP_TIMEOUT_CAP_S,
  parseRequest,
  type QueueRequestT,
  type RequestKind,
} from "../queue/queued_request.ts";
import { ensureStagedDir, stagedRecord, writeStaged } from "./staged.ts";
import { selectGates } from "../proposals/gates.ts";
import { directAct } from "./direct_act.ts";
import {
  DIRECT_MAX_USES,
  DIRECT_TTL_HOURS,
  type DirectGrant,
  selectGrant,
} from "./direct_grants.ts";
import type { DirectGrantState } from "./direct_grants_load.ts";
import { mcpDecision, refuseMcpOnly, serveStaged } from "./orchestrator.ts";
import { replyKeyOf, type ResultBody } from "../queue/result.ts";
import { openRequest } from "../queue/request_seal.ts";

/** What the runner holds while it serves. */
export interface RunnerState {
  readonly root: string;
  readonly env: Env;
  readonly home: string;
  readonly key: LedgerKey;
  readonly seal: SealPair;
  readonly policy: Policy;
  /** The sandbox, decided (probed) once for the runner's life: every request confined by it. */
  readonly backend: () => Promise<Backend>;
  readonly now: () => Date;
  /** The tool-server channel's command timeout cap in seconds (default {@link MCP_TIMEOUT_CAP_S}). */
  readonly mcpTimeoutCapS?: number;
  /** The write roots the runner's grants add to confined runs (settled at its start). */
  readonly grants?: SessionGrants;
  /**
   * The operator's direct-write grants, verified at start, and the writes each has made: only
   * under one is a tool-server change written at once (`direct_grants.ts`). Absent: none.
   */
  readonly direct?: DirectGrantState;
}

/** A served request's result, ready to seal. */
export interface Served {
  readonly body: ResultBody;
  readonly secret: JsonObject | null;
  readonly replyKey: Uint8Array | null;
}

/** One message for every nonce problem on the tool-server channel: it is no nonce oracle. */
export const MCP_NONCE_MESSAGE = "the dispatch does not authorize this request for this agent";

/** The artifact as the tool server's agent gives it: any `agent` it names must be that one. */
function asViaAgent(artifact: Record<string, unknown>, via: string): Record<string, unknown> {
  // The tool server's agent is the one the nonce must resolve to.
  if (artifact.agent !== undefined && artifact.agent !== via) {
    throw new DispatchError("AGENT_MISMATCH", MCP_NONCE_MESSAGE);
  }
  // A malformed nonce is a nonce problem too: the same answer, not the artifact's own refusal.
  if (typeof artifact.dispatch !== "string" || !NONCE_RE.test(artifact.dispatch)) {
    throw new DispatchError("BAD_NONCE", MCP_NONCE_MESSAGE);
  }
  return { ...artifact, agent: via };
}

function readRequest(path: string): { bytes: Uint8Array; mtime: number | null } {
  const st = Deno.lstatSync(path);
  if (!st.isFile) {
    throw new QueueError(
      "REQUEST_INVALID",
      `the request is ${describeKind(st)}, not a regular file; refused`,
    );
  }
  if ((st.nlink ?? 1) > 1) {
    // A hard link could name a file the session cannot read (a key): it is never read.
    throw new QueueError(
      "REQUEST_INVALID",
      `the request is a hard link (${st.nlink} names); refused unread`,
    );
  }
  if (st.size > MAX_REQUEST_BYTES) {
    throw new QueueError(
      "REQUEST_INVALID",
      `the request is ${st.size} bytes, over the ${MAX_REQUEST_BYTES}-byte limit`,
    );
  }
  const { bytes } = readRegularFileSync(path, { maxBytes: MAX_REQUEST_BYTES, what: "request" });
  return { bytes, mtime: st.mtime?.getTime() ?? null };
}

function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new QueueError("REQUEST_INVALID", "the request is not UTF-8");
  }
  try {
    return readJson(text, { dialect: "json" }).value;
  } catch (e) {
    throw new QueueError("REQUEST_INVALID", `the request is not JSON: ${(e as Error).message}`);
  }
}

/**
 * The operator grant a tool-server change is written under, or `null` (it is staged): the
 * agent's verified grant covering the artifact's path and every gate that would run on it. A
 * path or gate the selection cannot read stages it; the staging's own checks then refuse it.
 */
function directGrantOf(
  s: RunnerState,
  agent: string,
  artifact: Record<string, unknown>,
): DirectGrant | null {
  if (s.direct === undefined || artifact.kind !== "change-proposal") return null;
  const path = artifact.path;
  const gates = artifact.gates;
  if (typeof path !== "string") return null;
  if (gates !== undefined && !(Array.isArray(gates) && gates.every((g) => typeof g === "string"))) {
    return null;
  }
  try {
    return selectGrant(s.direct.active, agent, path, selectGates(s.policy, path, gates));
  } catch (e) {
    if (e instanceof AgentTeamsError) return null;
    throw e;
  }
}

async function act(
  s: RunnerState,
  req: QueueRequestT,
  channel: Channel,
): Promise<{ result: JsonObject; secret: JsonObject | null; exit: number }> {
  const session = () =>
    sessionOf({
      root: s.root,
      key: s.key,
      env: s.env,
      home: s.home,
      policy: s.policy,
      runner: true,
      backend: s.backend,
      now: s.now,
      ...(s.grants !== undefined ? { grants: s.grants } : {}),
    });
  switch (req.kind) {
    case "issue-dispatch": {
      // The pinned policy, never the file as it is now: the brief is read once, at start.
      const d = await issueBriefDispatch(s.root, req.agent, () => s.key.hmac, {
        policy: s.policy,
        now: s.now,
        decisions: () => session().decisions(),
        // Any session that can write the queue sent it: an operator-only agent is refused.
        queued: true,
        // An agent holding a verified direct grant gets a shorter-lived nonce of fewer uses.
        ...(s.direct?.active.byAgent.has(req.agent)
          ? { ttlHours: DIRECT_TTL_HOURS, maxUses: DIRECT_MAX_USES }
          : {}),
      });
      return {
        result: { agent: req.agent, id: d.id, expires: d.expires, compacted: d.compacted },
        secret: { nonce: d.nonce },
        exit: 0,
      };
    }
    case "apply-proposal": {
      const r = await performAct(session(), applyAct, req.artifact, {
        dryRun: req.dry_run,
        refuseAgent: refuseMcpOnly(s.policy.mcpGrants),
      });
      return { result: r as unknown as JsonObject, secret: null, exit: 0 };
    }
    case "run-request": {
      const artifact = channel === "mcp" && req.via_agent !== undefined
        ? asViaAgent(req.artifact, req.via_agent)
        : req.artifact;
      const spec = channel === "mcp"
        ? runActWith({ timeoutCap: s.mcpTimeoutCapS ?? MCP_TIMEOUT_CAP_S })
        : runAct;
      const r = await performAct(session(), spec, artifact, {
        dryRun: req.dry_run === true,
        // The orchestrator's channel refuses the agents that act through their MCP server.
        ...(channel === "orchestrator" ? { refuseAgent: refuseMcpOnly(s.policy.mcpGrants) } : {}),
      });
      return { result: r as unknown as JsonObject, secret: null, exit: runExit(r.exit) };
    }
    case "stage-proposal": {
      const artifact = asViaAgent(req.artifact, req.via_agent);
      const decision = mcpDecision(s.policy.mcpGrants, req.via_agent, req);
      const dryRun = req.dry_run === true;
      const grant = decision.approval === "direct"
        ? directGrantOf(s, req.via_agent, artifact)
        : null;
      if (grant !== null && s.direct !== undefined) {
        const r = await performAct(session(), directAct(grant, s.direct), artifact, { dryRun });
        return {
          result: { ...r, staged: false, grant: grant.grant_id } as unknown as JsonObject,
          secret: null,
          exit: 0,
        };
      }
      // Staged: every check and gate now (a dry run of the same act), the write only on the
      // orchestrator's approval. A dry run stops there.
      let r;
      try {
        r = await performAct(session(), applyAct, artifact, { dryRun: true });
        // Staging is the agent's act (its approval counts nothing): it spends a use of the
        // dispatch, as a direct write does, so one dispatch stages no more than its uses allow.
        if (!dryRun) {
          await resolveDispatch(s.root, s.key.hmac, String(artifact.dispatch), {
            count: "use",
            expectAgent: r.agent,
            now: s.now,
          });
        }
      } catch (e) {
        // The pipeline's dry run records no refusal; staging one is an act, so it is recorded
        // (under the agent the server speaks for once its nonce resolved to it).
        const known = !(e instanceof DispatchError) &&
          !(e instanceof AgentTeamsError && e.code === "ARTIFACT_INVALID");
        if (!dryRun && !(e instanceof AgentTeamsError && e.family === "ledger")) {
          await appendRow(
            s.root,
            s.key.hmac,
            refusalRow("stage-proposal", known ? req.via_agent : "?", e),
            { now: s.now },
          );
        }
        throw e;
      }
      if (dryRun) {
        return { result: { ...r, staged: false } as unknown as JsonObject, secret: null, exit: 0 };
      }
      const record = stagedRecord({
        sid: crypto.randomUUID().replaceAll("-", ""),
        agent: r.agent,
        artifact,
        plan: { path: r.path, new_sha256: r.new_sha256, gates: r.gates },
        now: s.now(),
      }, s.key.hmac);
      const rationale = typeof artifact.rationale === "string" ? artifact.rationale : "";
      // The folder checked before the row names a record in it.
      ensureStagedDir(s.root);
      await appendRow(s.root, s.key.hmac, {
        action: "stage-proposal",
        agent: r.agent,
        path: r.path,
        sid: record.sid,
        kind: record.kind,
        base: r.base_sha256,
        new: r.new_sha256,
        bytes: record.bytes,
        gates: record.gates,
        rationale: ledgerText(rationale),
      }, { now: s.now });
      writeStaged(s.root, record);
      return {
        result: {
          agent: r.agent,
          path: r.path,
          sid: record.sid,
          kind: record.kind,
          base_sha256: r.base_sha256,
          new_sha256: r.new_sha256,
          bytes: record.bytes,
          gates: record.gates,
          expires: record.expires,
          written: false,
          staged: true,
        },
        secret: null,
        exit: 0,
      };
    }
    case "list-staged":
    case "show-staged":
    case "apply-staged":
    case "reject-staged": {
      const result = await serveStaged({
        root: s.root,
        key: s.key,
        now: s.now,
        session,
        grants: s.policy.mcpGrants,
      }, req);
      return { result, secret: null, exit: 0 };
    }
    case "verify-ledger": {
      const r = verifyLedgerAt(s.root, s.key);
      const { tail: _tail, ...report } = r;
      return { result: report as unknown as JsonObject, secret: null, exit: r.ok ? 0 : 1 };
    }
  }
}

/**
 * A refusal as a result carries it: the typed error's view, or INTERNAL for anything else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorView } from "./serve_one.ts";
 * assert.equal(errorView(new Error("boom")).code, "INTERNAL");
 * ```
 */
export function errorView(e: unknown): JsonObject {
  if (e instanceof AgentTeamsError) return e.toJSON() as JsonObject;
  return {
    error: e instanceof Error ? e.name : "Error",
    family: "internal",
    ...otherRefusal(e),
    details: {},
  };
}

/** What is known of a request while it is served (filled in as it is read). */
interface RequestFacts {
  readonly id: string;
  kind: RequestKind | null;
  waitMs: number | null;
  digest: string;
  replyKey: Uint8Array | null;
}

/** A result's body from what is known of its request and how serving it ended. */
function servedOf(
  f: RequestFacts,
  rest: Pick<ResultBody, "ok" | "exit" | "result" | "error">,
  secret: JsonObject | null,
  serveMs: number,
): Served {
  return {
    body: {
      v: 1,
      id: f.id,
      ok: rest.ok,
      kind: f.kind,
      exit: rest.exit,
      queue_wait_ms: f.waitMs,
      serve_ms: serveMs,
      request_sha256: f.digest,
      ...(rest.result !== undefined ? { result: rest.result } : {}),
      ...(rest.error !== undefined ? { error: rest.error } : {}),
    },
    secret,
    replyKey: f.replyKey,
  };
}

/**
 * The answer to a request a runner claimed and died serving (found at the next start): never
 * served again, reported as `RUNNER_INTERRUPTED`, sealed to its requester when its reply key can
 * be read (read as every request is: a regular file, no hard link, at most 1 MiB).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { interruptedResult } from "./serve_one.ts";
 * const r = interruptedResult("/nonexistent/claimed.json", "0".repeat(32));
 * assert.equal(r.body.error?.code, "RUNNER_INTERRUPTED");
 * ```
 */
export function interruptedResult(path: string, id: string): Served {
  const facts: RequestFacts = { id, kind: null, waitMs: null, digest: "", replyKey: null };
  try {
    const { bytes } = readRequest(path);
    facts.digest = sha256Hex(bytes);
    facts.replyKey = replyKeyOf(parseJson(bytes));
  } catch { /* unreadable: answered unsealed */ }
  const err = new QueueError(
    "RUNNER_INTERRUPTED",
    "the runner stopped while serving this request; it was not served again: see the " +
      "ledger's rows for it (agentteams ledger show) before you resubmit",
  );
  return servedOf(facts, { ok: false, exit: err.exitCode, error: errorView(err) }, null, 0);
}

/**
 * Serves the request claimed at `path` (its id and channel from its name and directory). A
 * request the claim refused (`refused`), one that is invalid, or one past its deadline
 * (`REQUEST_EXPIRED`) is recorded as a `runner-request-refused` row and answered, not acted on.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs state, which it declares rather than makes.
 * import { serveClaimed, type RunnerState } from "./serve_one.ts";
 * declare const state: RunnerState; // the runner's key, seal pair, pinned policy
 * const served = await serveClaimed(state, "/p/.agentteams/queue-claimed/<id>.json", "<id>", "orchestrator");
 * served.body.ok; // true when the act succeeded
 * ```
 */
export async function serveClaimed(
  s: RunnerState,
  path: string,
  id: string,
  channel: Channel,
  refused: Error | null = null,
): Promise<Served> {
  const t0 = performance.now();
  const facts: RequestFacts = {
    id,
    kind: null,
    waitMs: null,
    digest: sha256Hex(new Uint8Array()),
    replyKey: null,
  };
  let ahead = false;
  const done = (
    rest: Pick<ResultBody, "ok" | "exit" | "result" | "error">,
    secret: JsonObject | null,
  ) => servedOf(facts, rest, secret, Math.round(performance.now() - t0));
  try {
    // What the claim refused (a link, a FIFO, a directory, another file than the one listed) is
    // recorded and answered here, never read.
    if (refused !== null) throw new QueueError("REQUEST_INVALID", refused.message);
    const { bytes, mtime } = readRequest(path);
    facts.waitMs = mtime === null ? null : Math.max(0, Math.round(s.now().getTime() - mtime));
    facts.digest = sha256Hex(bytes);
    const sealed = parseJson(bytes);
    facts.replyKey = replyKeyOf(sealed);
    // Opened with the runner's key; a plain, cut, moved or foreign box is refused unread.
    const raw = await openRequest(sealed, { runner: s.seal, id, channel });
    facts.kind = kindOf(raw);
    const req = parseRequest(raw, channel);
    if (isExpired(req, s.now())) {
      throw new QueueError(
        "REQUEST_EXPIRED",
        `the request expired at ${req.expires} (its waiter had stopped waiting); not acted on: ` +
          "submit it again if it should still happen",
      );
    }
    // The brief's mcp_grants first, then the nonce's form: refused before anything is named.
    if (channel === "mcp" && (req.kind === "run-request" || req.kind === "stage-proposal")) {
      mcpDecision(s.policy.mcpGrants, req.via_agent ?? "", req);
      asViaAgent(req.artifact, req.via_agent ?? "");
    }
    await appendRow(s.root, s.key.hmac, {
      action: "runner-request",
      id,
      kind: req.kind,
      channel,
      request_sha256: facts.digest,
    }, { now: s.now });
    ahead = true;
    const r = await act(s, req, channel);
    return done({ ok: true, exit: r.exit, result: r.result }, r.secret);
  } catch (e) {
    if (!ahead) {
      // A request refused before it was named (unreadable, invalid) is recorded here; one that
      // reached its act was recorded by the act's own refusal row.
      try {
        await appendRow(s.root, s.key.hmac, {
          action: "runner-request-refused",
          id,
          kind: facts.kind,
          channel,
          request_sha256: facts.digest,
          error: refusalCode(e),
          reason: (e instanceof Error ? e.message : String(e)).slice(0, 500),
        }, { now: s.now });
      } catch { /* the ledger refused the row: the result still answers */ }
    }
    let err = e;
    if (channel === "mcp" && e instanceof DispatchError) {
      err = new DispatchError("AGENT_MISMATCH", MCP_NONCE_MESSAGE);
    }
    const exit = err instanceof AgentTeamsError ? err.exitCode : 1;
    const result = err instanceof AgentTeamsError && "result" in err
      ? (err as { result: JsonObject }).result
      : undefined;
    return done({ ok: false, exit, error: errorView(err), result }, null);
  }
}
