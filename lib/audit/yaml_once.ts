/**
 * One parse of a YAML text for every reading of it. The audit reads a front matter several ways
 * (its strict reader, then each host model: Bun's parser in two Claude Code versions, the `yaml`
 * package's `parse` in a third), and most front matters are the same text to all of them. The
 * `yaml` package's parser is the costly part (and it reads two environment variables per token),
 * so the text is tokenized and composed once ({@link composeOnce}, kept for the last few texts),
 * and a host model asks {@link composedReading} whether that one compose already tells what its
 * own parse would give:
 *
 * - one document, no error, no merge key `<<`, no alias and no duplicate key: every modeled
 *   parser (the `yaml` package's `parse`, Bun's model with `merge` and `uniqueKeys: false`)
 *   gives that document's `toJS()`;
 * - one document with an error (and no `<<`): every modeled parser refuses it (their options
 *   only add errors: `uniqueKeys`, several documents); a text that is plain but for values
 *   holding `: ` is known to be one without a compose (lib/audit/plain_yaml.ts);
 * - anything else (several documents or none, `<<`, an alias, a duplicate key, a thrown
 *   parser): unknown, and the model parses the text with its own options, as before.
 *
 * The compose uses the strict reader's options (`uniqueKeys: false`, source tokens kept), the
 * `yaml` package's defaults otherwise (YAML 1.2, the core schema), as the models do.
 *
 * Every call into the `yaml` package's parser runs under {@link withYamlEnv}: the parser reads
 * `process.env.LOG_TOKENS` for each token and the composer `process.env.LOG_STREAM` for each
 * node, and under Deno each read is a call into the runtime (about 1 µs, two thirds of a short
 * front matter's parse). The two values are read once and given to the parser as a plain object.
 *
 * @module
 */
import process from "node:process";
import { Composer, type Document, isAlias, isMap, isPair, isSeq, LineCounter, Parser } from "yaml";
import { AUDIT_ENV } from "./audit_env.ts";
import { plainColonError } from "./plain_yaml.ts";

/** The parser's debug variables, read once (what the parser would read on every token). */
let yamlEnv: Record<string, string | undefined> | undefined;

/**
 * Runs `f`, a synchronous call into the `yaml` package, with `process.env` as the two debug
 * variables it reads (their values read once per process), and puts the real `process.env`
 * back before returning or throwing. Synchronous: no other code runs while the swap holds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "yaml";
 * import { withYamlEnv } from "./yaml_once.ts";
 * assert.deepEqual(withYamlEnv(() => parse("a: 1\n")), { a: 1 });
 * ```
 */
export function withYamlEnv<T>(f: () => T): T {
  const real = Object.getOwnPropertyDescriptor(process, "env");
  if (real === undefined || real.configurable !== true) return f();
  yamlEnv ??= Object.fromEntries(AUDIT_ENV.map((k) => [k, process.env[k]]));
  Object.defineProperty(process, "env", {
    value: yamlEnv,
    configurable: true,
    enumerable: real.enumerable,
    writable: true,
  });
  try {
    return f();
  } finally {
    Object.defineProperty(process, "env", real);
  }
}

/** What one compose of a text gave. */
export interface Composed {
  /** The documents (empty when the parser threw). */
  readonly docs: readonly Document.Parsed[];
  /** The line counter the parser filled. */
  readonly lc: LineCounter;
  /** What the parser or composer threw, if it did. */
  readonly thrown?: unknown;
}

/** How many texts are kept: a file's front matter, its retry, a flow list or two. */
const KEEP = 8;
const kept = new Map<string, Composed>();

/**
 * The documents of `text`, composed once for every reading of the same text (the last
 * {@link KEEP} texts are kept). The result is shared: callers read it and never change it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { composeOnce } from "./yaml_once.ts";
 * assert.equal(composeOnce("name: w\n") === composeOnce("name: w\n"), true);
 * ```
 */
export function composeOnce(text: string): Composed {
  const hit = kept.get(text);
  if (hit !== undefined) {
    // The most recent last: a hit moves to the end.
    kept.delete(text);
    kept.set(text, hit);
    return hit;
  }
  const lc = new LineCounter();
  let out: Composed;
  try {
    const docs = withYamlEnv(() => {
      const tokens = new Parser(lc.addNewLine).parse(text);
      return [...new Composer({ keepSourceTokens: true, uniqueKeys: false }).compose(tokens)];
    });
    out = { docs, lc };
  } catch (e) {
    out = { docs: [], lc, thrown: e };
  }
  kept.set(text, out);
  if (kept.size > KEEP) kept.delete(kept.keys().next().value as string);
  return out;
}

/** What the one compose tells a host model: its value, its refusal, or null (parse it). */
export type ComposedReading =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string }
  | null;

/**
 * What every modeled parser gives for `text`, when the one compose of it tells (see the module
 * doc), else null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { composedReading } from "./yaml_once.ts";
 * assert.deepEqual(composedReading("tools:\n  - Read\n"), { ok: true, value: { tools: ["Read"] } });
 * assert.equal(composedReading("a: 1\na: 2\n"), null); // the parsers differ on a duplicate key
 * ```
 */
export function composedReading(text: string): ComposedReading {
  if (text.includes("<<")) return null;
  // Plain but for values holding `: `: every modeled parser refuses it, with no parse at all.
  if (plainColonError(text)) return COLON_REFUSAL;
  const c = composeOnce(text);
  // Each model asks of the same compose: its value is built once (callers never change it).
  const told = readings.get(c);
  if (told !== undefined) return told;
  const r = readingOf(c);
  readings.set(c, r);
  return r;
}

/** What {@link composedReading} tells of a text {@link plainColonError} knows fails. */
const COLON_REFUSAL: ComposedReading = {
  ok: false,
  error: "a plain value holds `: `, where a mapping may not start",
};

/** What each kept compose told (dropped with the compose). */
const readings = new WeakMap<Composed, ComposedReading>();

function readingOf(c: Composed): ComposedReading {
  if (c.thrown !== undefined || c.docs.length !== 1) return null;
  const doc = c.docs[0];
  if (doc.errors.length > 0) return { ok: false, error: doc.errors[0].message };
  if (!plainTree(doc.contents)) return null;
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) ?? null };
  } catch {
    return null;
  }
}

/** A tree with no alias and no mapping that repeats a key (scalar keys compared by value). */
function plainTree(node: unknown): boolean {
  if (node === null || node === undefined || typeof node !== "object") return true;
  if (isAlias(node)) return false;
  if (isSeq(node)) return node.items.every(plainTree);
  if (isMap(node)) {
    const seen = new Set<unknown>();
    for (const p of node.items) {
      const k = p.key;
      const key = k !== null && typeof k === "object" && "value" in k ? k.value : k;
      if (typeof key === "object" && key !== null) return false; // a complex key: parse it
      if (seen.has(key)) return false;
      seen.add(key);
      if (!plainTree(p.key) || !plainTree(p.value)) return false;
    }
    return true;
  }
  if (isPair(node)) return plainTree(node.key) && plainTree(node.value);
  return true;
}
