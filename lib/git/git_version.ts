/**
 * The git version gate. The write check needs `git rev-parse --path-format=absolute` (git 2.31),
 * so an older git, or a version line this module cannot read, is refused.
 *
 * @example
 * ```ts
 * import { gitVersionProblem } from "./git_version.ts";
 * gitVersionProblem("git version 2.30.9"); // "git 2.30.9 is older than 2.31"
 * gitVersionProblem("git version 2.39.5 (Apple Git-154)"); // null
 * ```
 * @module
 */

/** A parsed git version. */
export interface GitVersion {
  /** Major number. */
  readonly major: number;
  /** Minor number. */
  readonly minor: number;
  /** Patch number (0 when absent). */
  readonly patch: number;
}

/** The oldest git the write check accepts. */
export const MIN_GIT_VERSION: GitVersion = Object.freeze({ major: 2, minor: 31, patch: 0 });

/**
 * Reads `git --version` output (`git version 2.43.0`, `git version 2.39.3 (Apple Git-146)`,
 * `git version 2.45.1.windows.1`, `git version 2.44.0-rc1`); `null` when it is not that shape.
 *
 * @example
 * ```ts
 * import { parseGitVersion } from "./git_version.ts";
 * parseGitVersion("git version 2.43.0\n"); // { major: 2, minor: 43, patch: 0 }
 * parseGitVersion("hub version 2.14.2"); // null
 * ```
 */
export function parseGitVersion(text: string): GitVersion | null {
  const m = /^git version (\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?(?:[.\-+ ].*)?$/.exec(text.trim());
  if (m === null) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: m[3] === undefined ? 0 : Number(m[3]) };
}

/**
 * True when `v` is at least `min` (default 2.31).
 *
 * @example
 * ```ts
 * import { isGitVersionSupported } from "./git_version.ts";
 * isGitVersionSupported({ major: 2, minor: 31, patch: 0 }); // true
 * isGitVersionSupported({ major: 2, minor: 30, patch: 99 }); // false
 * ```
 */
export function isGitVersionSupported(v: GitVersion, min: GitVersion = MIN_GIT_VERSION): boolean {
  if (v.major !== min.major) return v.major > min.major;
  if (v.minor !== min.minor) return v.minor > min.minor;
  return v.patch >= min.patch;
}

/**
 * Why a `git --version` output is refused, or `null` when the git is new enough.
 *
 * @example
 * ```ts
 * import { gitVersionProblem } from "./git_version.ts";
 * gitVersionProblem("garbage"); // "cannot read the git version from \"garbage\""
 * ```
 */
export function gitVersionProblem(text: string): string | null {
  const v = parseGitVersion(text);
  if (v === null) return `cannot read the git version from ${JSON.stringify(text.trim())}`;
  if (!isGitVersionSupported(v)) {
    const m = MIN_GIT_VERSION;
    return `git ${v.major}.${v.minor}.${v.patch} is older than ${m.major}.${m.minor}`;
  }
  return null;
}
