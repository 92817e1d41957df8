/**
 * What the runner serves on the orchestrator's channel alone: the staged proposals' four kinds
 * (FORMATS.md §2.2, §2.3), each through the same functions the rest of the runner uses (the act
 * pipeline for an approval, `staged.ts` for the records), and the agents that channel refuses:
 * those the brief's `mcp_grants` lists act only through their MCP server, so an artifact whose
 * nonce resolves to one is refused there (`MCP_ONLY_AGENT`).
 *
 * - `list-staged`: `{staged: [...]}`, oldest first; an expired record purged (`expire-staged`).
 * - `show-staged`: the verified record as stored (an expired one too: its expiry says so).
 * - `apply-staged`: the record verified, its agent still granted the tool it staged with
 *   ({@link mcpDecision}: `TOOL_NOT_GRANTED` once the brief took it away), then the apply act
 *   under identity `staged` (every check and gate re-run against the tree as it is now, as the
 *   record's agent, nothing counted; an `apply-staged` write-ahead row, the write or the
 *   unlink), then the record removed. A refusal
 *   is recorded as `apply-staged-refused` and the record stays (the orchestrator rejects it, or
 *   the agent stages again).
 * - `reject-staged`: a `reject-staged` row, then the record removed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseMcpOnly } from "./orchestrator.ts";
 * const refuse = refuseMcpOnly({ tool: { tools: ["write_file"], approval: "staged" } });
 * refuse("worker"); // no grant: served
 * assert.throws(() => refuse("tool"), { code: "MCP_ONLY_AGENT" });
 * ```
 * @module
 */
import type { JsonObject } from "../pycompat/canonical.ts";
import type { LedgerKey } from "../crypto/keys.ts";
import { QueueError } from "../errors.ts";
import { appendRow } from "../ledger/append.ts";
import type { McpGrant } from "../policy/types.ts";
import { applyAct } from "../acts/apply_act.ts";
import { performAct } from "../acts/pipeline.ts";
import type { Session } from "../acts/session.ts";
import { type QueueRequestT, toolOfRequest } from "../queue/queued_request.ts";
import {
  listStaged,
  openStaged,
  readStaged,
  rejectStaged,
  removeStaged,
  stagedProblem,
} from "./staged.ts";

/** A staged proposal's request. */
export type StagedRequest = Extract<
  QueueRequestT,
  { kind: "list-staged" | "show-staged" | "apply-staged" | "reject-staged" }
>;

/** What the staged kinds are served with. */
export interface StagedContext {
  readonly root: string;
  readonly key: LedgerKey;
  readonly now: () => Date;
  /** The runner's session (the pinned policy, the confined gates). */
  readonly session: () => Session;
  /** The pinned brief's `mcp_grants`: an approval needs its record's tool still granted. */
  readonly grants: Readonly<Record<string, McpGrant>> | undefined;
}

/**
 * The check the orchestrator's channel runs on the agent a nonce resolved to: an agent the
 * brief's `mcp_grants` lists is refused there (it writes and runs only through its MCP server,
 * where its grant decides). Pure.
 *
 * @throws {QueueError} `MCP_ONLY_AGENT` (from the returned check)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseMcpOnly } from "./orchestrator.ts";
 * // No mcp_grants at all: every agent served.
 * assert.doesNotThrow(() => refuseMcpOnly(undefined)("worker"));
 * const grants = { mcp: { tools: ["write_file"], approval: "staged" as const } };
 * assert.throws(() => refuseMcpOnly(grants)("mcp"), { code: "MCP_ONLY_AGENT" });
 * assert.doesNotThrow(() => refuseMcpOnly(grants)("worker"));
 * ```
 */
export function refuseMcpOnly(
  grants: Readonly<Record<string, McpGrant>> | undefined,
): (agent: string) => void {
  return (agent) => {
    if (grants !== undefined && Object.hasOwn(grants, agent)) {
      throw new QueueError(
        "MCP_ONLY_AGENT",
        `agent ${agent} is listed in the brief's mcp_grants, so it writes and runs only through ` +
          "its agentteams_runner MCP server (agentteams mcp runner --agent " + agent + "); " +
          "refused on the orchestrator's queue",
        { details: { agent } },
      );
    }
  };
}

/** How the runner serves a tool-server request its agent's grant allows. */
export interface McpDecision {
  /** The `agentteams_runner` tool the request stands for. */
  readonly tool: "run_command" | "write_file" | "delete_file";
  /**
   * For a proposal: `direct` (the brief asks for it: written now only under a verified operator
   * grant, `direct_grants.ts`, else staged) or `staged` (checked, then kept for the
   * orchestrator's approval). A deletion is always staged; `null` for a command.
   */
  readonly approval: McpGrant["approval"] | null;
}

