/**
 * The fast path of the host models' YAML: a text that is only `key: value` lines of plain, safe
 * words, or of one quoted string without escapes (`"..."` with no `\\` or `"` inside, `'...'`
 * with no `'` inside), and blank lines, each key once, is read the same by every YAML 1.2 parser the models
 * cover (Bun's, the `yaml` package's, serde_yaml's): a flat mapping of strings, `key:` alone
 * null. Anything else (quotes, `#`, `:`, brackets, tabs, CR, indentation, a value YAML would
 * read as a number, a boolean or null) is left to the full parse. The Bun oracle test checks
 * this path against the real Bun with every other input.
 *
 * @module
 */

const LINE =
  /^([A-Za-z_][A-Za-z0-9_-]*):(?: +(?:([A-Za-z_(/][A-Za-z0-9 ,._/()*-]*)|"([^"\\\r\t]*)"|'([^'\r\t]*)'))?$/;
const NOT_A_STRING = /^(?:true|false|True|False|TRUE|FALSE|null|Null|NULL|~)$/;

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
  const out: Record<string, string | null> = {};
  let keys = 0;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/ +$/, "");
    if (line === "") continue;
    const m = LINE.exec(line);
    if (m === null || m[1] === "<<" || Object.hasOwn(out, m[1])) return null;
    const quoted = m[3] ?? m[4];
    if (quoted !== undefined) {
      out[m[1]] = quoted;
    } else {
      const v = m[2];
      if (v !== undefined && NOT_A_STRING.test(v)) return null;
      out[m[1]] = v === undefined ? null : v;
    }
    keys++;
  }
  return keys === 0 ? null : out;
}
