/**
 * The one JSON reader: briefs (JSONC) and artifacts (strict JSON) are both read here, so one piece
 * of code decides what a text means and where each of its values lies.
 *
 * It keeps positions (every later error can name the line and column of a value or a key) and it
 * refuses what a lenient parser lets pass silently, because an input must mean one thing to every
 * reader of it:
 * - a key repeated in one object (`JSON.parse` keeps the last, other readers the first), keys
 *   compared decoded (`"a"` and `"\u0061"` are the same key);
 * - nesting deeper than a limit ({@link MAX_JSON_DEPTH} by default), anything after the value;
 * - a string or key with a lone surrogate (`"\ud800"`: no UTF-8 form, no canonical encoding),
 *   unless the caller keeps them to refuse them field by field itself;
 * - in strict JSON, a leading byte order mark, comments and trailing commas.
 *
 * Objects are built without a prototype, so `__proto__` and `constructor` are ordinary keys that
 * can neither pollute nor shadow anything. Numbers are JavaScript numbers, as `JSON.parse` gives
 * them; a rule about how a number is written (an integer without a fraction or exponent) reads the
 * literal with {@link JsonDocument.rawText}.
 *
 * Errors carry a code in the style of VS Code's JSONC parser (`CommaExpected`, `ValueExpected`,
 * `InvalidSymbol`, ...), the offset where reading stopped, and its line and column.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readJson } from "./reader.ts";
 * const doc = readJson('{\n  // a note\n  "a": [1, 2,],\n}', { dialect: "jsonc" });
 * assert.deepEqual(doc.locate(["a", 1]), { line: 3, column: 12 });
 * assert.throws(() => readJson('{"a": 1, "a": 2}', { dialect: "json" }), { code: "DuplicateKey" });
 * ```
 * @module
 */

/** Deepest nesting of objects and arrays accepted by default (the reader recurses once a level). */
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

/**
 * `json`: strict RFC 8259 JSON (artifacts). `jsonc`: JSON plus `//` and `/* *\/` comments,
 * trailing commas and a leading byte order mark (briefs).
 */
export type JsonDialect = "json" | "jsonc";

/** Options of {@link readJson}. */
export interface ReadJsonOptions {
  /** Which dialect the text is in. */
  readonly dialect: JsonDialect;
  /** Deepest nesting accepted (default {@link MAX_JSON_DEPTH}). */
  readonly maxDepth?: number;
  /**
   * `refuse` (the default): a string or key with a lone surrogate is `LoneSurrogate`, reported
   * once the whole text has parsed (so a syntax error anywhere comes first), the first in the
   * text. `keep`: such strings are returned as they are, for a caller that refuses them field by
   * field with its own codes.
   */
  readonly loneSurrogates?: "refuse" | "keep";
}

/** Why a text was refused; see {@link JsonReadError}. */
export type JsonErrorCode =
  | "ByteOrderMark"
  | "CloseBraceExpected"
  | "CloseBracketExpected"
  | "ColonExpected"
  | "CommaExpected"
  | "DuplicateKey"
  | "EndOfFileExpected"
  | "InvalidCharacter"
  | "InvalidEscapeCharacter"
  | "InvalidNumberFormat"
  | "InvalidSymbol"
  | "InvalidUnicode"
  | "LoneSurrogate"
  | "NestedTooDeep"
  | "PropertyNameExpected"
  | "UnexpectedEndOfComment"
  | "UnexpectedEndOfString"
  | "ValueExpected";

const DESCRIPTIONS: Readonly<Record<JsonErrorCode, string>> = {
  ByteOrderMark: "a byte order mark (U+FEFF) before the value",
  CloseBraceExpected: "the object is not closed with '}'",
  CloseBracketExpected: "the array is not closed with ']'",
  ColonExpected: "':' expected after the property name",
  CommaExpected: "',' expected between members",
  DuplicateKey: "a key repeated in one object",
  EndOfFileExpected: "text after the value",
  InvalidCharacter: "a control character inside a string",
  InvalidEscapeCharacter: "an unknown escape sequence",
  InvalidNumberFormat: "a malformed number",
  InvalidSymbol: "not a JSON value",
  InvalidUnicode: "a malformed \\u escape",
  LoneSurrogate: "a lone surrogate (\\ud800-\\udfff), which is not UTF-8 text",
  NestedTooDeep: "nested too deep",
  PropertyNameExpected: "a property name (a string in double quotes) expected",
  UnexpectedEndOfComment: "a comment that is not closed",
  UnexpectedEndOfString: "a string that is not closed",
  ValueExpected: "a value expected",
};

