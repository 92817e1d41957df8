/**
 * Where Claude Code reads settings from outside the project (a module of its own: the commands'
 * permission needs name these paths without loading the settings check).
 *
 * @module
 */
import { join } from "../fs/path.ts";

/**
 * The settings files Claude Code reads from outside the project: the user's
 * (`$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`) and the managed ones
 * (`/etc/claude-code/managed-settings.json` on Linux, `/Library/Application
 * Support/ClaudeCode/managed-settings.json` on macOS). Claude Code merges user < project <
 * local < managed. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeHostSettingsPaths } from "./claude_host_paths.ts";
 * assert.deepEqual(claudeHostSettingsPaths({ HOME: "/home/op" }, "linux"), {
 *   user: "/home/op/.claude/settings.json",
 *   managed: "/etc/claude-code/managed-settings.json",
 * });
 * assert.equal(claudeHostSettingsPaths({ CLAUDE_CONFIG_DIR: "/cc" }, "darwin").user, "/cc/settings.json");
 * ```
 */
export function claudeHostSettingsPaths(
  env: { readonly HOME?: string; readonly CLAUDE_CONFIG_DIR?: string },
  os: string,
): { readonly user: string | null; readonly managed: string | null } {
  const config = env.CLAUDE_CONFIG_DIR;
  const home = env.HOME;
  const user = config !== undefined && config.startsWith("/")
    ? join(config, "settings.json")
    : home !== undefined && home.startsWith("/")
    ? join(home, ".claude", "settings.json")
    : null;
  const managed = os === "linux"
    ? "/etc/claude-code/managed-settings.json"
    : os === "darwin"
    ? "/Library/Application Support/ClaudeCode/managed-settings.json"
    : null;
  return { user, managed };
}
