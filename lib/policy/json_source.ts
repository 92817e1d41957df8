/**
 * The brief's text as JSON with positions: read by the one JSON reader (`lib/json/reader.ts`) in
 * its JSONC dialect (comments, trailing commas and a leading BOM allowed; repeated keys, nesting
 * deeper than {@link MAX_JSON_DEPTH} and lone surrogates refused), so every later error can name
 * the JSON path and the line of the offending value. This module turns the reader's refusals into
 * `PolicyError`s and builds the located errors of the later checks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatJsonPath, parseJsonSource } from "./json_source.ts";
 * const src = parseJsonSource('{\n  // note\n  "a": [1, 2,],\n}', "brief.jsonc");
 * assert.deepEqual(src.locate(["a", 1]), { line: 3, column: 12 });
 * assert.equal(
 *   formatJsonPath(["agent_policies", "worker", "commands", 0, "timeout"]),
 *   "agent_policies.worker.commands[0].timeout",
 * );
 * ```
 * @module
 */

import {
  type JsonDocument,
  type JsonPath,
  JsonReadError,
  MAX_JSON_DEPTH,
  type Position,
  positionAt,
  readJson,
} from "../json/reader.ts";
import { PolicyError } from "../errors.ts";

export { MAX_JSON_DEPTH, positionAt };
export type { JsonPath, Position };

/** A parsed brief: its value and a way back from a JSON path to a position in the text. */
export interface JsonSource {
  /** The parsed value (objects have a null prototype). */
  readonly value: unknown;
  /** The display name used in messages. */
  readonly name: string;
  /**
   * The position of the value at `path` (or of its key when `key` is true), falling back to the
   * nearest ancestor that exists.
   */
  locate(path: JsonPath, key?: boolean): Position;
  /** The raw source text of the value at `path`, or `null` when there is none. */
  rawText(path: JsonPath): string | null;
}

/**
 * Formats a JSON path the way errors print it: `a.b[0].c`; keys that are not plain names are
 * quoted (`agent_policies["a.b"]`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatJsonPath } from "./json_source.ts";
 * assert.equal(formatJsonPath(["proposal_gates", "lean check", "argv"]), 'proposal_gates["lean check"].argv');
 * ```
 */
export function formatJsonPath(path: JsonPath): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(part)) out += out === "" ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === "" ? "(top level)" : out;
}

/** The reader's refusal as the brief's: where it is, and what the message says. */
function briefReadError(e: JsonReadError, name: string): PolicyError {
  const { line, column } = e.position;
  const at = `${name}:${line}:${column}`;
  if (e.code === "LoneSurrogate") {
    // Not a syntax error: well-formed JSON(C) whose text has no UTF-8 form.
    const reason = e.key
      ? "key contains a lone surrogate"
      : "contains a lone surrogate (\\ud800-\\udfff)";
    const path = formatJsonPath(e.path);
    return new PolicyError("BRIEF_INVALID", `${at}: ${path}: ${reason}`, {
      details: { file: name, path, line, column, reason },
    });
  }
  if (e.code === "NestedTooDeep") {
    return new PolicyError("BRIEF_SYNTAX", `${at}: nested deeper than ${MAX_JSON_DEPTH} levels`, {
      details: { file: name, line, column },
    });
  }
  if (e.code === "DuplicateKey") {
    const path = formatJsonPath(e.path);
    return new PolicyError(
      "BRIEF_SYNTAX",
      `${at}: duplicate key ${JSON.stringify(e.path[e.path.length - 1])} at ${path}`,
      { details: { file: name, path, line, column } },
    );
  }
  return new PolicyError("BRIEF_SYNTAX", `${at}: invalid JSON(C): ${e.code}`, {
    details: { file: name, line, column, error: e.code },
  });
}

/**
 * Parses JSON or JSONC text (comments and trailing commas allowed, a leading BOM ignored).
 * Throws `PolicyError` naming the line and column of the first error: `BRIEF_SYNTAX` for text
 * that is not JSON(C), a key repeated within one object or nesting deeper than
 * {@link MAX_JSON_DEPTH}; `BRIEF_INVALID` for a string or key with a lone surrogate (the first
 * in the file, once the whole text has parsed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseJsonSource } from "./json_source.ts";
 * const { value } = parseJsonSource('{"write_policy": "default",}', "agentteams.jsonc");
 * // Objects come without a prototype (a `__proto__` key stays data).
 * assert.equal(Object.getPrototypeOf(value), null);
 * assert.deepEqual(Object.entries(value as object), [["write_policy", "default"]]);
 * ```
 */
export function parseJsonSource(input: string, name: string): JsonSource {
  let doc: JsonDocument;
  try {
    doc = readJson(input, { dialect: "jsonc", maxDepth: MAX_JSON_DEPTH });
  } catch (e) {
    if (e instanceof JsonReadError) throw briefReadError(e, name);
    throw e;
  }
  return { value: doc.value, name, locate: doc.locate, rawText: doc.rawText };
}

/** The `PolicyError` codes that point at a place in the brief. */
export type LocatedCode = "BRIEF_INVALID" | "BRIEF_UNKNOWN_KEY" | "POLICY_LINT";

/**
 * Builds a `PolicyError` that names the brief, the line and column, and the JSON path:
 * `agentteams.jsonc:12:18: agent_policies.worker.commands[0].timeout: must be at most 7200`.
 * With `key`, the position is that of the key rather than its value (for unknown keys).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorAt, parseJsonSource } from "./json_source.ts";
 * const src = parseJsonSource('{"write_policy": 3}', "b.json");
 * assert.equal(
 *   errorAt("BRIEF_INVALID", src, ["write_policy"], "must be a string").message,
 *   "b.json:1:18: write_policy: must be a string",
 * );
 * ```
 */
export function errorAt(
  code: LocatedCode,
  src: JsonSource,
  path: JsonPath,
  reason: string,
  options: { key?: boolean; cause?: unknown } = {},
): PolicyError {
  const at = src.locate(path, options.key ?? false);
  const where = formatJsonPath(path);
  return new PolicyError(code, `${src.name}:${at.line}:${at.column}: ${where}: ${reason}`, {
    cause: options.cause,
    details: { file: src.name, path: where, line: at.line, column: at.column, reason },
  });
}
