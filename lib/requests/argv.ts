/**
 * Matching an argv against one allowlisted command entry: literal prefix, then one anchored
 * pattern per remaining argument (a variadic entry's last pattern covers one or more trailing
 * arguments). Pure; the verdict carries a rank so the caller can report the closest refusal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchArgv } from "./argv.ts";
 * const entry = {
 *   prefix: ["lake", "build"], args: ["[A-Z][A-Za-z.]*"], argPatterns: [/^[A-Z][A-Za-z.]*$/],
 *   variadic: false,
 * };
 * assert.equal(matchArgv(["lake", "build", "Mathlib.X"], entry).ok, true);
 * ```
 * @module
 */

import type { CommandEntry } from "../policy/types.ts";

/** A refusal with its rank: a higher rank means the argv got further through the entry. */
export interface ArgvMiss {
  readonly ok: false;
  /** `[stage, progress]`: stage 0 prefix, 1 arity, 2 argument pattern. */
  readonly rank: readonly [number, number];
  /** Why this entry refused the argv. */
  readonly reason: string;
}

/** The verdict of {@link matchArgv}. */
export type ArgvVerdict = { readonly ok: true } | ArgvMiss;

const safeCopies = new WeakMap<RegExp, RegExp>();

/** A copy without `g`/`y`, so `exec` never depends on a shared `lastIndex`. */
function stateless(re: RegExp): RegExp {
  if (!re.global && !re.sticky) return re;
  let copy = safeCopies.get(re);
  if (copy === undefined) {
    copy = new RegExp(re.source, re.flags.replace(/[gy]/g, ""));
    safeCopies.set(re, copy);
  }
  return copy;
}

/**
 * True when `pattern` matches the whole of `arg` (the match must start at 0 and span it all,
 * even if the pattern was not anchored).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fullMatch } from "./argv.ts";
 * assert.equal(fullMatch(/^(?:a|ab)$/, "ab"), true);
 * assert.equal(fullMatch(/a/, "ab"), false);
 * ```
 */
export function fullMatch(pattern: RegExp, arg: string): boolean {
  const m = stateless(pattern).exec(arg);
  return m !== null && m.index === 0 && m[0].length === arg.length;
}

/**
 * Checks an argv against one entry's prefix, arity and argument patterns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchArgv } from "./argv.ts";
 * const entry = {
 *   prefix: ["pytest"], args: ["tests/[a-z_]+\\.py"], argPatterns: [/^tests\/[a-z_]+\.py$/],
 *   variadic: true,
 * };
 * assert.equal(matchArgv(["pytest", "tests/a.py", "tests/b.py"], entry).ok, true);
 * assert.equal(matchArgv(["pytest"], entry).ok, false); // (a variadic pattern needs at least one argument)
 * ```
 */
export function matchArgv(
  argv: readonly string[],
  entry: Pick<CommandEntry, "prefix" | "args" | "argPatterns" | "variadic">,
): ArgvVerdict {
  const { prefix, argPatterns: patterns } = entry;
  if (prefix.length === 0) {
    return { ok: false, rank: [0, 0], reason: "the entry has an empty prefix" };
  }
  let same = 0;
  while (same < prefix.length && same < argv.length && argv[same] === prefix[same]) same++;
  if (same < prefix.length) {
    return {
      ok: false,
      rank: [0, same],
      reason: `argv does not start with the prefix ${JSON.stringify(prefix)}`,
    };
  }
  const rest = argv.slice(prefix.length);
  const variadic = entry.variadic && patterns.length > 0;
  const arityOk = variadic ? rest.length >= patterns.length : rest.length === patterns.length;
  if (!arityOk) {
    const want = variadic ? `at least ${patterns.length}` : `exactly ${patterns.length}`;
    return {
      ok: false,
      rank: [1, 0],
      reason: `${JSON.stringify(prefix)} takes ${want} argument(s), got ${rest.length}`,
    };
  }
  for (let i = 0; i < rest.length; i++) {
    const at = Math.min(i, patterns.length - 1);
    if (!fullMatch(patterns[at], rest[i])) {
      // The operator's own pattern, as the brief writes it, not its compiled form.
      return {
        ok: false,
        rank: [2, i],
        reason: `argument ${prefix.length + i} ${JSON.stringify(rest[i])} does not match the ` +
          `brief's pattern ${JSON.stringify(entry.args[at] ?? String(patterns[at]))}`,
      };
    }
  }
  return { ok: true };
}
