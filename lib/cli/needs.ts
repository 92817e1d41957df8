/**
 * What the commands' permission needs are built from: the key, the state dir, the brief flag,
 * the temporary directory, the operator's confined-programs directory. Shared by the command
 * table and the commands that work out needs themselves.
 *
 * @module
 */
import { join, resolve } from "../fs/path.ts";
import { KEY_ENV, keyDir, VERIFY_KEY_FILE } from "../crypto/keys.ts";
import { mergeNeeds, type Needs, NO_NEEDS } from "../permissions.ts";
import { DEFAULT_BRIEF_NAMES, DEFAULT_TEAM_DIR_REL, STATE_DIR } from "../layout.ts";
import { authzPaths, KEY_DIR_ROSTER, KEY_DIR_VERIFY_KEYS } from "../authz/triad_paths.ts";
import { claudeHostSettingsPaths } from "../policy/claude_host_paths.ts";
import {
  CONFINED_DIR_REL,
  MCP_GRANTS_DIR_REL,
  OPERATOR_VERIFY_KEYS_DIR_REL,
} from "../sandbox/operator_file.ts";
import { runTmpParent } from "../sandbox/run_dir.ts";
import type { Ctx } from "./command_spec.ts";

/** The variable that moves Claude Code's user settings (`claudeHostSettingsPaths`). */
export const CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR";

/**
 * What reading Claude Code's user and managed settings needs (doctor's and serve's settings
 * check): those two files, and the variables that place the first.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { hostSettingsNeeds } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // with HOME=/home/op on Linux
 * hostSettingsNeeds(ctx).read; // ["/home/op/.claude/settings.json", "/etc/claude-code/managed-settings.json"]
 * ```
 */
export function hostSettingsNeeds(ctx: Ctx): Needs {
  const { user, managed } = claudeHostSettingsPaths(ctx.env, Deno.build.os);
  return {
    ...NO_NEEDS,
    read: [user, managed].filter((p): p is string => p !== null),
    env: ["HOME", CLAUDE_CONFIG_ENV],
  };
}

/**
 * What loading the ledger key needs: the key dir, its variables, and `sys` uid (custody).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { keyNeeds } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // with HOME=/home/op, AGENTTEAMS_KEY_DIR unset
 * keyNeeds(ctx).read; // ["/home/op/.config/agentteams/keys"]
 * ```
 */
export function keyNeeds(ctx: Ctx): Needs {
  return { ...NO_NEEDS, read: [keyDir(ctx.env)], env: KEY_ENV, sys: ["uid"] };
}

/**
 * What reading (or, with `write`, writing) the project's state dir needs.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { stateNeeds } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // in project /p
 * stateNeeds(ctx, false).read; // ["/p/.agentteams"]
 * ```
 */
export function stateNeeds(ctx: Ctx, write: boolean): Needs {
  const state = join(ctx.project, STATE_DIR);
  // Reading the project root itself lets the state dir's creation be fsynced.
  return { ...NO_NEEDS, read: write ? [ctx.project, state] : [state], write: write ? [state] : [] };
}

/**
 * `--brief` as an absolute path, or `null` when it was not given (the project's default applies).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { briefFlagPath } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // with --brief docs/brief.jsonc, run from /work/p
 * briefFlagPath(ctx); // "/work/p/docs/brief.jsonc"
 * ```
 */
export function briefFlagPath(ctx: Ctx): string | null {
  const b = ctx.parsed.flags.brief;
  return typeof b === "string" ? resolve(b) : null;
}

/**
 * What reading `--brief` needs: its path, or nothing when it was not given (the default brief
 * lies in the project).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { briefFlagReads } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // with --brief /etc/team/brief.jsonc
 * briefFlagReads(ctx); // ["/etc/team/brief.jsonc"]
 * ```
 */
export function briefFlagReads(ctx: Ctx): string[] {
  const b = briefFlagPath(ctx);
  return b === null ? [] : [b];
}

/**
 * The temporary directory the permission needs name for acting commands: where the run makes its
 * private directories (`runTmpParent`: `TMPDIR` when absolute, else `/tmp/agentteams-<uid>`, never
 * all of `/tmp`).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { tmpDirOf } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // with TMPDIR unset, run by uid 1000
 * tmpDirOf(ctx); // "/tmp/agentteams-1000"
 * ```
 */
export function tmpDirOf(ctx: Ctx): string {
  return runTmpParent(ctx.env, Deno.uid());
}

/**
 * The operator's confined-programs directory, when HOME is absolute (else none).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { confinedDirs } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // with HOME=/home/op
 * confinedDirs(ctx); // ["/home/op/.config/agentteams/confined"]
 * ```
 */
