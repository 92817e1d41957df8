/**
 * Where the operator-owned `confined_programs` file of a project lives:
 * `<home>/.config/agentteams/confined/<name>-<digest>.json`, where `name` is the basename of the
 * project's real path with every character outside `[A-Za-z0-9._-]` replaced by `_` (`root` when
 * empty) and `digest` the first 12 hex digits of the SHA-256 of that real path (UTF-8). Machine
 * paths then stay out of the committed brief, in a directory no agent session may write.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { confinedFilePath } from "./operator_file.ts";
 * assert.match(
 *   confinedFilePath("/home/op/my proj", "/home/op"),
 *   /^\/home\/op\/\.config\/agentteams\/confined\/my_proj-[0-9a-f]{12}\.json$/,
 * );
 * ```
 * @module
 */

import { sha256Hex } from "../crypto/hash.ts";

/** The operator file directory, relative to the home directory. */
export const CONFINED_DIR_REL = ".config/agentteams/confined";
/** The operator's direct-write grants folder, relative to the home directory (same file names). */
export const MCP_GRANTS_DIR_REL = ".config/agentteams/mcp-grants";
/** The operator's verify keys for direct-write grants, relative to the home directory. */
export const OPERATOR_VERIFY_KEYS_DIR_REL = ".config/agentteams/verify-keys";
/** The largest direct-write grants file read, in bytes. */
export const MAX_MCP_GRANTS_BYTES = 256 * 1024;
/** The largest operator file read, in bytes. */
export const MAX_CONFINED_BYTES = 64 * 1024;

/**
 * The file name stem for a project's real path: sanitized basename, `-`, 12 hex of its SHA-256.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { confinedFileName } from "./operator_file.ts";
 * assert.equal(confinedFileName("/").startsWith("root-"), true);
 * ```
 */
export function confinedFileName(projectReal: string): string {
  const trimmed = projectReal.length > 1 ? projectReal.replace(/\/+$/, "") : projectReal;
  const base = trimmed.slice(trimmed.lastIndexOf("/") + 1);
  const name = base.replace(/[^A-Za-z0-9._-]/gu, "_") || "root";
  const digest = sha256Hex(projectReal).slice(0, 12);
  return `${name}-${digest}.json`;
}

/**
 * The operator file's absolute path, from the project's real path and the (real) home directory.
 * Pure: the caller resolves both.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { confinedFilePath } from "./operator_file.ts";
 * assert.equal(confinedFilePath("/srv/repo", "/root").startsWith("/root/.config/agentteams/confined/repo-"), true);
 * ```
 */
export function confinedFilePath(projectReal: string, home: string): string {
  const h = home.length > 1 ? home.replace(/\/+$/, "") : home;
  return `${h === "/" ? "" : h}/${CONFINED_DIR_REL}/${confinedFileName(projectReal)}`;
}
