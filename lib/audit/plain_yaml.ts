/**
 * The fast path of the audit's YAML: a text that is only `key: value` lines, comment lines
 * starting with `#`, and blank lines, each key once, where each value is one line's plain words
 * (see `PLAIN_VALUE`), one quoted string (`"..."` whose only escapes are `\n`, `\t`, `\"` and
 * `\\`; `'...'` whose only escape is `''`), a flow list `[a, 'b']` of such words, or, after a
 * key alone, a block list of `- item` lines of one indentation, is read the same by every YAML
 * 1.2 parser the audit covers (Bun's model, the `yaml` package's, serde_yaml's as the Copilot CLI
 * model reads it): a flat mapping of strings and lists of strings, `key:` alone null. Anything
 * else (a trailing comment, `: ` or `&` in a plain value, nesting, tabs, CR, a key or value YAML
 * would read as a number, a boolean or null, a character whose reading is not modeled) is left
 * to the full parse; a text that is plain but for values holding `: ` is known to fail every
 * parser ({@link plainColonError}).
 *
 * One scan (the last text's kept) serves the strict reader, which builds its tree from it
 * (lib/audit/yaml_tree.ts), and each host model, which takes the flat map ({@link plainFlatMap}).
 * tests/audit/plain_yaml_test.ts checks both, and the colon refusal, against the full readings
 * over generated front matters; the Bun oracle test checks this path against the real Bun.
 *
 * @module
 */

/** The characters from U+00A1 on that no modeled parser reads apart (see `SAFE_QUOTED`). */
const SAFE_WIDE =
  "\u00a1-\u167f\u1681-\u1fff\u2010-\u2027\u2030-\u205e\u2060-\u2fff\u3001-\ud7ff\ue000-\ufefe\uff00-\ufffd";
/**
 * A plain value: a letter, `_`, `(` or `/`, then printable characters but `&`, brackets and
 * braces (which the Bun model leaves to its unmodeled-line checks), a `:` only before a
 * character that is not a blank or a comma (a URL's `://`, a rule's `git log:*`; `: ` would
 * start a mapping), a blank never before `#` (a comment).
 */
const PLAIN_VALUE =
  `[A-Za-z_(/](?:[A-Za-z0-9!-%'-9;-Z\\\\^-z|~${SAFE_WIDE}]|[\\ud800-\\udbff][\\udc00-\\udfff]|:(?=[^ ,])| (?!#))*`;
