/**
 * The brief's text as JSON with positions: parsed by `jsonc.ts` (comments and trailing commas
 * allowed), so every later error can name the JSON path and the line of the offending value.
 *
 * @example
 * ```ts
 * import { formatJsonPath, parseJsonSource } from "./json_source.ts";
 * const src = parseJsonSource('{\n  // note\n  "a": [1, 2,],\n}', "brief.jsonc");
 * src.locate(["a", 1]); // { line: 3, column: 12 }
 * formatJsonPath(["agent_policies", "worker", "commands", 0, "timeout"]);
 * // "agent_policies.worker.commands[0].timeout"
 * ```
 * @module
 */

import { type JsoncNode, JsoncSyntaxError, nodeValue, parseJsonc, reach } from "./jsonc.ts";
import { PolicyError } from "../errors.ts";

/** Deepest nesting of objects and arrays accepted (the parser recurses once per level). */
export const MAX_JSON_DEPTH = 128;

/** A JSON path: object keys and array indices from the root. */
export type JsonPath = readonly (string | number)[];

/** A 1-based line and column. */
export interface Position {
  /** 1-based line. */
  readonly line: number;
  /** 1-based column, in UTF-16 code units. */
  readonly column: number;
}

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
 * import { formatJsonPath } from "./json_source.ts";
 * formatJsonPath(["proposal_gates", "lean check", "argv"]); // 'proposal_gates["lean check"].argv'
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

/**
 * The 1-based line and column of a UTF-16 offset in `text` (`\n`, `\r\n` and `\r` end lines).
 *
 * @example
 * ```ts
 * import { positionAt } from "./json_source.ts";
 * positionAt("a\nbc", 3); // { line: 2, column: 2 }
 * ```
 */
export function positionAt(text: string, offset: number): Position {
  let line = 1;
  let start = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: end - start + 1 };
}

/**
 * Parses JSON or JSONC text (comments and trailing commas allowed, a leading BOM ignored).
 * Throws `PolicyError` `BRIEF_SYNTAX` naming the line and column of the first error, including a
 * key repeated within one object.
 *
 * @example
 * ```ts
 * import { parseJsonSource } from "./json_source.ts";
 * parseJsonSource('{"write_policy": "default",}', "agentteams.jsonc").value;
 * ```
 */
export function parseJsonSource(input: string, name: string): JsonSource {
  const text = input.charCodeAt(0) === 0xfeff ? " " + input.slice(1) : input;
  let root: JsoncNode;
  try {
    root = parseJsonc(text, MAX_JSON_DEPTH);
  } catch (e) {
    if (!(e instanceof JsoncSyntaxError)) throw e;
    const at = positionAt(text, e.offset);
    if (e.code === "NestedTooDeep") {
      throw new PolicyError(
        "BRIEF_SYNTAX",
        `${name}:${at.line}:${at.column}: nested deeper than ${MAX_JSON_DEPTH} levels`,
        { details: { file: name, line: at.line, column: at.column } },
      );
    }
    if (e.code === "DuplicateKey") {
      const path = formatJsonPath(e.path);
      throw new PolicyError(
        "BRIEF_SYNTAX",
        `${name}:${at.line}:${at.column}: duplicate key ${
          JSON.stringify(e.path[e.path.length - 1])
        } at ${path}`,
        { details: { file: name, path, line: at.line, column: at.column } },
      );
    }
    throw new PolicyError(
      "BRIEF_SYNTAX",
      `${name}:${at.line}:${at.column}: invalid JSON(C): ${e.code}`,
      { details: { file: name, line: at.line, column: at.column, error: e.code } },
    );
  }
  const value: unknown = nodeValue(root);

  return {
    value,
    name,
    locate(path: JsonPath, key = false): Position {
      const { node, depth, keyOffset } = reach(root, path);
      const exact = depth === path.length;
      return positionAt(text, key && exact && keyOffset !== null ? keyOffset : node.offset);
    },
    rawText(path: JsonPath): string | null {
      const { node, depth } = reach(root, path);
      return depth === path.length ? text.slice(node.offset, node.offset + node.length) : null;
    },
  };
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
 * import { errorAt, parseJsonSource } from "./json_source.ts";
 * const src = parseJsonSource('{"write_policy": 3}', "b.json");
 * errorAt("BRIEF_INVALID", src, ["write_policy"], "must be a string").message;
 * // "b.json:1:17: write_policy: must be a string"
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
