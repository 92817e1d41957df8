/**
 * The shape of the brief's policy fields, as zod schemas. Every object is strict: a key that is not
 * listed here is an error (`BRIEF_UNKNOWN_KEY`), at any depth. Rules that need more than the shape
 * (paths, patterns, programs, cross-references) live in `lint.ts`.
 *
 * @example
 * ```ts
 * import { PolicyFieldsSchema } from "./brief_schema.ts";
 * PolicyFieldsSchema.safeParse({ write_policy: "orchestrator-only" }).success; // true
 * PolicyFieldsSchema.safeParse({ agent_policies: { w: { comands: [] } } }).success; // false
 * ```
 * @module
 */

import { z } from "zod";
import { IGNORED_BRIEF_FIELDS, KNOWN_FRAMEWORKS, MCP_RUNNER_TOOLS } from "./brief_fields.ts";
import { MAX_COMMAND_TIMEOUT } from "./types.ts";

const nonEmpty = z.string().min(1);

/** `agent_policies.<agent>.commands[i]`. */
export const CommandEntrySchema = z.strictObject({
  prefix: z.array(nonEmpty).min(1),
  args: z.array(z.string()).optional(),
  variadic: z.boolean().optional(),
  cwd: nonEmpty.optional(),
  writes: z.array(nonEmpty).optional(),
  stdin_gates: z.array(nonEmpty).optional(),
  timeout: z.int().min(1).max(MAX_COMMAND_TIMEOUT).optional(),
  network: z.boolean().optional(),
});

/** `agent_policies.<agent>`. */
export const AgentPolicySchema = z.strictObject({
  write_scopes: z.array(z.string()).optional(),
  commands: z.array(CommandEntrySchema).optional(),
});

/** `proposal_gates.<name>`. */
export const GateSchema = z.strictObject({
  glob: nonEmpty.optional(),
  argv: z.array(z.string()).min(1),
  exec: z.array(nonEmpty).min(1).optional(),
});

/** `confined_programs.<agent>` (shape only; path rules belong to the sandbox). */
export const ConfinedAgentSchema = z.strictObject({
  exec: z.array(nonEmpty).min(1),
  write: z.array(nonEmpty),
});

/** `mcp_grants.<agent>`. */
export const McpGrantSchema = z.strictObject({
  tools: z.array(z.enum(MCP_RUNNER_TOOLS as [string, ...string[]])).min(1),
  approval: z.enum(["staged", "direct"]).optional(),
});

/** The policy fields of a brief (the other top-level fields are checked separately). */
export const PolicyFieldsSchema = z.strictObject({
  write_policy: z.enum(["default", "orchestrator-only"]).optional(),
  privilege_profile: z.enum(["cooperative", "confined", "exclusive"]).optional(),
  write_policy_frameworks: z.array(z.enum(KNOWN_FRAMEWORKS as [string, ...string[]])).optional(),
  agent_policies: z.record(z.string(), AgentPolicySchema).optional(),
  proposal_gates: z.record(z.string(), GateSchema).optional(),
  confined_programs: z.record(z.string(), ConfinedAgentSchema).optional(),
  protected_paths: z.array(nonEmpty).optional(),
  allow_unconfined_runs: z.boolean().optional(),
  mcp_grants: z.record(z.string(), McpGrantSchema).optional(),
  deletions_need_clearance: z.boolean().optional(),
});

/** The validated, still snake_case policy fields. */
export type RawPolicy = z.infer<typeof PolicyFieldsSchema>;
/** One validated command entry. */
export type RawCommandEntry = z.infer<typeof CommandEntrySchema>;

/**
 * The brief's JSON Schema (draft 2020-12): the policy fields as the shape check holds them, and
 * the project-description fields the brief may also carry (their values are not inspected, so any
 * value). Other rules (paths, patterns, programs) are the lint's: `agentteams brief check`.
 *
 * @example
 * ```ts
 * import { briefJsonSchema } from "./brief_schema.ts";
 * const s = briefJsonSchema();
 * s.additionalProperties; // false
 * Object.hasOwn(s.properties as object, "agent_policies"); // true
 * ```
 */
export function briefJsonSchema(): Record<string, unknown> {
  const s = z.toJSONSchema(PolicyFieldsSchema, { target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  const properties = { ...(s.properties as Record<string, unknown>) };
  for (const field of IGNORED_BRIEF_FIELDS) {
    properties[field] = { description: "a project-description field; not policy, not inspected" };
  }
  return {
    $schema: s.$schema,
    $id: "https://agentteams.invalid/schemas/brief.schema.json",
    title: "brief",
    ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$schema")),
    properties,
  };
}
