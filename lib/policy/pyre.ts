/**
 * Python `re` argument patterns, compiled to JavaScript.
 *
 * The brief's command `args` are Python regular expressions matched with `re.fullmatch` (that is
 * the format the earlier implementation defined, and briefs are shared between the two). This
 * module translates one pattern into an equivalent JavaScript `RegExp` with the `v` flag (code
 * point semantics, like Python's `str` patterns), anchored so that `test` is a whole-string match.
 *
 * Every construct is either translated to something with the same meaning or refused with
 * `POLICY_LINT`; nothing is passed through on the hope that both dialects agree:
 *
 * - `.` is `[^\n]` (Python's dot matches `\r`, JavaScript's does not); `(?s)` makes it any character.
 * - `\d`, `\w`, `\s` use Python's Unicode classes (`\p{Nd}`, `[\p{L}\p{N}_]`, Python's 29 space
 *   characters); under `(?a)` their ASCII forms. `\b` is rebuilt from lookarounds over that `\w`.
 * - `$` is Python's "end, or before a final newline"; `\A`, `\Z` (and 3.14's `\z`) are the string ends.
 * - `(?P<name>...)` and plain groups become non-capturing (no capture is ever read).
 * - `{,n}` becomes `{0,n}`; a `{` that does not form a quantifier is a literal, as in Python.
 * - atomic groups `(?>...)` and possessive quantifiers (`*+`, `++`, `?+`, `{m,n}+`) are emulated
 *   exactly with a capturing lookahead and a back-reference (lookaheads are atomic in JavaScript).
 * - inline flags: `a`, `s`, `m`, `u` (global at the start, or scoped `(?s:...)`) are honoured.
 *
 * Refused: back-references (`\1`, `(?P=name)`; an unset group matches nothing in Python but the
 * empty string in JavaScript), conditionals `(?(1)...)`, lookbehind, `\B` (its empty-string
 * behaviour changed in Python 3.14), `\N{...}`, the flags `i`, `x` and `L`, quantified assertions
 * or comments, repeat counts above 65535, nesting deeper than 64, and patterns longer than 4096
 * characters. Everything Python itself rejects (bad escapes, bad ranges, nothing to repeat,
 * multiple repeat, unbalanced parentheses, unterminated sets) is refused too.
 *
 * @example
 * ```ts
 * import { compileArgPattern } from "./pyre.ts";
 * const re = compileArgPattern(String.raw`[A-Za-z0-9_]+\.lean`);
 * re.test("Main.lean"); // true
 * re.test("../x.lean"); // false
 * ```
 * @module
 */

import { PolicyError } from "../errors.ts";

/** The longest argument pattern accepted, in characters. */
export const MAX_ARG_PATTERN_LENGTH = 4096;
/** The largest repeat count accepted in `{m,n}`. */
export const MAX_REPEAT_COUNT = 65535;
const MAX_DEPTH = 64;

interface Flags {
  readonly ascii: boolean;
  readonly dotall: boolean;
  readonly multiline: boolean;
}

/** Python's `\s` for `str` patterns (Unicode 14; checked against CPython 3.11 over all code points). */
const UNI_SPACE = [0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680]
  .map(hex).join("") +
  "\\u{2000}-\\u{200A}" +
  [0x2028, 0x2029, 0x202f, 0x205f, 0x3000].map(hex).join("");
const ASCII_SPACE = [0x20, 0x9, 0xa, 0xd, 0xc, 0xb].map(hex).join("");
const UNI_WORD = "\\p{L}\\p{N}\\u{5F}";
const ASCII_WORD = "\\u{41}-\\u{5A}\\u{61}-\\u{7A}\\u{30}-\\u{39}\\u{5F}";
const UNI_DIGIT = "\\p{Nd}";
const ASCII_DIGIT = "\\u{30}-\\u{39}";

function hex(cp: number): string {
  return `\\u{${cp.toString(16).toUpperCase()}}`;
}

/** Class-body text (usable inside `[...]` in `v` mode) for one category escape letter. */
function categoryBody(letter: string, flags: Flags): { body: string; negated: boolean } {
  const lower = letter.toLowerCase();
  const body = lower === "d"
    ? (flags.ascii ? ASCII_DIGIT : UNI_DIGIT)
    : lower === "w"
    ? (flags.ascii ? ASCII_WORD : UNI_WORD)
    : (flags.ascii ? ASCII_SPACE : UNI_SPACE);
  return { body, negated: letter !== lower };
}

