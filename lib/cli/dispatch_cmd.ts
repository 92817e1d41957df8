/**
 * `agentteams dispatch --agent SLUG`: issue a dispatch nonce to an agent the brief names
 * (`lib/acts/dispatch_act.ts`). The nonce is printed once, on stdout, and never stored.
 *
 * @module
 */
import { loadLedgerKey } from "../crypto/keys.ts";
import { UsageError } from "../errors.ts";
import { slugProblem } from "../ledger/dispatch.ts";
import { issueBriefDispatch } from "../acts/dispatch_act.ts";
import { briefFlagPath } from "./needs.ts";
import { queueReason, relay } from "./queue_mode.ts";
import type { IssuedDispatch } from "../ledger/dispatch.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `dispatch`.
 *
 * @example
 * ```ts
 * import { dispatch } from "./dispatch_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams dispatch --agent worker`, the brief naming `worker`
 * (await dispatch(ctx)).text; // the nonce (32 hex characters), shown this once
 * ```
 */
export async function dispatch(ctx: Ctx): Promise<Outcome> {
  const agent = ctx.parsed.flags.agent;
  if (typeof agent !== "string") throw new UsageError("USAGE", "dispatch needs --agent SLUG");
  // A malformed slug is the command line's mistake (exit 2), worded before any key is read.
  const bad = slugProblem(agent);
  if (bad !== null) {
    throw new UsageError("BAD_SLUG", `--agent: ${bad} (the agent's name in agent_policies)`);
  }
  // The brief is read and must name the agent (UNKNOWN_AGENT) before the key is asked for.
  // In queue mode the runner issues it, and seals the nonce to this process alone.
  const d = (await queueReason(ctx)) !== null
    ? await relay(ctx, { kind: "issue-dispatch", agent }) as unknown as IssuedDispatch
    : await issueBriefDispatch(
      ctx.project,
      agent,
      () => loadLedgerKey({ env: ctx.env, mode: "direct" }).hmac,
      { brief: briefFlagPath(ctx) ?? undefined, now: ctx.now, env: ctx.env },
    );
  ctx.note(
    `issued a dispatch for '${agent}' (id ${d.id.slice(0, 12)}, expires ${d.expires}` +
      (d.compacted ? `, ${d.compacted} expired compacted` : "") + ")",
  );
  return {
    exit: 0,
    text: d.nonce,
    json: { ok: true, nonce: d.nonce, agent, id: d.id.slice(0, 12), expires: d.expires },
  };
}