/** Why and where a text was refused. `message` is a short English description of `code`. */
export class JsonReadError extends Error {
  /** What was wrong, e.g. `CommaExpected`. */
  readonly code: JsonErrorCode;
  /** Offset (UTF-16 units) where reading stopped: for a key, of its opening quote. */
  readonly offset: number;
  /** Line and column of `offset`. */
  readonly position: Position;
  /**
   * For `DuplicateKey`: the path of the repeated key (the object's path and the key). For
   * `LoneSurrogate`: the path of the string, or of the key when `key` is true. Else `[]`.
   */
  readonly path: JsonPath;
  /** Whether `path` ends with a key that is itself at fault (`DuplicateKey`, a bad key). */
  readonly key: boolean;
  constructor(
    code: JsonErrorCode,
    offset: number,
    position: Position,
    path: JsonPath = [],
    key = false,
  ) {
    super(DESCRIPTIONS[code]);
    this.name = "JsonReadError";
    this.code = code;
    this.offset = offset;
    this.position = position;
    this.path = path;
    this.key = key;
  }
}

/** A read text: its value, and a way back from a JSON path to the text. */
export interface JsonDocument {
  /** The value (objects have a null prototype). */
  readonly value: unknown;
  /**
   * The position of the value at `path` (or of its key when `key` is true), falling back to the
   * nearest ancestor that exists.
   */
  locate(path: JsonPath, key?: boolean): Position;
  /** The source text of the value at `path` (a number's literal, say), or `null` when none. */
  rawText(path: JsonPath): string | null;
}

/**
 * The 1-based line and column of a UTF-16 offset in `text` (`\n`, `\r\n` and `\r` end lines).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { positionAt } from "./reader.ts";
 * assert.deepEqual(positionAt("a\nbc", 3), { line: 2, column: 2 });
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

/** A value with its place in the text. */
type Node =
  | { type: "object"; offset: number; length: number; value: object; props: Map<string, Prop> }
  | { type: "array"; offset: number; length: number; value: unknown[]; items: Node[] }
  | { type: "scalar"; offset: number; length: number; value: string | number | boolean | null };

/** One member of an object node. */
interface Prop {
  /** Offset of the key's opening quote. */
  keyOffset: number;
  /** The member's value. */
  node: Node;
}

