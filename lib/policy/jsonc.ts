/**
 * A small JSONC parser that keeps positions: JSON plus `//` and `/* *\/` comments and trailing
 * commas, the dialect briefs are written in. It builds a tree of nodes with their offsets, so
 * every later error can point at the line and column of a value or key, and it refuses what a
 * lenient parser would let pass silently: a key repeated in one object, nesting deeper than a
 * limit, anything after the value.
 *
 * Errors carry a code in the style of VS Code's JSONC parser (`CommaExpected`, `ValueExpected`,
 * `InvalidSymbol`, ...) and the offset where parsing stopped.
 *
 * @example
 * ```ts
 * import { parseJsonc } from "./jsonc.ts";
 * const root = parseJsonc('{\n  // a note\n  "a": [1, 2,],\n}', 128);
 * root.type; // "object"
 * ```
 * @module
 */

/** A parsed value with its place in the text. */
export type JsoncNode =
  | { type: "object"; offset: number; length: number; props: Map<string, JsoncProp> }
  | { type: "array"; offset: number; length: number; items: JsoncNode[] }
  | {
    type: "string" | "number" | "boolean" | "null";
    offset: number;
    length: number;
    value: string | number | boolean | null;
  };

/** One property of an object node. */
export interface JsoncProp {
  /** Offset of the key's opening quote. */
  keyOffset: number;
  /** The value. */
  node: JsoncNode;
}

