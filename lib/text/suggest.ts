/**
 * "Did you mean": the nearest known word to a mistyped one (an unknown brief key, command, flag or
 * artifact field), by edit distance, when it is near enough to be a typo. Every "did you mean" in
 * the tool comes from here.
 *
 * @example
 * ```ts
 * import { didYouMean } from "./suggest.ts";
 * import assert from "node:assert/strict";
 * assert.equal(didYouMean("verfy", ["verify", "show", "repair"]), "verify");
 * assert.equal(didYouMean("zzzzzz", ["verify"]), null);
 * ```
 * @module
 */

/**
 * Levenshtein distance between two strings (by UTF-16 unit).
 *
 * @example
 * ```ts
 * import { editDistance } from "./suggest.ts";
 * import assert from "node:assert/strict";
 * assert.equal(editDistance("dryrun", "dry-run"), 1);
 * ```
 */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length];
}

/**
 * The known word nearest to `word`, when at most two edits away; else the one known word that
 * `word` (four characters or more) is the start of (`base_sha` for `base_sha256`); else `null`.
 *
 * @example
 * ```ts
 * import { didYouMean } from "./suggest.ts";
 * import assert from "node:assert/strict";
 * assert.equal(didYouMean("agent_polices", ["agent_policies", "protected_paths"]), "agent_policies");
 * assert.equal(didYouMean("base_sha", ["base_sha256", "content"]), "base_sha256");
 * ```
 */
export function didYouMean(word: string, known: Iterable<string>): string | null {
  let best: string | null = null;
  let bestD = 3;
  const starts: string[] = [];
  for (const k of known) {
    const d = editDistance(word, k);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
    if (word.length >= 4 && k.startsWith(word)) starts.push(k);
  }
  return best ?? (starts.length === 1 ? starts[0] : null);
}
