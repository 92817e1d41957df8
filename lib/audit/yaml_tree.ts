/**
 * The YAML reader of the audit: the `yaml` package's parser and composer (its CST and document
 * API), turned into a small tree with a line and column on every key and value, and every
 * construct that a host might read differently refused as a finding: anchors, aliases, merge keys,
 * explicit `?` keys, tags, quoted or escaped keys, duplicate keys, tabs in indentation, more than
 * one document. It never throws: a syntax error is a finding too.
 *
 * @module
 */
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Node as YamlNode,
  Scalar,
} from "yaml";
import { type Spot, spot } from "./finding.ts";
import { plainLines } from "./plain_yaml.ts";
import { composeOnce } from "./yaml_once.ts";

/** A place in the source: 1-based line and column, and the offsets of the node. */
export interface Place {
  /** 1-based line (of the whole file). */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
  /** Offset of the node's start in the YAML text. */
  readonly start: number;
  /** Offset of the node's end in the YAML text. */
  readonly end: number;
}

/** A scalar value and how it was written. */
export interface YScalar extends Place {
  /** The kind. */
  readonly kind: "scalar";
  /** The value (string, number, boolean or null). */
  readonly value: unknown;
  /** `PLAIN`, `QUOTE_DOUBLE`, `QUOTE_SINGLE`, `BLOCK_LITERAL`, `BLOCK_FOLDED`. */
  readonly style: string;
}

/** A sequence. */
export interface YSeq extends Place {
  /** The kind. */
  readonly kind: "seq";
  /** Its items (null for an empty item). */
  readonly items: readonly (YNode | null)[];
  /** Written in flow style (`[a, b]`). */
  readonly flow: boolean;
}

/** A key and its value. */
export interface YPair {
  /** The key's text. */
  readonly key: string;
  /** Where the key is. */
  readonly keyPlace: Place;
  /** The value (null for an empty value such as `tools:`). */
  readonly value: YNode | null;
}

/** A mapping. */
export interface YMap extends Place {
  /** The kind. */
  readonly kind: "map";
  /** Its pairs, in source order (duplicates kept). */
  readonly pairs: readonly YPair[];
  /** Written in flow style (`{a: 1}`). */
  readonly flow: boolean;
}

/** A node of the tree. */
export type YNode = YScalar | YSeq | YMap;

/** What reading a YAML text gives. */
export interface YamlRead {
  /** The root, or null when there is no usable document. */
  readonly root: YNode | null;
  /** Findings, with lines of the whole file. */
  readonly spots: Spot[];
  /** The text read. */
  readonly text: string;
}

/** The yaml package's own error codes the audit reports under its own names. */
const YAML_CODE_MAP: Readonly<Record<string, Spot["code"]>> = {
  TAB_AS_INDENT: "YAML_TAB_INDENT",
  DUPLICATE_KEY: "YAML_DUPLICATE_KEY",
};

/**
 * Reads a YAML text into a tree, refusing what hosts read differently. `firstLine` is the line
 * of the whole file the text starts on (2 for a front matter after its `---`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readYaml } from "./yaml_tree.ts";
 * const r = readYaml("a: &x 1\nb: *x\n", 1);
 * assert.deepEqual(r.spots.map((s) => s.code), ["YAML_ANCHOR", "YAML_ALIAS"]);
 * ```
 */
export function readYaml(
  text: string,
  firstLine: number,
  opts: { json?: boolean } = {},
): YamlRead {
  // A plain text (one-line scalars and lists of them, lib/audit/plain_yaml.ts) needs no parser.
  const flat = opts.json === true ? null : plainTree(text, firstLine);
  return flat !== null ? { root: flat, spots: [], text } : parsedYaml(text, firstLine, opts);
}

/**
 * {@link readYaml} by the parser alone, whatever the text (the reading {@link plainTree} must
 * equal wherever it answers).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsedYaml } from "./yaml_tree.ts";
 * assert.equal(parsedYaml("a: 1\n", 1).root?.kind, "map");
 * ```
 */
export function parsedYaml(
  text: string,
  firstLine: number,
  opts: { json?: boolean } = {},
): YamlRead {
  const spots: Spot[] = [];
  // Composed once for the host models' readings of the same text too (yaml_once.ts).
  const { docs, lc, thrown } = composeOnce(text);
  const at = (offset: number): { line: number; column: number } => {
    const p = lc.linePos(Math.max(0, Math.min(offset, text.length)));
    return { line: p.line + firstLine - 1, column: p.col };
  };
  if (thrown !== undefined) {
    spots.push(spot("YAML_SYNTAX", firstLine, 1, `the YAML can't be read: ${errText(thrown)}`));
    return { root: null, spots, text };
  }
  if (docs.length > 1) {
    const p = at(docs[1].range[0]);
    spots.push(
      spot(
        "YAML_MULTI_DOC",
        p.line,
        p.column,
        `holds ${docs.length} YAML documents; hosts read one, not always the same one`,
      ),
    );
  }
  if (docs.length === 0) return { root: null, spots, text };
  const doc = docs[0];
  const seen = new Set<string>();
  for (const e of [...doc.errors, ...docs.slice(1).flatMap((d) => d.errors)]) {
    const p = at(e.pos[0]);
    const code = YAML_CODE_MAP[e.code] ?? "YAML_SYNTAX";
    if (code === "YAML_DUPLICATE_KEY") continue; // reported below, with the key's name
    const key = `${code}:${p.line}`;
    if (seen.has(key)) continue;
    seen.add(key);
    spots.push(spot(code, p.line, p.column, firstSentence(e.message)));
  }
  if (spots.some((s) => s.code === "YAML_SYNTAX")) return { root: null, spots, text };
  tabIndents(text, doc, at, spots);
  // A JSON file's keys are double-quoted by nature: only an escape in one is refused there.
  const plainKey = (k: Scalar): boolean =>
    k.type === Scalar.PLAIN ||
    (opts.json === true && k.type === Scalar.QUOTE_DOUBLE && k.range !== undefined &&
      k.range !== null && !text.slice(k.range[0], k.range[1]).includes("\\"));
  const root = doc.contents === null ? null : toNode(doc.contents, at, spots, plainKey, text);
  return { root, spots, text };
}

