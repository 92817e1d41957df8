/**
 * Issuing a dispatch, for the CLI and the library alike: a nonce is only ever issued to an agent
 * the project's brief names. The brief is read and checked the way every act reads it
 * (`defaultBriefPath`, `loadPolicy`: a missing brief is `BRIEF_NOT_FOUND`, a broken one
 * `BRIEF_UNREADABLE`, `BRIEF_SYNTAX`, `BRIEF_INVALID`, `BRIEF_UNKNOWN_KEY` or `POLICY_LINT`), and
 * an agent it does not name is refused (`UNKNOWN_AGENT`, with the nearest name it does have).
 * Every refusal comes before the key is asked for and before anything is written: no state dir,
 * no ledger row, no store row.
 *
 * @example
 * ```ts
 * import { issueBriefDispatch } from "./dispatch_act.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/agentteams.json`, '{"agent_policies": {"worker": {"write_scopes": ["src/"]}}}');
 * const key = () => new HmacKey(new Uint8Array(32).fill(3));
 * assert.equal((await issueBriefDispatch(root, "worker", key)).nonce.length, 32);
 * await assert.rejects(issueBriefDispatch(root, "wroker", key), /did you mean "worker"/);
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { DispatchError } from "../errors.ts";
import { resolve } from "../fs/path.ts";
import {
  type DispatchOptions,
  type IssuedDispatch,
  issueDispatch,
  limitsProblem,
} from "../ledger/dispatch.ts";
import { slugProblem } from "../layout.ts";
import { agentPolicyOf, unknownAgentMessage } from "../policy/agents.ts";
import { loadPolicy } from "../policy/brief.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import type { Policy } from "../policy/types.ts";
import type { Env } from "../env.ts";
import type { DecisionContext } from "../authz/decisions.ts";
import { dispatchActions } from "../authz/actions.ts";
import { requireNoHalt } from "../authz/stop.ts";
import { NO_TRUSTED_KEYS } from "../authz/signed.ts";
import { trustFor } from "../authz/trust.ts";

/** Options of {@link issueBriefDispatch}. */
export interface BriefDispatchOptions extends DispatchOptions {
  /** The brief; default `<root>/agentteams.jsonc`, then `agentteams.json`. */
  readonly brief?: string;
  /** A policy already loaded from the brief; default: loaded from {@link brief}. */
  readonly policy?: Policy;
  /** Fewer uses than the spec's 25 (never more: `BAD_LIMITS`). */
  readonly maxUses?: number;
  /** A shorter life than the spec's 24 hours (never longer: `BAD_LIMITS`). */
  readonly ttlHours?: number;
  /**
   * The environment the trust roots are found with (HOME, the key dir, the decision key), for
   * the HALT check; without it no retraction can be authenticated, so every HALT stands.
   */
  readonly env?: Env;
  /** The decision context of a session already open (the runner's); default from {@link env}. */
  readonly decisions?: () => Promise<DecisionContext>;
  /**
   * The request came through the runner's queue (any session that can write it), not from the
   * operator: an agent whose brief says `"dispatch": "operator"` is refused
   * (`DISPATCH_OPERATOR_ONLY`).
   */
  readonly queued?: boolean;
}

/**
 * The HALT check of a dispatch: `*` (the emergency stop) and a gate named `dispatch` reach it.
 * With the ledger key (`hmac`), the log is read through its index, so a log cut or rewritten
 * since the operator's last write is refused (`LEDGER_ROLLED_BACK`) as in every act.
 *
 * @throws {AuthzError} `HALTED`, `LEDGER_ROLLED_BACK`.
 */
async function requireDispatchAllowed(
  root: string,
  agent: string,
  switchOn: boolean,
  opts: BriefDispatchOptions,
  hmac: HmacKey | undefined,
): Promise<void> {
  const now = (opts.now ?? (() => new Date()))();
  const env = opts.env;
  const ctx = async (): Promise<DecisionContext> => {
    if (opts.decisions !== undefined) return await opts.decisions();
    if (env === undefined) return { env: {}, now, signingRequired: true, store: NO_TRUSTED_KEYS };
    const t = await trustFor(root, env, switchOn);
    return { env, now, roster: t.roster, store: t.store, signingRequired: t.signingRequired };
  };
  await requireNoHalt(root, dispatchActions(agent), ctx, hmac);
}

/** The key when it can be had now, else undefined (its own refusal comes after the HALT's). */
function keyIfAny(key: () => HmacKey): HmacKey | undefined {
  try {
    return key();
  } catch {
    return undefined;
  }
}

/**
 * Refuses (`UNKNOWN_AGENT`) an agent the policy's brief does not name.
 *
 * @throws {DispatchError} `UNKNOWN_AGENT`, its details the agent, the brief, the suggestion.
 * @example
 * ```ts ignore
 * // Not run: it needs policy, which it declares rather than makes.
 * import { requireBriefAgent } from "./dispatch_act.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy; // agent_policies: {worker}
 * requireBriefAgent(policy, "worker"); // returns
 * requireBriefAgent(policy, "wroker"); // throws UNKNOWN_AGENT (did you mean "worker"?)
 * ```
 */
export function requireBriefAgent(policy: Policy, agent: string): void {
  if (agentPolicyOf(policy, agent) !== undefined) return;
  throw new DispatchError("UNKNOWN_AGENT", unknownAgentMessage(policy, agent), {
    details: { agent, brief: policy.briefPath, agents: Object.keys(policy.agents).sort() },
  });
}

