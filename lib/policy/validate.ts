/**
 * Shape validation of a parsed brief: the top level must be an object whose keys are policy
 * fields or known project-description fields; the policy fields must match the zod schemas (checked
 * by `shape_check.ts`, which reports what zod would without loading it), with no unknown key at
 * any depth. Errors name the JSON path and the line.
 *
 * @example
 * ```ts
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * const src = parseJsonSource('{"project_goal": "x", "write_policy": "default"}', "b.json");
 * validateBrief(src).write_policy; // "default"
 * ```
 * @module
 */

import { didYouMean } from "../text/suggest.ts";
import { isIgnoredBriefField, POLICY_FIELDS } from "./brief_fields.ts";
import { errorAt, type JsonPath, type JsonSource } from "./json_source.ts";
import type { PolicyError } from "../errors.ts";
import type { RawPolicy } from "./brief_schema.ts";
import { checkPolicyFields, type ShapeIssue } from "./shape_check.ts";

type Issue = ShapeIssue;

/** The JSON type name of a value, for messages. */
function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "an object";
  if (typeof v === "number") return Number.isInteger(v) ? "an integer" : "a number";
  if (typeof v === "string") return "a string";
  if (typeof v === "boolean") return "a boolean";
  return typeof v;
}

function valueAt(root: unknown, path: JsonPath): unknown {
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string | number, unknown>)[part];
  }
  return cur;
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  int: "an integer",
  number: "an integer",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "a list",
};

function suggestion(key: string, known: readonly string[]): string {
  const best = didYouMean(key, known);
  return best === null ? "" : ` (did you mean ${JSON.stringify(best)}?)`;
}

/** The keys a strict object at `path` accepts, for suggestions. */
function knownKeysAt(path: JsonPath): readonly string[] {
  const field = path[0];
  const depth = path.length;
  if (depth === 0) return POLICY_FIELDS;
  if (field === "agent_policies" && depth === 2) return ["write_scopes", "commands"];
  if (field === "agent_policies" && depth === 4) {
    return ["prefix", "args", "variadic", "cwd", "writes", "stdin_gates", "timeout", "network"];
  }
  if (field === "proposal_gates" && depth === 2) return ["glob", "argv", "exec"];
  if (field === "confined_programs" && depth === 2) return ["exec", "write"];
  if (field === "mcp_grants" && depth === 2) return ["tools", "approval"];
  return [];
}

function reasonFor(issue: Issue, root: unknown): string {
  const actual = valueAt(root, issue.path as JsonPath);
  switch (issue.code) {
    case "invalid_type":
      return `must be ${EXPECTED[issue.expected] ?? issue.expected}, not ${typeName(actual)}`;
    case "too_small":
      if (issue.origin === "array") {
        return issue.minimum === 1 ? "must not be empty" : `needs at least ${issue.minimum} items`;
      }
      if (issue.origin === "string") return "must not be empty";
      return `must be at least ${issue.minimum}`;
    case "too_big":
      return `must be at most ${issue.maximum}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, not ${
        JSON.stringify(actual)
      }`;
    default:
      return issue.message;
  }
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
 * import { parseJsonSource } from "./json_source.ts";
 * import { briefShapeFindings } from "./validate.ts";
 * const src = parseJsonSource('{"agent_polices": {}, "write_policy": "x"}', "b.json");
 * briefShapeFindings(src).findings.map((e) => e.code); // ["BRIEF_UNKNOWN_KEY", "BRIEF_INVALID"]
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
  // The same issues as `PolicyFieldsSchema.safeParse(picked)`, without loading zod (shape_check.ts).
  const result = checkPolicyFields(picked);
  if (!result.ok) {
    const issues = result.issues;
    const unknown = issues.flatMap((issue) =>
      issue.code === "unrecognized_keys"
        ? issue.keys.map((k) => ({ path: [...issue.path, k] as (string | number)[], issue }))
        : []
    );
    const offset = (path: JsonPath, key: boolean) => {
      const p = src.locate(path, key);
      return p.line * 1e6 + p.column;
    };
    unknown.sort((a, b) => offset(a.path, true) - offset(b.path, true));
    for (const { path } of unknown) {
      const key = String(path[path.length - 1]);
      const known = knownKeysAt(path.slice(0, -1));
      findings.push(errorAt(
        "BRIEF_UNKNOWN_KEY",
        src,
        path,
        `unknown key${suggestion(key, known)}${
          known.length > 0 ? `; allowed here: ${known.join(", ")}` : ""
        }`,
        { key: true },
      ));
    }
    const sorted = issues.filter((i) => i.code !== "unrecognized_keys").sort((a, b) =>
      offset(a.path as JsonPath, false) - offset(b.path as JsonPath, false)
    );
    for (const issue of sorted) {
      findings.push(
        errorAt("BRIEF_INVALID", src, issue.path as JsonPath, reasonFor(issue, picked)),
      );
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
 * import { parseJsonSource } from "./json_source.ts";
 * import { validateBrief } from "./validate.ts";
 * validateBrief(parseJsonSource('{"agent_polices": {}}', "b.json"));
 * // throws BRIEF_UNKNOWN_KEY: b.json:1:2: agent_polices: unknown key (did you mean "agent_policies"?)
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
