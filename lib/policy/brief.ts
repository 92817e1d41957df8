/**
 * Brief loading: find the brief, read it safely, and turn it into a `Policy`.
 *
 * The brief is the project-description file teams already keep, as JSON or JSONC (comments and
 * trailing commas allowed). Reading refuses, with `PolicyError` `BRIEF_UNREADABLE`: a symlink,
 * anything but a regular file, a file swapped in between the check and the open (the opened file
 * must be the `lstat`ed inode; see `lib/fs/safe_read.ts`), more than 1 MiB, and bytes that are
 * not UTF-8. A brief that does not exist is `BRIEF_NOT_FOUND`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/proj with its brief
 * import { loadPolicy } from "./brief.ts";
 * import { defaultBriefPath } from "./brief_file.ts";
 * const root = "/work/proj";
 * const policy = await loadPolicy(await defaultBriefPath(root), { projectRoot: root });
 * console.log(policy.briefRel, policy.briefSha256);
 * ```
 * @module
 */

import { join } from "../fs/path.ts";
import { readBriefText } from "./brief_file.ts";
import { type BriefFindings, briefFindings, parsePolicy } from "./parse.ts";
import type { Policy } from "./types.ts";

export { parsePolicy } from "./parse.ts";

/**
 * Reads and parses the brief at `briefPath` into a `Policy` (see `parsePolicy` for the checks).
 * The project root and the brief's directory are resolved to real paths first, so `briefRel` is
 * right even when either is reached through a symlinked directory; the brief file itself must not
 * be a symlink. `briefSha256` is the SHA-256 of the raw bytes. A literal write scope that names an
 * existing directory of the project is in `warnings` (see `briefWarnings`).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/proj with its brief
 * import { loadPolicy } from "./brief.ts";
 * const policy = await loadPolicy("/work/proj/agentteams.jsonc", { projectRoot: "/work/proj" });
 * policy.agents.worker?.writeScopes;
 * ```
 */
export async function loadPolicy(
  briefPath: string,
  opts: { projectRoot: string },
): Promise<Policy> {
  const { root, real, text, sha } = await readBriefText(briefPath, opts.projectRoot);
  // The one fact the lint's warnings need, asked as they need it: which literal write scopes are
  // existing directories.
  return parsePolicy(text, {
    briefPath: real,
    projectRoot: root,
    briefSha256: sha,
    isDirectory: (rel) => isDirectory(join(root, rel)),
  });
}

/**
 * Checks the brief at `briefPath` and reports every problem at once (`agentteams brief check`):
 * read as `loadPolicy` reads it (an unreadable brief is thrown, as there), then `briefFindings`;
 * with no finding, also the brief's policy (for the checks that look at the file system:
 * `confinedWriteProblems`, lib/sandbox/write_exec_roots_io.ts), else `null`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/proj with its brief
 * import { checkBrief } from "./brief.ts";
 * const r = await checkBrief("/work/proj/agentteams.jsonc", { projectRoot: "/work/proj" });
 * r.findings.length; // 0 for a brief loadPolicy accepts
 * ```
 */
export async function checkBrief(
  briefPath: string,
  opts: { projectRoot: string },
): Promise<BriefFindings & { readonly briefPath: string; readonly policy: Policy | null }> {
  const { root, real, text, sha } = await readBriefText(briefPath, opts.projectRoot);
  const meta = { briefPath: real, projectRoot: root, briefSha256: sha };
  const found = briefFindings(text, meta, (rel) => isDirectory(join(root, rel)));
  // A brief the check accepts, as its policy (what the caller checks against the file system).
  const policy = found.findings.length === 0 ? parsePolicy(text, meta) : null;
  return { ...found, briefPath: real, policy };
}

/** Whether `abs` is a directory (not followed through a symlink); any failure is "no". */
function isDirectory(abs: string): boolean {
  try {
    return Deno.lstatSync(abs).isDirectory;
  } catch {
    return false;
  }
}