/**
 * What the brief's `mcp_grants` let `agent` do with a tool-server request: the tool it stands
 * for must be listed in the agent's entry; an agent without an entry may call nothing. Only a
 * change under `approval: "direct"` may be written at once, and only when the operator's grant
 * for the agent verifies (`direct_grants.ts`: the brief alone never suffices); every other
 * proposal (a deletion always) is staged. Pure.
 *
 * @throws {QueueError} `TOOL_NOT_GRANTED`, naming the agent and the tool
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpDecision } from "./orchestrator.ts";
 * const grants = { worker: { tools: ["write_file", "delete_file"], approval: "direct" as const } };
 * assert.deepEqual(
 *   mcpDecision(grants, "worker", { kind: "stage-proposal", artifact: { kind: "change-proposal" } }),
 *   { tool: "write_file", approval: "direct" },
 * );
 * assert.deepEqual(
 *   mcpDecision(grants, "worker", { kind: "stage-proposal", artifact: { kind: "delete-proposal" } }),
 *   { tool: "delete_file", approval: "staged" },
 * );
 * ```
 */
export function mcpDecision(
  grants: Readonly<Record<string, McpGrant>> | undefined,
  agent: string,
  req: { readonly kind: string; readonly artifact?: Record<string, unknown> },
): McpDecision {
  const tool = toolOfRequest(req);
  const grant = grants !== undefined && Object.hasOwn(grants, agent) ? grants[agent] : undefined;
  if (tool === null) {
    throw new QueueError(
      "REQUEST_INVALID",
      "a tool-server proposal must be a change-proposal or a delete-proposal",
    );
  }
  if (grant === undefined || !grant.tools.includes(tool)) {
    throw new QueueError(
      "TOOL_NOT_GRANTED",
      grant === undefined
        ? `agent ${agent} has no mcp_grants entry in the brief, so it may call no tool of the ` +
          `runner's MCP server (${tool} refused): the operator adds one to the brief and ` +
          "restarts agentteams serve"
        : `agent ${agent}'s mcp_grants entry does not list ${tool} (it lists ` +
          `${grant.tools.join(", ")}): refused`,
      { details: { agent, tool } },
    );
  }
  if (tool === "run_command") return { tool, approval: null };
  return {
    tool,
    approval: tool === "write_file" && grant.approval === "direct" ? "direct" : "staged",
  };
}

/**
 * Serves one staged proposal's request (see the module doc); returns its result.
 *
 * @throws {ProposalError} the record's refusals (`STAGED_*`) and the apply act's
 * @example
 * ```ts ignore
 * // Not run: it needs a runner's context, which it declares rather than makes.
 * import { serveStaged, type StagedContext } from "./orchestrator.ts";
 * declare const ctx: StagedContext;
 * const r = await serveStaged(ctx, { kind: "list-staged", reply_key: "..." });
 * r.staged; // [{ sid, agent, kind, path, ... }]
 * ```
 */
export async function serveStaged(c: StagedContext, req: StagedRequest): Promise<JsonObject> {
  const append = (body: JsonObject) => appendRow(c.root, c.key.hmac, body, { now: c.now });
  switch (req.kind) {
    case "list-staged":
      return { staged: await listStaged(c.root, c.key.hmac, c.now(), append) };
    case "show-staged": {
      const read = await readStaged(c.root, req.sid);
      const problem = stagedProblem(read.record, c.key.hmac, c.now());
      if (problem !== null && problem.code !== "STAGED_EXPIRED") throw problem;
      return read.record;
    }
    case "apply-staged": {
      // The record's agent must still hold the tool it staged with (the brief may have changed
      // since): a grant taken away is refused (TOOL_NOT_GRANTED), recorded, the record kept.
      const opened = openStaged(c.root, req.sid, c.key.hmac, c.now()).then((o) => {
        mcpDecision(c.grants, o.agent, { kind: "stage-proposal", artifact: o.artifact });
        return o;
      });
      const r = await performAct(c.session(), applyAct, opened, { identity: "staged" });
      // Written and recorded: a record that cannot be removed now (its folder moved) is said so,
      // not turned into a refusal; approved again, it is refused (its base no longer holds).
      let kept = false;
      try {
        removeStaged((await opened).read);
      } catch {
        kept = true;
      }
      return {
        ...r,
        sid: req.sid,
        ...(kept ? { record_kept: true } : {}),
      } as unknown as JsonObject;
    }
    case "reject-staged":
      return await rejectStaged(c.root, req.sid, c.key.hmac, req.reason, append);
  }
}