/**
 * Issues a nonce for `agent` once the brief names it (see the module doc). `key` is asked for
 * only then, so a refused agent or brief is told before a missing key is.
 *
 * @throws {DispatchError} `BAD_SLUG`, `BAD_LIMITS`, `UNKNOWN_AGENT`. `AuthzError` `HALTED`
 *   (a HALT on `*`: the emergency stop). {@link PolicyError} for a
 *   missing or broken brief; whatever `key` throws; the ledger's and the store's refusals.
 * @example
 * ```ts ignore
 * // Not run: it needs hmac, which it declares rather than makes.
 * import { issueBriefDispatch } from "./dispatch_act.ts";
 * import type { HmacKey } from "../crypto/hash.ts";
 * declare const hmac: HmacKey; // in /work/p, whose brief names `worker`
 * (await issueBriefDispatch("/work/p", "worker", () => hmac)).nonce; // 32 hex, shown once
 * ```
 */
export async function issueBriefDispatch(
  root: string,
  agent: string,
  key: () => HmacKey,
  opts: BriefDispatchOptions = {},
): Promise<IssuedDispatch> {
  requireShape(agent, opts);
  const policy = opts.policy ?? await loadPolicy(
    opts.brief !== undefined ? resolve(opts.brief) : await defaultBriefPath(root),
    { projectRoot: root },
  );
  requireBriefAgent(policy, agent);
  if (opts.queued === true) requireQueueDispatchable(policy, agent);
  return await issueAllowed(root, agent, key, policy.writePolicy === "orchestrator-only", opts);
}

/**
 * Refuses (`DISPATCH_OPERATOR_ONLY`) a queued dispatch of an agent whose brief entry says
 * `"dispatch": "operator"`: any session that can write the queue could ask for it, so only the
 * operator (with the key, outside every session) issues its nonces.
 *
 * @throws {DispatchError} `DISPATCH_OPERATOR_ONLY`.
 * @example
 * ```ts ignore
 * // Not run: it needs policy, which it declares rather than makes.
 * import { requireQueueDispatchable } from "./dispatch_act.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy; // agent_policies: {worker: {}, deployer: {dispatch: "operator"}}
 * requireQueueDispatchable(policy, "worker"); // returns
 * requireQueueDispatchable(policy, "deployer"); // throws DISPATCH_OPERATOR_ONLY
 * ```
 */
export function requireQueueDispatchable(policy: Policy, agent: string): void {
  if (agentPolicyOf(policy, agent)?.dispatch !== "operator") return;
  throw new DispatchError(
    "DISPATCH_OPERATOR_ONLY",
    `${policy.briefRel ?? policy.briefPath} says "dispatch": "operator" for ${
      JSON.stringify(agent)
    }: its nonces are ` +
      `not issued through the runner's queue (a session that can write the queue could ask for ` +
      `one); the operator issues one outside every agent session with ` +
      `agentteams dispatch --agent ${agent} --direct and hands it over`,
    { details: { agent, brief: policy.briefPath } },
  );
}

/** The HALT check, then the nonce: the last steps every dispatch shares. */
async function issueAllowed(
  root: string,
  agent: string,
  key: () => HmacKey,
  switchOn: boolean,
  opts: BriefDispatchOptions,
): Promise<IssuedDispatch> {
  await requireDispatchAllowed(root, agent, switchOn, opts, keyIfAny(key));
  return await issueDispatch(root, key(), agent, {
    now: opts.now,
    maxUses: opts.maxUses,
    ttlHours: opts.ttlHours,
  });
}

/** The slug and the limits, checked first by every dispatch. */
function requireShape(agent: string, opts: BriefDispatchOptions): void {
  const bad = slugProblem(agent);
  if (bad !== null) throw new DispatchError("BAD_SLUG", bad);
  const limits = limitsProblem(opts);
  if (limits !== null) throw new DispatchError("BAD_LIMITS", limits);
}

/**
 * Issues a nonce for `agent` in a project with no brief, as the earlier tool's `--issue-dispatch`
 * did (the CLI calls it only for that spelling, after `BRIEF_NOT_FOUND`): the agent is checked
 * against nothing, but the slug, the limits and the HALT check (the emergency stop reaches every
 * dispatch, brief or not) still apply. With no brief there is no switch.
 *
 * @throws {DispatchError} `BAD_SLUG`, `BAD_LIMITS`. `AuthzError` `HALTED`; whatever `key`
 *   throws; the ledger's and the store's refusals.
 * @example
 * ```ts ignore
 * // Not run: it needs hmac, which it declares rather than makes.
 * import { issueUnbriefedDispatch } from "./dispatch_act.ts";
 * import type { HmacKey } from "../crypto/hash.ts";
 * declare const hmac: HmacKey; // in /work/p, which has no brief
 * (await issueUnbriefedDispatch("/work/p", "worker", () => hmac)).nonce; // 32 hex, shown once
 * ```
 */
export async function issueUnbriefedDispatch(
  root: string,
  agent: string,
  key: () => HmacKey,
  opts: BriefDispatchOptions = {},
): Promise<IssuedDispatch> {
  requireShape(agent, opts);
  return await issueAllowed(root, agent, key, false, opts);
}
