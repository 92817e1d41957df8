/**
 * Small text predicates shared by the policy checks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasControlChar } from "./chars.ts";
 * assert.equal(hasControlChar("a\tb"), true);
 * assert.equal(hasControlChar("docs/guide.md"), false);
 * ```
 * @module
 */

/**
 * Whether `s` holds a C0 control character or DEL (a NUL, newline or tab in a path or program
 * name is never intended, and some of them truncate or split the value downstream).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasControlChar } from "./chars.ts";
 * assert.equal(hasControlChar("x\u0000y"), true);
 * ```
 */
export function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    if (isControlOrFormat(s.charCodeAt(i))) return true;
  }
  return false;
}

/**
 * C0 controls, DEL, the C1 controls (a terminal obeys U+009B as CSI), the line and paragraph
 * separators, the bidirectional formatting characters (which reorder how a name is displayed:
 * `txt.exe` shown as `exe.txt`, U+061C included), and the invisible ones that make two names look
 * alike (U+200B, U+2060..U+2064, U+FEFF). Not the joiners U+200C and U+200D, which some scripts
 * need inside words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isControlOrFormat } from "./chars.ts";
 * assert.equal(isControlOrFormat(0x9b), true);
 * assert.equal(isControlOrFormat(0x202e), true); // (RIGHT-TO-LEFT OVERRIDE)
 * assert.equal(isControlOrFormat(0x41), false);
 * ```
 */
export function isControlOrFormat(c: number): boolean {
  return c < 0x20 || (c >= 0x7f && c < 0xa0) || c === 0x061c || c === 0x200b || c === 0x200e ||
    c === 0x200f || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x2064) ||
    (c >= 0x2066 && c <= 0x2069) || c === 0xfeff;
}

/** Where a value holds text that is not well-formed UTF-16: see {@link findLoneSurrogate}. */
export interface LoneSurrogate {
  /** Keys and indexes from the value down to the string, or down to the key itself. */
  path: (string | number)[];
  /** Whether the last key of `path` holds the lone surrogate (rather than a string value). */
  key: boolean;
}

/**
 * The first string or object key under `v` (depth first, in key order) that holds a lone
 * surrogate, which has no UTF-8 form and no canonical JSON encoding; `null` when there is none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findLoneSurrogate } from "./chars.ts";
 * assert.deepEqual(findLoneSurrogate({ a: ["ok", "\ud800"] }), { path: ["a", 1], key: false });
 * assert.deepEqual(findLoneSurrogate({ a: { "\udc00": 1 } }), { path: ["a", "\udc00"], key: true });
 * ```
 */
export function findLoneSurrogate(v: unknown): LoneSurrogate | null {
  if (typeof v === "string") return v.isWellFormed() ? null : { path: [], key: false };
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = findLoneSurrogate(v[i]);
      if (found !== null) {
        found.path.unshift(i);
        return found;
      }
    }
  } else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      if (!k.isWellFormed()) return { path: [k], key: true };
      const found = findLoneSurrogate(x);
      if (found !== null) {
        found.path.unshift(k);
        return found;
      }
    }
  }
  return null;
}

/**
 * The code points HFS+ ignores in file names (git's `is_hfs_dotgit` skips exactly these): on such
 * a volume `.g\u200cit` is `.git`. Comparisons against a name that matters drop them first.
 */
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * `s` without the code points HFS+ ignores in names (see above).
 *
 * @example
 * ```ts
 * import { withoutHfsIgnorable } from "./chars.ts";
 * import assert from "node:assert/strict";
 * assert.equal(withoutHfsIgnorable(".g\u200cit"), ".git");
 * assert.equal(withoutHfsIgnorable("src"), "src");
 * ```
 */
export function withoutHfsIgnorable(s: string): string {
  return s.replace(HFS_IGNORABLE, "");
}
