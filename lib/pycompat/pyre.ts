/**
 * Python `re` argument patterns, compiled to JavaScript.
 *
 * The brief's command `args` are Python regular expressions matched with `re.fullmatch` (that is
 * the format the earlier implementation defined, and briefs are shared between the two). This
 * module translates one pattern into an equivalent JavaScript `RegExp` with the `v` flag (code
 * point semantics, like Python's `str` patterns), anchored so that `test` is a whole-string match.
 *
 * Every construct is either translated to something with the same meaning or refused with
 * `POLICY_LINT`; nothing is passed through on the hope that both dialects agree. This module is the
 * one place that decides which constructs are supported; the policy lint reports its refusals at
 * the pattern's JSON path, and the run path loads briefs only through that lint.
 *
 * - `.` is `[^\n]` (Python's dot matches `\r`, JavaScript's does not); `(?s)` makes it any character.
 * - `\d`, `\w`, `\s` are CPython 3.11's own Unicode tables (`pyre_unicode.ts`, Unicode 14), never
 *   JavaScript's `\p{...}` (the engine's Unicode 17 has letters and digits CPython 3.11 does not
 *   know); under `(?a)` their ASCII forms. `\b` is rebuilt from lookarounds over that `\w`.
 * - `$` is Python's "end, or before a final newline"; `\A` and `\Z` are the string ends.
 * - `(?P<name>...)` and plain groups become non-capturing (no capture is ever read).
 * - `{,n}` becomes `{0,n}`; a `{` that does not form a quantifier is a literal, as in Python.
 * - inline flags: `a`, `s`, `m`, `u` (global at the start, or scoped `(?s:...)`, `(?-s:...)`) are
 *   honoured, with CPython's rules for combining them.
 *
 * Refused: possessive quantifiers (`*+`, `++`, `?+`, `{m,n}+`) and atomic groups `(?>...)`: their
 * result depends on which match the engine finds first, and JavaScript and CPython treat an
 * iteration that matches empty differently (JavaScript rejects it and backtracks into the next
 * branch, CPython accepts it and stops repeating), so `(?:[a-z0-9]*|-rf)*+` admitted `-rf` under
 * the former lookahead emulation and does not in CPython; back-references (`\1`, `(?P=name)`; an unset group matches nothing in Python
 * but the empty string in JavaScript), conditionals `(?(1)...)`, lookbehind, `\B` (its
 * empty-string behaviour changed in Python 3.14), `\z` (an error before 3.14), `\N{...}`, the
 * flags `i`, `x` and `L`, non-ASCII group names, sets that CPython warns about (a set starting
 * with `[`, `--`, `&&`, `~~`, `||`), quantified assertions or comments, repeat counts above 65535,
 * nesting deeper than 64, patterns longer than 4096 characters or translating to more than
 * `MAX_TRANSLATED_LENGTH`. Everything CPython itself rejects (bad escapes, bad ranges, nothing to
 * repeat, multiple repeat, unbalanced parentheses, unterminated sets, incompatible or
 * contradictory flags) is refused too. `tests/policy/pyre_diff_test.ts` checks all of this
 * against a live CPython.
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
import { UNI_DIGIT, UNI_SPACE, UNI_WORD } from "./pyre_classes.ts";

/** The longest argument pattern accepted, in characters. */
export const MAX_ARG_PATTERN_LENGTH = 4096;
/** The largest repeat count accepted in `{m,n}`. */
export const MAX_REPEAT_COUNT = 65535;
/** The longest translation accepted, in UTF-16 units (each Unicode `\\w` is about 11,600). */
export const MAX_TRANSLATED_LENGTH = 1 << 20;
const MAX_DEPTH = 64;

interface Flags {
  readonly ascii: boolean;
  /** `(?u)` given globally: only to refuse it with a global `(?a)`, as CPython does. */
  readonly unicode: boolean;
  readonly dotall: boolean;
  readonly multiline: boolean;
}

function hex(cp: number): string {
  return `\\u{${cp.toString(16).toUpperCase()}}`;
}

// Python's classes for `str` patterns, from CPython's own tables (never JavaScript's `\\p{...}`,
// whose Unicode version is the engine's: Unicode 17 letters are not `\\w` to CPython 3.11),
// precomputed as class bodies (`pyre_classes.ts`, generated from `pyre_unicode.ts`).
const ASCII_SPACE = [0x20, 0x9, 0xa, 0xd, 0xc, 0xb].map(hex).join("");
const ASCII_WORD = "\\u{41}-\\u{5A}\\u{61}-\\u{7A}\\u{30}-\\u{39}\\u{5F}";
const ASCII_DIGIT = "\\u{30}-\\u{39}";

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

