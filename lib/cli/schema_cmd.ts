/**
 * `agentteams schema [NAME]`: print an artifact's JSON Schema or the brief's (`brief`), or list
 * the names.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { ARTIFACT_SCHEMAS, jsonSchemaOf, type SchemaName } from "../artifacts/artifact_schema.ts";
import { briefJsonSchema } from "../policy/brief_schema.ts";
import { requestJsonSchema } from "../queue/queued_request.ts";
import { auditJsonSchema } from "../audit/report_schema.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/** The name `schema` gives the brief's schema, beside the artifacts'. */
const BRIEF = "brief";
/** The name of the runner's queue request schema. */
const QUEUE_REQUEST = "queue-request";
/** The name of the audit report's schema (`audit --format json`). */
const AUDIT = "audit-findings";

/**
 * Runs `schema`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { schema } from "./schema_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams schema`, without NAME
 * (await schema(ctx)).text;
 * // "change-proposal\ndelete-proposal\ncommand-request\nbrief\nqueue-request\naudit-findings"
 * ```
 */
export function schema(ctx: Ctx): Promise<Outcome> {
  const name = ctx.parsed.positionals.NAME as string | undefined;
  const names = [...Object.keys(ARTIFACT_SCHEMAS), BRIEF, QUEUE_REQUEST, AUDIT];
  if (name === undefined) {
    return Promise.resolve({ exit: 0, text: names.join("\n"), json: { ok: true, schemas: names } });
  }
  if (!names.includes(name)) {
    throw new UsageError("USAGE", `no schema ${JSON.stringify(name)}; one of ${names.join(", ")}`);
  }
  const s = name === BRIEF
    ? briefJsonSchema()
    : name === QUEUE_REQUEST
    ? requestJsonSchema()
    : name === AUDIT
    ? auditJsonSchema()
    : jsonSchemaOf(name as SchemaName);
  return Promise.resolve({ exit: 0, text: JSON.stringify(s, null, 2), json: s });
}
