/**
 * A model of Bun's YAML parser (`Bun.YAML.parse`, Bun 1.4.5, the runtime Claude Code 2.1.x ships
 * in), built on the `yaml` package with the settings where Bun behaves as YAML 1.2's core schema
 * does, and Bun's own choices on top, each checked against the real Bun by
 * tests/audit/bun_oracle_test.ts:
 *
 * - a duplicate key is no error: the last one wins;
 * - merge keys (`<<: *a`) are applied;
 * - more than one document (`---`, `...` then more) gives an array of the documents;
 * - `yes`/`no`/`on`/`off` are strings; `0o17` is 15 (the core schema);
 * - tags such as `!!str` are read and their node kept.
 *
 * Where Bun's reading of a character is not modeled (Unicode line or space separators, other
 * control characters), the model says so (`uncertain`) instead of guessing: the audit then treats
 * the file as ambiguous.
 *
 * @module
 */
import { isScalar, parseAllDocuments } from "yaml";
import { plainFlatMap } from "../plain_yaml.ts";
import { composedReading, withYamlEnv } from "../yaml_once.ts";

/** What Bun's parser gives for a text, as the model predicts it. */
export type BunYamlResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string }
  | { readonly ok: "uncertain"; readonly reason: string };

/**
 * Characters whose handling by Bun's parser the model doesn't cover: NEL, the Unicode line and
 * paragraph separators (Bun breaks lines at them), other Unicode spaces, a BOM inside the text,
 * and control characters other than tab, LF and CR.
 */
const UNMODELED = new RegExp(
  "[" + [
    [0x00, 0x08],
    [0x0b, 0x0c],
    [0x0e, 0x1f],
    [0x7f, 0xa0],
    [0x1680, 0x1680],
    [0x2000, 0x200f],
    [0x2028, 0x202f],
    [0x205f, 0x205f],
    [0x3000, 0x3000],
    [0xfeff, 0xfeff],
  ].map(([a, b]) => `\\u${hex4(a)}-\\u${hex4(b)}`).join("") + "]",
);

/**
 * Lines Bun reads where the `yaml` package refuses them, or the reverse, found by the oracle
 * test and not modeled: a plain value starting with `,`, a value of only blanks holding a tab
 * (Bun then reads the indented lines below as the value), a line starting with an empty key.
 */
const UNMODELED_LINES: readonly [RegExp, string][] = [
  [/^.*(?::|^[ \t]*-)[ \t]+,.*$/m, "a plain value starting with `,`"],
  [/^.*:[ ]*\t[ \t]*$/m, "a value of blanks holding a tab"],
  [/^[ \t]*:(?:[ \t].*)?$/m, "a line starting with an empty key"],
  [/[[{,][ \t]*:(?:[ \t\]},]|$)/m, "an empty key in a flow collection"],
  [/[|>][0-9+-]*\t/, "a block scalar header followed by a tab"],
  [/(?:^|[\s:[{,-])&[^\s,[\]{}]+[ \t]*[\t,]/m, "an anchor followed by a tab or a comma"],
];

/**
 * Why a text holds a character whose reading by a host's YAML parser is not modeled (Unicode
 * line and space separators, control characters; see `UNMODELED`), or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unmodeledCharacter } from "./bun_yaml.ts";
 * assert.equal(unmodeledCharacter("a: b\u2028c"), "it holds U+2028, whose reading by the host's YAML parser is not modeled");
 * ```
 */
export function unmodeledCharacter(text: string): string | null {
  const odd = UNMODELED.exec(text);
  if (odd === null) return null;
  const code = odd[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
  return `it holds U+${code}, whose reading by the host's YAML parser is not modeled`;
}

/** A document with no node: no contents, or an empty scalar of no length. */
function emptyDocument(contents: unknown): boolean {
  if (contents === null || contents === undefined) return true;
  return isScalar(contents) && contents.value === null &&
    (contents.range === undefined || contents.range === null ||
      contents.range[0] === contents.range[1]);
}

function hex4(n: number): string {
  return n.toString(16).padStart(4, "0");
}

/**
 * The model's prediction of `Bun.YAML.parse(text)`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bunYamlParse } from "./bun_yaml.ts";
 * assert.deepEqual(bunYamlParse("tools: Read\ntools: Edit\n"), { ok: true, value: { tools: "Edit" } });
 * ```
 */
export function bunYamlParse(text: string): BunYamlResult {
  // Two Claude Code versions read a file with Bun's parser: the same text, read once.
  const hit = lastReads.get(text);
  if (hit !== undefined) return hit;
  const r = bunYamlParseOnce(text);
  lastReads.set(text, r);
  if (lastReads.size > 4) lastReads.delete(lastReads.keys().next().value as string);
  return r;
}

/** The last few predictions (results are read, never changed, by their callers). */
const lastReads = new Map<string, BunYamlResult>();

function bunYamlParseOnce(text: string): BunYamlResult {
  const odd = unmodeledCharacter(text);
  if (odd !== null) return { ok: "uncertain", reason: odd };
  const plain = plainFlatMap(text);
  if (plain !== null) return { ok: true, value: plain };
  for (const [re, why] of UNMODELED_LINES) {
    const m = re.exec(text);
    if (m !== null) {
      return { ok: "uncertain", reason: `${why} (${JSON.stringify(m[0].trim())})` };
    }
  }
  // The audit's one compose of this text tells, for most texts (lib/audit/yaml_once.ts).
  const once = composedReading(text);
  if (once !== null) {
    return once.ok ? { ok: true, value: once.value } : { ok: false, error: once.error };
  }
  let docs;
  try {
    docs = withYamlEnv(() =>
      parseAllDocuments(text, {
        version: "1.2",
        schema: "core",
        merge: true,
        uniqueKeys: false,
        prettyErrors: false,
      })
    );
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  // Bun skips an empty document (`...` then nothing, or a comment only).
  const all = Array.isArray(docs) ? docs : [];
  const list = all.length > 1 ? all.filter((d) => !emptyDocument(d.contents)) : all;
  for (const d of list) {
    if (d.errors.length > 0) return { ok: false, error: d.errors[0].message };
  }
  try {
    const values = list.map((d) => d.toJS({ maxAliasCount: 100 }));
    if (values.length === 0) return { ok: true, value: null };
    return { ok: true, value: values.length === 1 ? values[0] : values };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}
