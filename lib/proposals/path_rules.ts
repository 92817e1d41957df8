/**
 * The rules on a proposal's path, as a pure function of the path, the agent and the policy:
 * a plain project-relative POSIX path (no NUL or control characters, no backslash, no `.`/empty
 * segments, no `..`, not absolute, not `~`), outside the control plane (the table, case-folded,
 * and git's resolved paths: `lib/policy/control_plane.ts`), not the
 * brief (in any letter case, nor either default brief name), not protected, and inside the
 * agent's write scopes. The first rule broken is the refusal. An `OUT_OF_SCOPE` path below a
 * literal scope (`src/a.ts` under `"src"`) says that scope names a file only.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs policy and plane, which it declares rather than makes.
 * import { checkProposalPath } from "./path_rules.ts";
 * import type { Policy } from "../policy/types.ts";
 * import type { ControlPlane } from "../policy/control_plane.ts";
 * declare const policy: Policy; // from `loadPolicy`
 * declare const plane: ControlPlane; // the project's control plane
 * const checked = checkProposalPath("src/a.ts", "worker", policy, plane); // checked.rel: "src/a.ts"
 * ```
 * @module
 */
import { agentPolicyOf } from "../policy/agents.ts";
import { ProposalError } from "../errors.ts";
import { DEFAULT_BRIEF_NAMES } from "../layout.ts";
import { relPathProblem, segmentProblem } from "../fs/rel_path.ts";
import { type ControlPlane, controlPlaneHit } from "../policy/control_plane.ts";
import { protectedMatch } from "../policy/protected_match.ts";
import { inWriteScopes, literalDirScopeHint, literalScopeAbove } from "../policy/scope.ts";
import type { Policy } from "../policy/types.ts";

/** A path that passed every rule. */
export interface CheckedPath {
  /** The normalized relative path. */
  readonly rel: string;
  /** Its segments. */
  readonly segments: readonly string[];
}

/** Longest name a file system takes (bytes). */
export const MAX_NAME_BYTES = 255;
/** Longest relative path accepted (bytes; PATH_MAX less room for the project root). */
export const MAX_PATH_BYTES = 3072;

const utf8 = new TextEncoder();

function utf8Length(s: string): number {
  return utf8.encode(s).length;
}

/**
 * Checks the syntax of a project-relative path (no policy).
 *
 * @throws {ProposalError} `PATH_INVALID`, `PATH_OUTSIDE_PROJECT`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRelativePath } from "./path_rules.ts";
 * assert.deepEqual(checkRelativePath("a/b.txt").segments, ["a", "b.txt"]);
 * ```
 */
export function checkRelativePath(path: string): CheckedPath {
  const q = JSON.stringify(path);
  const problem = relPathProblem(path);
  if (problem === "char") {
    throw new ProposalError(
      "PATH_INVALID",
      path.includes("\\")
        ? `path ${q} contains a backslash; paths are POSIX, separated by '/'`
        : `path ${q} contains a NUL or control character`,
    );
  }
  if (problem === "absolute") {
    throw new ProposalError("PATH_OUTSIDE_PROJECT", `path ${q} is absolute; refused`);
  }
  if (problem === "home") {
    throw new ProposalError("PATH_OUTSIDE_PROJECT", `path ${q} names a home directory; refused`);
  }
  if (problem === "surrogate") {
    throw new ProposalError("PATH_INVALID", `path ${q} has a lone surrogate; not UTF-8`);
  }
  const segments = path.split("/");
  const bad = segmentProblem(segments);
  if (bad === "parent") {
    throw new ProposalError(
      "PATH_OUTSIDE_PROJECT",
      `path ${q} resolves outside the project; refused`,
    );
  }
  if (bad !== null || problem === "empty") {
    throw new ProposalError(
      "PATH_INVALID",
      `path ${q} has an empty or '.' segment (or a trailing '/'); give the file's plain path`,
    );
  }
  if (utf8Length(path) > MAX_PATH_BYTES || segments.some((s) => utf8Length(s) > MAX_NAME_BYTES)) {
    throw new ProposalError(
      "PATH_INVALID",
      `path ${q.slice(0, 80)} is longer than a file system allows ` +
        `(${MAX_NAME_BYTES} bytes a name, ${MAX_PATH_BYTES} in all)`,
    );
  }
  return { rel: segments.join("/"), segments };
}

/**
 * Applies every rule (see the module doc) for `agent`.
 *
 * @throws {ProposalError} `PATH_INVALID`, `PATH_OUTSIDE_PROJECT`, `CONTROL_PLANE`, `BRIEF_PATH`,
 *   `PROTECTED_PATH`, `UNKNOWN_AGENT`, `OUT_OF_SCOPE`
 * @example
 * ```ts ignore
 * // Not run: it needs policy, which it declares rather than makes.
 * import { checkProposalPath } from "./path_rules.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy; // agent `worker` with write_scopes ["docs/"]
 * const plane = { root: "/work/p", git: [] };
 * checkProposalPath("docs/guide.md", "worker", policy, plane).segments; // ["docs", "guide.md"]
 * checkProposalPath("src/main.ts", "worker", policy, plane); // throws OUT_OF_SCOPE
 * ```
 */
export function checkProposalPath(
  path: string,
  agent: string,
  policy: Policy,
  plane: ControlPlane,
): CheckedPath {
  const checked = checkRelativePath(path);
  const rel = checked.rel;
  const cp = controlPlaneHit(rel, plane);
  if (cp !== null) {
    throw new ProposalError(
      "CONTROL_PLANE",
      `${rel} is in the control plane (${cp.entry}: ${cp.reason}); no proposal may change it`,
    );
  }
  const lower = rel.toLowerCase();
  if (
    (policy.briefRel !== null && lower === policy.briefRel.toLowerCase()) ||
    DEFAULT_BRIEF_NAMES.includes(lower)
  ) {
    throw new ProposalError("BRIEF_PATH", `${rel} is the brief; no proposal may change it`);
  }
  if (protectedMatch(rel, policy.protectedPaths)) {
    throw new ProposalError("PROTECTED_PATH", `${rel} is a protected path; refused`);
  }
  const ap = agentPolicyOf(policy, agent);
  if (ap === undefined) {
    throw new ProposalError("UNKNOWN_AGENT", `agent '${agent}' has no agent_policies entry`);
  }
  if (!inWriteScopes(rel, ap.writeScopes)) {
    // A literal scope above the path was most likely meant as a directory: say so.
    const above = literalScopeAbove(rel, ap.writeScopes);
    throw new ProposalError(
      "OUT_OF_SCOPE",
      `${rel} is outside ${agent}'s write_scopes ${JSON.stringify(ap.writeScopes)}; refused` +
        (above === null ? "" : ` (${literalDirScopeHint(above)})`),
    );
  }
  return checked;
}
