/**
 * The fast path of the audit's YAML: a text that is only `key: value` lines of plain, safe
 * words, or of one quoted string (`"..."` whose only escapes are `\n`, `\t`, `\"` and `\\`;
 * `'...'` whose only escape is `''`), comment lines starting with `#`, and blank lines, each key
 * once, is read the same by every YAML 1.2 parser the audit covers (Bun's model, the `yaml`
 * package's, serde_yaml's as the Copilot CLI model reads it): a flat mapping of strings, `key:`
 * alone null. Anything else (a trailing comment, `:` in a plain value, brackets, tabs, CR,
 * indentation, a key or value YAML would read as a number, a boolean or null, a character whose
 * reading is not modeled) is left to the full parse.
 *
 * One scan (the last text's kept) serves the strict reader, which builds its
 * tree from it (lib/audit/yaml_tree.ts), and each host model, which takes the flat map
 * ({@link plainFlatMap}). tests/audit/plain_yaml_test.ts checks both against the full readings
 * over generated front matters; the Bun oracle test checks this path against the real Bun.
 *
 * @module
 */

/** The characters from U+00A1 on that no modeled parser reads apart (see `SAFE_QUOTED`). */
const SAFE_WIDE =
  "\u00a1-\u167f\u1681-\u1fff\u2010-\u2027\u2030-\u205e\u2060-\u2fff\u3001-\ud7ff\ue000-\ufefe\uff00-\ufffd";
/**
 * A plain value: a letter, `_`, `(` or `/`, then printable characters but `&`, brackets and
 * braces (which the Bun model leaves to its unmodeled-line checks), a `:` only before `/` (a
 * URL's), a blank never before `#` (a comment).
 */
const PLAIN_VALUE =
  `[A-Za-z_(/](?:[A-Za-z0-9!-%'-9;-Z\\\\^-z|~${SAFE_WIDE}]|[\\ud800-\\udbff][\\udc00-\\udfff]|:(?=/)| (?!#))*`;
const LINE = new RegExp(
  `^([A-Za-z_][A-Za-z0-9_-]*):(?:( +)(?:(${PLAIN_VALUE})|"((?:[^"\\\\\\r\\t]|\\\\[nt"\\\\])*)"|'((?:[^'\\r\\t]|'')*)'))?$`,
);
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

/** One `key: value` line of a plain text, with its offsets in the text. */
export interface PlainLine {
  /** The key. */
  readonly key: string;
  /** The offset of the key (its line's start). */
  readonly keyStart: number;
  /** The value: the words, the quoted string's inside, or null for `key:` alone. */
  readonly value: string | null;
  /** How the value is written. */
  readonly style: "PLAIN" | "QUOTE_SINGLE" | "QUOTE_DOUBLE";
  /** The offset of the value (its quote included); for a null value, its line's end. */
  readonly valueStart: number;
  /** The offset just past the value (its closing quote included, trailing blanks not). */
  readonly valueEnd: number;
  /** The offset of the line's end (before its `\n`, trailing blanks included). */
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
 * assert.equal(plainLines("tools: [Read]\n"), null);
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

function scan(text: string): Scan | null {
  let colons = 0;
  const out: PlainLine[] = [];
  const keys = new Set<string>();
  for (let from = 0; from < text.length;) {
    const nl = text.indexOf("\n", from);
    const end = nl < 0 ? text.length : nl;
    let trimmed = end;
    while (trimmed > from && text.charCodeAt(trimmed - 1) === 32) trimmed--;
    if (trimmed > from && text.charCodeAt(from) === 35) {
      // `#` at a line's start: a comment (no block scalar or flow collection is open here).
      const c = text.slice(from, trimmed);
      if (!COMMENT.test(c) || !SAFE_QUOTED.test(c)) return null;
    } else if (trimmed > from) {
      const line = text.slice(from, trimmed);
      const m = LINE.exec(line);
      if (m === null) {
        const c = COLON_LINE.exec(line);
        if (c === null || NOT_A_STRING.test(c[1]) || keys.has(c[1])) return null;
        if (!SAFE_QUOTED.test(c[2])) return null;
        keys.add(c[1]);
        colons++;
        if (nl < 0) break;
        from = nl + 1;
        continue;
      }
      const key = m[1];
      if (NOT_A_STRING.test(key) || keys.has(key)) return null;
      keys.add(key);
      const valueStart = from + key.length + 1 + (m[2]?.length ?? 0);
      if (m[3] !== undefined) {
        if (NOT_A_STRING.test(m[3])) return null;
        out.push({
          key,
          keyStart: from,
          value: m[3],
          style: "PLAIN",
          valueStart,
          valueEnd: trimmed,
          lineEnd: end,
        });
      } else if (m[4] !== undefined || m[5] !== undefined) {
        const raw = m[4] ?? m[5] as string;
        if (!SAFE_QUOTED.test(raw)) return null;
        const value = m[4] !== undefined
          ? raw.replace(/\\(.)/g, (_, c: string) => ESCAPES[c])
          : raw.replaceAll("''", "'");
        out.push({
          key,
          keyStart: from,
          value,
          style: m[4] !== undefined ? "QUOTE_DOUBLE" : "QUOTE_SINGLE",
          valueStart,
          valueEnd: trimmed,
          lineEnd: end,
        });
      } else {
        out.push({
          key,
          keyStart: from,
          value: null,
          style: "PLAIN",
          valueStart: end,
          valueEnd: end,
          lineEnd: end,
        });
      }
    }
    if (nl < 0) break;
    from = nl + 1;
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
export function plainFlatMap(text: string): Record<string, string | null> | null {
  const lines = plainLines(text);
  if (lines === null) return null;
  const out: Record<string, string | null> = {};
  for (const l of lines) out[l.key] = l.value;
  return out;
}
