/**
 * Command requests: the building blocks `runRequest` is assembled from. See docs/requests.md.
 *
 * @example
 * ```ts
 * import { childEnv, matchRequest, openGitContext, runProcess, takeSnapshot } from "./mod.ts";
 * ```
 * @module
 */

export { fullMatch, matchArgv } from "./argv.ts";
export type { ArgvMiss, ArgvVerdict } from "./argv.ts";
export { childEnv, FALLBACK_PATH, isSecretName, PASSED_ENV_NAMES, sanitizePath } from "./env.ts";
export type { ChildEnvOptions } from "./env.ts";
export {
  GIT_CALLS_PER_CONTEXT,
  GIT_CALLS_PER_SNAPSHOT,
  GIT_SAFETY_CONFIG,
  gitEnv,
  openGitContext,
} from "./git.ts";
export type { GitContext, GitContextOptions, WatchedGitPaths } from "./git.ts";
export {
  gitVersionProblem,
  isGitVersionSupported,
  MIN_GIT_VERSION,
  parseGitVersion,
} from "./git_version.ts";
export type { GitVersion } from "./git_version.ts";
export { matchRequest } from "./match.ts";
export type { RequestFields, RequestMatch } from "./match.ts";
export { MAX_OUTPUT_BYTES } from "./output.ts";
export { hasParentSegment, normaliseCwd, normaliseRelative } from "./paths.ts";
export { DEFAULT_DRAIN_MS, exitOf, runProcess } from "./process.ts";
export type { RunResult, RunSpec } from "./process.ts";
export { diskFs, isWithin, resolveCwd, resolveProgram } from "./resolve.ts";
export type { ResolvedProgram, ResolveFs, ResolveOptions } from "./resolve.ts";
export { BLIND_SPOT, diffSnapshots, gitWatchRoots, takeSnapshot } from "./snapshot.ts";
export type { Snapshot, SnapshotOptions, WriteCheck } from "./snapshot.ts";
export { checkDeclaration, declaredMatcher, forbiddenReason, writeAllowed } from "./writes.ts";
export type { Declaration, DeclaredOptions, Guards, PathMatchers } from "./writes.ts";