/**
 * The tree the `yaml` package's reading gives for a plain text (see lib/audit/plain_yaml.ts),
 * built from the one scan without a parser, or null when the text needs the full parse. Its
 * places are the parser's: a scalar's end before its trailing blanks, a null value at its line's
 * end, a block list from its first `-` past its last line's break, a flow list from `[` to `]`,
 * the mapping from its first key past its last value's line break (a null last value: to it;
 * then, as after a list, a comment is left to the parser, which may take it into the mapping).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsedYaml, plainTree } from "./yaml_tree.ts";
 * const t = "name: w\ntools: Read, Grep\nmodel:\n";
 * assert.deepEqual(plainTree(t, 2), parsedYaml(t, 2).root);
 * ```
 */
export function plainTree(text: string, firstLine: number): YMap | null {
  const lines = plainLines(text);
  if (lines === null) return null;
  let line = firstLine;
  let lineStart = 0;
  const at = (offset: number): { line: number; column: number } => {
    // Offsets come in order: count the line breaks since the last one asked.
    for (let nl = text.indexOf("\n", lineStart); nl >= 0 && nl < offset;) {
      line++;
      lineStart = nl + 1;
      nl = text.indexOf("\n", lineStart);
    }
    return { line, column: offset - lineStart + 1 };
  };
  const pairs: YPair[] = lines.map((l) => {
    const k = at(l.keyStart);
    const keyPlace: Place = { ...k, start: l.keyStart, end: l.keyStart + l.key.length };
    const v = at(l.valueStart);
    if (l.items !== undefined) {
      const items: YScalar[] = l.items.map((i) => ({
        kind: "scalar",
        ...at(i.start),
        start: i.start,
        end: i.end,
        value: i.value,
        style: i.style,
      }));
      const seq: YSeq = {
        kind: "seq",
        ...v,
        start: l.valueStart,
        end: l.valueEnd,
        items,
        flow: l.flow === true,
      };
      return { key: l.key, keyPlace, value: seq };
    }
    const value: YScalar = {
      kind: "scalar",
      ...v,
      start: l.valueStart,
      end: l.valueEnd,
      value: l.value,
      style: l.style,
    };
    return { key: l.key, keyPlace, value };
  });
  const first = pairs[0].keyPlace;
  const last = lines[lines.length - 1];
  // A null last value takes the comments after it into the mapping (and a list may): left to
  // the parser.
  if ((last.value === null || last.items !== undefined) && text.includes("#", last.lineEnd)) {
    return null;
  }
  const end = last.value === null || last.lineEnd === text.length ? last.lineEnd : last.lineEnd + 1;
  return {
    kind: "map",
    line: first.line,
    column: first.column,
    start: first.start,
    end,
    pairs,
    flow: false,
  };
}

function errText(e: unknown): string {
  return e instanceof Error ? firstSentence(e.message) : String(e);
}

function firstSentence(m: string): string {
  const line = m.split("\n")[0];
  return line.length > 200 ? line.slice(0, 200) + "…" : line;
}

type At = (offset: number) => { line: number; column: number };

function placeOf(node: YamlNode, at: At): Place {
  const range = node.range ?? [0, 0, 0];
  const p = at(range[0]);
  return { line: p.line, column: p.column, start: range[0], end: range[1] };
}