function literal(cp: number): string {
  const ch = String.fromCodePoint(cp);
  return /^[A-Za-z0-9]$/.test(ch) ? ch : hex(cp);
}

const HEX_DIGITS = /^[0-9A-Fa-f]$/;
const OCT_DIGITS = /^[0-7]$/;
const DIGITS = /^[0-9]$/;
const ASCII_LETTERS = /^[A-Za-z]$/;

/** A parsed sequence item: its JS text and what kind of node it is (for quantifier rules). */
interface Item {
  readonly js: string;
  readonly kind: "atom" | "anchor" | "assertion" | "comment" | "repeat";
}

class Translator {
  private readonly cps: string[];
  private pos = 0;
  private atomics = 0;
  private depth = 0;
  private readonly names = new Set<string>();

  constructor(private readonly pattern: string) {
    this.cps = Array.from(pattern);
  }

  private fail(reason: string, at: number = this.pos): never {
    throw new PolicyError(
      "POLICY_LINT",
      `argument pattern ${JSON.stringify(this.pattern)}: ${reason} (at character ${at})`,
      { details: { pattern: this.pattern, position: at } },
    );
  }

  private peek(offset = 0): string | undefined {
    return this.cps[this.pos + offset];
  }

  private next(): string | undefined {
    return this.cps[this.pos++];
  }

  private match(s: string): boolean {
    const chars = Array.from(s);
    for (let i = 0; i < chars.length; i++) {
      if (this.cps[this.pos + i] !== chars[i]) return false;
    }
    this.pos += chars.length;
    return true;
  }

  translate(): string {
    let flags: Flags = { ascii: false, dotall: false, multiline: false };
    // Global inline flags `(?s)` are legal only at the very start (Python 3.11+).
    while (/^\(\?[A-Za-z]+\)/.test(this.cps.slice(this.pos, this.pos + 16).join(""))) {
      this.pos += 2;
      flags = this.flagLetters(flags, false).flags;
      if (this.next() !== ")") this.fail("missing -, : or )");
    }
    const body = this.alternation(flags);
    if (this.pos < this.cps.length) this.fail("unbalanced parenthesis");
    return body;
  }

