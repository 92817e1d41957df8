/**
 * Deno's permission system as a second containment layer around the tool. Each command states
 * what it needs (paths to read and write, programs to run, environment variables, `sys` calls);
 * `agentteams permissions COMMAND` prints exactly those as `deno run` flags, and at start the
 * binary revokes every category the command does not need and warns when it was launched with
 * more than it needs. Never net, never ffi; `--allow-run` is always a list of absolute programs.
 *
 * `Deno.permissions.revoke` is coarse (a whole category), so path-level narrowing comes from the
 * launch flags this module prints.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { launchFlags } from "./permissions.ts";
 * assert.deepEqual(
 *   launchFlags({ read: ["/p/.agentteams"], write: [], run: [], env: ["HOME"], sys: [] }),
 *   ["--no-prompt", "--allow-read=/p/.agentteams", "--allow-env=HOME"],
 * );
 * ```
 * @module
 */
import { BWRAP_PATH, HOST_PROGRAMS, SANDBOX_EXEC_PATH } from "./host/programs.ts";
import { KEY_ENV, RUNNER_FORBIDDEN_ENV } from "./crypto/keys.ts";
import { CHILD_ENV } from "./process/child_env.ts";
import { GIT_CONFIG_ENV } from "./git/config_env.ts";
import { PermissionLayerError } from "./errors.ts";
import { within } from "./fs/within.ts";
import { expandEnvNames, PROGRESS_ENV } from "./env.ts";
import { AUDIT_ENV } from "./audit/audit_env.ts";

/** What one command needs from Deno. */
export interface Needs {
  /** Paths (files or directories) read. */
  readonly read: readonly string[];
  /** Paths written. */
  readonly write: readonly string[];
  /** Absolute programs spawned. */
  readonly run: readonly string[];
  /** Environment variables read (`LC_*` style prefixes allowed). */
  readonly env: readonly string[];
  /** `sys` calls (e.g. `uid`). */
  readonly sys: readonly string[];
}

/** No permissions at all. */
export const NO_NEEDS: Needs = Object.freeze({ read: [], write: [], run: [], env: [], sys: [] });

function uniqSorted(xs: readonly string[]): string[] {
  return [...new Set(xs)].sort();
}

/**
 * The union of several needs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeNeeds, NO_NEEDS } from "./permissions.ts";
 * assert.deepEqual(mergeNeeds(NO_NEEDS, { ...NO_NEEDS, env: ["HOME"] }).env, ["HOME"]);
 * ```
 */
export function mergeNeeds(...all: Needs[]): Needs {
  return {
    read: uniqSorted(all.flatMap((n) => n.read)),
    write: uniqSorted(all.flatMap((n) => n.write)),
    run: uniqSorted(all.flatMap((n) => n.run)),
    env: uniqSorted(all.flatMap((n) => n.env)),
    sys: uniqSorted(all.flatMap((n) => n.sys)),
  };
}

/** A directory as named, and the real path it resolves to. */
export interface ResolvedRoot {
  /** As the command names it (`--project`, `TMPDIR`). */
  readonly named: string;
  /** Its real path (symlinks followed). */
  readonly real: string;
}

/**
 * `needs` with, for each read and write path at or below one of `roots`, the same path below the
 * root's real path. The tool resolves those roots (the project, `TMPDIR`) and then names paths
 * below the real one, and Deno checks a path as the code names it: a project reached through a
 * symlink, or any project under macOS's `/tmp` (`/private/tmp`), needs both forms. Only the roots
 * are resolved, never a path below them: a symlink inside the project (which the tool refuses to
 * follow) cannot widen the grant.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NO_NEEDS, withResolvedRoots } from "./permissions.ts";
 * const roots = [{ named: "/tmp/p", real: "/private/tmp/p" }];
 * assert.deepEqual(
 *   withResolvedRoots({ ...NO_NEEDS, read: ["/tmp/p/.agentteams", "/usr/bin"] }, roots).read,
 *   ["/private/tmp/p/.agentteams", "/tmp/p/.agentteams", "/usr/bin"],
 * );
 * ```
 */
export function withResolvedRoots(needs: Needs, roots: readonly ResolvedRoot[]): Needs {
  const moved = (list: readonly string[]) =>
    list.flatMap((p) =>
      roots
        .filter((r) => r.named !== "/" && r.real !== r.named && within(p, r.named))
        .map((r) => (r.real === "/" ? "" : r.real) + p.slice(r.named.length) || "/")
    );
  return mergeNeeds(needs, { ...NO_NEEDS, read: moved(needs.read), write: moved(needs.write) });
}

