/**
 * The control plane: project paths that steer agents, hosts or this tool itself. No proposal may
 * write them, no command may declare them as writes, the sandbox keeps them read-only, and the
 * undeclared-write check watches them. Matching is case-folded (`.Git/hooks` is `.git/hooks`),
 * because macOS and Windows file systems are case-insensitive.
 *
 * @example
 * ```ts
 * import { controlPlaneOf } from "./control_plane.ts";
 * controlPlaneOf(".GitHub/Hooks/pre-commit"); // ".github/hooks"
 * controlPlaneOf("src/main.ts"); // null
 * ```
 * @module
 */

/** Every control-plane path, project-relative, lower case. */
export const CONTROL_PLANE: readonly string[] = Object.freeze([
  ".git",
  ".claude",
  ".goose",
  ".codex",
  ".github/agents",
  ".github/hooks",
  "sandbox",
  ".agentteams",
  ".agentteams-queue",
  ".agentteams-status",
]);

/** The control-plane paths the undeclared-write check compares by size, mtime, ctime and inode. */
export const WATCHED_CONTROL_PLANE: readonly string[] = Object.freeze([
  ".agentteams",
  ".claude",
  ".goose",
  ".codex",
  ".github/agents",
  ".github/hooks",
  "sandbox",
]);

/** First path segments that are control plane on their own (a scope may not start with one). */
export const CONTROL_PLANE_TOP: readonly string[] = Object.freeze([
  ".git",
  ".claude",
  ".goose",
  ".codex",
  ".github",
  "sandbox",
  ".agentteams",
  ".agentteams-queue",
  ".agentteams-status",
]);

/**
 * Returns the control-plane entry that covers a project-relative POSIX path, or `null`.
 * Segments are compared case-folded; `.` segments and empty segments are ignored.
 *
 * @example
 * ```ts
 * import { controlPlaneOf } from "./control_plane.ts";
 * controlPlaneOf(".AGENTTEAMS/proposal-ledger.jsonl"); // ".agentteams"
 * ```
 */
export function controlPlaneOf(rel: string): string | null {
  const segs = rel.split("/").filter((s) => s !== "" && s !== ".").map((s) => s.toLowerCase());
  if (segs.length === 0) return null;
  for (const entry of CONTROL_PLANE) {
    const parts = entry.split("/");
    if (parts.length > segs.length) continue;
    let hit = true;
    for (let i = 0; i < parts.length; i++) {
      if (parts[i] !== segs[i]) {
        hit = false;
        break;
      }
    }
    if (hit) return entry;
  }
  return null;
}
