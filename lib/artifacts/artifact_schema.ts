/**
 * The three artifacts an agent may return, as zod schemas: the single source for validation and
 * for the JSON Schemas in `schemas/` (a test fails when a committed schema drifts from these).
 *
 * Every object is closed (`additionalProperties: false`): an unknown field is refused, never
 * ignored. `dispatch` is 32 lower-case hex; `base_sha256` is 64 lower-case hex, or `absent` for a
 * change proposal that creates a file. `agent`, when present, must match the dispatch record.
 *
 * @example
 * ```ts
 * import { ChangeProposal } from "./artifact_schema.ts";
 * ChangeProposal.safeParse({ kind: "change-proposal" }).success; // false
 * ```
 * @module
 */
import { z } from "zod";

const dispatch = z.string().regex(/^[0-9a-f]{32}$/).describe(
  "the dispatch nonce the orchestrator gave the agent (32 lower-case hex)",
);
const agent = z.string().regex(/^[a-z0-9][a-z0-9-]*$/).max(128).describe(
  "optional: the agent's slug; must match the dispatch record",
);
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const path = z.string().min(1).max(4096).describe(
  "project-relative POSIX path of the file (no '..', no leading '/', no '~', no backslash)",
);
const rationale = z.string().max(16384).describe("why (recorded in the ledger, 300 characters)");

/** A change proposal: replace or create one file. */
export const ChangeProposal = z.strictObject({
  kind: z.literal("change-proposal"),
  dispatch,
  agent: agent.optional(),
  path,
  base_sha256: z.union([hex64, z.literal("absent")]).describe(
    "SHA-256 hex of the file the agent read, or 'absent' when it creates the file",
  ),
  content: z.string().describe("the whole new content, UTF-8 text, at most 256 KiB"),
  rationale,
  gates: z.array(z.string().min(1).max(128)).max(64).optional().describe(
    "gate names (from proposal_gates) to run on the content besides those whose glob matches",
  ),
}).describe("agentteams change proposal");

/** A deletion proposal: remove one file. */
export const DeleteProposal = z.strictObject({
  kind: z.literal("delete-proposal"),
  dispatch,
  agent: agent.optional(),
  path,
  base_sha256: hex64.describe("SHA-256 hex of the file the agent read"),
  rationale,
}).describe("agentteams deletion proposal");

/** A command request: run one allowlisted command. */
export const CommandRequest = z.strictObject({
  kind: z.literal("command-request"),
  dispatch,
  agent: agent.optional(),
  argv: z.array(z.string().max(16384)).min(1).max(1024).describe(
    "the command and its arguments; must start with one of the agent's allowed prefixes",
  ),
  purpose: z.string().max(16384).describe("why (recorded in the ledger, 300 characters)"),
  cwd: z.string().max(4096).optional().describe("must equal the command entry's pinned cwd"),
  expected_writes: z.array(z.string().min(1).max(4096)).max(1024).optional().describe(
    "project-relative paths the command will write (a directory ends with '/')",
  ),
  stdin_from_content: z.strictObject({
    path: z.string().min(1).max(4096),
    content: z.string(),
  }).optional().describe("text for the command's stdin; only entries with stdin_gates take it"),
}).describe("agentteams command request");

/** Any artifact. */
export type ChangeProposalT = z.infer<typeof ChangeProposal>;
/** A parsed deletion proposal. */
export type DeleteProposalT = z.infer<typeof DeleteProposal>;
/** A parsed command request. */
export type CommandRequestT = z.infer<typeof CommandRequest>;

/** The schemas by name, as `agentteams schema NAME` and `schemas/NAME.schema.json` use them. */
export const ARTIFACT_SCHEMAS = {
  "change-proposal": ChangeProposal,
  "delete-proposal": DeleteProposal,
  "command-request": CommandRequest,
} as const;

/** A schema name. */
export type SchemaName = keyof typeof ARTIFACT_SCHEMAS;

/**
 * The JSON Schema of an artifact (draft 2020-12), with a stable `$id`.
 *
 * @example
 * ```ts
 * import { jsonSchemaOf } from "./artifact_schema.ts";
 * jsonSchemaOf("delete-proposal").additionalProperties; // false
 * ```
 */
export function jsonSchemaOf(name: SchemaName): Record<string, unknown> {
  const s = z.toJSONSchema(ARTIFACT_SCHEMAS[name], { target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  return {
    $schema: s.$schema,
    $id: `https://agentteams.invalid/schemas/${name}.schema.json`,
    title: name,
    ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$schema")),
  };
}

/**
 * The committed file text of a schema (2-space JSON and a newline).
 *
 * @example
 * ```ts
 * import { schemaFileText } from "./artifact_schema.ts";
 * schemaFileText("command-request").endsWith("}\n"); // true
 * ```
 */
export function schemaFileText(name: SchemaName): string {
  return JSON.stringify(jsonSchemaOf(name), null, 2) + "\n";
}
