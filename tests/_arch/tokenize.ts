/**
 * A small TypeScript tokenizer for tests/_arch/imports.ts: enough of the lexical grammar to tell
 * code from comments, strings, template text and regular-expression literals, which is all an
 * import reader needs. Identifiers, punctuators, strings (escapes decoded), templates (nested
 * substitutions tokenized as code), regular expressions, numbers; comments and whitespace give no
 * token.
 *
 * A `/` starts a regular expression after an operator, an opening bracket, `}` or a keyword like
 * `return`, and a division after a name, a literal, `)` or `]`; a regular expression cannot span
 * lines, so a wrong guess costs at most the rest of one line, and an unterminated string or
 * comment it causes is reported, never silently skipped.
 *
 * @module
 */

/** One token of a TypeScript source; comments and whitespace produce none. */
export interface Token {
  kind: "ident" | "string" | "template" | "regex" | "number" | "punct" | "private";
  /** Identifier name, punctuator, or a string's value (escapes decoded); a template's head. */
  value: string;
  /** 1-based line of the token's first character. */
  line: number;
  /** For a template: whether it has a `${...}` substitution. */
  substituted?: boolean;
}

/** A place where the source could not be read (unterminated string, comment or template). */
export interface SourceProblem {
  line: number;
  message: string;
}

/** Keywords after which `/` starts a regular expression, not a division. */
const REGEX_AFTER_KEYWORD = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

const ID_START = /[\p{ID_Start}$_\\]/u;
const ID_PART = /[\p{ID_Continue}$\\\u200c\u200d]/u;
const SINGLE_ESCAPES: Record<string, string> = {
  n: "\n",
  r: "\r",
  t: "\t",
  b: "\b",
  f: "\f",
  v: "\v",
  "0": "\0",
};

/**
 * Splits `src` into tokens. Never throws: what cannot be read is returned in `problems`, and the
 * scan goes on after it.
 */
