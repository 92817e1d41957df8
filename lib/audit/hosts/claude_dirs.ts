/**
 * Which project `.claude/agents/` folders Claude Code loads for a session started in a directory:
 * not only the one at the start directory, but **each parent's up to the git root** (or, outside
 * a git repository, up to the home directory, which is left out: `~/.claude/agents` is the user's
 * own level). Taken from the JavaScript Claude Code ships:
 *
 * - Claude Code 2.1.42 (npm `@anthropic-ai/claude-code@2.1.42`, `cli.js`): `hp(subdir, cwd)`
 *   loads `projectSettings` files from every directory `SJA(subdir, cwd)` returns. `SJA` starts at
 *   the cwd and loops: stop at `os.homedir()` (before adding it); add `<dir>/.claude/<subdir>` when
 *   it exists; stop when `dir` is the git root (`XX`: the nearest directory upward holding a
 *   `.git` directory or file); go to the parent, stopping at the file system's root.
 * - Claude Code 2.1.332 (npm `@anthropic-ai/claude-code-linux-x64@2.1.332`, the Bun binary's
 *   bundled JavaScript): `rce(subdir, cwd)` ("getProjectDirsUpToHome") is the same loop. It also
 *   adds, for a linked git worktree, the main worktree's `.claude/agents` (`qit`), and the
 *   `.claude/agents` of each additional working directory (`--add-dir`, and
 *   `permissions.additionalDirectories` in the settings: `OVe`). The audit reports the project
 *   settings' `additionalDirectories` (`SETTINGS_EXTRA_AGENTS`, lib/policy/session_settings.ts)
 *   rather than reading outside what it was given; a linked worktree's main worktree is not read
 *   (docs/audit.md, "Not covered").
 *
 * Pure: the caller says which directory is the git root.
 *
 * @module
 */
import { dirname } from "../../fs/path.ts";

/** The Claude Code versions this reading was taken from. */
export const CLAUDE_DIRS_HOST = "Claude Code 2.1.332 and 2.1.42";

/**
 * The directories Claude Code looks at for a session started in `cwd`, nearest first: `cwd`, then
 * each parent, stopping before `home` (left out) or at `/` (included). Where it looks for `.git`
 * and `.claude/` (the audit's read permission covers each one's `.git` and `.claude`).
 *
 * @example
 * ```ts
 * import { claudeLookDirs } from "./claude_dirs.ts";
 * claudeLookDirs("/home/op/src/p", "/home/op"); // ["/home/op/src/p", "/home/op/src"]
 * claudeLookDirs("/srv/p", "/home/op"); // ["/srv/p", "/srv", "/"]
 * ```
 */
export function claudeLookDirs(cwd: string, home: string | null): string[] {
  const out: string[] = [];
  let k = cwd;
  while (true) {
    if (home !== null && k === home) break;
    out.push(k);
    const up = dirname(k);
    if (up === k) break;
    k = up;
  }
  return out;
}

/**
 * The directories whose `.claude/agents/` Claude Code loads as project agents for a session
 * started in `cwd`: {@link claudeLookDirs} up to and including `gitRoot` (the nearest directory
 * upward with a `.git`; `null`: none, so up to `home` or `/`).
 *
 * @example
 * ```ts
 * import { claudeAgentDirs } from "./claude_dirs.ts";
 * claudeAgentDirs("/repo/teams/a", "/home/op", "/repo"); // ["/repo/teams/a", "/repo/teams", "/repo"]
 * claudeAgentDirs("/repo", "/home/op", "/repo"); // ["/repo"]
 * ```
 */
export function claudeAgentDirs(
  cwd: string,
  home: string | null,
  gitRoot: string | null,
): string[] {
  const look = claudeLookDirs(cwd, home);
  const at = gitRoot === null ? -1 : look.indexOf(gitRoot);
  return at < 0 ? look : look.slice(0, at + 1);
}