const BACKREF = "back-references are not supported; repeat the group's pattern instead";

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
    let flags: Flags = { ascii: false, unicode: false, dotall: false, multiline: false };
    // Global inline flags `(?s)` are legal only at the very start (Python 3.11+). CPython adds
    // them up, so `(?u)(?a)` is refused as `(?au)` is.
    while (/^\(\?[A-Za-z]+\)/.test(this.cps.slice(this.pos, this.pos + 16).join(""))) {
      const start = this.pos;
      this.pos += 2;
      const { on } = this.flagLetters(false);
      if (this.next() !== ")") this.fail("missing -, : or )");
      flags = {
        ascii: flags.ascii || on.has("a"),
        unicode: flags.unicode || on.has("u"),
        dotall: flags.dotall || on.has("s"),
        multiline: flags.multiline || on.has("m"),
      };
      if (flags.ascii && flags.unicode) this.fail("flags 'a' and 'u' are incompatible", start);
    }
    const body = this.alternation(flags);
    if (this.pos < this.cps.length) this.fail("unbalanced parenthesis");
    return body;
  }

  /**
   * Reads the flag letters after `(?`: those turned on and, in a scoped group (`(?s-m:...)`),
   * those turned off. The cursor stops at the `)` or `:` that follows.
   */
  private flagLetters(scoped: boolean): { on: Set<string>; off: Set<string> } {
    const on = new Set<string>();
    const off = new Set<string>();
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail("missing -, : or )");
      if (c === "a" || c === "u" || c === "s" || c === "m") on.add(c);
      else if (c === "i") {
        this.fail(
          "the flag 'i' (ignore case) is not supported: spell both cases in a class, e.g. [Aa]",
        );
      } else if (c === "x") {
        this.fail("the flag 'x' (verbose) is not supported: write the pattern without spaces");
      } else if (c === "L") this.fail("the flag 'L' is not valid for str patterns");
      else break;
      this.pos++;
    }
    if (on.has("a") && on.has("u")) this.fail("flags 'a' and 'u' are incompatible");
    if (this.peek() === "-") {
      if (!scoped) this.fail("flags can be turned off only in a scoped group");
      this.pos++;
      for (;;) {
        const c = this.peek();
        if (c === "s" || c === "m") off.add(c);
        else if (c === "i" || c === "x") this.fail(`the flag '${c}' is not supported; drop it`);
        else if (c === "a" || c === "u" || c === "L") {
          this.fail(`the flag '${c}' cannot be turned off`);
        } else break;
        this.pos++;
      }
      if (off.size === 0) this.fail("missing flag after '-'");
      if (this.peek() !== ":") this.fail("missing ':' after turned-off flags");
      for (const c of off) {
        if (on.has(c)) this.fail(`the flag '${c}' is turned both on and off`);
      }
    } else if (on.size === 0) {
      this.fail("missing flag");
    }
    return { on, off };
  }

  /** The flags inside a scoped group `(?on-off:...)`; `a` and `u` replace each other. */
  private scopedFlags(base: Flags, on: Set<string>, off: Set<string>): Flags {
    const typed = on.has("a") || on.has("u");
    return {
      ascii: typed ? on.has("a") : base.ascii,
      unicode: typed ? on.has("u") : base.unicode,
      dotall: off.has("s") ? false : base.dotall || on.has("s"),
      multiline: off.has("m") ? false : base.multiline || on.has("m"),
    };
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
        if (prev.kind === "comment") {
          this.fail("a quantifier after a comment group is not supported; move the comment", start);
        }
        if (prev.kind === "assertion") {
          this.fail("a quantified lookahead is not supported; drop the quantifier", start);
        }
        if (quant.possessive) {
          const text = this.cps.slice(start, this.pos).join("");
          this.fail(
            `the possessive quantifier "${text}" is not supported (its no-backtracking meaning ` +
              `is not reproduced exactly); write the plain quantifier "${text.slice(0, -1)}" ` +
              "and check that the pattern still admits only the arguments you intend",
            start,
          );
        }
        // A plain quantifier keeps its meaning although the engines treat an empty iteration
        // differently: such an iteration leaves the position where it was, and with no capture
        // ever read the position is all the state there is, so both engines reach the same set
        // of end positions. Only "which match comes first" differs, and nothing here depends on
        // it: lookaheads ask only whether some match exists; possessive and atomic are refused.
        items[items.length - 1] = { js: `(?:${prev.js})${quant.js}`, kind: "repeat" };
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
        this.fail(`repeat count above ${MAX_REPEAT_COUNT}; use a smaller bound`, save);
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
    if (++this.depth > MAX_DEPTH) {
      this.fail(`groups nested deeper than ${MAX_DEPTH}; flatten the pattern`, start);
    }
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
        if (this.peek() === "=") this.fail(BACKREF, start);
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
        if (d === "=" || d === "!") {
          this.fail("lookbehind is not supported; spell out the characters before instead", start);
        }
        return this.fail("unknown extension ?<", start);
      }
      if (c === ">") {
        this.fail(
          'the atomic group "(?>...)" is not supported (its no-backtracking meaning is not ' +
            'reproduced exactly); write a plain group "(?:...)" and check that the pattern ' +
            "still admits only the arguments you intend",
          start,
        );
      }
      if (c === "(") {
        this.fail("conditional groups are not supported; write the alternatives with |", start);
      }
      if (c !== undefined && /^[aiLmsux-]$/.test(c)) {
        const { on, off } = this.flagLetters(true);
        if (this.peek() === ")") {
          this.fail(
            "global flags not at the start of the expression; put them first, or scope them " +
              "as (?s:...)",
            start,
          );
        }
        if (this.peek() !== ":") this.fail("missing -, : or )", this.pos);
        this.pos++;
        const inner = this.scopedFlags(flags, on, off);
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
    // CPython takes any `str.isidentifier()` name; only the ASCII ones are accepted here (the
    // Unicode identifier rules are not reproduced).
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      this.fail(
        `group name ${JSON.stringify(name)} is not supported: use ASCII letters, digits and ` +
          "'_', not starting with a digit",
        start,
      );
    }
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
        return { js: "$", kind: "anchor" };
      case "z":
        return this.fail(
          "\\z is not supported (CPython before 3.14 rejects it as a bad escape); write \\Z",
          start,
        );
      case "b": {
        const w = `[${flags.ascii ? ASCII_WORD : UNI_WORD}]`;
        return { js: `(?:(?<=${w})(?!${w})|(?<!${w})(?=${w}))`, kind: "anchor" };
      }
      case "B":
        return this.fail(
          "\\B is not supported (its empty-string behaviour differs by Python version); " +
            "spell out the characters on either side instead",
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
      return this.fail(BACKREF, start);
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
        return this.fail(
          "\\N{...} named characters are not supported; write the character or \\uXXXX",
          start,
        );
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
    if (cp >= 0xd800 && cp <= 0xdfff) {
      this.fail("a surrogate code point escape is not supported; write whole characters", start);
    }
    return cp;
  }

  /** A `[...]` set; the cursor is just past `[`. */
  private charClass(flags: Flags, start: number): string {
    if (this.peek() === "[") {
      this.fail(
        'a set that starts with "[" may mean a nested set in a later CPython (it warns); ' +
          'escape it as "\\["',
      );
    }
    const negate = this.match("^");
    const first = this.pos;
    const parts: string[] = [];
    for (;;) {
      const c = this.next();
      if (c === undefined) this.fail("unterminated character set", start);
      if (c === "]" && this.pos - 1 !== first) break;
      if (c !== "\\" && parts.length > 0) this.notDoubled(c);
      const lo = c === "\\" ? this.classEscape(flags, start) : c.codePointAt(0) as number;
      if (this.peek() === "-") {
        this.pos++;
        this.notDoubled("-");
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

  /**
   * Refuses `--`, `&&`, `~~` and `||` inside a set where CPython warns that they may become set
   * operations: the unescaped `c` just read (after the set's first item, or as a range's `-`)
   * followed by the same character.
   */
  private notDoubled(c: string): void {
    if ("-&~|".includes(c) && this.peek() === c) {
      this.fail(
        `"${c}${c}" in a set may mean a set operation in a later CPython (it warns); ` +
          `escape the characters, e.g. "\\${c}\\${c}"`,
      );
    }
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
    throw new PolicyError(
      "POLICY_LINT",
      `argument pattern ${JSON.stringify(pattern)} contains a lone surrogate; ` +
        "write whole characters",
      { details: { pattern } },
    );
  }
  if (Array.from(pattern).length > MAX_ARG_PATTERN_LENGTH) {
    throw new PolicyError(
      "POLICY_LINT",
      `argument pattern ${JSON.stringify(pattern.slice(0, 64) + "...")} is longer than ` +
        `${MAX_ARG_PATTERN_LENGTH} characters; split it or narrow it`,
      { details: { pattern: pattern.slice(0, 64) } },
    );
  }
  const body = new Translator(pattern).translate();
  if (body.length > MAX_TRANSLATED_LENGTH) {
    throw new PolicyError(
      "POLICY_LINT",
      `argument pattern ${JSON.stringify(pattern.slice(0, 64))} translates to more than ` +
        `${MAX_TRANSLATED_LENGTH} characters (each Unicode \\w, \\d, \\s or \\b is a large ` +
        "set); use fewer of them, or their ASCII forms under (?a)",
      { details: { pattern: pattern.slice(0, 64) } },
    );
  }
  return body;
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
