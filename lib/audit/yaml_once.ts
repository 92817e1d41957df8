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
 *   only add errors: `uniqueKeys`, several documents);
 * - anything else (several documents or none, `<<`, an alias, a duplicate key, a thrown
 *   parser): unknown, and the model parses the text with its own options, as before.
 *
 * The compose uses the strict reader's options (`uniqueKeys: false`, source tokens kept), the
 * `yaml` package's defaults otherwise (YAML 1.2, the core schema), as the models do.
 *
 * @module
 */
import { Composer, type Document, isAlias, isMap, isPair, isSeq, LineCounter, Parser } from "yaml";

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
 * import { composeOnce } from "./yaml_once.ts";
 * composeOnce("name: w\n") === composeOnce("name: w\n"); // true
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
    const tokens = new Parser(lc.addNewLine).parse(text);
    const docs = [...new Composer({ keepSourceTokens: true, uniqueKeys: false }).compose(tokens)];
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
 * import { composedReading } from "./yaml_once.ts";
 * composedReading("tools:\n  - Read\n"); // { ok: true, value: { tools: ["Read"] } }
 * composedReading("a: 1\na: 2\n"); // null: the parsers differ on a duplicate key
 * ```
 */
export function composedReading(text: string): ComposedReading {
  if (text.includes("<<")) return null;
  const c = composeOnce(text);
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
