/**
 * The shape of the brief's policy fields, as declarative shapes (`lib/json/shape.ts`): the one
 * definition, which both checks a brief (`validate.ts`) and writes its JSON Schema
 * (`agentteams schema brief`). Every object is closed: a key that is not listed here is an error
 * (`BRIEF_UNKNOWN_KEY`), at any depth. Rules that need more than the shape (paths, patterns,
 * programs, cross-references) live in `lint.ts`.
 *
 * @example
 * ```ts
 * import { checkPolicyFields } from "./brief_schema.ts";
 * import assert from "node:assert/strict";
 * assert.equal(checkPolicyFields({ write_policy: "orchestrator-only" }).ok, true);
 * assert.equal(checkPolicyFields({ agent_policies: { w: { comands: [] } } }).ok, false);
 * ```
 * @module
 */

import {
  array,
  boolean,
  checkShape,
  type Infer,
  int,
  jsonSchema,
  object,
  oneOf,
  optional,
  record,
  type ShapeResult,
  string,
  union,
} from "../json/shape.ts";
import { IGNORED_BRIEF_FIELDS, KNOWN_FRAMEWORKS, MCP_RUNNER_TOOLS } from "./brief_fields.ts";
import { MAX_COMMAND_TIMEOUT } from "./types.ts";

const nonEmpty = string({ min: 1 });

/** `agent_policies.<agent>.commands[i]`. */
export const CommandEntrySchema = object({
  prefix: array(nonEmpty, { min: 1 }),
  args: optional(array(string())),
  variadic: optional(boolean()),
  cwd: optional(nonEmpty),
  writes: optional(array(nonEmpty)),
  stdin_gates: optional(array(nonEmpty)),
  timeout: optional(int({ min: 1, max: MAX_COMMAND_TIMEOUT })),
  // `true` shares the host network; a list of domains allows only those, through the run's proxy
  // (network_rules.ts decides what a rule may be; lint.ts reports a bad one).
  network: optional(union([boolean(), array(nonEmpty, { max: 256 })])),
});

/** `agent_policies.<agent>`. */
export const AgentPolicySchema = object({
  write_scopes: optional(array(string())),
  commands: optional(array(CommandEntrySchema)),
  /**
   * Who may have a nonce issued for the agent: `queue` (default: any request on the runner's
   * orchestrator channel, so any session that can write the queue) or `operator` (only the
   * operator, `agentteams dispatch --direct` with the key; the runner refuses the queue's).
   */
  dispatch: optional(oneOf(["queue", "operator"])),
});

/** `proposal_gates.<name>`. */
export const GateSchema = object({
  glob: optional(nonEmpty),
  argv: array(string(), { min: 1 }),
  exec: optional(array(nonEmpty, { min: 1 })),
});

/** `confined_programs.<agent>` (shape only; path rules belong to the sandbox). */
export const ConfinedAgentSchema = object({
  exec: array(nonEmpty, { min: 1 }),
  write: array(nonEmpty),
});

/** `mcp_grants.<agent>`. */
export const McpGrantSchema = object({
  tools: array(oneOf(MCP_RUNNER_TOOLS), { min: 1 }),
  approval: optional(oneOf(["staged", "direct"])),
});

/** The policy fields of a brief (the other top-level fields are checked separately). */
export const PolicyFieldsSchema = object({
  write_policy: optional(oneOf(["default", "orchestrator-only"])),
  privilege_profile: optional(oneOf(["cooperative", "confined", "exclusive"])),
  write_policy_frameworks: optional(array(oneOf(KNOWN_FRAMEWORKS))),
  agent_policies: optional(record(AgentPolicySchema)),
  proposal_gates: optional(record(GateSchema)),
  confined_programs: optional(record(ConfinedAgentSchema)),
  protected_paths: optional(array(nonEmpty)),
  allow_unconfined_runs: optional(boolean()),
  mcp_grants: optional(record(McpGrantSchema)),
  deletions_need_clearance: optional(boolean()),
});

/** The validated, still snake_case policy fields. */
export type RawPolicy = Infer<typeof PolicyFieldsSchema>;
/** One validated command entry. */
export type RawCommandEntry = Infer<typeof CommandEntrySchema>;

/**
 * Checks the brief's policy fields: the parsed fields, or every problem (unknown keys first in
 * each object).
 *
 * @example
 * ```ts
 * import { checkPolicyFields } from "./brief_schema.ts";
 * import assert from "node:assert/strict";
 * const r = checkPolicyFields({ write_policy: "none" });
 * assert.equal(!r.ok && r.issues[0].message, 'must be one of "default", "orchestrator-only", not "none"');
 * ```
 */
export function checkPolicyFields(value: unknown): ShapeResult<RawPolicy> {
  return checkShape(PolicyFieldsSchema, value);
}

/**
 * The brief's JSON Schema (draft 2020-12): the policy fields as the shape check holds them, and
 * the project-description fields the brief may also carry (their values are not inspected, so any
 * value). Other rules (paths, patterns, programs) are the lint's: `agentteams brief check`.
 *
 * @example
 * ```ts
 * import { briefJsonSchema } from "./brief_schema.ts";
 * import assert from "node:assert/strict";
 * const s = briefJsonSchema();
 * assert.equal(s.additionalProperties, false);
 * assert.ok(Object.hasOwn(s.properties as object, "agent_policies"));
 * ```
 */
export function briefJsonSchema(): Record<string, unknown> {
  const s = jsonSchema(
    PolicyFieldsSchema,
    "https://agentteams.invalid/schemas/brief.schema.json",
    "brief",
  );
  const properties = { ...(s.properties as Record<string, unknown>) };
  for (const field of IGNORED_BRIEF_FIELDS) {
    properties[field] = { description: "a project-description field; not policy, not inspected" };
  }
  return { ...s, properties };
}