export function tokenize(src: string): { tokens: Token[]; problems: SourceProblem[] } {
  const tokens: Token[] = [];
  const problems: SourceProblem[] = [];
  /** Open `{` and `${`: a `}` closing a `${` resumes the template around it. */
  const braces: ("brace" | "template")[] = [];
  let i = 0;
  let line = 1;

  const newlinesIn = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (src[k] === "\n") line++;
  };

  /** Reads a backslash escape at `src[i] === "\\"`; returns its value and advances `i`. */
  const escape = (): string => {
    const c = src[i + 1];
    if (c === undefined) {
      i++;
      return "";
    }
    if (c === "\r" && src[i + 2] === "\n") {
      i += 3;
      line++;
      return "";
    }
    if (c === "\n" || c === "\u2028" || c === "\u2029" || c === "\r") {
      i += 2;
      if (c === "\n") line++;
      return "";
    }
    if (c === "x") {
      const hex = src.slice(i + 2, i + 4);
      i += 4;
      return String.fromCharCode(parseInt(hex, 16));
    }
    if (c === "u") {
      if (src[i + 2] === "{") {
        const end = src.indexOf("}", i + 3);
        const hex = src.slice(i + 3, end < 0 ? i + 3 : end);
        i = end < 0 ? i + 3 : end + 1;
        return String.fromCodePoint(parseInt(hex || "0", 16));
      }
      const hex = src.slice(i + 2, i + 6);
      i += 6;
      return String.fromCharCode(parseInt(hex, 16));
    }
    i += 2;
    return SINGLE_ESCAPES[c] ?? c;
  };

  /**
   * Reads template text from `i` (just after "`" or the "}" closing a substitution) up to the
   * closing "`" or the next "${". Returns the text and whether a substitution opened.
   */
  const templateText = (): { text: string; opened: boolean } => {
    let text = "";
    const startLine = line;
    while (i < src.length) {
      const c = src[i];
      if (c === "`") {
        i++;
        return { text, opened: false };
      }
      if (c === "$" && src[i + 1] === "{") {
        i += 2;
        braces.push("template");
        return { text, opened: true };
      }
      if (c === "\\") {
        text += escape();
        continue;
      }
      if (c === "\n") line++;
      text += c;
      i++;
    }
    problems.push({ line: startLine, message: "unterminated template literal" });
    return { text, opened: false };
  };

  const regexAllowed = (): boolean => {
    const prev = tokens[tokens.length - 1];
    if (prev === undefined) return true;
    if (prev.kind === "punct") return ![")", "]", "++", "--"].includes(prev.value);
    if (prev.kind === "ident") return REGEX_AFTER_KEYWORD.has(prev.value);
    return false;
  };

  /** Reads a regular-expression literal at `src[i] === "/"`; false (nothing read) if none. */
  const regex = (): boolean => {
    let k = i + 1;
    let inClass = false;
    while (k < src.length) {
      const c = src[k];
      if (c === "\n" || c === "\r" || c === "\u2028" || c === "\u2029") return false;
      if (c === "\\") k += 2;
      else if (c === "/" && !inClass) break;
      else {
        if (c === "[") inClass = true;
        else if (c === "]") inClass = false;
        k++;
      }
    }
    if (k >= src.length) return false;
    k++;
    while (k < src.length && /[a-z]/i.test(src[k])) k++;
    tokens.push({ kind: "regex", value: src.slice(i, k), line });
    i = k;
    return true;
  };

  if (src.startsWith("#!")) {
    const nl = src.indexOf("\n");
    i = nl < 0 ? src.length : nl;
  }

  while (i < src.length) {
    const c = src[i];
    if (c === "\n") {
      line++;
      i++;
      continue;
    }
    if (/\s/.test(c) || c === "\ufeff") {
      i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      if (end < 0) {
        problems.push({ line, message: "unterminated block comment" });
        newlinesIn(i, src.length);
        i = src.length;
        continue;
      }
      newlinesIn(i, end + 2);
      i = end + 2;
      continue;
    }
    if (c === '"' || c === "'") {
      const startLine = line;
      let value = "";
      i++;
      let closed = false;
      while (i < src.length) {
        const d = src[i];
        if (d === c) {
          i++;
          closed = true;
          break;
        }
        if (d === "\n" || d === "\r") break;
        if (d === "\\") value += escape();
        else {
          value += d;
          i++;
        }
      }
      if (!closed) problems.push({ line: startLine, message: "unterminated string literal" });
      tokens.push({ kind: "string", value, line: startLine });
      continue;
    }
    if (c === "`") {
      const startLine = line;
      i++;
      const { text, opened } = templateText();
      tokens.push({ kind: "template", value: text, line: startLine, substituted: opened });
      continue;
    }
    if (c === "{") {
      braces.push("brace");
      tokens.push({ kind: "punct", value: c, line });
      i++;
      continue;
    }
    if (c === "}") {
      const open = braces.pop();
      i++;
      if (open === "template") {
        // The substitution ends; the template goes on (its text is not a token).
        templateText();
        continue;
      }
      tokens.push({ kind: "punct", value: c, line });
      continue;
    }
    if (c === "/" && regexAllowed() && regex()) continue;
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      let k = i + 1;
      while (k < src.length && /[0-9a-zA-Z_.]/.test(src[k])) k++;
      tokens.push({ kind: "number", value: src.slice(i, k), line });
      i = k;
      continue;
    }
    const cp = String.fromCodePoint(src.codePointAt(i) as number);
    if (ID_START.test(cp) || (c === "#" && ID_START.test(src[i + 1] ?? ""))) {
      let k = i + (c === "#" ? 1 : 0);
      let name = "";
      while (k < src.length) {
        const ch = String.fromCodePoint(src.codePointAt(k) as number);
        if (!ID_PART.test(ch)) break;
        name += ch;
        k += ch.length;
      }
      tokens.push({ kind: c === "#" ? "private" : "ident", value: name, line });
      i = k;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === "++" || two === "--" || two === "?." || two === "=>") {
      tokens.push({ kind: "punct", value: two, line });
      i += 2;
      continue;
    }
    tokens.push({ kind: "punct", value: c, line });
    i++;
  }
  return { tokens, problems };
}