/** The grammar of a JSON number (a sticky regex: it matches at `lastIndex` only). */
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
/** A run of string characters that need no attention (no quote, backslash or control). */
// deno-lint-ignore no-control-regex
const PLAIN = /[^"\\\u0000-\u001f]*/y;
/** What must not follow a number or a literal. */
const WORD_CHAR = /[A-Za-z0-9_.$+-]/;

/** The one-character escapes of a JSON string and what they stand for. */
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** The first lone surrogate met, reported once the text has parsed. */
interface Lone {
  offset: number;
  path: (string | number)[];
  key: boolean;
}

class Reader {
  i = 0;
  /** The keys and indexes from the root to the value being read. */
  readonly path: (string | number)[] = [];
  lone: Lone | null = null;
  readonly jsonc: boolean;
  readonly maxDepth: number;
  readonly checkLone: boolean;

  constructor(readonly t: string, options: ReadJsonOptions) {
    this.jsonc = options.dialect === "jsonc";
    this.maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
    this.checkLone = (options.loneSurrogates ?? "refuse") === "refuse";
  }

  fail(code: JsonErrorCode, at = this.i, path: JsonPath = [], key = false): never {
    throw new JsonReadError(code, at, positionAt(this.t, at), path, key);
  }

  /** Skips whitespace and, in JSONC, comments. */
  skip(): void {
    const t = this.t;
    for (;;) {
      const c = t.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        this.i++;
      } else if (this.jsonc && c === 0x2f && t.charCodeAt(this.i + 1) === 0x2f) {
        while (this.i < t.length) {
          const d = t.charCodeAt(this.i);
          if (d === 0x0a || d === 0x0d) break;
          this.i++;
        }
      } else if (this.jsonc && c === 0x2f && t.charCodeAt(this.i + 1) === 0x2a) {
        const end = t.indexOf("*/", this.i + 2);
        if (end < 0) this.fail("UnexpectedEndOfComment", this.i);
        this.i = end + 2;
      } else {
        return;
      }
    }
  }

  value(depth: number): Node {
    this.skip();
    const t = this.t;
    const start = this.i;
    const c = t[this.i];
    if (c === "{" || c === "[") {
      if (depth >= this.maxDepth) this.fail("NestedTooDeep", start);
      return c === "{" ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') {
      const value = this.string(false);
      return { type: "scalar", offset: start, length: this.i - start, value };
    }
    if (c === undefined) this.fail("ValueExpected");
    NUMBER.lastIndex = start;
    const m = c === "-" || (c >= "0" && c <= "9") ? NUMBER.exec(t) : null;
    if (m !== null) {
      this.i = start + m[0].length;
      this.endOfWord(start, "InvalidNumberFormat");
      return { type: "scalar", offset: start, length: m[0].length, value: Number(m[0]) };
    }
    for (const [word, v] of [["true", true], ["false", false], ["null", null]] as const) {
      if (t.startsWith(word, start)) {
        this.i = start + word.length;
        this.endOfWord(start, "InvalidSymbol");
        return { type: "scalar", offset: start, length: word.length, value: v };
      }
    }
    return this.fail("InvalidSymbol", start);
  }

  /** A number or a literal must not run on into more letters or digits. */
  endOfWord(start: number, code: JsonErrorCode): void {
    const d = this.t[this.i];
    if (d !== undefined && WORD_CHAR.test(d)) this.fail(code, start);
  }

  /** A string at `this.i` (its opening quote), decoded; `key` says whether it is a key. */
  string(key: boolean): string {
    const start = this.i;
    const out = this.stringFast(start) ?? this.stringSlow(start);
    if (this.checkLone && this.lone === null && !out.isWellFormed()) {
      this.lone = { offset: start, path: key ? [...this.path, out] : [...this.path], key };
    }
    return out;
  }

  /**
   * The string at `start`, decoded by the engine's own JSON parser once its closing quote is
   * found (the grammar of a JSON string is the same in both dialects), or `null` when it is not
   * a valid string; then {@link stringSlow} finds out why and where.
   */
  stringFast(start: number): string | null {
    const t = this.t;
    let from = start + 1;
    for (;;) {
      const q = t.indexOf('"', from);
      if (q < 0) return null;
      // The quote closes the string unless an odd number of backslashes escapes it.
      let b = q - 1;
      while (t.charCodeAt(b) === 0x5c) b--;
      if ((q - 1 - b) % 2 === 1) {
        from = q + 1;
        continue;
      }
      let out: unknown;
      try {
        out = JSON.parse(t.slice(start, q + 1));
      } catch {
        return null;
      }
      this.i = q + 1;
      return out as string;
    }
  }

  /** The string at `start`, decoded one escape at a time; fails where it stops being one. */
  stringSlow(start: number): string {
    const t = this.t;
    this.i = start + 1;
    let out = "";
    for (;;) {
      PLAIN.lastIndex = this.i;
      PLAIN.exec(t);
      out += t.slice(this.i, PLAIN.lastIndex);
      this.i = PLAIN.lastIndex;
      if (this.i >= t.length) this.fail("UnexpectedEndOfString", start);
      const c = t.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return out;
      }
      if (c < 0x20) this.fail("InvalidCharacter", this.i);
      // A backslash.
      const e = t[this.i + 1];
      if (e !== undefined && Object.hasOwn(SIMPLE_ESCAPES, e)) {
        out += SIMPLE_ESCAPES[e];
        this.i += 2;
      } else if (e === "u") {
        const hex = t.slice(this.i + 2, this.i + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) this.fail("InvalidUnicode", this.i);
        out += String.fromCharCode(parseInt(hex, 16));
        this.i += 6;
      } else {
        this.fail("InvalidEscapeCharacter", this.i);
      }
    }
  }

  /**
   * After a member or an item: a comma, or else `close` must follow (at the end of the text that
   * is `missing`, elsewhere `CommaExpected`). A comma before `close` is allowed in JSONC only.
   */
  separator(close: string, missing: JsonErrorCode): void {
    this.skip();
    if (this.t[this.i] === ",") {
      this.i++;
      this.skip();
      if (!this.jsonc && this.t[this.i] === close) {
        this.fail(close === "}" ? "PropertyNameExpected" : "ValueExpected");
      }
    } else if (this.t[this.i] !== close) {
      this.fail(this.i >= this.t.length ? missing : "CommaExpected");
    }
  }

  object(depth: number): Node {
    const start = this.i;
    this.i++;
    const props = new Map<string, Prop>();
    const value: Record<string, unknown> = Object.create(null);
    this.skip();
    while (this.t[this.i] !== "}") {
      if (this.t[this.i] !== '"') {
        this.fail(this.i >= this.t.length ? "CloseBraceExpected" : "PropertyNameExpected");
      }
      const keyOffset = this.i;
      const key = this.string(true);
      if (props.has(key)) this.fail("DuplicateKey", keyOffset, [...this.path, key], true);
      this.skip();
      if (this.t[this.i] !== ":") this.fail("ColonExpected");
      this.i++;
      this.path.push(key);
      const node = this.value(depth);
      this.path.pop();
      props.set(key, { keyOffset, node });
      // No prototype: `__proto__` is an own key like any other.
      value[key] = node.value;
      this.separator("}", "CloseBraceExpected");
    }
    this.i++;
    return { type: "object", offset: start, length: this.i - start, value, props };
  }

  array(depth: number): Node {
    const start = this.i;
    this.i++;
    const items: Node[] = [];
    this.skip();
    while (this.t[this.i] !== "]") {
      if (this.i >= this.t.length) this.fail("CloseBracketExpected");
      this.path.push(items.length);
      items.push(this.value(depth));
      this.path.pop();
      this.separator("]", "CloseBracketExpected");
    }
    this.i++;
    const value = items.map((n) => n.value);
    return { type: "array", offset: start, length: this.i - start, value, items };
  }
}