  /** Reads flag letters (after `(?` or after `-`), returning the new flag set. */
  private flagLetters(base: Flags, allowOff: boolean): { flags: Flags } {
    let { ascii, dotall, multiline } = base;
    let unicode = false;
    let seen = 0;
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail("missing -, : or )");
      if (c === "a") ascii = true;
      else if (c === "u") unicode = true;
      else if (c === "s") dotall = true;
      else if (c === "m") multiline = true;
      else if (c === "i") this.fail("the flag 'i' is not supported; spell both cases in a class");
      else if (c === "x") this.fail("the flag 'x' (verbose) is not supported");
      else if (c === "L") this.fail("the flag 'L' is not valid for str patterns");
      else break;
      this.pos++;
      seen++;
    }
    if (ascii && unicode) this.fail("flags 'a' and 'u' are incompatible");
    if (unicode) ascii = false;
    if (this.peek() === "-") {
      if (!allowOff) this.fail("flags can be turned off only in a scoped group");
      this.pos++;
      let off = 0;
      for (;;) {
        const c = this.peek();
        if (c === "s") dotall = false;
        else if (c === "m") multiline = false;
        else if (c === "i" || c === "x") this.fail(`the flag '${c}' is not supported`);
        else if (c === "a" || c === "u" || c === "L") {
          this.fail(`the flag '${c}' cannot be turned off`);
        } else break;
        this.pos++;
        off++;
      }
      if (off === 0) this.fail("missing flag after '-'");
      if (this.peek() !== ":") this.fail("missing ':' after turned-off flags");
    } else if (seen === 0) {
      this.fail("missing flag");
    }
    return { flags: { ascii, dotall, multiline } };
  }

  private alternation(flags: Flags): string {
    const branches = [this.sequence(flags)];
    while (this.peek() === "|") {
      this.pos++;
      branches.push(this.sequence(flags));
    }
    return branches.join("|");
  }

  private sequence(flags: Flags): string {
    const items: Item[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === "|" || c === ")") break;
      const start = this.pos;
      const quant = this.quantifier();
      if (quant !== null) {
        const prev = items[items.length - 1];
        if (prev === undefined || prev.kind === "anchor") this.fail("nothing to repeat", start);
        if (prev.kind === "repeat") this.fail("multiple repeat", start);
        if (prev.kind === "comment") this.fail("a quantifier after a comment group", start);
        if (prev.kind === "assertion") this.fail("a quantified lookahead is not supported", start);
        items[items.length - 1] = { js: this.applyQuantifier(prev.js, quant), kind: "repeat" };
        continue;
      }
      items.push(this.item(flags));
    }
    return items.map((i) => i.js).join("");
  }

  /** Parses a quantifier at the cursor, or returns null (cursor unchanged) when there is none. */
  private quantifier(): { js: string; possessive: boolean } | null {
    const c = this.peek();
    let js: string;
    if (c === "*" || c === "+" || c === "?") {
      this.pos++;
      js = c;
    } else if (c === "{") {
      const save = this.pos;
      this.pos++;
      if (this.peek() === "}") {
        this.pos = save;
        return null;
      }
      let lo = "";
      let hi = "";
      while (DIGITS.test(this.peek() ?? "")) lo += this.next();
      let comma = false;
      if (this.peek() === ",") {
        comma = true;
        this.pos++;
        while (DIGITS.test(this.peek() ?? "")) hi += this.next();
      } else {
        hi = lo;
      }
      if (this.peek() !== "}") {
        this.pos = save;
        return null;
      }
      this.pos++;
      const min = lo === "" ? 0 : Number(lo);
      const max = hi === "" ? Infinity : Number(hi);
      if (min > MAX_REPEAT_COUNT || (max !== Infinity && max > MAX_REPEAT_COUNT)) {
        this.fail(`repeat count above ${MAX_REPEAT_COUNT}`, save);
      }
      if (max < min) this.fail("min repeat greater than max repeat", save);
      js = !comma ? `{${min}}` : max === Infinity ? `{${min},}` : `{${min},${max}}`;
    } else {
      return null;
    }
    let possessive = false;
    if (this.peek() === "?") {
      this.pos++;
      js += "?";
    } else if (this.peek() === "+") {
      this.pos++;
      possessive = true;
    }
    return { js, possessive };
  }

  private applyQuantifier(atom: string, q: { js: string; possessive: boolean }): string {
    const repeated = `(?:${atom})${q.js}`;
    return q.possessive ? this.atomic(repeated) : repeated;
  }

  private atomic(inner: string): string {
    const name = `a${this.atomics++}`;
    return `(?:(?=(?<${name}>${inner}))\\k<${name}>)`;
  }

  private item(flags: Flags): Item {
    const start = this.pos;
    const c = this.next() as string;
    switch (c) {
      case ".":
        return { js: flags.dotall ? "[\\u{0}-\\u{10FFFF}]" : "[^\\u{A}]", kind: "atom" };
      case "^":
        return { js: flags.multiline ? "(?<![^\\u{A}])" : "^", kind: "anchor" };
      case "$":
        return { js: flags.multiline ? "(?=\\u{A}|$)" : "(?=\\u{A}?$)", kind: "anchor" };
      case "[":
        return { js: this.charClass(flags, start), kind: "atom" };
      case "(":
        return this.group(flags, start);
      case ")":
        return this.fail("unbalanced parenthesis", start);
      case "\\":
        return this.escape(flags, start);
      case "*":
      case "+":
      case "?":
        return this.fail("nothing to repeat", start);
      default:
        return { js: literal(c.codePointAt(0) as number), kind: "atom" };
    }
  }

  private group(flags: Flags, start: number): Item {
    if (++this.depth > MAX_DEPTH) this.fail(`groups nested deeper than ${MAX_DEPTH}`, start);
    try {
      if (this.peek() !== "?") return { js: `(?:${this.groupBody(flags, start)})`, kind: "atom" };
      this.pos++;
      const c = this.peek();
      if (c === ":") {
        this.pos++;
        return { js: `(?:${this.groupBody(flags, start)})`, kind: "atom" };
      }
      if (c === "P") {
        this.pos++;
        if (this.match("<")) {
          this.groupName(start);
          return { js: `(?:${this.groupBody(flags, start)})`, kind: "atom" };
        }
        if (this.peek() === "=") this.fail("back-references are not supported", start);
        return this.fail("unknown extension ?P", start);
      }
      if (c === "#") {
        this.pos++;
        while (this.peek() !== ")") {
          if (this.next() === undefined) this.fail("missing ), unterminated comment", start);
        }
        this.pos++;
        return { js: "", kind: "comment" };
      }
      if (c === "=" || c === "!") {
        this.pos++;
        const body = this.groupBody(flags, start);
        return { js: `(?${c}${body})`, kind: "assertion" };
      }
      if (c === "<") {
        const d = this.peek(1);
        if (d === "=" || d === "!") this.fail("lookbehind is not supported", start);
        return this.fail("unknown extension ?<", start);
      }
      if (c === ">") {
        this.pos++;
        return { js: this.atomic(this.groupBody(flags, start)), kind: "atom" };
      }
      if (c === "(") this.fail("conditional groups are not supported", start);
      if (c !== undefined && /^[aiLmsux-]$/.test(c)) {
        const { flags: inner } = this.flagLetters(flags, true);
        if (this.peek() === ")") {
          this.fail("global flags not at the start of the expression", start);
        }
        if (this.peek() !== ":") this.fail("missing -, : or )", this.pos);
        this.pos++;
        return { js: `(?:${this.groupBody(inner, start)})`, kind: "atom" };
      }
      return this.fail(`unknown extension ?${c ?? ""}`, start);
    } finally {
      this.depth--;
    }
  }

  private groupBody(flags: Flags, start: number): string {
    const body = this.alternation(flags);
    if (this.next() !== ")") this.fail("missing ), unterminated subpattern", start);
    return body;
  }

  private groupName(start: number): void {
    let name = "";
    for (;;) {
      const c = this.next();
      if (c === undefined) this.fail("missing >, unterminated name", start);
      if (c === ">") break;
      name += c;
    }
    if (!/^[\p{L}_][\p{L}\p{N}_]*$/u.test(name)) this.fail(`bad character in group name`, start);
    if (this.names.has(name)) this.fail(`redefinition of group name ${name}`, start);
    this.names.add(name);
  }

  /** An escape outside a class. */
  private escape(flags: Flags, start: number): Item {
    const c = this.next();
    if (c === undefined) this.fail("bad escape (end of pattern)", start);
    switch (c) {
      case "A":
        return { js: "^", kind: "anchor" };
      case "Z":
      case "z":
        return { js: "$", kind: "anchor" };
      case "b": {
        const w = `[${flags.ascii ? ASCII_WORD : UNI_WORD}]`;
        return { js: `(?:(?<=${w})(?!${w})|(?<!${w})(?=${w}))`, kind: "anchor" };
      }
      case "B":
        return this.fail(
          "\\B is not supported (its empty-string behaviour differs by Python version)",
          start,
        );
      case "d":
      case "D":
      case "w":
      case "W":
      case "s":
      case "S": {
        const { body, negated } = categoryBody(c, flags);
        return { js: negated ? `[^${body}]` : `[${body}]`, kind: "atom" };
      }
      default:
        break;
    }
    if (DIGITS.test(c)) {
      if (c === "0") return { js: literal(this.octal("0", 2)), kind: "atom" };
      const d2 = this.peek();
      const d3 = this.peek(1);
      if (
        d2 !== undefined && d3 !== undefined && OCT_DIGITS.test(c) && OCT_DIGITS.test(d2) &&
        OCT_DIGITS.test(d3)
      ) {
        this.pos += 2;
        const value = parseInt(c + d2 + d3, 8);
        if (value > 0o377) this.fail("octal escape value outside of range 0-0o377", start);
        return { js: literal(value), kind: "atom" };
      }
      return this.fail("back-references are not supported", start);
    }
    return { js: literal(this.commonEscape(c, start)), kind: "atom" };
  }

  /** `\0` style octal: the digits already read plus up to `more` octal digits. */
  private octal(first: string, more: number): number {
    let digits = first;
    for (let i = 0; i < more && OCT_DIGITS.test(this.peek() ?? ""); i++) digits += this.next();
    const value = parseInt(digits, 8);
    if (value > 0o377) this.fail("octal escape value outside of range 0-0o377");
    return value;
  }

  /** Escapes that mean one character both inside and outside a class. */
  private commonEscape(c: string, start: number): number {
    switch (c) {
      case "a":
        return 0x7;
      case "f":
        return 0xc;
      case "n":
        return 0xa;
      case "r":
        return 0xd;
      case "t":
        return 0x9;
      case "v":
        return 0xb;
      case "x":
        return this.hexDigits(2, start);
      case "u":
        return this.hexDigits(4, start);
      case "U": {
        const cp = this.hexDigits(8, start);
        if (cp > 0x10ffff) this.fail("bad escape \\U (outside Unicode)", start);
        return cp;
      }
      case "N":
        return this.fail("\\N{...} named characters are not supported", start);
      default:
        if (ASCII_LETTERS.test(c)) this.fail(`bad escape \\${c}`, start);
        return c.codePointAt(0) as number;
    }
  }

  private hexDigits(n: number, start: number): number {
    let digits = "";
    for (let i = 0; i < n; i++) {
      const d = this.peek();
      if (d === undefined || !HEX_DIGITS.test(d)) this.fail(`incomplete hex escape`, start);
      digits += this.next();
    }
    const cp = parseInt(digits, 16);
    if (cp >= 0xd800 && cp <= 0xdfff) this.fail("a surrogate code point escape", start);
    return cp;
  }

  /** A `[...]` set; the cursor is just past `[`. */
  private charClass(flags: Flags, start: number): string {
    const negate = this.match("^");
    const first = this.pos;
    const parts: string[] = [];
    for (;;) {
      const c = this.next();
      if (c === undefined) this.fail("unterminated character set", start);
      if (c === "]" && this.pos - 1 !== first) break;
      const lo = c === "\\" ? this.classEscape(flags, start) : c.codePointAt(0) as number;
      if (this.peek() === "-") {
        this.pos++;
        const d = this.next();
        if (d === undefined) this.fail("unterminated character set", start);
        if (d === "]") {
          parts.push(typeof lo === "number" ? hex(lo) : lo, hex(0x2d));
          break;
        }
        const hi = d === "\\" ? this.classEscape(flags, start) : d.codePointAt(0) as number;
        if (typeof lo !== "number" || typeof hi !== "number") {
          this.fail("bad character range", start);
        }
        if (hi < lo) this.fail("bad character range", start);
        parts.push(`${hex(lo)}-${hex(hi)}`);
        continue;
      }
      parts.push(typeof lo === "number" ? hex(lo) : lo);
    }
    return `[${negate ? "^" : ""}${parts.join("")}]`;
  }

  /** An escape inside a class: a code point, or class text for a category. */
  private classEscape(flags: Flags, start: number): number | string {
    const c = this.next();
    if (c === undefined) this.fail("unterminated character set", start);
    if (/^[dDwWsS]$/.test(c)) {
      const { body, negated } = categoryBody(c, flags);
      return negated ? `[^${body}]` : body;
    }
    if (c === "b") return 0x8;
    if (OCT_DIGITS.test(c)) return this.octal(c, 2);
    if (DIGITS.test(c)) this.fail(`bad escape \\${c}`, start);
    return this.commonEscape(c, start);
  }
}

