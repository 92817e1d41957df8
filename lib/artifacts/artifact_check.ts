/**
 * The hot-path shape check of the three artifacts (change proposal, deletion proposal, command
 * request), without loading zod.
 *
 * The zod schemas in `schema.ts` stay the reference: they generate the committed JSON Schemas and
 * `agentteams schema`. This file mirrors them field for field with the checker kit of
 * `lib/policy/shape_check.ts`, which replays zod 4.6.7's parsing of those constructs, so a check
 * here reports the same issues (path, English message, unknown keys) in the same order and returns
 * the same parsed data as `schema.safeParse`. `tests/artifacts/artifact_check_test.ts` compares
 * the two on thousands of generated inputs; a change to `schema.ts` must be mirrored here, and
 * that test fails until it is.
 *
 * @example
 * ```ts
 * import { checkArtifactShape } from "./artifact_check.ts";
 * const r = checkArtifactShape("delete-proposal", { kind: "delete-proposal" });
 * if (!r.ok) r.issues[0].message; // "Invalid input: expected string, received undefined"
 * ```
 * @module
 */
import {
  type Checker,
  list,
  literal,
  maxLength,
  minLength,
  optional,
  pattern,
  runChecker,
  type ShapeResult,
  str,
  strictObject,
  union,
} from "../policy/shape_check.ts";
import type {
  ChangeProposalT,
  CommandRequestT,
  DeleteProposalT,
  SchemaName,
} from "./artifact_schema.ts";

const dispatch = str(pattern(/^[0-9a-f]{32}$/));
const agent = str(pattern(/^[a-z0-9][a-z0-9-]*$/), maxLength(128));
const hex64 = str(pattern(/^[0-9a-f]{64}$/));
const path = str(minLength(1), maxLength(4096));
const rationale = str(maxLength(16384));

const CHANGE_SHAPE = {
  kind: literal("change-proposal"),
  dispatch,
  agent: optional(agent),
  path,
  base_sha256: union([hex64, literal("absent")]),
  content: str(),
  rationale,
  gates: optional(list(str(minLength(1), maxLength(128)), maxLength(64))),
};
const changeProposal = strictObject(CHANGE_SHAPE);

const DELETE_SHAPE = {
  kind: literal("delete-proposal"),
  dispatch,
  agent: optional(agent),
  path,
  base_sha256: hex64,
  rationale,
};
const deleteProposal = strictObject(DELETE_SHAPE);

const REQUEST_SHAPE = {
  kind: literal("command-request"),
  dispatch,
  agent: optional(agent),
  argv: list(str(maxLength(16384)), minLength(1), maxLength(1024)),
  purpose: str(maxLength(16384)),
  cwd: optional(str(maxLength(4096))),
  expected_writes: optional(list(str(minLength(1), maxLength(4096)), maxLength(1024))),
  stdin_from_content: optional(strictObject({
    path: str(minLength(1), maxLength(4096)),
    content: str(),
  })),
};
const commandRequest = strictObject(REQUEST_SHAPE);

/**
 * An artifact kind, as in its `kind` field: a schema name of `schema.ts` (a type-only import, so
 * zod is not loaded), so a schema added there without a checker here fails to type-check.
 */
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
 * The fields an artifact of each kind may have, for "did you mean" on an unknown one.
 *
 * @example
 * ```ts
 * import { ARTIFACT_FIELDS } from "./artifact_check.ts";
 * ARTIFACT_FIELDS["command-request"].includes("expected_writes"); // true
 * ```
 */
export const ARTIFACT_FIELDS: Readonly<Record<ArtifactKind, readonly string[]>> = {
  "change-proposal": Object.keys(CHANGE_SHAPE),
  "delete-proposal": Object.keys(DELETE_SHAPE),
  "command-request": Object.keys(REQUEST_SHAPE),
};

const CHECKERS: Readonly<Record<ArtifactKind, Checker>> = {
  "change-proposal": changeProposal,
  "delete-proposal": deleteProposal,
  "command-request": commandRequest,
};

/**
 * Checks `value` against the schema of `kind` exactly as that zod schema's `safeParse` does: the
 * same issues in the same order (zod's messages), or the same parsed data.
 *
 * @example
 * ```ts
 * import { checkArtifactShape } from "./artifact_check.ts";
 * const r = checkArtifactShape("command-request", {
 *   kind: "command-request",
 *   dispatch: "0123456789abcdef0123456789abcdef",
 *   argv: [],
 *   purpose: "tests",
 * });
 * if (!r.ok) r.issues[0].message; // "Too small: expected array to have >=1 items"
 * ```
 */
export function checkArtifactShape<K extends ArtifactKind>(
  kind: K,
  value: unknown,
): ShapeResult<ArtifactOfKind[K]> {
  return runChecker(CHECKERS[kind], value) as ShapeResult<ArtifactOfKind[K]>;
}
