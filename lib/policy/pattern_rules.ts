/**
 * Shape rules for the brief's other path-like values: command `writes` globs, gate globs,
 * `protected_paths` and a command's `cwd`. Each returns why a value is refused, or `null`.
 *
 * Paths are matched against normalized project-relative POSIX paths (`src/a.ts`, never `./src` or
 * `/abs`), so a glob that is absolute, starts with `~`, or has an empty, `.` or `..` segment could
 * never match anything: refusing it keeps a rule from being silently dead.
 *
 * @example
 * ```ts
 * import { normalizeCwd, writesGlobProblem } from "./pattern_rules.ts";
 * writesGlobProblem("build/*"); // null
 * writesGlobProblem("*.o"); // "must start with a literal project directory"
 * normalizeCwd("./lean/"); // "lean"
 * ```
 * @module
 */

import { patternNamesControlPlane } from "./control_plane.ts";
import { hasWildcard } from "../pycompat/fnmatch.ts";
import { normalizeRel, REL_PATH_PROBLEMS, relPathProblem, segmentProblem } from "../fs/rel_path.ts";

/**
 * The problems every path-like brief value is checked for (`lib/fs/rel_path.ts`): empty, a lone
 * surrogate, a backslash or a control character, absolute, or a home path. `null` when it has
 * none of them.
 *
 * @example
 * ```ts
 * import { commonPathProblem } from "./pattern_rules.ts";
 * commonPathProblem("~/x"); // "must be project-relative, not a home path"
 * commonPathProblem("src/*.ts"); // null
 * ```
 */
export function commonPathProblem(value: string): string | null {
  const problem = relPathProblem(value);
  return problem === null ? null : REL_PATH_PROBLEMS[problem];
}

/** Why a pattern's segments could never name a plain path: an empty, `.` or `..` segment. */
const BAD_SEGMENTS = "has an empty, '.' or '..' segment";

/**
 * Why a command `writes` glob is refused: it must start with a literal project directory (no
 * wildcard, `/`, `~` or `..` in the first segment), have no empty, `.` or `..` segment, not end in
 * `/` (a `writes` glob is matched with fnmatch against file paths; write `build/*`), and no segment
 * may name the control plane.
 *
 * @example
 * ```ts
 * import { writesGlobProblem } from "./pattern_rules.ts";
 * writesGlobProblem(".git/hooks/*"); // "is inside the project control plane"
 * ```
 */
export function writesGlobProblem(glob: string): string | null {
  const common = commonPathProblem(glob);
  if (common !== null) {
    return common.startsWith("must be project-relative")
      ? "must start with a literal project directory"
      : common;
  }
  if (glob.endsWith("/")) return "ends with '/'; a writes glob matches files, write 'dir/*'";
  const segments = glob.split("/");
  if (segmentProblem(segments) !== null) return BAD_SEGMENTS;
  if (hasWildcard(segments[0])) return "must start with a literal project directory";
  const plane = patternNamesControlPlane(segments);
  if (plane !== null) return `is inside the project control plane (${plane.entry})`;
  return null;
}

/**
 * Why a gate glob or a `protected_paths` entry could never match a project path, or `null`.
 * A trailing `/` is allowed on a protected path (`secrets/`), not on a gate glob.
 *
 * @example
 * ```ts
 * import { matchPatternProblem } from "./pattern_rules.ts";
 * matchPatternProblem("./src/*.ts", "gate"); // "has an empty, '.' or '..' segment"
 * matchPatternProblem("secrets/", "protected"); // null
 * ```
 */
export function matchPatternProblem(pattern: string, kind: "gate" | "protected"): string | null {
  const common = commonPathProblem(pattern);
  if (common !== null) return common;
  let body = pattern;
  if (body.endsWith("/")) {
    if (kind === "gate") return "ends with '/'; a gate glob matches files";
    body = body.slice(0, -1);
  }
  if (segmentProblem(body.split("/")) !== null) return BAD_SEGMENTS;
  return null;
}

/**
 * Why a command `cwd` is refused: absolute, `~`, a `..` segment, a backslash or a control
 * character. `null` when it is acceptable (use {@link normalizeCwd} for its canonical form).
 *
 * @example
 * ```ts
 * import { cwdProblem } from "./pattern_rules.ts";
 * cwdProblem("lean/../.."); // "has a '..' segment"
 * ```
 */
export function cwdProblem(cwd: string): string | null {
  const common = commonPathProblem(cwd);
  if (common !== null) return common;
  if (segmentProblem(cwd.split("/")) === "parent") return "has a '..' segment";
  return null;
}

/**
 * The canonical form of an acceptable `cwd`: `.` and empty segments dropped, `.` for the root.
 *
 * @example
 * ```ts
 * import { normalizeCwd } from "./pattern_rules.ts";
 * normalizeCwd("."); // "."
 * normalizeCwd("./a//b/"); // "a/b"
 * ```
 */
export function normalizeCwd(cwd: string): string {
  const n = normalizeRel(cwd);
  return n.ok ? n.rel : cwd;
}
