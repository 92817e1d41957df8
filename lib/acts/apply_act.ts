/**
 * The apply act: a change or deletion proposal through the recorded sequence
 * (`pipeline.ts`). Its checks and its write are `lib/proposals/proposal.ts`'s; its write-ahead
 * row (`apply-proposal` or `delete-proposal`) is the only row a successful apply writes (the
 * format has no completion row for it), and a failure of the write itself is recorded as a
 * refusal after it. Approving a staged proposal is the same act under identity `staged`
 * (`pipeline.ts`): its write-ahead row is `apply-staged`, its refusals `apply-staged-refused`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p with a brief and the operator's ledger key (agentteams keys init); shown, not run
 * import assert from "node:assert/strict";
 * import { applyAct } from "./apply_act.ts";
 * import { performAct } from "./pipeline.ts";
 * import { startSession } from "./session.ts";
 * const session = startSession({ root: "/work/p", env: Deno.env.toObject() });
 * const r = await performAct(session, applyAct, JSON.parse(Deno.readTextFileSync("p.json")));
 * assert.equal(r.written, true);
 * ```
 * @module
 */
import type { Artifact } from "../artifacts/artifact.ts";
import {
  type ApplyResult,
  checkProposal,
  type ProposalPlan,
  proposalResult,
  proposalRow,
  recheckProposal,
  spendClearance,
  stagedRow,
  writeProposal,
} from "../proposals/proposal.ts";
import type { ChangeProposalT, DeleteProposalT } from "../artifacts/artifact_schema.ts";
import type { ActSpec } from "./pipeline.ts";
import type { Session } from "./session.ts";
import type { GateContext } from "../authz/gate.ts";
import { operatorSignerIfAny } from "../authz/signed.ts";
import { spentCounts } from "../authz/spent.ts";
import { appendRow } from "../ledger/append.ts";
import { applyActions } from "../authz/actions.ts";

/**
 * What a deletion's gate reads with: the session's trust roots, and the proposal ledger its spend
 * is bound to (counted from the `gate-pass` rows; the spend recorded as one, naming the agent).
 * Only a spend keeps the count's index: a check, a dry run's included, writes nothing.
 */
function gateTrust(s: Session, agent: string): () => Promise<GateTrust> {
  return async () => {
    const t = await s.trust();
    return {
      roster: t.roster,
      store: t.store,
      signingRequired: t.signingRequired,
      // A deletion spending an Ed25519 waiver re-signs it with the operator's key from the key
      // dir, read only then; without it the spend is refused, nothing spent.
      signer: () => operatorSignerIfAny(s.env),
      // The triad ledgers read and kept through their indexes (a rolled-back one refuses).
      indexKey: s.key.hmac,
      ledger: {
        spent: () => spentCounts(s.root, s.key.hmac),
        record: async (pass) => {
          await appendRow(s.root, s.key.hmac, { action: "gate-pass", agent, ...pass }, {
            now: s.now,
          });
          // The count's index kept up to the row just written (only a spend writes it).
          spentCounts(s.root, s.key.hmac, { persist: true });
        },
      },
    };
  };
}

type GateTrust = Pick<
  GateContext,
  "roster" | "store" | "signingRequired" | "ledger" | "indexKey" | "signer"
>;

/** The apply act (see the module doc). */
export const applyAct: ActSpec<ChangeProposalT | DeleteProposalT, ProposalPlan, void, ApplyResult> =
  {
    action: "apply-proposal",
    accepts: (a: Artifact): a is ChangeProposalT | DeleteProposalT =>
      a.kind === "change-proposal" || a.kind === "delete-proposal",
    wrongKind: "a command request is run with `run`, not applied",
    actions: (a) => applyActions(a.path, a.kind === "delete-proposal"),
    // Git's context (the control plane's resolved paths) starts while the attempt is counted.
    begin(s) {
      s.plane();
    },
    async check(s, a, agent) {
      return await checkProposal(a, agent, {
        root: s.root,
        policy: s.policy,
        plane: await s.plane(),
        gateRunner: s.gateRunner,
        authz: { env: s.env, now: s.now, trust: gateTrust(s, agent) },
      });
    },
    dry: (plan) => proposalResult(plan, false),
    recheck: (s, plan) => recheckProposal(s.root, plan),
    ahead: (plan, dispatch) => proposalRow(plan, dispatch),
    // The orchestrator's approval of a staged proposal: the same checks, gates and write.
    staged: { action: "apply-staged", ahead: stagedRow },
    async act(s, plan) {
      // A deletion's clearance or waiver is spent after its write-ahead row names it, once the
      // file to be removed still has the base the proposal names (a changed file spends none).
      await writeProposal(plan, {
        root: s.root,
        perl: s.perl,
        spend: () =>
          spendClearance(plan, {
            root: s.root,
            authz: { env: s.env, now: s.now, trust: gateTrust(s, plan.agent) },
          }),
      });
      return { value: undefined, complete: null };
    },
    finish: (plan) => proposalResult(plan, true),
  };
