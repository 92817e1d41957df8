/**
 * Project-relative POSIX paths as the tool takes them from a brief or an artifact: the one place
 * that says what such a string may hold and how it normalizes. Every caller (a proposal's path, a
 * command's `cwd` and `expected_writes`, scopes, globs, protected paths, confined write roots)
 * asks here and words the answer for its own field.
 *
 * - {@link relPathProblem}: what no project-relative path may be or hold: empty, a lone
 *   surrogate, a backslash (paths are POSIX), a NUL, control or invisible formatting character
 *   (`lib/text/chars.ts`), absolute, or a home path.
 * - {@link segmentProblem}: a `..` segment (it leaves the project), a `.` segment or an empty one
 *   (a doubled or trailing `/`).
 * - {@link normalizeRel}: the lenient form, for fields where `./a//b/` means `a/b` (a directory):
 *   `.` and empty segments dropped, `..` refused.
 *
 * @example
 * ```ts
 * import { normalizeRel, relPathProblem } from "./rel_path.ts";
 * import assert from "node:assert/strict";
 * assert.equal(relPathProblem("src/a.ts"), null);
 * assert.equal(relPathProblem("/etc/passwd"), "absolute");
 * assert.deepEqual(normalizeRel("./build//out/"), { ok: true, rel: "build/out", dir: true });
 * ```
 * @module
 */
import { hasControlChar } from "../text/chars.ts";

/** What no project-relative path may be or hold. */
export type RelPathProblem = "empty" | "surrogate" | "char" | "absolute" | "home";

/** The words for each {@link RelPathProblem}, completing "… the path …". */
export const REL_PATH_PROBLEMS: Readonly<Record<RelPathProblem, string>> = Object.freeze({
  empty: "is empty",
  surrogate: "contains a lone surrogate",
  char: "contains a backslash or a control character",
  absolute: "must be project-relative, not absolute",
  home: "must be project-relative, not a home path",
});

/**
 * What a project-relative path may not be or hold, or `null`.
 *
 * @example
 * ```ts
 * import { relPathProblem } from "./rel_path.ts";
 * import assert from "node:assert/strict";
 * assert.equal(relPathProblem("a\\b"), "char");
 * assert.equal(relPathProblem("~/x"), "home");
 * assert.equal(relPathProblem("docs/\u202egnp.exe"), "char"); // a bidi override
 * ```
 */
export function relPathProblem(value: string): RelPathProblem | null {
  if (value === "") return "empty";
  if (!value.isWellFormed()) return "surrogate";
  if (value.includes("\\") || hasControlChar(value)) return "char";
  if (value.startsWith("/")) return "absolute";
  if (value.startsWith("~")) return "home";
  return null;
}

/** A segment that keeps a path from being plain. */
export type SegmentProblem = "parent" | "dot" | "empty";

/**
 * The first segment that keeps a `/`-split path from being plain: a `..` (checked first, wherever
 * it is: it leaves the project), else a `.` or an empty one; `null` when every segment is a name.
 *
 * @example
 * ```ts
 * import { segmentProblem } from "./rel_path.ts";
 * import assert from "node:assert/strict";
 * assert.equal(segmentProblem("a/./b/..".split("/")), "parent");
 * assert.equal(segmentProblem("a//b".split("/")), "empty");
 * assert.equal(segmentProblem(["src", "a.ts"]), null);
 * ```
 */
export function segmentProblem(segments: readonly string[]): SegmentProblem | null {
  if (segments.includes("..")) return "parent";
  for (const s of segments) {
    if (s === ".") return "dot";
    if (s === "") return "empty";
  }
  return null;
}

/**
 * Whether `rel` is a plain normalized project-relative path: no {@link relPathProblem} and no
 * {@link segmentProblem}.
 *
 * @example
 * ```ts
 * import { isPlainRel } from "./rel_path.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isPlainRel("src/a.ts"), true);
 * assert.equal(isPlainRel("./src/a.ts"), false);
 * ```
 */
export function isPlainRel(rel: string): boolean {
  return relPathProblem(rel) === null && segmentProblem(rel.split("/")) === null;
}

/** A leniently normalized path, or why it was refused. */
export type NormalizedRel =
  | { readonly ok: true; readonly rel: string; readonly dir: boolean }
  | { readonly ok: false; readonly problem: RelPathProblem | "parent" };

/**
 * The lenient form: `.` and empty segments dropped (so `./a//b` is `a/b`), a trailing `/`
 * remembered as `dir`, the project root itself `"."`; refused for any {@link RelPathProblem}
 * (but an empty string, which is the root), for a `..` segment, and for a first kept segment that
 * starts with `~` (`./~/x` is refused as `~/x` is).
 *
 * @example
 * ```ts
 * import { normalizeRel } from "./rel_path.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(normalizeRel("."), { ok: true, rel: ".", dir: false });
 * assert.deepEqual(normalizeRel("a/../b"), { ok: false, problem: "parent" });
 * ```
 */
export function normalizeRel(value: string): NormalizedRel {
  const problem = value === "" ? null : relPathProblem(value);
  if (problem !== null) return { ok: false, problem };
  const segs = value.split("/");
  if (segs.includes("..")) return { ok: false, problem: "parent" };
  const kept = segs.filter((s) => s !== "" && s !== ".");
  // `./~/x` would normalize to a home path.
  if (kept.length > 0 && kept[0].startsWith("~")) return { ok: false, problem: "home" };
  const dir = value.endsWith("/") && kept.length > 0;
  return { ok: true, rel: kept.length === 0 ? "." : kept.join("/"), dir };
}
