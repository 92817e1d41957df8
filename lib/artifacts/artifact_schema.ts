/**
 * The three artifacts an agent may return, as declarative shapes (`lib/json/shape.ts`): the one
 * definition, which both checks an artifact and writes the JSON Schemas in `schemas/` (a test
 * fails when a committed schema drifts from these).
 *
 * Every object is closed (`additionalProperties: false`): an unknown field is refused, never
 * ignored. `dispatch` is 32 lower-case hex; `base_sha256` is 64 lower-case hex, or `absent` for a
 * change proposal that creates a file. `agent`, when present, must match the dispatch record.
 *
 * @example
 * ```ts
 * import { checkArtifactShape } from "./artifact_schema.ts";
 * import assert from "node:assert/strict";
 * const r = checkArtifactShape("delete-proposal", { kind: "delete-proposal" });
 * assert.equal(
 *   !r.ok && r.issues[0].message,
 *   'missing required field "dispatch" (a string matching /^[0-9a-f]{32}$/: the dispatch nonce ' +
 *     "the orchestrator gave the agent (32 lower-case hex))",
 * );
 * ```
 * @module
 */
import {
  array,
  checkShape,
  fieldsOf,
  type Infer,
  jsonSchema,
  literal,
  object,
  optional,
  type Shape,
  type ShapeResult,
  string,
  union,
} from "../json/shape.ts";

const dispatch = string({
  pattern: /^[0-9a-f]{32}$/,
  description: "the dispatch nonce the orchestrator gave the agent (32 lower-case hex)",
});
const agent = string({
  max: 128,
  pattern: /^[a-z0-9][a-z0-9-]*$/,
  description: "optional: the agent's slug; must match the dispatch record",
  label: "the agent's slug; must match the dispatch record",
});
const hex64 = string({ pattern: /^[0-9a-f]{64}$/ });
const path = string({
  min: 1,
  max: 4096,
  description:
    "project-relative POSIX path of the file (no '..', no leading '/', no '~', no backslash)",
});
const rationale = string({
  max: 16384,
  description: "why (recorded in the ledger, 300 characters)",
  label: "why the change",
});

/** A change proposal: replace or create one file. */
export const ChangeProposal = object({
  kind: literal("change-proposal"),
  dispatch,
  agent: optional(agent),
  path,
  base_sha256: union([hex64, literal("absent")], {
    description: "SHA-256 hex of the file the agent read, or 'absent' when it creates the file",
  }),
  content: string({ description: "the whole new content, UTF-8 text, at most 256 KiB" }),
  rationale,
  gates: optional(array(string({ min: 1, max: 128 }), { max: 64 }), {
    description:
      "gate names (from proposal_gates) to run on the content besides those whose glob matches",
  }),
}, { description: "agentteams change proposal" });

/** A deletion proposal: remove one file. */
export const DeleteProposal = object({
  kind: literal("delete-proposal"),
  dispatch,
  agent: optional(agent),
  path,
  base_sha256: string({
    pattern: /^[0-9a-f]{64}$/,
    description: "SHA-256 hex of the file the agent read",
  }),
  rationale: string({
    max: 16384,
    description: "why (recorded in the ledger, 300 characters)",
    label: "why the deletion",
  }),
}, { description: "agentteams deletion proposal" });

/** A command request: run one allowlisted command. */
export const CommandRequest = object({
  kind: literal("command-request"),
  dispatch,
  agent: optional(agent),
  argv: array(string({ max: 16384 }), {
    min: 1,
    max: 1024,
    description:
      "the command and its arguments; must start with one of the agent's allowed prefixes",
  }),
  purpose: string({
    max: 16384,
    description: "why (recorded in the ledger, 300 characters)",
    label: "why the command",
  }),
  cwd: optional(string({ max: 4096 }), {
    description: "must equal the command entry's pinned cwd",
  }),
  expected_writes: optional(array(string({ min: 1, max: 4096 }), { max: 1024 }), {
    description: "project-relative paths the command will write (a directory ends with '/')",
  }),
  stdin_from_content: optional(
    object({
      path: string({ min: 1, max: 4096, label: "the project-relative path the text stands for" }),
      content: string({ label: "the text" }),
    }),
    { description: "text for the command's stdin; only entries with stdin_gates take it" },
  ),
}, { description: "agentteams command request" });

