/**
 * Reads the project's Claude Code settings files for `sessionSettingsFindings`: the I/O edge of
 * the session-sandbox check. A file is read only as a regular file (never through a symlink: the
 * session can write `.claude/`, and a link to the key file must not be read, let alone quoted);
 * one that cannot be read is handed on as unreadable, with the reason and never its content.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSessionSettings } from "./session_settings_read.ts";
 * const p = Deno.realPathSync(Deno.makeTempDirSync());
 * Deno.mkdirSync(`${p}/.claude`);
 * Deno.writeTextFileSync(`${p}/.claude/settings.json`, "{}");
 * const { claudeDir, settings } = await readSessionSettings(p);
 * assert.equal(claudeDir, true);
 * assert.deepEqual(settings.map((s) => s.path), [`${p}/.claude/settings.json`]);
 * ```
 * @module
 */
import { join } from "../fs/path.ts";
import { lstatOrNull } from "../fs/entry.ts";
import { readRegularFile } from "../fs/safe_read.ts";
import { FsSafetyError } from "../errors.ts";
import { SESSION_SETTINGS_FILES, type SettingsText } from "./session_settings.ts";
import { claudeHostSettingsPaths } from "./claude_host_paths.ts";

/** Largest settings file read. */
export const MAX_SETTINGS_BYTES = 1024 * 1024;

/** What {@link readSessionSettings} found. */
export interface SessionSettingsFiles {
  /** Whether `<root>/.claude` exists (in any form). */
  readonly claudeDir: boolean;
  /** The settings files present, in Claude's order; unreadable ones with `text: null`. */
  readonly settings: readonly SettingsText[];
}

/**
 * Reads `.claude/settings.json` and `.claude/settings.local.json` under `root`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSessionSettings } from "./session_settings_read.ts";
 * assert.equal((await readSessionSettings("/nonexistent")).settings.length, 0);
 * ```
 */
export async function readSessionSettings(root: string): Promise<SessionSettingsFiles> {
  const claudeDir = (await lstatOrNull(join(root, ".claude"))) !== null;
  const settings: SettingsText[] = [];
  if (!claudeDir) return { claudeDir, settings };
  for (const rel of SESSION_SETTINGS_FILES) {
    const path = join(root, rel);
    try {
      const { bytes } = await readRegularFile(path, {
        maxBytes: MAX_SETTINGS_BYTES,
        what: "settings file",
        // Another name for it (a hard link) is a path a session could edit it by.
        singleName: true,
      });
      try {
        settings.push({ path, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) });
      } catch {
        settings.push({ path, text: null, unreadable: "is not UTF-8 text" });
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      if (e instanceof FsSafetyError) {
        settings.push({ path, text: null, unreadable: `is refused (${e.code})` });
        continue;
      }
      if (e instanceof Deno.errors.NotCapable) throw e;
      settings.push({ path, text: null, unreadable: `cannot be read (${(e as Error).name})` });
    }
  }
  return { claudeDir, settings };
}

/**
 * Reads the settings Claude Code takes from outside the project ({@link claudeHostSettingsPaths}
 * for `env`): the user's file first, then the managed one, each with its `scope`. They lie
 * outside every session's reach, so a link is followed (a dotfiles link is common); the target
 * must be a regular file of at most {@link MAX_SETTINGS_BYTES}. Absent files are left out; one
 * that cannot be read is handed on as unreadable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readHostSettings } from "./session_settings_read.ts";
 * const home = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${home}/.claude`);
 * Deno.writeTextFileSync(`${home}/.claude/settings.json`, "{}");
 * const read = await readHostSettings({ HOME: home }, "windows");
 * assert.deepEqual(read, [{ path: `${home}/.claude/settings.json`, text: "{}", scope: "user" }]);
 * ```
 */
export async function readHostSettings(
  env: { readonly HOME?: string; readonly CLAUDE_CONFIG_DIR?: string },
  os: string = Deno.build.os,
): Promise<SettingsText[]> {
  const { user, managed } = claudeHostSettingsPaths(env, os);
  const out: SettingsText[] = [];
  for (const [path, scope] of [[user, "user"], [managed, "managed"]] as const) {
    if (path === null) continue;
    try {
      const info = await Deno.stat(path);
      if (!info.isFile) {
        out.push({ path, scope, text: null, unreadable: "is not a regular file" });
        continue;
      }
      if (info.size > MAX_SETTINGS_BYTES) {
        out.push({ path, scope, text: null, unreadable: `is over ${MAX_SETTINGS_BYTES} bytes` });
        continue;
      }
      const bytes = await Deno.readFile(path);
      try {
        out.push({ path, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), scope });
      } catch {
        out.push({ path, scope, text: null, unreadable: "is not UTF-8 text" });
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      if (e instanceof Deno.errors.NotCapable) throw e;
      out.push({ path, scope, text: null, unreadable: `cannot be read (${(e as Error).name})` });
    }
  }
  return out;
}
