/**
 * Lexical containment of absolute POSIX paths, optionally case-folded (macOS file systems ignore
 * case by default, so a containment check there must too).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { within } from "./within.ts";
 * assert.equal(within("/p/build/x", "/p/build"), true);
 * assert.equal(within("/p/buildx", "/p/build"), false);
 * assert.equal(within("/P/Build", "/p/build", true), true);
 * ```
 * @module
 */

/**
 * True when `child` equals `parent` or lies below it, whole segments compared (`/pp` is not below
 * `/p`). Both must be normalized absolute paths (no `.`/`..` segments); a trailing slash on
 * `parent` is ignored.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { within } from "./within.ts";
 * assert.equal(within("/", "/"), true);
 * assert.equal(within("/a", "/"), true);
 * assert.equal(within("/p/x", "/p/"), true);
 * ```
 */
export function within(child: string, parent: string, foldCase = false): boolean {
  const c = foldCase ? child.toLowerCase() : child;
  const trimmed = parent.length > 1 ? parent.replace(/\/+$/, "") || "/" : parent;
  const p = foldCase ? trimmed.toLowerCase() : trimmed;
  if (c === p) return true;
  const prefix = p.endsWith("/") ? p : p + "/";
  return c.startsWith(prefix);
}

/**
 * True when either path contains the other.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { overlaps } from "./within.ts";
 * assert.equal(overlaps("/opt/tool", "/opt/tool/bin"), true);
 * assert.equal(overlaps("/opt/a", "/opt/b"), false);
 * ```
 */
export function overlaps(a: string, b: string, foldCase = false): boolean {
  return within(a, b, foldCase) || within(b, a, foldCase);
}

/**
 * The key of an absolute path against a root: project-relative when it lies strictly inside the
 * root, else the path itself (how the write check and the control plane name a path).
 *
 * @example
 * ```ts
 * import { keyUnder } from "./within.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(keyUnder("/p", "/p/src/a.ts"), "src/a.ts");
 * assert.deepEqual(keyUnder("/p", "/etc/gitconfig"), "/etc/gitconfig");
 * assert.deepEqual(keyUnder("/", "/etc"), "etc");
 * ```
 */
export function keyUnder(root: string, abs: string): string {
  if (abs === root || !within(abs, root)) return abs;
  return abs.slice(root === "/" ? 1 : root.length + 1);
}
