/**
 * Shape validation of a parsed brief: the top level must be an object whose keys are policy
 * fields or known project-description fields; the policy fields must match their shapes
 * (`brief_schema.ts`), with no unknown key at any depth. Errors name the JSON path and the line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * const src = parseJsonSource('{"project_goal": "x", "write_policy": "default"}', "b.json");
 * assert.equal(validateBrief(src).write_policy, "default");
 * ```
 * @module
 */

import { didYouMean } from "../text/suggest.ts";
import { isIgnoredBriefField, POLICY_FIELDS } from "./brief_fields.ts";
import { errorAt, type JsonPath, type JsonSource } from "./json_source.ts";
import type { PolicyError } from "../errors.ts";
import { checkPolicyFields, type RawPolicy } from "./brief_schema.ts";
import { jsonTypeName as typeName, type ShapeIssue } from "../json/shape.ts";

function suggestion(key: string, known: readonly string[]): string {
  const best = didYouMean(key, known);
  return best === null ? "" : ` (did you mean ${JSON.stringify(best)}?)`;
}

/** What the shape check found: the policy fields when they passed, and every problem. */
export interface ShapeFindings {
  /** The validated policy fields, or `null` when a problem was found. */
  readonly raw: RawPolicy | null;
  /**
   * Every problem (`BRIEF_INVALID`, `BRIEF_UNKNOWN_KEY`), in the order `validateBrief` reports
   * them: unknown top-level keys, unknown keys deeper (in file order), then the other problems in
   * file order.
   */
  readonly findings: readonly PolicyError[];
}

/**
 * Checks the brief's top level and policy fields and reports every problem at once (the
 * `brief check` command); `validateBrief` throws the first of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { briefShapeFindings } from "./validate.ts";
 * const src = parseJsonSource('{"agent_polices": {}, "write_policy": "x"}', "b.json");
 * assert.deepEqual(briefShapeFindings(src).findings.map((e) => e.code), ["BRIEF_UNKNOWN_KEY", "BRIEF_INVALID"]);
 * ```
 */
export function briefShapeFindings(src: JsonSource): ShapeFindings {
  const root = src.value;
  if (root === null || typeof root !== "object" || Array.isArray(root)) {
    const e = errorAt(
      "BRIEF_INVALID",
      src,
      [],
      `the brief must be a JSON object, not ${typeName(root)}`,
    );
    return { raw: null, findings: [e] };
  }
  const findings: PolicyError[] = [];
  const picked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(root)) {
    if (POLICY_FIELDS.includes(key)) {
      picked[key] = value;
    } else if (!isIgnoredBriefField(key)) {
      findings.push(errorAt(
        "BRIEF_UNKNOWN_KEY",
        src,
        [key],
        `unknown key${suggestion(key, POLICY_FIELDS)}; the brief's policy fields are ${
          POLICY_FIELDS.join(", ")
        }`,
        { key: true },
      ));
    }
  }
  // Lone surrogates never get here: the JSON reader refuses them (`parseJsonSource`).
  const result = checkPolicyFields(picked);
  if (!result.ok) {
    const offset = (path: JsonPath, key: boolean) => {
      const p = src.locate(path, key);
      return p.line * 1e6 + p.column;
    };
    // An unknown or reserved key is reported at the key; the other problems at their value (a
    // missing field at the object that lacks it).
    const keyPath = (i: ShapeIssue): JsonPath => [...i.path, i.field as string];
    const unknown = result.issues.filter((i) => i.code === "unknown" || i.code === "reserved")
      .sort((a, b) => offset(keyPath(a), true) - offset(keyPath(b), true));
    for (const issue of unknown) {
      const known = issue.known ?? [];
      const hint = issue.suggestion === undefined
        ? ""
        : ` (did you mean ${JSON.stringify(issue.suggestion)}?)`;
      findings.push(errorAt(
        "BRIEF_UNKNOWN_KEY",
        src,
        keyPath(issue),
        issue.code === "reserved"
          ? issue.message
          : `unknown key${hint}${known.length > 0 ? `; allowed here: ${known.join(", ")}` : ""}`,
        { key: true },
      ));
    }
    const sorted = result.issues.filter((i) => i.code !== "unknown" && i.code !== "reserved")
      .sort((a, b) => offset(a.path, false) - offset(b.path, false));
    for (const issue of sorted) {
      findings.push(errorAt("BRIEF_INVALID", src, issue.path, issue.message));
    }
    return { raw: null, findings };
  }
  findings.push(...nonIntegerLiterals(src, result.data));
  return { raw: findings.length === 0 ? result.data : null, findings };
}

/**
 * Validates the brief's top level and policy fields; returns the policy fields. Throws
 * `PolicyError`: `BRIEF_INVALID` (not an object, wrong type or value) or `BRIEF_UNKNOWN_KEY`.
 * When several problems exist, unknown keys are reported first, then the earliest in the file
 * (all of them: `briefShapeFindings`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * assert.throws(() => validateBrief(parseJsonSource('{"agent_polices": {}}', "b.json")), {
 *   code: "BRIEF_UNKNOWN_KEY",
 *   message: /^b\.json:1:2: agent_polices: unknown key \(did you mean "agent_policies"\?\)/,
 * });
 * ```
 */
export function validateBrief(src: JsonSource): RawPolicy {
  const { raw, findings } = briefShapeFindings(src);
  if (raw === null) throw findings[0];
  return raw;
}

/**
 * JSON parsing turns `600.0` and `6e2` into the integer 600, which Python's `json` keeps as a
 * float and the earlier implementation refused. Read the literal itself so both agree.
 */
function nonIntegerLiterals(src: JsonSource, raw: RawPolicy): PolicyError[] {
  const out: PolicyError[] = [];
  for (const [agent, policy] of Object.entries(raw.agent_policies ?? {})) {
    (policy.commands ?? []).forEach((entry, i) => {
      if (entry.timeout === undefined) return;
      const path = ["agent_policies", agent, "commands", i, "timeout"];
      const text = src.rawText(path);
      if (text === null || !/^(0|[1-9][0-9]*)$/.test(text)) {
        out.push(errorAt(
          "BRIEF_INVALID",
          src,
          path,
          `must be an integer number of seconds written without a fraction or exponent, not ${text}`,
        ));
      }
    });
  }
  return out;
}