function checkListValue(kind: string, v: string): void {
  if (v.includes(",")) {
    throw new PermissionLayerError(
      "PERMISSION_MISSING",
      `a ${kind} path containing a comma cannot be expressed as a Deno flag: ${v}`,
    );
  }
}

/**
 * The narrowest launch flags for some needs (pure).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { launchFlags, NO_NEEDS } from "./permissions.ts";
 * assert.deepEqual(launchFlags({ ...NO_NEEDS, run: ["/usr/bin/git"] }), ["--no-prompt", "--allow-run=/usr/bin/git"]);
 * ```
 */
export function launchFlags(needs: Needs): string[] {
  const flags = ["--no-prompt"];
  const add = (flag: string, list: readonly string[]) => {
    if (list.length === 0) return;
    for (const v of list) checkListValue(flag, v);
    flags.push(`--allow-${flag}=${uniqSorted(list).join(",")}`);
  };
  for (const p of needs.run) {
    if (!p.startsWith("/")) {
      throw new PermissionLayerError(
        "PERMISSION_MISSING",
        `--allow-run takes absolute programs only, got ${p}`,
      );
    }
  }
  // No write access to a program --allow-run lists, or to a directory holding one.
  for (const w of needs.write) {
    const program = needs.run.find((r) => within(r, w));
    if (program !== undefined) {
      throw new PermissionLayerError(
        "PERMISSION_TOO_BROAD",
        `write access to ${w} would cover ${program}, which the command runs; ` +
          "set TMPDIR (or the path given) elsewhere",
      );
    }
  }
  add("read", needs.read);
  add("write", needs.write);
  add("run", needs.run);
  // `LC_*` as the names it stands for: a flag with no glob character survives `$(...)`.
  add("env", expandEnvNames(needs.env));
  add("sys", needs.sys);
  return flags;
}

/** A category of Deno's permissions. */
export type Category = "read" | "write" | "run" | "env" | "sys" | "net" | "ffi";

/** Every category, in the order flags are printed and categories reported. */
export const CATEGORIES: readonly Category[] = ["read", "write", "run", "env", "sys", "net", "ffi"];

/**
 * The categories `needs` asks for: each whose list is not empty (never net or ffi, which no
 * command is granted).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { neededCategories, NO_NEEDS } from "./permissions.ts";
 * assert.deepEqual(neededCategories({ ...NO_NEEDS, read: ["/p"], sys: ["uid"] }), ["read", "sys"]);
 * ```
 */
export function neededCategories(needs: Needs): Category[] {
  return CATEGORIES.filter((c) => c !== "net" && c !== "ffi" && needs[c].length > 0);
}

/** The outcome of {@link narrowPermissions}. */
export interface Narrowing {
  /** Categories granted beyond the command's needs at launch. */
  broader: Category[];
  /** Categories revoked. */
  revoked: Category[];
}

/**
 * Revokes every category the command does not need (`needed`, {@link neededCategories} of its
 * needs), and reports the categories the process was launched with wholesale (e.g. `-A`, or
 * `--allow-read` without a list) though the command needs only a list or nothing. With
 * `refuseNetFfi`, net or ffi granted is refused outright (`serve`).
 *
 * @throws {PermissionLayerError} `PERMISSION_TOO_BROAD` with `refuseNetFfi`.
 * @example
 * ```ts ignore
 * // Not run: it revokes this process's permissions; the values are a launch with --allow-read=/p/.agentteams.
 * import { narrowPermissions } from "./permissions.ts";
 * narrowPermissions(["read"]);
 * // launched with `--allow-read=/p/.agentteams`:
 * // { broader: [], revoked: ["write", "run", "env", "sys", "net", "ffi"] }
 * ```
 */
export function narrowPermissions(
  needed: readonly Category[],
  opts: { refuseNetFfi?: boolean } = {},
): Narrowing {
  const broader: Category[] = [];
  const revoked: Category[] = [];
  for (const c of CATEGORIES) {
    const state = Deno.permissions.querySync({ name: c }).state;
    if (state !== "granted") continue;
    if (opts.refuseNetFfi && (c === "net" || c === "ffi")) {
      throw new PermissionLayerError(
        "PERMISSION_TOO_BROAD",
        `started with --allow-${c}; the runner never needs ${c}. Relaunch with the flags from ` +
          "`agentteams permissions serve`",
      );
    }
    broader.push(c);
  }
  for (const c of CATEGORIES) {
    if (c !== "net" && c !== "ffi" && needed.includes(c)) continue;
    const state = Deno.permissions.querySync({ name: c }).state;
    if (state === "denied") continue;
    Deno.permissions.revokeSync({ name: c });
    revoked.push(c);
  }
  return { broader, revoked };
}

