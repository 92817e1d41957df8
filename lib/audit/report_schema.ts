/**
 * The zod schema of the audit's JSON report (`agentteams audit --format json`) and its JSON
 * Schema, exported to `schemas/audit-findings.schema.json` (`agentteams schema audit`). Kept
 * apart from report.ts, which builds the report: the audit imports this module's types only, so
 * an audit never loads zod (about 9 MiB of a process's peak).
 *
 * @module
 */
import { z } from "zod";

/** One finding as the JSON report gives it. */
const FindingSchema = z.object({
  code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  check: z.literal("AR_WRITE_POLICY"),
  severity: z.enum(["error", "warning"]),
  enforced: z.boolean(),
  framework: z.enum(["claude", "copilot", "goose", "codex", "agents-md", "other"]),
  file: z.string(),
  line: z.number().int().min(1),
  column: z.number().int().min(1),
  message: z.string(),
  fingerprint: z.string().regex(/^[0-9a-f]{32}$/),
}).strict();

/** What `--fix` did to one file. */
const FixSchema = z.object({
  file: z.string(),
  outcome: z.enum(["fixed", "would-fix", "refused", "unchanged", "skipped-adopted"]),
  changes: z.array(z.string()),
  reason: z.string().optional(),
}).strict();

/** The JSON report of `agentteams audit --format json`. */
export const AuditReportSchema = z.object({
  ok: z.boolean(),
  switch: z.boolean(),
  frameworks: z.array(z.string()),
  strict: z.boolean(),
  files: z.number().int().min(0),
  errors: z.number().int().min(0),
  warnings: z.number().int().min(0),
  findings: z.array(FindingSchema),
  fixes: z.array(FixSchema).optional(),
}).strict();

/** A report's type. */
export type AuditReport = z.infer<typeof AuditReportSchema>;

/**
 * The report's JSON Schema (draft 2020-12), with a stable `$id`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { auditJsonSchema } from "./report_schema.ts";
 * assert.equal(auditJsonSchema().title, "audit-findings");
 * ```
 */
export function auditJsonSchema(): Record<string, unknown> {
  const s = z.toJSONSchema(AuditReportSchema, { target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  return {
    $schema: s.$schema,
    $id: "https://agentteams.invalid/schemas/audit-findings.schema.json",
    title: "audit-findings",
    ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$schema")),
  };
}

/**
 * The committed text of `schemas/audit-findings.schema.json`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { auditSchemaFileText } from "./report_schema.ts";
 * assert.equal(auditSchemaFileText().endsWith("}\n"), true);
 * ```
 */
export function auditSchemaFileText(): string {
  return JSON.stringify(auditJsonSchema(), null, 2) + "\n";
}
