/**
 * POSIX path arithmetic, with the same results as `node:path`'s POSIX functions for the calls
 * this project makes (a property test compares them). It exists so that the commands' start-up
 * does not load Deno's Node compatibility layer (~15 ms for `node:path` alone).
 *
 * Pure string functions except {@link resolve}, which reads the working directory only when every
 * argument is relative.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dirname, join, relative } from "./path.ts";
 * assert.equal(join("/a", "b/../c"), "/a/c");
 * assert.equal(dirname("/a/b"), "/a");
 * assert.equal(relative("/a/b", "/a/c/d"), "../c/d");
 * ```
 * @module
 */

/** The separator. */
export const sep = "/";

/**
 * Whether `p` starts at the root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isAbsolute } from "./path.ts";
 * assert.equal(isAbsolute("/x"), true);
 * ```
 */
export function isAbsolute(p: string): boolean {
  return p.startsWith("/");
}

/** Resolves `.` and `..` segments and collapses slashes; `abs` says whether `p` is rooted. */
function normalizeSegments(p: string, abs: boolean): string {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!abs) out.push("..");
    } else {
      out.push(seg);
    }
  }
  return out.join("/");
}

/**
 * Normalizes a path: collapses repeated slashes, resolves `.` and `..`, keeps one trailing slash.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalize } from "./path.ts";
 * assert.equal(normalize("/a//b/./c/../"), "/a/b/");
 * assert.equal(normalize(""), ".");
 * ```
 */
export function normalize(p: string): string {
  if (p === "") return ".";
  const abs = isAbsolute(p);
  const trailing = p.endsWith("/");
  let s = normalizeSegments(p, abs);
  if (s === "" && !abs) s = ".";
  if (s !== "" && trailing) s += "/";
  return abs ? `/${s}` : s;
}

/**
 * Joins the non-empty segments with `/` and normalizes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { join } from "./path.ts";
 * assert.equal(join("a", "", "b/", "../c"), "a/c");
 * assert.equal(join(), ".");
 * ```
 */
export function join(...parts: string[]): string {
  const joined = parts.filter((p) => p !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

/**
 * An absolute, normalized path without a trailing slash: the arguments are applied right to
 * left until one is absolute, then the working directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolve } from "./path.ts";
 * assert.equal(resolve("/a/b", "../c"), "/a/c");
 * assert.equal(resolve("/a", "/b", "c"), "/b/c");
 * ```
 */
export function resolve(...parts: string[]): string {
  let acc = "";
  for (let i = parts.length - 1; i >= 0 && !isAbsolute(acc); i--) {
    const p = parts[i];
    if (p === "") continue;
    acc = acc === "" ? p : `${p}/${acc}`;
  }
  if (!isAbsolute(acc)) acc = acc === "" ? Deno.cwd() : `${Deno.cwd()}/${acc}`;
  return `/${normalizeSegments(acc, true)}`;
}

/**
 * The directory part: everything before the last segment, without trailing slashes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dirname } from "./path.ts";
 * assert.equal(dirname("/a/b/"), "/a");
 * assert.equal(dirname("a"), ".");
 * assert.equal(dirname("/"), "/");
 * ```
 */
export function dirname(p: string): string {
  if (p === "") return ".";
  const rooted = p.startsWith("/");
  // Skip the trailing slashes and the last segment; the slash before it ends the directory
  // (only that one slash is dropped, as node:path does).
  let end = -1;
  let inTrailing = true;
  for (let i = p.length - 1; i >= 1; i--) {
    if (p[i] === "/") {
      if (!inTrailing) {
        end = i;
        break;
      }
    } else {
      inTrailing = false;
    }
  }
  if (end === -1) return rooted ? "/" : ".";
  if (rooted && end === 1) return "//";
  return p.slice(0, end);
}

/**
 * The last segment, without trailing slashes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { basename } from "./path.ts";
 * assert.equal(basename("/a/b.txt"), "b.txt");
 * assert.equal(basename("/a/b/"), "b");
 * ```
 */
export function basename(p: string): string {
  let end = p.length;
  while (end > 0 && p[end - 1] === "/") end--;
  if (end === 0) return "";
  return p.slice(p.lastIndexOf("/", end - 1) + 1, end);
}

/**
 * The path from `from` to `to` (both resolved first); `""` when they are the same.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { relative } from "./path.ts";
 * assert.equal(relative("/a/b", "/a/b/c"), "c");
 * assert.equal(relative("/a/b", "/x"), "../../x");
 * ```
 */
export function relative(from: string, to: string): string {
  const f = resolve(from).split("/").filter((s) => s !== "");
  const t = resolve(to).split("/").filter((s) => s !== "");
  let i = 0;
  while (i < f.length && i < t.length && f[i] === t[i]) i++;
  return [...Array(f.length - i).fill(".."), ...t.slice(i)].join("/");
}
