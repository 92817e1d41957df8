/**
 * `agentteams dispatch --agent SLUG`: issue a dispatch nonce to an agent the brief names
 * (`lib/acts/dispatch_act.ts`). The nonce is printed once, on stdout, and never stored.
 *
 * @module
 */
import { loadLedgerKey } from "../crypto/keys.ts";
import { PolicyError, UsageError } from "../errors.ts";
import { slugProblem } from "../layout.ts";
import { DEFAULT_BRIEF_NAMES } from "../layout.ts";
import { issueBriefDispatch, issueUnbriefedDispatch } from "../acts/dispatch_act.ts";
import { loadPolicy } from "../policy/brief.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import { DIRECT_MAX_USES, DIRECT_TTL_HOURS } from "../runner/direct_grants.ts";
import { holdsDirectGrant } from "../runner/direct_grants_load.ts";
import { briefFlagPath } from "./needs.ts";
import { queueReason, relay } from "./queue_mode.ts";
import type { IssuedDispatch } from "../ledger/dispatch.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `dispatch`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
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
    : await directDispatch(ctx, agent);
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

/**
 * Direct mode's issue: the brief must name the agent. Only under the earlier spelling
 * (`--issue-dispatch`, which took no brief), with no brief named (`--brief`/`--description`) and
 * none at the project's default names, it issues as the earlier tool did, unchecked, saying so in
 * one warning line. A brief that exists but cannot be read, or one named that is missing, is still
 * refused; and queue mode (a live runner, a brief with the switch) never reaches here: the switch
 * needs a brief.
 */
async function directDispatch(ctx: Ctx, agent: string): Promise<IssuedDispatch> {
  const key = () => loadLedgerKey({ env: ctx.env, mode: "direct" }).hmac;
  const brief = briefFlagPath(ctx);
  try {
    const policy = await loadPolicy(brief ?? await defaultBriefPath(ctx.project), {
      projectRoot: ctx.project,
    });
    // An agent holding the operator's direct-write grant gets a direct agent's nonce (4 h, 10
    // uses), as through the runner: a longer one could not carry a direct write.
    const home = ctx.env.HOME;
    const direct = home?.startsWith("/") === true &&
      await holdsDirectGrant({ root: ctx.project, home, policy, agent, now: ctx.now() });
    return await issueBriefDispatch(ctx.project, agent, key, {
      policy,
      now: ctx.now,
      env: ctx.env,
      ...(direct ? { ttlHours: DIRECT_TTL_HOURS, maxUses: DIRECT_MAX_USES } : {}),
    });
  } catch (e) {
    const unbriefed = ctx.earlier === "--issue-dispatch" && brief === null &&
      e instanceof PolicyError && e.code === "BRIEF_NOT_FOUND";
    if (!unbriefed) throw e;
    ctx.note(
      `agentteams dispatch: warning: no brief in ${ctx.project} (${
        DEFAULT_BRIEF_NAMES.join(", ")
      }): ` +
        `'${agent}' was not checked against a brief, as the earlier --issue-dispatch did not check ` +
        "it; add a brief whose agent_policies name it",
    );
    return await issueUnbriefedDispatch(ctx.project, agent, key, { now: ctx.now, env: ctx.env });
  }
}
