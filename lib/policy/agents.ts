/**
 * The brief's agents: an agent is one the brief names in `agent_policies`, and nothing else is
 * (an own key only: `constructor` or `__proto__` are no agents). A name the brief does not have
 * is worded once, here, with the nearest name it does have when that looks like a typo.
 *
 * @example
 * ```ts
 * import { agentPolicyOf, unknownAgentMessage } from "./agents.ts";
 * import assert from "node:assert/strict";
 * const policy = { agents: { worker: { writeScopes: ["src/"] } }, briefRel: "agentteams.jsonc" };
 * assert.deepEqual(agentPolicyOf(policy, "worker")?.writeScopes, ["src/"]);
 * assert.equal(agentPolicyOf(policy, "constructor"), undefined);
 * assert.match(unknownAgentMessage(policy, "wroker"), /did you mean "worker"\?/);
 * ```
 * @module
 */
import { didYouMean } from "../text/suggest.ts";
import type { Policy } from "./types.ts";

/** How many of the brief's agents a refusal lists. */
const LISTED = 12;

/**
 * The brief's entry for `agent`, or `undefined` when the brief names no such agent.
 *
 * @example
 * ```ts
 * import { agentPolicyOf } from "./agents.ts";
 * import assert from "node:assert/strict";
 * assert.equal(agentPolicyOf({ agents: {} }, "__proto__"), undefined);
 * ```
 */
export function agentPolicyOf<A>(
  policy: { readonly agents: Readonly<Record<string, A>> },
  agent: string,
): A | undefined {
  return Object.hasOwn(policy.agents, agent) ? policy.agents[agent] : undefined;
}

/**
 * Why `agent` is no agent of the brief, for a person: the brief, the nearest agent it names (when
 * one is near enough to be a typo), and the agents it names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unknownAgentMessage } from "./agents.ts";
 * assert.equal(
 *   unknownAgentMessage({ agents: { worker: {} }, briefRel: "agentteams.jsonc" }, "ghost"),
 *   'agent "ghost" is not in agentteams.jsonc\'s agent_policies; it names: worker',
 * );
 * ```
 */
export function unknownAgentMessage(
  policy: Pick<Policy, "briefRel"> & {
    readonly agents: Readonly<Record<string, unknown>>;
    readonly briefPath?: string;
  },
  agent: string,
): string {
  const names = Object.keys(policy.agents).sort();
  const brief = policy.briefRel ?? policy.briefPath ?? "the brief";
  const near = didYouMean(agent, names);
  const hint = near === null ? "" : ` (did you mean ${JSON.stringify(near)}?)`;
  const listed = names.length === 0
    ? "it names no agent"
    : `it names: ${names.slice(0, LISTED).join(", ")}` +
      (names.length > LISTED ? `, and ${names.length - LISTED} more` : "");
  return `agent ${JSON.stringify(agent)} is not in ${brief}'s agent_policies${hint}; ${listed}`;
}
