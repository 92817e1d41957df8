/**
 * The direct write: a tool-server change proposal written at once under an operator grant
 * (`direct_grants.ts`), through the one act pipeline. It is the apply act (`lib/acts/apply_act.ts`:
 * the same checks, gates and anchored write) with what a grant adds:
 *
 * - its nonce must be a direct agent's (at most 10 uses, at most 4 hours: `admit`), else the
 *   channel's one nonce answer;
 * - before the checks and again right before the use is spent, the grant must be unexpired and
 *   its `max_writes` unspent (`DIRECT_GRANT_EXPIRED`, `DIRECT_GRANT_SPENT`);
 * - the checked path must lie in the grant's write scopes and every gate that passed must be one
 *   the grant binds (`DIRECT_GRANT_INVALID`);
 * - its write-ahead row is `apply-direct` (the change's fields plus `grant`), and each one counts
 *   a write against the grant; a refusal is recorded as `apply-direct-refused`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a session and a grant, which it declares rather than makes.
 * import { directAct } from "./direct_act.ts";
 * import { performAct } from "../acts/pipeline.ts";
 * import type { Session } from "../acts/session.ts";
 * import type { DirectGrant } from "./direct_grants.ts";
 * import type { DirectGrantState } from "./direct_grants_load.ts";
 * declare const session: Session; // the runner's
 * declare const grant: DirectGrant; // the agent's, selected for this change
 * declare const state: DirectGrantState; // the runner's grants and their write counts
 * declare const artifact: Record<string, unknown>; // a change proposal
 * const r = await performAct(session, directAct(grant, state), artifact);
 * r.written; // true
 * ```
 * @module
 */
import type { Artifact } from "../artifacts/artifact.ts";
import type { ChangeProposalT } from "../artifacts/artifact_schema.ts";
import { DispatchError, QueueError } from "../errors.ts";
import type { ActSpec } from "../acts/pipeline.ts";
import { applyAct } from "../acts/apply_act.ts";
import { inWriteScopes } from "../policy/scope.ts";
import type { ApplyResult, ProposalPlan } from "../proposals/proposal.ts";
import { directDispatchProblem, type DirectGrant, writeProblem } from "./direct_grants.ts";
import type { DirectGrantState } from "./direct_grants_load.ts";

/** Refuses one more write when the grant expired or its writes are spent. */
function requireWritable(grant: DirectGrant, state: DirectGrantState, now: Date): void {
  const p = writeProblem(grant, state.writes.get(grant.grant_id) ?? 0, now);
  if (p !== null) {
    throw new QueueError(p.code, p.message, { details: { grant: grant.grant_id } });
  }
}

/**
 * The direct-write act under `grant` (see the module doc); `state.writes` counts its writes.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a grant, which it declares rather than makes.
 * import { directAct } from "./direct_act.ts";
 * import type { DirectGrant } from "./direct_grants.ts";
 * import type { DirectGrantState } from "./direct_grants_load.ts";
 * declare const grant: DirectGrant;
 * declare const state: DirectGrantState;
 * directAct(grant, state).action; // "apply-direct"
 * ```
 */
export function directAct(
  grant: DirectGrant,
  state: DirectGrantState,
): ActSpec<ChangeProposalT, ProposalPlan, void, ApplyResult> {
  return {
    action: "apply-direct",
    accepts: (a: Artifact): a is ChangeProposalT => a.kind === "change-proposal",
    wrongKind: "only a change proposal is written under a direct grant; a deletion is staged",
    actions: (a) => applyAct.actions(a),
    admit(rec, now) {
      // A nonce issued for 24 h or 25 uses is no direct agent's. The ledger's refusal row says
      // why; the agent is told only the channel's one nonce answer (serve_one.ts).
      const why = directDispatchProblem(rec, now);
      if (why !== null) throw new DispatchError("AGENT_MISMATCH", `${why}; refused`);
    },
    begin: (s) => applyAct.begin?.(s),
    async check(s, a, agent) {
      requireWritable(grant, state, s.now());
      const plan = await applyAct.check(s, a, agent);
      const unbound = plan.gates.map((g) => g.gate).filter((g) => !Object.hasOwn(grant.gates, g));
      if (!inWriteScopes(plan.rel, grant.write_scopes) || unbound.length > 0) {
        throw new QueueError(
          "DIRECT_GRANT_INVALID",
          `direct grant ${JSON.stringify(grant.grant_id)} does not cover ${plan.rel}` +
            (unbound.length > 0 ? ` under gate(s) ${unbound.join(", ")}` : "") +
            "; nothing was written",
          { details: { grant: grant.grant_id } },
        );
      }
      return plan;
    },
    dry: (plan) => applyAct.dry(plan),
    async recheck(s, plan) {
      await applyAct.recheck?.(s, plan);
      requireWritable(grant, state, s.now());
    },
    ahead: (plan, dispatch) => ({
      ...applyAct.ahead(plan, dispatch),
      action: "apply-direct",
      grant: grant.grant_id,
    }),
    async act(s, plan, started, ahead) {
      // The write-ahead row names the grant: it counts now, as the ledger counts it next start.
      state.writes.set(grant.grant_id, (state.writes.get(grant.grant_id) ?? 0) + 1);
      return await applyAct.act(s, plan, started, ahead);
    },
    finish: (plan, value) => applyAct.finish(plan, value),
  };
}