/** Follows `path` from `root` as far as it exists. */
function reach(
  root: Node,
  path: JsonPath,
): { node: Node; depth: number; keyOffset: number | null } {
  let node = root;
  let keyOffset: number | null = null;
  let depth = 0;
  for (const part of path) {
    if (node.type === "object" && typeof part === "string") {
      const p = node.props.get(part);
      if (p === undefined) break;
      node = p.node;
      keyOffset = p.keyOffset;
    } else if (node.type === "array" && typeof part === "number") {
      const n = node.items[part];
      if (n === undefined) break;
      node = n;
      keyOffset = null;
    } else {
      break;
    }
    depth++;
  }
  return { node, depth, keyOffset };
}

/**
 * Reads JSON (`dialect: "json"`) or JSONC (`dialect: "jsonc"`) text.
 *
 * @throws {JsonReadError} with a code, an offset and its position.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readJson } from "./reader.ts";
 * const doc = readJson('{"kind": "x", "n": 6e2}', { dialect: "json" });
 * assert.equal((doc.value as { kind: string }).kind, "x");
 * assert.equal(doc.rawText(["n"]), "6e2");
 * assert.throws(() => readJson("[1, 2,]", { dialect: "json" }), { code: "ValueExpected" });
 * assert.deepEqual(readJson("\ufeff[]", { dialect: "jsonc" }).value, []);
 * ```
 */
export function readJson(text: string, options: ReadJsonOptions): JsonDocument {
  const r = new Reader(text, options);
  if (text.charCodeAt(0) === 0xfeff) {
    if (!r.jsonc) r.fail("ByteOrderMark", 0);
    // Skipped, not removed: offsets (and so columns) stay those of the text as given.
    r.i = 1;
  }
  const root = r.value(0);
  r.skip();
  if (r.i < text.length) r.fail("EndOfFileExpected");
  if (r.lone !== null) r.fail("LoneSurrogate", r.lone.offset, r.lone.path, r.lone.key);
  return {
    value: root.value,
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
