/**
 * Where a command's project is when `--project` is not given: the nearest directory, from the
 * current one upwards, that holds the project's state dir (`.agentteams/`), one of the default
 * brief names (`agentteams.jsonc`, `agentteams.json`) or `.git` (a worktree's top: a directory,
 * or the file a linked worktree or a submodule has). With none of them anywhere above, the current
 * directory. Every command finds its project this one way, so a command run from `src/` of a
 * repository works on the repository's top and never makes `src/.agentteams/`.
 *
 * The walk is lexical (`..` of an absolute path, as `Deno.cwd()` gives it, which is already
 * real); what is on disk is asked through the probe passed in, so the rule is tested without a
 * file system.
 *
 * @example
 * ```ts
 * import { findProjectRoot } from "./project_root.ts";
 * import assert from "node:assert/strict";
 * const on = new Set(["/work/repo/.git"]);
 * const kindOf = (abs: string) => on.has(abs) ? "dir" as const : "missing" as const;
 * assert.equal(findProjectRoot("/work/repo/src/lib", kindOf), "/work/repo");
 * assert.equal(findProjectRoot("/elsewhere", kindOf), "/elsewhere"); // nothing above: stay
 * ```
 * @module
 */
import { type EntryKind, entryKind } from "../fs/entry.ts";
import { dirname, join, resolve } from "../fs/path.ts";
import { STATE_DIR } from "../layout.ts";
import { DEFAULT_BRIEF_NAMES } from "../layout.ts";

/**
 * The names whose presence makes a directory a project root, in the order they are asked. Any
 * entry counts, whatever its kind: a symlinked `.agentteams` or brief is the project's (and is
 * refused where it is read), never a reason to walk past it and make state further up.
 */
export const PROJECT_MARKERS: readonly string[] = Object.freeze([
  STATE_DIR,
  ...DEFAULT_BRIEF_NAMES,
  ".git",
]);

/**
 * The project root for a command started in `start` without `--project` (see the module doc).
 * Pure but for `kindOf`, which says what is at an absolute path.
 *
 * @example
 * ```ts
 * import { findProjectRoot } from "./project_root.ts";
 * import assert from "node:assert/strict";
 * // A subproject's own brief is nearer than the repository's top.
 * const on = new Set(["/r/.git", "/r/sub/agentteams.jsonc"]);
 * const kindOf = (abs: string) => on.has(abs) ? "file" as const : "missing" as const;
 * assert.equal(findProjectRoot("/r/sub/x", kindOf), "/r/sub");
 * assert.equal(findProjectRoot("/r/other", kindOf), "/r");
 * ```
 */
export function findProjectRoot(start: string, kindOf: (abs: string) => EntryKind): string {
  const from = resolve(start);
  for (let dir = from;; dir = dirname(dir)) {
    if (PROJECT_MARKERS.some((name) => kindOf(join(dir, name)) !== "missing")) return dir;
    if (dir === "/") return from;
  }
}

/**
 * {@link findProjectRoot}'s probe on the real file system: `lstat`, where a path that cannot be
 * examined (no permission, or outside what Deno was granted) counts as nothing there.
 *
 * @example
 * ```ts
 * import { diskKindOf } from "./project_root.ts";
 * import assert from "node:assert/strict";
 * assert.equal(diskKindOf("/"), "dir");
 * ```
 */
export function diskKindOf(abs: string): EntryKind {
  try {
    return entryKind(abs);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      return "missing";
    }
    throw e;
  }
}

/**
 * The directories above `root` that are projects of their own by their state dir or a default
 * brief (not `.git`: a repository's top holding a subproject is the usual case), nearest first.
 * A command that found `root` by discovery and not by `--project` is refused when one of them is
 * under the switch (`main.ts`, with `lib/queue/mode.ts`): its agent sessions may write anywhere
 * in it outside the denied folders, so the marker that made `root` a project may be theirs (a
 * `src/.git` file), and an operator's command run from `src/`, an emergency-stop HALT included,
 * would land in a folder the sessions write and stop nothing (probe 22c C3). Pure but for
 * `kindOf`.
 *
 * @example
 * ```ts
 * import { enclosingProjects } from "./project_root.ts";
 * import assert from "node:assert/strict";
 * const on = new Set(["/r/agentteams.jsonc", "/r/.git", "/r/src/.git"]);
 * const kindOf = (abs: string) => on.has(abs) ? "file" as const : "missing" as const;
 * assert.deepEqual(enclosingProjects("/r/src", kindOf), ["/r"]);
 * assert.deepEqual(enclosingProjects("/r", kindOf), []);
 * ```
 */
export function enclosingProjects(root: string, kindOf: (abs: string) => EntryKind): string[] {
  const out: string[] = [];
  const own = PROJECT_MARKERS.filter((m) => m !== ".git");
  for (let dir = resolve(root); dir !== "/";) {
    dir = dirname(dir);
    if (own.some((name) => kindOf(join(dir, name)) !== "missing")) out.push(dir);
  }
  return out;
}