export function confinedDirs(ctx: Ctx): string[] {
  const home = ctx.env.HOME;
  return home?.startsWith("/") ? [join(home, CONFINED_DIR_REL)] : [];
}

/**
 * The operator's direct-write grants directory and its verify keys (what the runner reads at
 * its start, `lib/runner/direct_grants_load.ts`), when HOME is absolute (else none).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { directGrantDirs } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // with HOME=/home/op
 * directGrantDirs(ctx); // ["/home/op/.config/agentteams/mcp-grants", "/home/op/.config/agentteams/verify-keys"]
 * ```
 */
export function directGrantDirs(ctx: Ctx): string[] {
  const home = ctx.env.HOME;
  return home?.startsWith("/")
    ? [join(home, MCP_GRANTS_DIR_REL), join(home, OPERATOR_VERIFY_KEYS_DIR_REL)]
    : [];
}

/**
 * The brief as a command reads it: the `--brief` file, else the project's default names (each
 * looked for, the first present read).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { briefReads } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // project /p, no --brief
 * briefReads(ctx); // ["/p/agentteams.jsonc", "/p/agentteams.json"]
 * ```
 */
export function briefReads(ctx: Ctx): string[] {
  const flag = briefFlagPath(ctx);
  return flag !== null ? [flag] : DEFAULT_BRIEF_NAMES.map((n) => join(ctx.project, n));
}

/** What a triad command needs. */
export interface AuthzNeedsSpec {
  /** It writes the project's `references/`. */
  readonly write?: boolean;
  /**
   * Every variable it declares (its spec's `env`: the key it signs or verifies with, e.g.
   * `AGENTTEAMS_WAIVER_SIGNING_KEY`, and the key-custody variables when it may sign with the
   * operator's key): the variables are read at start, so each must be granted.
   */
  readonly keyEnv?: readonly string[];
  /** It reads the operator's Ed25519 key from the key dir. */
  readonly operatorKey?: boolean;
  /** Other directories it reads (a team dir). */
  readonly extraRead?: readonly string[];
  /**
   * A grant command: its trust roots are the team dir's (read through `extraRead`), not the
   * project's, so it reads no brief, settings or key dir for them.
   */
  readonly grants?: boolean;
}

/**
 * The needs of a triad command: read (and, for a writer, write) the project's `references/`, the
 * key variables it uses, and the key dir when it signs with the operator's key.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { authzNeeds } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // in project /p
 * authzNeeds(ctx, {}).read; // ["/p/references"]
 * ```
 */
export function authzNeeds(ctx: Ctx, spec: AuthzNeedsSpec): Needs {
  const refs = authzPaths(ctx.project).references;
  const base: Needs = {
    ...NO_NEEDS,
    // The project itself too, for a writer: creating references/ is fsynced there. The trust
    // roots' inputs (lib/authz/trust.ts): the brief (the switch), the Claude Code settings (the
    // deny rules), the key dir (its verify keys and roster), when the environment names one.
    read: [
      ...(spec.write ? [ctx.project] : []),
      refs,
      ...(spec.extraRead ?? []),
      ...(spec.grants
        ? []
        : [...briefReads(ctx), join(ctx.project, ".claude"), ...keyDirRead(ctx)]),
    ],
    write: spec.write ? [refs] : [],
    env: [...(spec.keyEnv ?? []), ...(spec.grants ? [] : ["HOME", "AGENTTEAMS_KEY_DIR"])],
  };
  if (!spec.operatorKey) return base;
  return mergeNeeds(base, { ...NO_NEEDS, read: [keyDir(ctx.env)], env: KEY_ENV, sys: ["uid"] });
}

/**
 * The key dir's trust roots (never the whole key dir: its secret files are not a triad command's
 * to read): its verify-key store, its roster and the operator's verify key.
 */
function keyDirRead(ctx: Ctx): string[] {
  try {
    const dir = keyDir(ctx.env);
    return [KEY_DIR_VERIFY_KEYS, KEY_DIR_ROSTER, VERIFY_KEY_FILE].map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/**
 * The holder's team dir: `--team-dir`, else `<project>/.agentteams/team`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { teamDirOf } from "./needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // in project /p, no --team-dir
 * teamDirOf(ctx); // "/p/.agentteams/team"
 * ```
 */
export function teamDirOf(ctx: Ctx): string {
  const t = ctx.parsed.flags["team-dir"];
  return typeof t === "string" ? resolve(t) : resolve(ctx.project, DEFAULT_TEAM_DIR_REL);
}