function toNode(
  node: YamlNode,
  at: At,
  spots: Spot[],
  plainKey: (k: Scalar) => boolean,
  text: string,
): YNode | null {
  const place = placeOf(node, at);
  if (isAlias(node)) {
    spots.push(
      spot(
        "YAML_ALIAS",
        place.line,
        place.column,
        `uses the alias *${node.source}; hosts expand aliases differently`,
      ),
    );
    return null;
  }
  if (node.anchor !== undefined) {
    // The anchor stands before its node, perhaps on the line above (`x: &a` then a block).
    const a = text.lastIndexOf(`&${node.anchor}`, place.start);
    const p = a >= 0 ? at(a) : place;
    spots.push(spot("YAML_ANCHOR", p.line, p.column, `sets the anchor &${node.anchor}`));
  }
  if (node.tag !== undefined && sourceHasTag(node)) {
    spots.push(spot("YAML_TAG", place.line, place.column, `uses the tag ${node.tag}`));
  }
  if (isScalar(node)) {
    return { kind: "scalar", ...place, value: node.value, style: String(node.type ?? "PLAIN") };
  }
  if (isSeq(node)) {
    const items = node.items.map((it) =>
      it === null || it === undefined
        ? null
        : isPair(it)
        ? null
        : toNode(it as YamlNode, at, spots, plainKey, text)
    );
    return { kind: "seq", ...place, items, flow: node.flow === true };
  }
  if (isMap(node)) {
    const pairs: YPair[] = [];
    const keys = new Map<string, Place>();
    for (const pair of node.items) {
      const k = pair.key;
      const v = pair.value;
      const vNode = v === null || v === undefined
        ? null
        : toNode(v as YamlNode, at, spots, plainKey, text);
      const explicit = pair.srcToken?.start?.some((t) => t.type === "explicit-key-ind") ?? false;
      if (k === null || k === undefined || !isScalar(k)) {
        const p = k !== null && k !== undefined && typeof k === "object" && "range" in k
          ? placeOf(k as YamlNode, at)
          : place;
        if (explicit) {
          spots.push(spot("YAML_EXPLICIT_KEY", p.line, p.column, "uses an explicit `?` key"));
        } else {
          spots.push(spot("YAML_COMPLEX_KEY", p.line, p.column, "uses a key that is not a word"));
        }
        if (k !== null && k !== undefined && typeof k === "object" && "range" in k) {
          toNode(k as YamlNode, at, spots, plainKey, text);
        }
        continue;
      }
      const kp = placeOf(k, at);
      const keyText = String(k.value);
      if (explicit) {
        spots.push(
          spot("YAML_EXPLICIT_KEY", kp.line, kp.column, `writes the key "${keyText}" as \`? \``),
        );
      }
      if (k.anchor !== undefined) {
        spots.push(spot("YAML_ANCHOR", kp.line, kp.column, `anchors the key &${k.anchor}`));
      }
      if (k.tag !== undefined && sourceHasTag(k)) {
        spots.push(spot("YAML_TAG", kp.line, kp.column, `tags the key with ${k.tag}`));
      }
      if (!plainKey(k)) {
        spots.push(
          spot(
            "YAML_QUOTED_KEY",
            kp.line,
            kp.column,
            `writes the key ${JSON.stringify(keyText)} quoted; write it plain`,
          ),
        );
      } else if (keyText === "<<") {
        spots.push(spot("YAML_MERGE_KEY", kp.line, kp.column, "uses the merge key `<<`"));
      }
      const before = keys.get(keyText);
      if (before !== undefined) {
        spots.push(
          spot(
            "YAML_DUPLICATE_KEY",
            kp.line,
            kp.column,
            `repeats the key "${keyText}" (first on line ${before.line})`,
          ),
        );
      } else keys.set(keyText, kp);
      pairs.push({ key: keyText, keyPlace: kp, value: vNode });
    }
    return { kind: "map", ...place, pairs, flow: node.flow === true };
  }
  return null;
}

/** A tag written in the source (not one the schema resolved by itself). */
function sourceHasTag(node: YamlNode): boolean {
  const src = node.srcToken;
  if (src === undefined) return true;
  if ("props" in src && Array.isArray(src.props)) {
    return src.props.some((t) => t.type === "tag");
  }
  if ("start" in src && Array.isArray(src.start)) {
    return src.start.some((t) => t.type === "tag");
  }
  return true;
}

/** Lines whose indentation holds a tab, outside the continuation lines of multi-line scalars. */
function tabIndents(text: string, doc: Document.Parsed, at: At, spots: Spot[]): void {
  if (!text.includes("\t")) return;
  const inside = new Set<number>();
  const mark = (node: unknown): void => {
    if (node === null || node === undefined || typeof node !== "object") return;
    if (isScalar(node) && node.range !== undefined && node.range !== null) {
      const a = at(node.range[0]).line;
      const b = at(Math.max(node.range[0], node.range[1] - 1)).line;
      for (let l = a + 1; l <= b; l++) inside.add(l);
      return;
    }
    if (isSeq(node)) { for (const it of node.items) mark(it); }
    if (isMap(node)) {
      for (const p of node.items) {
        mark(p.key);
        mark(p.value);
      }
    }
    if (isPair(node)) {
      mark(node.key);
      mark(node.value);
    }
  };
  mark(doc.contents);
  const first = at(0).line;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = first + i;
    if (inside.has(line)) continue;
    const m = /^[ \t]*/.exec(lines[i]);
    const lead = m === null ? "" : m[0];
    if (!lead.includes("\t") || lead.length === lines[i].length) continue;
    if (spots.some((s) => s.code === "YAML_TAB_INDENT" && s.line === line)) continue;
    spots.push(
      spot("YAML_TAB_INDENT", line, lead.indexOf("\t") + 1, "indents with a tab; use spaces"),
    );
  }
}
