/**
 * Quoting a word for a POSIX shell, when it needs it: the permission line and the warning that
 * suggests it print commands a person pastes.
 *
 * @module
 */

/**
 * Quotes a word for a POSIX shell when it needs it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shellQuote } from "./shell_quote.ts";
 * assert.equal(shellQuote("/usr/bin/git"), "/usr/bin/git");
 * assert.equal(shellQuote("a b"), "'a b'");
 * ```
 */
export function shellQuote(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'"'"'`)}'`;
}