/** The variable an operator sets to say a broad launch is on purpose (silencing the warning). */
export const BROAD_OK_ENV = "AGENTTEAMS_BROAD_OK";

/** An operating system a release binary is built for. */
export type ReleaseOs = "linux" | "darwin";

/** Programs of the union that do not exist on an OS (so its binaries are not allowed them). */
const PROGRAMS_NOT_ON: Record<ReleaseOs, readonly string[]> = {
  linux: [SANDBOX_EXEC_PATH, "/opt/homebrew/bin/git"],
  darwin: [BWRAP_PATH],
};

/**
 * V8 flags a release launcher adds for one command, keyed by the command's first word. The audit
 * allocates at the rate of its YAML parses (every agent file's front matter, as each host reads
 * it), and with V8's default young generation its peak RSS was ~230 MiB for 10,000 files against
 * ~100 MiB for reading and parsing them; a 2 MiB semi-space holds it at ~125-140 MiB for the same
 * CPU time (measured, `deno task bench --only=audit`). `run` goes the other way: it allocates
 * ~8 MiB at 1,000 files, which V8's small first young generation collects three times
 * (`--trace-gc`: 3 scavenges, 2-4 ms each on a loaded 2-vCPU machine); starting it at 8 MiB
 * collects none there (peak RSS unchanged, ~55 MiB), and at 20,000 or 100,000 files it still
 * grows as V8's defaults let it. The semi-space sizes are not among the flags V8 keys its code
 * cache by (a run with them rewrote none of the bundle's cached chunks a plain run had written),
 * so a command with its own keeps sharing the cached chunks with every other. Every other command
 * keeps V8's defaults. Each flag is one shell word: the launcher passes it unquoted.
 */
export const COMMAND_V8_FLAGS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  audit: Object.freeze(["--max-semi-space-size=2"]),
  run: Object.freeze(["--min-semi-space-size=8"]),
});

/**
 * The `deno run` option that carries {@link COMMAND_V8_FLAGS} for the command whose first word is
 * `word` (none for the others): what the launcher `scripts/install` writes adds, and what the
 * bench's stand-in for that launcher adds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { launchV8Flags } from "./permissions.ts";
 * assert.deepEqual(launchV8Flags("audit"), ["--v8-flags=--max-semi-space-size=2"]);
 * assert.deepEqual(launchV8Flags("ledger"), []);
 * ```
 */
export function launchV8Flags(word: string): string[] {
  const flags = Object.hasOwn(COMMAND_V8_FLAGS, word) ? COMMAND_V8_FLAGS[word] : [];
  return flags.length === 0 ? [] : [`--v8-flags=${flags.join(",")}`];
}

/**
 * The union of every command's permissions, for the release forms (the compiled binaries, the
 * launcher `scripts/install` writes): read and write unrestricted (a project's paths are known
 * only at run time; at start each command revokes the categories it needs none of, but keeps the
 * whole of one it needs: path-level narrowing comes only from `permissions`' printed line), run
 * limited to the host programs and git where it usually is, the environment variables the
 * commands read, `sys` uid; never net, never ffi. For one target `os` (a compiled binary runs on
 * one), the programs of the other are left out: a Linux binary cannot run `sandbox-exec` or
 * Homebrew's git, a macOS one cannot run `bwrap`. Without `os`, the union (the bundle's launcher).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { releaseFlags } from "./permissions.ts";
 * assert.equal(releaseFlags().includes("--allow-net"), false);
 * assert.equal(releaseFlags("linux").some((f) => f.includes("sandbox-exec")), false);
 * ```
 */
export function releaseFlags(os?: ReleaseOs): string[] {
  const notHere = os === undefined ? [] : PROGRAMS_NOT_ON[os];
  const programs = [
    ...HOST_PROGRAMS,
    "/usr/bin/git",
    "/usr/local/bin/git",
    "/opt/homebrew/bin/git",
  ].filter((p) => !notHere.includes(p));
  // Every key variable (the runner's forbidden ones: the triad's too): `serve` reads them to refuse
  // to start with one set, the triad's commands to sign.
  const env = expandEnvNames([
    ...KEY_ENV,
    ...RUNNER_FORBIDDEN_ENV,
    ...CHILD_ENV,
    ...GIT_CONFIG_ENV,
    ...AUDIT_ENV,
    ...PROGRESS_ENV,
    BROAD_OK_ENV,
  ]);
  return [
    "--no-prompt",
    "--allow-read",
    "--allow-write",
    `--allow-run=${uniqSorted(programs).join(",")}`,
    `--allow-env=${uniqSorted(env).join(",")}`,
    "--allow-sys=uid",
  ];
}
