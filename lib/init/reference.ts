/**
 * The reference file every agent's write-policy section points at
 * (`references/write-policy.reference.md`, `WRITE_POLICY_REFERENCE`): the three artifacts an
 * agent returns, field by field, and the exit codes. Generated from the artifacts' one shape
 * definition (`lib/artifacts/artifact_schema.ts`, the source of `schemas/*.json`), so it cannot
 * drift from what `apply` and `run` accept. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writePolicyReference } from "./reference.ts";
 * assert.ok(writePolicyReference().includes("## change-proposal"));
 * ```
 * @module
 */
import { ARTIFACT_SCHEMAS } from "../artifacts/artifact_schema.ts";
import { jsonSchema } from "../json/shape.ts";

/** The CLI's exit codes (DESIGN.md section 5), as an agent reads them back from a result. */
const EXIT_CODES: readonly [string, string][] = [
  ["0", "done (`run` passes the command's own exit code through)"],
  ["1", "refused, or a verification failed: the refusal line names the rule"],
  ["2", "usage error (the command line is wrong)"],
  ["3", "the command wrote what it did not declare, or ran out of time"],
];

/** One property of a generated schema, as a line of the reference. */
function fieldLine(name: string, spec: unknown, required: boolean): string {
  const s = (spec ?? {}) as Record<string, unknown>;
  const what = typeof s.description === "string"
    ? s.description
    : typeof s.const === "string"
    ? `always ${JSON.stringify(s.const)}`
    : typeof s.type === "string"
    ? `a ${s.type}`
    : "see the schema";
  const optional = required || what.startsWith("optional") ? "" : " (optional)";
  return `- \`${name}\`${optional}: ${what}`;
}

/**
 * The reference file's text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writePolicyReference } from "./reference.ts";
 * assert.ok(writePolicyReference().includes("`dispatch`"));
 * ```
 */
export function writePolicyReference(): string {
  const lines = [
    "# Write policy: what an agent returns",
    "",
    "Written by `agentteams init`; regenerate it with `agentteams init --force` (the old one is",
    "kept as a backup). Agents under the switch never write files or run commands: they return one",
    "of these JSON artifacts to the orchestrator, bound to the dispatch nonce it gave them, and the",
    "runner checks, applies or runs it and records the act. `agentteams schema NAME` prints each",
    "artifact's JSON Schema.",
  ];
  for (const [name, shape] of Object.entries(ARTIFACT_SCHEMAS)) {
    const s = jsonSchema(shape, `${name}.schema.json`, name);
    const props = (s.properties ?? {}) as Record<string, unknown>;
    const required = new Set((s.required ?? []) as string[]);
    lines.push("", `## ${name}`, "");
    if (typeof s.description === "string") lines.push(`${s.description}.`, "");
    for (const [field, spec] of Object.entries(props)) {
      lines.push(fieldLine(field, spec, required.has(field)));
    }
  }
  lines.push("", "## Exit codes", "");
  for (const [code, what] of EXIT_CODES) lines.push(`- \`${code}\`: ${what}`);
  return lines.join("\n") + "\n";
}