/** Why and where the text is not JSONC. */
export class JsoncSyntaxError extends Error {
  /** A short code, e.g. `CommaExpected`. */
  readonly code: string;
  /** Offset (UTF-16 units) where parsing stopped. */
  readonly offset: number;
  /** For `DuplicateKey`: the path of the object holding the key, and the key. */
  readonly path: (string | number)[];
  constructor(code: string, offset: number, path: (string | number)[] = []) {
    super(code);
    this.code = code;
    this.offset = offset;
    this.path = path;
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

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

class Parser {
  i = 0;
  /** The keys and indexes from the root to the value being parsed (for `DuplicateKey`). */
  readonly path: (string | number)[] = [];
  constructor(readonly t: string, readonly maxDepth: number) {}

  fail(code: string, at = this.i, path: (string | number)[] = []): never {
    throw new JsoncSyntaxError(code, at, path);
  }

  /** Skips whitespace and comments. */
  skip(): void {
    const t = this.t;
    for (;;) {
      const c = t.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        this.i++;
      } else if (c === 0x2f && t.charCodeAt(this.i + 1) === 0x2f) {
        while (this.i < t.length) {
          const d = t.charCodeAt(this.i);
          if (d === 0x0a || d === 0x0d) break;
          this.i++;
        }
      } else if (c === 0x2f && t.charCodeAt(this.i + 1) === 0x2a) {
        const end = t.indexOf("*/", this.i + 2);
        if (end < 0) this.fail("UnexpectedEndOfComment", this.i);
        this.i = end + 2;
      } else {
        return;
      }
    }
  }

  value(depth: number): JsoncNode {
    this.skip();
    const t = this.t;
    const start = this.i;
    const c = t[this.i];
    if (c === "{" || c === "[") {
      if (depth >= this.maxDepth) this.fail("NestedTooDeep", start);
      return c === "{" ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') {
      const value = this.string();
      return { type: "string", offset: start, length: this.i - start, value };
    }
    if (c === undefined) this.fail("ValueExpected");
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(t);
    if (m !== null && (c === "-" || (c >= "0" && c <= "9"))) {
      this.i = start + m[0].length;
      this.endOfWord(start, "InvalidNumberFormat");
      return { type: "number", offset: start, length: m[0].length, value: Number(m[0]) };
    }
    for (const [word, v] of [["true", true], ["false", false], ["null", null]] as const) {
      if (t.startsWith(word, start)) {
        this.i = start + word.length;
        this.endOfWord(start, "InvalidSymbol");
        return {
          type: v === null ? "null" : "boolean",
          offset: start,
          length: word.length,
          value: v,
        };
      }
    }
    return this.fail("InvalidSymbol", start);
  }

  /** A word (number, literal) must not run on into more letters or digits. */
  endOfWord(start: number, code: string): void {
    const d = this.t[this.i];
    if (d !== undefined && /[A-Za-z0-9_.$+-]/.test(d)) this.fail(code, start);
  }

  string(): string {
    const t = this.t;
    const start = this.i;
    this.i++;
    let out = "";
    let from = this.i;
    for (;;) {
      if (this.i >= t.length) this.fail("UnexpectedEndOfString", start);
      const c = t.charCodeAt(this.i);
      if (c === 0x22) {
        out += t.slice(from, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) this.fail("InvalidCharacter", this.i);
      if (c === 0x5c) {
        out += t.slice(from, this.i);
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
        from = this.i;
        continue;
      }
      this.i++;
    }
  }

  /**
   * After a member or an item: a comma (a trailing one is allowed), or else `close` must follow;
   * at the end of the text that is `missing`, elsewhere `CommaExpected`.
   */
  separator(close: string, missing: string): void {
    this.skip();
    if (this.t[this.i] === ",") {
      this.i++;
      this.skip();
    } else if (this.t[this.i] !== close) {
      this.fail(this.i >= this.t.length ? missing : "CommaExpected");
    }
  }

  object(depth: number): JsoncNode {
    const start = this.i;
    this.i++;
    const props = new Map<string, JsoncProp>();
    this.skip();
    while (this.t[this.i] !== "}") {
      if (this.t[this.i] !== '"') {
        this.fail(this.i >= this.t.length ? "CloseBraceExpected" : "PropertyNameExpected");
      }
      const keyOffset = this.i;
      const key = this.string();
      if (props.has(key)) this.fail("DuplicateKey", keyOffset, [...this.path, key]);
      this.skip();
      if (this.t[this.i] !== ":") this.fail("ColonExpected");
      this.i++;
      this.path.push(key);
      const node = this.value(depth);
      this.path.pop();
      props.set(key, { keyOffset, node });
      this.separator("}", "CloseBraceExpected");
    }
    this.i++;
    return { type: "object", offset: start, length: this.i - start, props };
  }

  array(depth: number): JsoncNode {
    const start = this.i;
    this.i++;
    const items: JsoncNode[] = [];
    this.skip();
    while (this.t[this.i] !== "]") {
      if (this.i >= this.t.length) this.fail("CloseBracketExpected");
      this.path.push(items.length);
      items.push(this.value(depth));
      this.path.pop();
      this.separator("]", "CloseBracketExpected");
    }
    this.i++;
    return { type: "array", offset: start, length: this.i - start, items };
  }
}

/**
 * Parses JSONC text into a node tree.
 *
 * @throws {JsoncSyntaxError} with a code and an offset.
 * @example
 * ```ts
 * import { parseJsonc } from "./jsonc.ts";
 * parseJsonc("[1, 2,]", 128).type; // "array"
 * ```
 */
export function parseJsonc(text: string, maxDepth: number): JsoncNode {
  const p = new Parser(text, maxDepth);
  const root = p.value(0);
  p.skip();
  if (p.i < text.length) p.fail("EndOfFileExpected");
  return root;
}

/**
 * The plain value of a node; objects get a null prototype, so `__proto__` is just a key.
 *
 * @example
 * ```ts
 * import { nodeValue, parseJsonc } from "./jsonc.ts";
 * nodeValue(parseJsonc('{"a": [true]}', 8)); // { a: [true] }
 * ```
 */
export function nodeValue(n: JsoncNode): unknown {
  if (n.type === "object") {
    const o: Record<string, unknown> = Object.create(null);
    for (const [k, p] of n.props) o[k] = nodeValue(p.node);
    return o;
  }
  if (n.type === "array") return n.items.map(nodeValue);
  return n.value;
}

/** How far a path reaches into a tree: see {@link reach}. */
export interface JsoncReach {
  /** The node at the path, else at its longest prefix that exists. */
  node: JsoncNode;
  /** How many parts of the path were followed (all of them when the path exists). */
  depth: number;
  /** Offset of `node`'s key when `node` is an object's property, else `null`. */
  keyOffset: number | null;
}

/**
 * Follows `path` from `root` as far as it exists: the node reached, how many parts that took,
 * and the node's key offset (for messages about a key rather than its value).
 *
 * @example
 * ```ts
 * import { parseJsonc, reach } from "./jsonc.ts";
 * const r = reach(parseJsonc('{"a": [1, 2]}', 8), ["a", 1]);
 * [r.depth, r.node.offset]; // [2, 10]
 * reach(parseJsonc('{"a": [1, 2]}', 8), ["a", "x"]).depth; // 1
 * ```
 */
export function reach(root: JsoncNode, path: readonly (string | number)[]): JsoncReach {
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