/** A parsed change proposal. */
export type ChangeProposalT = Infer<typeof ChangeProposal>;
/** A parsed deletion proposal. */
export type DeleteProposalT = Infer<typeof DeleteProposal>;
/** A parsed command request. */
export type CommandRequestT = Infer<typeof CommandRequest>;

/** The shapes by name, as `agentteams schema NAME` and `schemas/NAME.schema.json` use them. */
export const ARTIFACT_SCHEMAS = {
  "change-proposal": ChangeProposal,
  "delete-proposal": DeleteProposal,
  "command-request": CommandRequest,
} as const;

/** A schema name, which is also an artifact's `kind`. */
export type SchemaName = keyof typeof ARTIFACT_SCHEMAS;

/** An artifact kind, as in its `kind` field. */
export type ArtifactKind = SchemaName;

/** The parsed artifact of each kind. */
export interface ArtifactOfKind {
  /** A change proposal. */
  "change-proposal": ChangeProposalT;
  /** A deletion proposal. */
  "delete-proposal": DeleteProposalT;
  /** A command request. */
  "command-request": CommandRequestT;
}

/**
 * The fields an artifact of each kind may have.
 *
 * @example
 * ```ts
 * import { ARTIFACT_FIELDS } from "./artifact_schema.ts";
 * import assert from "node:assert/strict";
 * assert.ok(ARTIFACT_FIELDS["command-request"].includes("expected_writes"));
 * ```
 */
export const ARTIFACT_FIELDS: Readonly<Record<ArtifactKind, readonly string[]>> = {
  "change-proposal": fieldsOf(ChangeProposal),
  "delete-proposal": fieldsOf(DeleteProposal),
  "command-request": fieldsOf(CommandRequest),
};

/**
 * Checks `value` against the shape of `kind`: the parsed artifact, or every problem.
 *
 * @example
 * ```ts
 * import { checkArtifactShape } from "./artifact_schema.ts";
 * import assert from "node:assert/strict";
 * const r = checkArtifactShape("command-request", {
 *   kind: "command-request",
 *   dispatch: "0123456789abcdef0123456789abcdef",
 *   argv: [],
 *   purpose: "tests",
 * });
 * assert.equal(!r.ok && r.issues[0].message, "must not be empty");
 * ```
 */
export function checkArtifactShape<K extends ArtifactKind>(
  kind: K,
  value: unknown,
): ShapeResult<ArtifactOfKind[K]> {
  return checkShape(ARTIFACT_SCHEMAS[kind] as Shape<ArtifactOfKind[K]>, value);
}

/**
 * The JSON Schema of an artifact (draft 2020-12), with a stable `$id`.
 *
 * @example
 * ```ts
 * import { jsonSchemaOf } from "./artifact_schema.ts";
 * import assert from "node:assert/strict";
 * assert.equal(jsonSchemaOf("delete-proposal").additionalProperties, false);
 * ```
 */
export function jsonSchemaOf(name: SchemaName): Record<string, unknown> {
  return jsonSchema(
    ARTIFACT_SCHEMAS[name],
    `https://agentteams.invalid/schemas/${name}.schema.json`,
    name,
  );
}

/**
 * The committed file text of a schema (2-space JSON and a newline).
 *
 * @example
 * ```ts
 * import { schemaFileText } from "./artifact_schema.ts";
 * import assert from "node:assert/strict";
 * assert.ok(schemaFileText("command-request").endsWith("}\n"));
 * ```
 */
export function schemaFileText(name: SchemaName): string {
  return JSON.stringify(jsonSchemaOf(name), null, 2) + "\n";
}
