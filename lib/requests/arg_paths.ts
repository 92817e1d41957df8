/**
 * Pure checks on the path-shaped strings of a command request: parent segments in arguments (a
 * `..` followed by `/`, `\` or the end, whatever precedes it), the requested working directory,
 * `expected_writes` entries, and the stdin content's path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasParentSegment, normaliseRelative } from "./arg_paths.ts";
 * assert.equal(hasParentSegment("a\\..\\b"), true);
 * assert.deepEqual(normaliseRelative("./src//a.ts"), { ok: true, rel: "src/a.ts", dir: false });
 * ```
 * @module
 */

import { normalizeRel, REL_PATH_PROBLEMS, relPathProblem, segmentProblem } from "../fs/rel_path.ts";

/**
 * `..` followed by `/`, `\`, a list separator a program may split paths on (`,`, `:`, `;`),
 * white space, or the end of the string.
 */
const PARENT_SEGMENT_RE = /\.\.(?:[/\\,:;\s]|$)/;

/**
 * True when a command-request argument may name a parent directory: it contains `..` immediately
 * followed by `/`, by `\`, by a list separator (`,`, `:`, `;`: `--allow-write=..,src`,
 * `lib:..:x`), by white space, or by the end of the argument, whatever precedes the `..`. Such an
 * argument is refused (`PARENT_SEGMENT`) whatever its pattern admits.
 *
 * Nothing before the `..` counts as a boundary, since a program may read a path glued to an
 * option or after any separator of its own: `--output=../x`, `-o../x`, `k:../x`, `a,../b`,
 * `--dir=..`, `-o..` are refused like `..`, `../x`, `x/..` and `a\..\b`. A `..` followed by
 * anything else is not a segment: `a..b`, `HEAD~1..HEAD`, `v1.0...v2.0` (its first `..` is
 * followed by `.`, its second by `v`) and `..foo` pass. Fail-closed, so a string that ends
 * in `..` is refused even when it is not a path: git's `main..` (HEAD implied) and `x...` are
 * refused; write `main..HEAD`. Pure; the only run-time `..` rule for arguments (`argv[0]`
 * included), used by `matchRequest`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hasParentSegment } from "./arg_paths.ts";
 * assert.equal(hasParentSegment("src/../x"), true);
 * assert.equal(hasParentSegment("--output=../x"), true);
 * assert.equal(hasParentSegment("-o.."), true);
 * assert.equal(hasParentSegment("main.."), true); // (write `main..HEAD`)
 * assert.equal(hasParentSegment("HEAD~1..HEAD"), false);
 * assert.equal(hasParentSegment("a..b"), false);
 * ```
 */
export function hasParentSegment(value: string): boolean {
  return PARENT_SEGMENT_RE.test(value);
}

/** A normalised project-relative path, or why it was refused. */
export type Normalised =
  | { readonly ok: true; readonly rel: string; readonly dir: boolean }
  | { readonly ok: false; readonly reason: string };

/**
 * Normalises a project-relative POSIX path (`normalizeRel` in `lib/fs/rel_path.ts`): drops `.` and
 * empty segments (so `./a//b` is `a/b`), remembers a trailing `/` as `dir`, and refuses a
 * backslash, a NUL or control character, a lone surrogate, absolute paths, `~` paths and `..`
 * segments. The project root itself normalises to `rel: "."`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normaliseRelative } from "./arg_paths.ts";
 * assert.deepEqual(normaliseRelative("build/"), { ok: true, rel: "build", dir: true });
 * assert.equal(normaliseRelative("/etc/passwd").ok, false);
 * ```
 */
export function normaliseRelative(value: string): Normalised {
  const n = normalizeRel(value);
  if (n.ok) return n;
  return {
    ok: false,
    reason: n.problem === "parent" ? "has a .. segment" : REL_PATH_PROBLEMS[n.problem],
  };
}

/**
 * Normalises a requested working directory (absent or empty means `.`), as
 * {@link normaliseRelative} does; a trailing `/` is ignored.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normaliseCwd } from "./arg_paths.ts";
 * assert.deepEqual(normaliseCwd("./lean/"), { ok: true, rel: "lean", dir: true });
 * assert.deepEqual(normaliseCwd(undefined), { ok: true, rel: ".", dir: false });
 * ```
 */
export function normaliseCwd(value: string | undefined): Normalised {
  return normaliseRelative(value === undefined || value === "" ? "." : value);
}

/**
 * Why a `stdin_from_content.path` cannot be handed to a stdin gate (it becomes the gate's `{path}`
 * argument), or `null`: it must be a plain project-relative path, no `.` or `..` segment, not
 * absolute or a home path, no control character or backslash, and no segment that starts with
 * `-` (an option to the gate's program).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stdinPathProblem } from "./arg_paths.ts";
 * assert.equal(stdinPathProblem("Scratch.lean"), null);
 * assert.equal(stdinPathProblem("--help"), "has a segment that starts with '-' (an option to the gate)");
 * ```
 */
export function stdinPathProblem(value: string): string | null {
  const common = relPathProblem(value);
  if (common !== null) return REL_PATH_PROBLEMS[common];
  const segments = value.split("/");
  if (segmentProblem(segments) !== null) return "has an empty, '.' or '..' segment";
  if (segments.some((s) => s.startsWith("-"))) {
    return "has a segment that starts with '-' (an option to the gate)";
  }
  return null;
}