/** A `key:` line: its key, the blanks after the colon and the value's text (trailing blanks off). */
const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_-]*):(?:( +)(.+))?$/;
/** A one-line scalar: plain, double-quoted with the escapes the path takes, single-quoted. */
const SCALAR = new RegExp(
  `^(?:(${PLAIN_VALUE})|"((?:[^"\\\\\\r\\t]|\\\\[nt"\\\\])*)"|'((?:[^'\\r\\t]|'')*)')$`,
);
/** A flow list's item: a word (no blank, comma, bracket, `:` or `#`), or a quoted one. */
const FLOW_ITEM = /^(?:[A-Za-z_(/][A-Za-z0-9_()./*+-]*|'[^',]*'|"[^",\\]*")$/;
/** A block list's item line: its indentation, and the item's text (trailing blanks off). */
const ITEM_LINE = /^( +)- +(\S.*)$/;
/** A comment line (its text checked as a quoted value's is). */
const COMMENT = /^#[^\r\t]*$/;
/** What each escape the path takes stands for in a double-quoted string. */
const ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", '"': '"', "\\": "\\" };
const NOT_A_STRING = /^(?:true|false|True|False|TRUE|FALSE|null|Null|NULL|~)$/;
/**
 * The characters a quoted value may hold on this path: printable ASCII, and from U+00A1 on what
 * no modeled parser reads apart (the Unicode line and space separators, a BOM, unpaired
 * surrogates and the non-characters U+FFFE/U+FFFF are left to the full parse).
 */
const SAFE_QUOTED = new RegExp(
  `^(?:[\\x20-\\x7e${SAFE_WIDE}]|[\\ud800-\\udbff][\\udc00-\\udfff])*$`,
);

/** One scalar of a plain text: its value, how it is written, and its offsets in the text. */
export interface PlainItem {
  /** The value: the words, or the quoted string's inside. */
  readonly value: string;
  /** How it is written. */
  readonly style: "PLAIN" | "QUOTE_SINGLE" | "QUOTE_DOUBLE";
  /** The offset of its first character (its quote included). */
  readonly start: number;
  /** The offset just past it (its closing quote included). */
  readonly end: number;
}

/** One `key: value` line of a plain text (or a key and its list), with its offsets in the text. */
export interface PlainLine {
  /** The key. */
  readonly key: string;
  /** The offset of the key (its line's start). */
  readonly keyStart: number;
  /** The value: the words, the quoted string's inside, a list's items, null for `key:` alone. */
  readonly value: string | null | readonly string[];
  /** How a scalar value is written (`PLAIN` for a null one or a list). */
  readonly style: "PLAIN" | "QUOTE_SINGLE" | "QUOTE_DOUBLE";
  /** A list's items, when the value is a list. */
  readonly items?: readonly PlainItem[];
  /** Whether a list is written `[a, b]`. */
  readonly flow?: boolean;
  /**
   * The offset of the value (its quote, `[` or first `-` included); for a null value, its line's
   * end.
   */
  readonly valueStart: number;
  /**
   * The offset just past the value (its closing quote or `]` included, trailing blanks not; a
   * block list's: past its last line's line break, when one follows).
   */
  readonly valueEnd: number;
  /** The offset of the value's last line's end (before its `\n`, trailing blanks included). */
  readonly lineEnd: number;
}

/** The last text scanned and what the scan gave (the strict reader and each model ask). */
let lastText: string | undefined;
let lastScan: Scan | null = null;

/** What one scan of a text gave: its plain lines, and how many lines hold `: ` in a value. */
interface Scan {
  readonly lines: readonly PlainLine[];
  readonly colons: number;
}

/** The scan of `text`, the last one's kept. */
function scanned(text: string): Scan | null {
  if (text !== lastText) {
    lastScan = scan(text);
    lastText = text;
  }
  return lastScan;
}

/**
 * The `key: value` lines of a plain text (see the module doc), or null when the text needs the
 * full parse. The result is shared: callers read it and never change it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainLines } from "./plain_yaml.ts";
 * assert.deepEqual(plainLines("name: w\n")?.[0], {
 *   key: "name", keyStart: 0, value: "w", style: "PLAIN", valueStart: 6, valueEnd: 7, lineEnd: 7,
 * });
 * assert.equal(plainLines("tools: [Read,]\n"), null);
 * ```
 */
export function plainLines(text: string): readonly PlainLine[] | null {
  const r = scanned(text);
  return r !== null && r.colons === 0 ? r.lines : null;
}

/**
 * A `key: value` line whose plain value holds `: ` (and no `#`): YAML reads a second mapping
 * there, which a block mapping's value may not start on its key's line.
 */
const COLON_LINE = /^([A-Za-z_][A-Za-z0-9_-]*): +([A-Za-z_(/][^#\t\r]*: [^#\t\r]*)$/;

/**
 * Whether every modeled YAML parser refuses `text` for the one reason that sends Claude Code to
 * its retry: the text would take the fast path (see the module doc) but that one or more plain
 * values hold `: ` (the `/agents` generator's descriptions). Then no parser need run to know it
 * fails; false says nothing (the text is parsed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainColonError } from "./plain_yaml.ts";
 * assert.equal(plainColonError("name: w\ndescription: Use it: now\n"), true);
 * assert.equal(plainColonError("name: w\ndescription: Use it # now: x\n"), false);
 * ```
 */
export function plainColonError(text: string): boolean {
  const r = scanned(text);
  return r !== null && r.colons > 0;
}

/** The scalar `v` written at `start`, or null when it is not one the path takes. */
function scalar(v: string, start: number): PlainItem | null {
  const m = SCALAR.exec(v);
  if (m === null) return null;
  const end = start + v.length;
  if (m[1] !== undefined) {
    return NOT_A_STRING.test(m[1]) ? null : { value: m[1], style: "PLAIN", start, end };
  }
  const raw = m[2] ?? m[3] as string;
  if (!SAFE_QUOTED.test(raw)) return null;
  return m[2] !== undefined
    ? {
      value: raw.replace(/\\(.)/g, (_, c: string) => ESCAPES[c]),
      style: "QUOTE_DOUBLE",
      start,
      end,
    }
    : { value: raw.replaceAll("''", "'"), style: "QUOTE_SINGLE", start, end };
}

/** The items of the flow list `v` (`[a, 'b']`) written at `start`, or null. */
function flowItems(v: string, start: number): PlainItem[] | null {
  if (!v.endsWith("]")) return null;
  const inner = v.slice(1, -1);
  if (inner.trim() === "") return [];
  const out: PlainItem[] = [];
  let at = start + 1;
  for (const part of inner.split(",")) {
    const item = part.trim();
    if (!FLOW_ITEM.test(item)) return null;
    const s = scalar(item, at + part.indexOf(item));
    if (s === null) return null;
    out.push(s);
    at += part.length + 1;
  }
  return out;
}

function scan(text: string): Scan | null {
  let colons = 0;
  const out: PlainLine[] = [];
  const keys = new Set<string>();
  /** The line at `from`: its end, its end without trailing blanks, the next line's start. */
  const lineAt = (from: number): { end: number; trimmed: number; next: number } => {
    const nl = text.indexOf("\n", from);
    const end = nl < 0 ? text.length : nl;
    let trimmed = end;
    while (trimmed > from && text.charCodeAt(trimmed - 1) === 32) trimmed--;
    return { end, trimmed, next: nl < 0 ? -1 : nl + 1 };
  };
  for (let from = 0; from >= 0 && from < text.length;) {
    const { end, trimmed, next } = lineAt(from);
    if (trimmed > from && text.charCodeAt(from) === 35) {
      // `#` at a line's start: a comment (no block scalar or flow collection is open here).
      const c = text.slice(from, trimmed);
      if (!COMMENT.test(c) || !SAFE_QUOTED.test(c)) return null;
    } else if (trimmed > from) {
      const line = text.slice(from, trimmed);
      const m = KEY_LINE.exec(line);
      const key = m?.[1];
      if (m === null || key === undefined || NOT_A_STRING.test(key) || keys.has(key)) return null;
      keys.add(key);
      const v = m[3];
      const valueStart = from + key.length + 1 + (m[2]?.length ?? 0);
      if (v === undefined) {
        // `key:` alone: null, or a block list of one-line scalars, one `- item` line each.
        const items: PlainItem[] = [];
        let indent = -1;
        let last = { end, next };
        let first = -1;
        for (let at = next; at >= 0 && at < text.length;) {
          const l = lineAt(at);
          const im = ITEM_LINE.exec(text.slice(at, l.trimmed));
          if (im === null || (indent >= 0 && im[1].length !== indent)) break;
          indent = im[1].length;
          const item = scalar(im[2], l.trimmed - im[2].length);
          if (item === null) return null;
          if (first < 0) first = at + indent;
          items.push(item);
          last = l;
          at = l.next;
        }
        if (items.length === 0) {
          out.push({
            key,
            keyStart: from,
            value: null,
            style: "PLAIN",
            valueStart: end,
            valueEnd: end,
            lineEnd: end,
          });
        } else {
          out.push({
            key,
            keyStart: from,
            value: items.map((i) => i.value),
            style: "PLAIN",
            items,
            flow: false,
            valueStart: first,
            valueEnd: last.next < 0 ? last.end : last.end + 1,
            lineEnd: last.end,
          });
          from = last.next;
          continue;
        }
      } else if (v.startsWith("[")) {
        const items = flowItems(v, valueStart);
        if (items === null) return null;
        out.push({
          key,
          keyStart: from,
          value: items.map((i) => i.value),
          style: "PLAIN",
          items,
          flow: true,
          valueStart,
          valueEnd: trimmed,
          lineEnd: end,
        });
      } else {
        const s = scalar(v, valueStart);
        if (s === null) {
          // Plain but for `: ` in its value: the refusal every parser gives (plainColonError).
          const c = COLON_LINE.exec(line);
          if (c === null || !SAFE_QUOTED.test(c[2])) return null;
          colons++;
        } else {
          out.push({
            key,
            keyStart: from,
            value: s.value,
            style: s.style,
            valueStart,
            valueEnd: trimmed,
            lineEnd: end,
          });
        }
      }
    }
    from = next;
  }
  return out.length === 0 && colons === 0 ? null : { lines: out, colons };
}

/**
 * The flat mapping of a plain text, or null when the text needs the full parse.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainFlatMap } from "./plain_yaml.ts";
 * assert.deepEqual(plainFlatMap("name: w\ntools: Read, Grep\n"), { name: "w", tools: "Read, Grep" });
 * assert.equal(plainFlatMap("tools: Read # x\n"), null);
 * ```
 */
export function plainFlatMap(
  text: string,
): Record<string, string | null | string[]> | null {
  const lines = plainLines(text);
  if (lines === null) return null;
  const out: Record<string, string | null | string[]> = {};
  // Each model gets its own lists (a host model may keep one in its grant).
  for (const l of lines) {
    out[l.key] = typeof l.value === "object" && l.value !== null ? [...l.value] : l.value;
  }
  return out;
}