/**
 * Translates a Python `re` pattern into the body of an equivalent JavaScript `v`-flag pattern
 * (not anchored). Throws `PolicyError` `POLICY_LINT` for anything it cannot translate faithfully.
 *
 * @example
 * ```ts
 * import { translatePythonRegex } from "./pyre.ts";
 * translatePythonRegex("a{,2}"); // "(?:a){0,2}"
 * ```
 */
export function translatePythonRegex(pattern: string): string {
  if (!pattern.isWellFormed()) {
    throw new PolicyError("POLICY_LINT", "argument pattern contains a lone surrogate", {
      details: { pattern },
    });
  }
  if (Array.from(pattern).length > MAX_ARG_PATTERN_LENGTH) {
    throw new PolicyError(
      "POLICY_LINT",
      `argument pattern is longer than ${MAX_ARG_PATTERN_LENGTH} characters`,
      { details: { pattern: pattern.slice(0, 64) } },
    );
  }
  return new Translator(pattern).translate();
}

/**
 * Compiles a Python `re` argument pattern into a JavaScript `RegExp` whose `test` is Python's
 * `re.fullmatch` (the whole argument must match). Throws `PolicyError` `POLICY_LINT` when the
 * pattern is invalid in Python or uses a construct that is not translated.
 *
 * @example
 * ```ts
 * import { compileArgPattern } from "./pyre.ts";
 * compileArgPattern(String.raw`\d+`).test("42"); // true
 * compileArgPattern(String.raw`\d+`).test("42\n"); // false (fullmatch, not match)
 * ```
 */
export function compileArgPattern(pattern: string): RegExp {
  const body = translatePythonRegex(pattern);
  try {
    return new RegExp(`^(?:${body})$`, "v");
  } catch (cause) {
    throw new PolicyError(
      "POLICY_LINT",
      `argument pattern ${JSON.stringify(pattern)} could not be compiled: ${String(cause)}`,
      { cause, details: { pattern } },
    );
  }
}
