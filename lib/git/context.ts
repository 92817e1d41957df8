/**
 * Git for the undeclared-write check: one context per run ({@link openGitContext}: one `git
 * rev-parse` and one `git config --list`; `git --version` only to explain a failure), then one
 * `git status` per snapshot. The index
 * is read from its file ({@link parseIndex}); only a split or sparse index costs one more call
 * (`git ls-files`).
 *
 * Every call runs with a sanitized environment (no `GIT_*` from the parent, `GIT_OPTIONAL_LOCKS=0`
 * so status never writes the index, `LC_ALL=C`), pinned to the resolved git dir and worktree, and
 * with config overrides that keep `git status` honest and inert: no fsmonitor hook, no untracked
 * cache, ctime trusted, full stat checks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openGitContext } from "./context.ts";
 * const project = Deno.realPathSync(Deno.makeTempDirSync());
 * new Deno.Command("git", { args: ["init", "-q", project] }).outputSync();
 * const ctx = await openGitContext(project);
 * assert.equal(ctx.watched.hooks, `${project}/.git/hooks`);
 * assert.equal(ctx.counter.calls, 2); // `git rev-parse` and `git config --list` (the config files to watch)
 * Deno.removeSync(project, { recursive: true });
 * ```
 * @module
 */

import { RequestError } from "../errors.ts";
import { readWholeFileWithin } from "../fs/safe_read.ts";
import { childEnv } from "../process/child_env.ts";
import { type IndexEntry, parseIndex } from "./index_file.ts";
import { parseStatusZ, type StatusEntry } from "./status_z.ts";
import { gitVersionProblem } from "./git_version.ts";
import { utf8Bytes } from "./path_bytes.ts";
import { diskFs, resolveProgram } from "../process/resolve_program.ts";
import { within } from "../fs/within.ts";
import { realPathLoose } from "../fs/entry.ts";
import { dirname, normalize } from "../fs/path.ts";

/**
 * Git invocations {@link openGitContext} makes when it succeeds (one `rev-parse`, then one
 * `config --list --show-origin`; a failing `rev-parse` is followed by `git --version`, to say
 * why, and nothing else is asked of that git).
 */
export const GIT_CALLS_PER_CONTEXT = 2;
/** Git invocations per snapshot (`status`); a split or sparse index adds one `ls-files`. */
export const GIT_CALLS_PER_SNAPSHOT = 1;

/** Config overrides on every call: no hook-like helpers, no caches that could miss a change. */
export const GIT_SAFETY_CONFIG: readonly string[] = Object.freeze([
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "core.trustctime=true",
  "-c",
  "core.checkStat=default",
  "-c",
  "core.ignoreStat=false",
]);

/**
 * The largest git index read (bytes): some four million entries. A session may write `.git/`, and
 * a sparse file there costs it no disk and the reader its size in memory (probe 22e).
 */
export const MAX_GIT_INDEX_BYTES = 512 * 1024 * 1024;

/** Bound on any single git call. */
const GIT_TIMEOUT_MS = 120_000;

/** Git's own paths that change how git behaves; watched by stat. */
export interface WatchedGitPaths {
  /** The hooks directory (`core.hooksPath` when set). */
  readonly hooks: string;
  /** The repository config. */
  readonly config: string;
  /** The per-worktree config. */
  readonly configWorktree: string;
  /** The `info` directory (`exclude`, `attributes`, `sparse-checkout`, ...). */
  readonly info: string;
}

/** One path git resolved that changes what git does (see `lib/policy/control_plane.ts`). */
export interface GitControlPath {
  /** The absolute path, resolved through symlinks as far as it exists. */
  readonly abs: string;
  /** What it is to git, for messages (`hooks directory`, `config file`, ...). */
  readonly what: string;
  /**
   * How the undeclared-write check watches it: `tree` (walked), `entry` (the entry itself), or
   * `null` (not watched: the repository as a whole changes in normal use).
   */
  readonly watch: "tree" | "entry" | null;
  /** With `tree`: top-level names not walked (`info/refs` is rewritten by git itself). */
  readonly skipTop?: readonly string[];
}

/** Everything resolved once per run. */
export interface GitContext {
  /** The project root, canonical. */
  readonly root: string;
  /** The git program. */
  readonly git: string;
  /** Environment for git calls. */
  readonly env: Readonly<Record<string, string>>;
  /** The worktree top, canonical. */
  readonly top: string;
  /** The project's path inside the worktree (`""` or ending in `/`). */
  readonly prefix: string;
  /** {@link prefix} as UTF-8 bytes. */
  readonly prefixBytes: Uint8Array;
  /** The absolute git dir (per-worktree for a linked worktree). */
  readonly gitDir: string;
  /** The absolute common dir (the main repository's git dir for a linked worktree). */
  readonly commonDir: string;
  /** Every path that changes what git does: see {@link gitControlPaths}. */
  readonly controlPaths: readonly GitControlPath[];
  /** The index file. */
  readonly indexPath: string;
  /** Object id format. */
  readonly objectFormat: "sha1" | "sha256";
  /** Watched git paths. */
  readonly watched: WatchedGitPaths;
  /** Git invocations made so far with this context. */
  readonly counter: { calls: number };
  /** The overrides that keep every configured filter driver inert ({@link inertFilterArgs}). */
  readonly inertFilters?: readonly string[];
  /**
   * The config files (and includes) as they were when {@link inertFilters} was read: each git
   * call first checks they still are ({@link configStamp}), so a filter a session adds to
   * `.git/config` later (during a run, say) is never run by the tool's own git.
   */
  readonly configFiles?: { readonly paths: readonly string[]; readonly stamp: string };
}

/**
 * What an `lstat` of each path shows (inode, size, mode, mtime and ctime to the nanosecond
 * where the platform has them; `-` for a missing one), joined: equal stamps are the same files.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { configStamp } from "./context.ts";
 * assert.equal(configStamp(["/nonexistent-4c1"]), "-");
 * ```
 */
export function configStamp(paths: readonly string[]): string {
  return paths.map((p) => {
    try {
      const st = Deno.lstatSync(p);
      return [st.ino, st.size, st.mode, st.mtime?.getTime(), st.ctime?.getTime(), st.dev].join(
        ":",
      );
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return "-";
      throw e;
    }
  }).join("|");
}

/** Raw result of one git call. */
export interface GitOutput {
  /** Exit code. */
  readonly code: number;
  /** Raw stdout. */
  readonly stdout: Uint8Array;
  /** stderr as text. */
  readonly stderr: string;
}

/**
 * The environment git runs with.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gitEnv } from "./context.ts";
 * assert.equal(gitEnv({ GIT_DIR: "/elsewhere", PATH: "/usr/bin" }).GIT_DIR, undefined);
 * assert.equal(gitEnv({ GIT_CONFIG_GLOBAL: "/home/op/git.cfg" }).GIT_CONFIG_GLOBAL, "/home/op/git.cfg");
 * ```
 */
export function gitEnv(
  parent: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const chosen: Record<string, string> = {};
  for (const name of ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"]) {
    const v = parent[name];
    if (v !== undefined) chosen[name] = v;
  }
  return childEnv(parent, {
    extraNames: ["XDG_CONFIG_HOME"],
    set: { ...chosen, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
  });
}

/**
 * Runs git once and counts it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runGit } from "./context.ts";
 * const out = await runGit("/usr/bin/git", ["--version"], { cwd: "/", env: {}, counter: { calls: 0 } });
 * assert.equal(out.code, 0);
 * ```
 */
export async function runGit(
  git: string,
  args: readonly string[],
  opts: { cwd: string; env: Readonly<Record<string, string>>; counter: { calls: number } },
): Promise<GitOutput> {
  opts.counter.calls++;
  try {
    const out = await new Deno.Command(git, {
      args: [...args],
      cwd: opts.cwd,
      env: { ...opts.env },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(GIT_TIMEOUT_MS),
    }).output();
    return { code: out.code, stdout: out.stdout, stderr: new TextDecoder().decode(out.stderr) };
  } catch (e) {
    throw new RequestError("GIT_UNAVAILABLE", `cannot run ${git}: ${String(e)}`, { cause: e });
  }
}

/** The fields of the one `rev-parse` call, in argument order. */
const REV_PARSE_ARGS: readonly string[] = [
  "rev-parse",
  "--path-format=absolute",
  "--show-toplevel",
  "--absolute-git-dir",
  "--git-common-dir",
  "--git-path",
  "index",
  "--git-path",
  "hooks",
  "--git-path",
  "config",
  "--git-path",
  "config.worktree",
  "--git-path",
  "info",
  "--show-object-format",
  "--show-prefix",
];

/** What {@link parseRevParse} reads. */
export interface RevParse {
  /** Worktree top. */
  readonly top: string;
  /** Absolute git dir. */
  readonly gitDir: string;
  /** Absolute common dir (the main repository's git dir for a linked worktree). */
  readonly commonDir: string;
  /** Index file. */
  readonly index: string;
  /** Watched git paths. */
  readonly watched: WatchedGitPaths;
  /** Object format. */
  readonly objectFormat: "sha1" | "sha256";
  /** Project prefix (`""` or ending in `/`). */
  readonly prefix: string;
}

/**
 * Reads the output of the context's `rev-parse` call; `null` when any line is missing, not
 * absolute where it must be, or unexpected (a git too old for `--path-format` echoes the flag).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRevParse } from "./context.ts";
 * assert.equal(parseRevParse("/p\n/p/.git\n/p/.git\n/p/.git/index\n/p/.git/hooks\n/p/.git/config\n/p/.git/config.worktree\n/p/.git/info\nsha1\n\n")
 *   ?.watched.info, "/p/.git/info");
 * ```
 */
export function parseRevParse(text: string): RevParse | null {
  const lines = text.split("\n");
  if (lines.length !== 11 || lines[10] !== "") return null;
  const [top, gitDir, commonDir, index, hooks, config, configWorktree, info, format, prefix] =
    lines;
  const abs = [top, gitDir, commonDir, index, hooks, config, configWorktree, info];
  if (!abs.every((p) => p.startsWith("/") && !p.includes("\0"))) return null;
  if (format !== "sha1" && format !== "sha256") return null;
  if (
    prefix !== "" && (!prefix.endsWith("/") || prefix.startsWith("/") || prefix.startsWith("-"))
  ) {
    return null;
  }
  return {
    top,
    gitDir,
    commonDir,
    index,
    watched: { hooks, config, configWorktree, info },
    objectFormat: format,
    prefix,
  };
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** {@link parseRevParse} of raw output; `null` also when a path is not UTF-8. */
function parseRevParseBytes(stdout: Uint8Array): RevParse | null {
  let text: string;
  try {
    text = strictUtf8.decode(stdout);
  } catch {
    return null;
  }
  return parseRevParse(text);
}

/** What {@link parseConfigOrigins} finds in `git config --list --show-origin -z`. */
export interface ConfigOrigins {
  /** Every config file git read (absolute; relative origins resolved against `cwd`). */
  readonly files: readonly string[];
  /**
   * Every file a config includes (`include.path`, `includeIf.*.path`), resolved as git resolves
   * it, whether or not it exists now or its condition holds: writing one adds config.
   */
  readonly includes: readonly string[];
  /**
   * `core.hooksPath` (as configured: git's own `--git-path hooks` answers with its real path),
   * `core.excludesFile` and `core.attributesFile` values, and every program a command-valued key
   * names by a path (filters, diff and merge drivers, the pager, editors, credential helpers,
   * aliases after `!`, ...), resolved against the worktree top.
   */
  readonly others: readonly {
    readonly abs: string;
    readonly what: string;
    readonly watch: "tree" | "entry";
  }[];
  /**
   * Every filter driver the config defines (`filter.<driver>.*`, the driver's name as written:
   * subsections are case-sensitive). The tool's own git calls make each inert
   * ({@link inertFilterArgs}): a session can write `.git/config` with its own tools, and a clean
   * filter runs during `git status` as whoever runs it.
   */
  readonly filters: readonly string[];
}

/**
 * The `-c` overrides that make each filter driver inert on one of the tool's own git calls: no
 * `clean`, `smudge` or `process` command, not `required` (git then reads the file's bytes as they
 * are; a spurious "modified" is fail-closed). Pure.
 *
 * @throws {RequestError} `GIT_UNAVAILABLE` for a driver name a `-c` cannot name (holding `=`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inertFilterArgs } from "./context.ts";
 * assert.deepEqual(inertFilterArgs(["x"]).slice(0, 2), ["-c", "filter.x.clean="]);
 * ```
 */
export function inertFilterArgs(filters: readonly string[]): string[] {
  const out: string[] = [];
  for (const d of filters) {
    if (d.includes("=") || /[\0\n]/.test(d)) {
      throw new RequestError(
        "GIT_UNAVAILABLE",
        `git's config defines the filter driver ${JSON.stringify(d)}, whose name a -c override ` +
          "cannot name, so the tool's own git could run it: rename or remove it",
      );
    }
    for (const v of ["clean=", "smudge=", "process=", "required=false"]) {
      out.push("-c", `filter.${d}.${v}`);
    }
  }
  return out;
}

/**
 * Config keys whose value is a command git (or a tool git starts) runs: its first word, when it
 * is a path, names a program that is control plane. Matched on the lower-cased key; `*` is one
 * subsection or more.
 */
const PROGRAM_KEYS: readonly RegExp[] = [
  /^filter\..+\.(clean|smudge|process)$/,
  /^diff\..+\.(textconv|command)$/,
  /^diff\.external$/,
  /^merge\..+\.driver$/,
  /^core\.(fsmonitor|pager|editor|sshcommand|askpass)$/,
  /^sequence\.editor$/,
  /^gpg(\..+)?\.program$/,
  /^credential(\..+)?\.helper$/,
  /^pager\..+$/,
  /^alias\..+$/,
  /^uploadpack\.packobjectshook$/,
  /^difftool\..+\.(cmd|path)$/,
  /^mergetool\..+\.(cmd|path)$/,
];

/**
 * The program a command-valued config names when it is a path (`./tools/clean.sh`,
 * `/opt/x --y`, `"sub dir/x"`), else `null` (a bare name is looked up on PATH; `true`/`false`
 * for `core.fsmonitor` name none). An alias runs a command only after `!`.
 */
function programOf(key: string, value: string): string | null {
  let v = value.trim();
  if (key.startsWith("alias.")) {
    if (!v.startsWith("!")) return null;
    v = v.slice(1).trim();
  }
  const quoted = /^(["'])(.*?)\1/.exec(v);
  const first = quoted !== null ? quoted[2] : v.split(/\s/)[0];
  return first.includes("/") ? first : null;
}

/** Thrown for a config path this tool cannot resolve as git would (`~user/...`). */
class UnresolvablePath extends Error {}

function expandHome(value: string, home: string | undefined): string | null {
  if (value === "~" || value.startsWith("~/")) {
    return home !== undefined && home.startsWith("/") ? home + value.slice(1) : null;
  }
  // Git expands `~user/` too; this tool does not read the user database, so it cannot know where
  // such a path lies, and refuses rather than leave it out of the control plane.
  if (value.startsWith("~")) throw new UnresolvablePath(value);
  return value;
}

/**
 * Reads `git config --list --show-origin -z` output (`<origin>\0<key>\n<value>\0` records):
 * the config files behind it and the files they include. `null` when the output is malformed.
 * Relative `file:` origins are relative to `cwd` (git prints them relative to the worktree's
 * top, where it works from); an include's relative path is relative to the directory of the file
 * that names it; `~/` is `home` (git's rules). A `~user/` path throws: this tool cannot place it.
 *
 * @example
 * ```ts
 * import { parseConfigOrigins } from "./context.ts";
 * import assert from "node:assert/strict";
 * const out = new TextEncoder().encode("file:.git/config\0include.path\n../tools/extra.cfg\0");
 * assert.deepEqual(parseConfigOrigins(out, { cwd: "/p", top: "/p", home: "/h" })?.includes, ["/p/tools/extra.cfg"]);
 * ```
 */
export function parseConfigOrigins(
  out: Uint8Array,
  at: { readonly cwd: string; readonly top: string; readonly home: string | undefined },
): ConfigOrigins | null {
  let text: string;
  try {
    text = strictUtf8.decode(out);
  } catch {
    return null;
  }
  if (text === "") return { files: [], includes: [], others: [], filters: [] };
  if (!text.endsWith("\0")) return null;
  const fields = text.slice(0, -1).split("\0");
  if (fields.length % 2 !== 0) return null;
  const files = new Set<string>();
  const includes = new Set<string>();
  const others: { abs: string; what: string; watch: "tree" | "entry" }[] = [];
  const filters = new Set<string>();
  for (let i = 0; i < fields.length; i += 2) {
    const origin = fields[i];
    const record = fields[i + 1];
    const nl = record.indexOf("\n");
    const rawKey = nl < 0 ? record : record.slice(0, nl);
    const key = rawKey.toLowerCase();
    if (key.startsWith("filter.") && key.lastIndexOf(".") > 6) {
      filters.add(rawKey.slice(7, rawKey.lastIndexOf(".")));
    }
    const value = nl < 0 ? null : record.slice(nl + 1);
    const file = origin.startsWith("file:") ? origin.slice(5) : null;
    const fileAbs = file === null
      ? null
      : normalize(file.startsWith("/") ? file : `${at.cwd}/${file}`);
    if (fileAbs !== null) files.add(fileAbs);
    if (value === null || value === "") continue;
    const isInclude = key === "include.path" ||
      (key.startsWith("includeif.") && key.endsWith(".path"));
    if (isInclude) {
      const v = expandHome(value, at.home);
      if (v === null) continue; // git refuses such an include itself
      if (v.startsWith("/")) includes.add(normalize(v));
      else if (fileAbs !== null) includes.add(normalize(`${dirname(fileAbs)}/${v}`));
    } else if (PROGRAM_KEYS.some((re) => re.test(key)) && programOf(key, value) !== null) {
      const v = expandHome(programOf(key, value) as string, at.home);
      if (v === null) continue;
      // Git runs these from the worktree's top.
      others.push({
        abs: normalize(v.startsWith("/") ? v : `${at.top}/${v}`),
        what: `program named by ${key}`,
        watch: "entry",
      });
    } else if (
      key === "core.excludesfile" || key === "core.attributesfile" || key === "core.hookspath"
    ) {
      const v = expandHome(value, at.home);
      if (v === null) continue;
      others.push({
        abs: normalize(v.startsWith("/") ? v : `${at.top}/${v}`),
        what: key === "core.hookspath"
          ? "hooks directory (core.hooksPath)"
          : key === "core.excludesfile"
          ? "excludes file (core.excludesFile)"
          : "attributes file (core.attributesFile)",
        watch: key === "core.hookspath" ? "tree" : "entry",
      });
    }
  }
  return { files: [...files], includes: [...includes], others, filters: [...filters] };
}

/**
 * `abs` resolved through symlinks as far as it exists; as git names it when the launch flags do
 * not let this process resolve it (a path outside the project and outside what the permission
 * needs grant: only a link the operator made could lead from there into the project).
 */
function realOrAsNamed(abs: string): string {
  try {
    return realPathLoose(abs);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      return normalize(abs);
    }
    throw e;
  }
}

/**
 * Every path that changes what git does, from the context's resolution: the repository (git
 * dir and common dir; not watched as a whole), the hooks directory (`core.hooksPath` when set),
 * the config, per-worktree config and `info/`, every config file git reads and every file one
 * includes, and the excludes and attributes files. Each is resolved through symlinks as far as
 * it exists (a `core.hooksPath` through a link into the project is the project path it reaches).
 * Pure but for that resolution.
 *
 * @example
 * ```ts
 * import { gitControlPaths } from "./context.ts";
 * import assert from "node:assert/strict";
 * const paths = gitControlPaths({
 *   top: "/nonexistent-p", gitDir: "/nonexistent-p/.git", commonDir: "/nonexistent-p/.git",
 *   watched: { hooks: "/nonexistent-p/tools/hooks", config: "/nonexistent-p/.git/config",
 *     configWorktree: "/nonexistent-p/.git/config.worktree", info: "/nonexistent-p/.git/info" },
 * }, { files: [], includes: [], others: [] });
 * assert.deepEqual(paths.find((p) => p.watch === "tree")?.abs, "/nonexistent-p/tools/hooks");
 * ```
 */
export function gitControlPaths(
  resolved: Pick<RevParse, "top" | "gitDir" | "commonDir" | "watched">,
  origins: Omit<ConfigOrigins, "filters">,
  real: (abs: string) => string = realOrAsNamed,
): GitControlPath[] {
  const out = new Map<string, GitControlPath>();
  const put = (p: string, what: string, watch: GitControlPath["watch"], skipTop?: string[]) => {
    const had = out.get(p);
    // The stronger watch wins when two names reach one path.
    if (had !== undefined && (had.watch !== null || watch === null)) return;
    out.set(p, { abs: p, what, watch, ...(skipTop ? { skipTop } : {}) });
  };
  // Both the name git is configured with (a symlink there can be replaced: git follows the name)
  // and what it resolves to now (a write through another name reaches it).
  const add = (abs: string, what: string, watch: GitControlPath["watch"], skipTop?: string[]) => {
    put(normalize(abs), what, watch, skipTop);
    put(real(abs), what, watch, skipTop);
  };
  const w = resolved.watched;
  // The worktree's own `.git` entry, itself (never resolved: replacing a `.git` file or link
  // points git elsewhere).
  const topGit = `${resolved.top === "/" ? "" : resolved.top}/.git`;
  out.set(topGit, { abs: topGit, what: "worktree's .git entry", watch: "entry" });
  add(w.hooks, "hooks directory", "tree");
  add(w.config, "config file", "entry");
  add(w.configWorktree, "per-worktree config file", "entry");
  add(w.info, "info directory", "tree", ["refs"]);
  for (const f of origins.files) add(f, "config file", "entry");
  for (const f of origins.includes) add(f, "included config file", "entry");
  for (const o of origins.others) add(o.abs, o.what, o.watch);
  add(resolved.gitDir, "git directory", null);
  add(resolved.commonDir, "common git directory", null);
  return [...out.values()];
}

/** Options of {@link openGitContext}. */
export interface GitContextOptions {
  /** The git program; default: `git` resolved on the sanitized PATH. */
  readonly git?: string;
  /** The parent environment; default `Deno.env.toObject()`. */
  readonly parentEnv?: Readonly<Record<string, string | undefined>>;
}

function notWorktree(stderr: string): boolean {
  return /not a git repository|must be run in a work tree|this operation must be run/i.test(stderr);
}

/**
 * Resolves everything the write check needs from git, once per run. Refuses with
 * `GIT_UNAVAILABLE` (no git, git older than 2.31, a failing or unreadable resolution) or
 * `NO_WORKTREE` (the project is not inside a git worktree).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openGitContext } from "./context.ts";
 * const ctx = await openGitContext(Deno.cwd()); // this checkout's root
 * assert.equal(ctx.top, Deno.realPathSync(Deno.cwd()));
 * assert.equal(ctx.prefix, "");
 * ```
 */
export async function openGitContext(
  root: string,
  options: GitContextOptions = {},
): Promise<GitContext> {
  const parentEnv = options.parentEnv ?? Deno.env.toObject();
  const count = parentEnv.GIT_CONFIG_COUNT;
  if (count !== undefined && count !== "" && count !== "0") {
    throw new RequestError(
      "GIT_UNAVAILABLE",
      "GIT_CONFIG_COUNT is set: config given in the environment names no file this tool can " +
        "hold to the control plane; unset it (and GIT_CONFIG_KEY_n/VALUE_n) for this command",
    );
  }
  const env = gitEnv(parentEnv);
  let canonical: string;
  try {
    canonical = Deno.realPathSync(root);
  } catch (e) {
    throw new RequestError("NO_WORKTREE", `the project root ${root} cannot be resolved`, {
      cause: e,
    });
  }
  let git = options.git;
  if (git === undefined) {
    try {
      git = resolveProgram("git", { path: env.PATH, projectRoot: canonical, fs: diskFs }).path;
    } catch (e) {
      throw new RequestError("GIT_UNAVAILABLE", `git: ${(e as Error).message}`, { cause: e });
    }
  }
  const counter = { calls: 0 };
  // Two calls on the happy path, run at once: neither's arguments depend on the other's answer
  // (the config is listed from the project, where git finds the same repository rev-parse
  // does), and listing config runs nothing. A git older than 2.31 cannot answer this rev-parse
  // in the shape parseRevParse accepts (it echoes `--path-format=absolute` as a line, or prints
  // relative paths), so the version is asked only to explain a failure, and decides first then;
  // the config listed meanwhile is then never read. The config is listed without the safety
  // overrides, which are the tool's own, not config the repository reads.
  const listing = runGit(git, ["config", "--list", "--show-origin", "-z"], {
    cwd: canonical,
    env,
    counter,
  });
  listing.catch(() => {}); // awaited below, or left unread when rev-parse refuses first
  const rp = await runGit(git, [...GIT_SAFETY_CONFIG, ...REV_PARSE_ARGS], {
    cwd: canonical,
    env,
    counter,
  });
  const parsed = rp.code === 0 ? parseRevParseBytes(rp.stdout) : null;
  if (parsed === null) {
    await listing.catch(() => {}); // no child outlives the refusal
    const version = await runGit(git, ["--version"], { cwd: canonical, env, counter });
    const versionText = new TextDecoder().decode(version.stdout);
    const problem = version.code === 0 ? gitVersionProblem(versionText) : "git --version failed";
    if (problem !== null) throw new RequestError("GIT_UNAVAILABLE", problem);
    if (rp.code !== 0) {
      if (notWorktree(rp.stderr)) {
        throw new RequestError(
          "NO_WORKTREE",
          `${canonical} is not inside a git worktree: run needs one to see what a command ` +
            "wrote (git init there, and commit what should be the starting point)",
        );
      }
      throw new RequestError("GIT_UNAVAILABLE", `git rev-parse failed: ${rp.stderr.trim()}`);
    }
    throw new RequestError(
      "GIT_UNAVAILABLE",
      "cannot read git's paths from rev-parse (a path that is not UTF-8, or an unexpected answer)",
    );
  }
  // The top is the canonical project minus git's prefix when git printed exactly that (every
  // ancestor of a real path is real), so the top itself, outside the project when the project is
  // a subdirectory, need not be readable; otherwise it is resolved.
  const derived = parsed.prefix === ""
    ? canonical
    : canonical.endsWith(`/${parsed.prefix.slice(0, -1)}`)
    ? canonical.slice(0, -parsed.prefix.length) || "/"
    : null;
  let top: string;
  if (derived !== null && derived === parsed.top) top = derived;
  else {
    try {
      top = Deno.realPathSync(parsed.top);
    } catch (e) {
      throw new RequestError("GIT_UNAVAILABLE", `cannot resolve the worktree top ${parsed.top}`, {
        cause: e,
      });
    }
  }
  const expected = parsed.prefix === "" ? top : `${top}/${parsed.prefix.slice(0, -1)}`;
  if (expected !== canonical || !within(canonical, top)) {
    throw new RequestError(
      "GIT_UNAVAILABLE",
      `git places the project at ${expected}, not ${canonical}`,
    );
  }
  // Read only from a git that answered rev-parse as 2.31+ does.
  const listed = await listing;
  let origins: ConfigOrigins | null = null;
  try {
    // Git works from the worktree's top: its relative origins are relative to it.
    origins = listed.code === 0
      ? parseConfigOrigins(listed.stdout, { cwd: top, top, home: env.HOME })
      : null;
  } catch (e) {
    if (!(e instanceof UnresolvablePath)) throw e;
    throw new RequestError(
      "GIT_UNAVAILABLE",
      `git's config names the path ${JSON.stringify(e.message)} (another user's home), which ` +
        "this tool cannot place, so it cannot tell whether it lies in the project; write it " +
        "as an absolute path or with ~/",
    );
  }
  const configPaths = origins === null ? [] : [
    ...new Set([
      parsed.watched.config,
      `${parsed.commonDir}/config`,
      parsed.watched.configWorktree,
      ...origins.files,
      ...origins.includes,
    ]),
  ];
  const configFiles = { paths: configPaths, stamp: configStamp(configPaths) };
  if (origins === null) {
    throw new RequestError(
      "GIT_UNAVAILABLE",
      `cannot list git's config files (git config --list --show-origin: ${
        listed.stderr.trim() || "unreadable output"
      })`,
    );
  }
  return {
    root: canonical,
    git,
    env,
    top,
    prefix: parsed.prefix,
    prefixBytes: utf8Bytes(parsed.prefix),
    gitDir: parsed.gitDir,
    commonDir: parsed.commonDir,
    controlPaths: gitControlPaths({ ...parsed, top }, origins),
    indexPath: parsed.index,
    objectFormat: parsed.objectFormat,
    watched: parsed.watched,
    counter,
    inertFilters: inertFilterArgs(origins.filters),
    configFiles,
  };
}

/**
 * Runs git pinned to the context's git dir and worktree, with the safety config and every filter
 * driver inert. When git's config files changed since the context read them (a session added a
 * driver while the run's command ran), the drivers are listed again first and those made inert
 * too; a config that cannot be listed then refuses (`SNAPSHOT_FAILED`).
 */
async function runPinned(ctx: GitContext, args: readonly string[]): Promise<GitOutput> {
  const cf = ctx.configFiles;
  let inert = ctx.inertFilters ?? [];
  if (cf !== undefined && configStamp(cf.paths) !== cf.stamp) {
    const listed = await runGit(ctx.git, ["config", "--list", "--show-origin", "-z"], {
      cwd: ctx.root,
      env: ctx.env,
      counter: ctx.counter,
    });
    let now: ConfigOrigins | null = null;
    try {
      now = listed.code === 0
        ? parseConfigOrigins(listed.stdout, { cwd: ctx.top, top: ctx.top, home: ctx.env.HOME })
        : null;
    } catch {
      now = null;
    }
    if (now === null) {
      throw new RequestError(
        "SNAPSHOT_FAILED",
        "git's config files changed while this act ran and cannot be listed again (a filter " +
          "added there would run as you, outside the sandbox): refused; look at " +
          `${cf.paths.join(", ")}`,
      );
    }
    inert = [...inert, ...inertFilterArgs(now.filters)];
  }
  return await runGit(ctx.git, [
    `--git-dir=${ctx.gitDir}`,
    `--work-tree=${ctx.top}`,
    ...GIT_SAFETY_CONFIG,
    ...inert,
    ...args,
  ], { cwd: ctx.root, env: ctx.env, counter: ctx.counter });
}

/**
 * `git status` of the project (tracked changes and every untracked, not ignored, file); paths are
 * relative to the worktree top. Throws `SNAPSHOT_FAILED` when git fails.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gitStatus, openGitContext } from "./context.ts";
 * const dir = Deno.makeTempDirSync();
 * new Deno.Command("git", { args: ["init", "-q", dir] }).outputSync();
 * Deno.writeTextFileSync(`${dir}/a.txt`, "x");
 * const entries = await gitStatus(await openGitContext(dir));
 * assert.deepEqual(entries.map((e) => [e.xy, new TextDecoder().decode(e.path)]), [["??", "a.txt"]]);
 * ```
 */
export async function gitStatus(ctx: GitContext): Promise<StatusEntry[]> {
  const out = await runPinned(ctx, [
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    // Never into a submodule: git would read the submodule's own config and attributes there,
    // which the agent can write (a repository it made at a submodule's path, with a clean
    // filter), and run what they name as the operator, outside the sandbox. A submodule's `.git`
    // is watched instead (`submoduleGitRoots`); changes inside a submodule are a stated blind spot.
    "--ignore-submodules=all",
    "--",
    ".",
  ]);
  if (out.code !== 0) {
    throw new RequestError("SNAPSHOT_FAILED", `git status failed: ${out.stderr.trim()}`);
  }
  try {
    return parseStatusZ(out.stdout);
  } catch (e) {
    throw new RequestError("SNAPSHOT_FAILED", (e as Error).message, { cause: e });
  }
}

/** The index as read for one snapshot: raw bytes (for equality) and its entries. */
export interface IndexRead {
  /** The bytes the entries came from (index file, or ls-files output). */
  readonly raw: Uint8Array;
  /** Entries sorted by path bytes, then stage (built on first use, then kept). */
  readonly entries: readonly IndexEntry[];
  /** The entries git status skips (assume-unchanged, skip-worktree), found without building all. */
  readonly flagged: readonly IndexEntry[];
  /** The submodule entries (gitlinks, mode 160000), likewise. */
  readonly gitlinks: readonly IndexEntry[];
  /** True when `git ls-files` had to be asked (split or sparse index). */
  readonly viaGit: boolean;
}

const GITLINK = 0o160000;

function isGitlink(mode: number): boolean {
  return (mode & 0o170000) === GITLINK;
}

function lazyIndex(
  raw: Uint8Array,
  kept: readonly IndexEntry[],
  build: () => readonly IndexEntry[],
  viaGit: boolean,
): IndexRead {
  let all: readonly IndexEntry[] | null = null;
  return {
    raw,
    flagged: kept.filter((e) => e.assumeValid || e.skipWorktree),
    gitlinks: kept.filter((e) => isGitlink(e.mode)),
    viaGit,
    get entries() {
      return all ??= build();
    },
  };
}

/**
 * Parses `git ls-files -z -s -t -v --full-name` output (`<tag> <mode> <oid> <stage>\t<path>`).
 * A lower-case tag marks assume-unchanged, `S` skip-worktree.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseLsFiles } from "./context.ts";
 * const out = new TextEncoder().encode("H 100644 " + "ab".repeat(20) + " 0\ta.txt\0");
 * assert.equal(parseLsFiles(out)?.[0].mode, 0o100644);
 * ```
 */
export function parseLsFiles(out: Uint8Array): IndexEntry[] | null {
  const entries: IndexEntry[] = [];
  const dec = new TextDecoder();
  let start = 0;
  for (let i = 0; i < out.length; i++) {
    if (out[i] !== 0) continue;
    const rec = out.subarray(start, i);
    start = i + 1;
    const tab = rec.indexOf(0x09);
    if (tab < 0) return null;
    const m = /^(\S) ([0-7]{6}) ([0-9a-f]{40}|[0-9a-f]{64}) ([0-3])$/.exec(
      dec.decode(rec.subarray(0, tab)),
    );
    if (m === null) return null;
    const oid = Uint8Array.fromHex(m[3]);
    entries.push({
      path: rec.subarray(tab + 1),
      mode: parseInt(m[2], 8),
      oid,
      stage: Number(m[4]),
      assumeValid: m[1] !== m[1].toUpperCase(),
      skipWorktree: m[1].toUpperCase() === "S",
    });
  }
  return start === out.length ? entries : null;
}

/**
 * Reads the index entries: from the index file when its format is understood, else through
 * `git ls-files` (one more call). A missing index file means no entries.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openGitContext, readIndex } from "./context.ts";
 * const idx = await readIndex(await openGitContext(Deno.cwd()));
 * assert.ok(idx.entries.length > 0); // this checkout's tracked files
 * ```
 */
export async function readIndex(ctx: GitContext): Promise<IndexRead> {
  let raw: Uint8Array;
  try {
    // With a deadline and a cap: a session can put a FIFO at `.git/index`, which a plain open
    // waits on forever, holding the runner and its beat (probe 22e E1), or a sparse file.
    raw = await readWholeFileWithin(ctx.indexPath, "the git index", MAX_GIT_INDEX_BYTES);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return lazyIndex(new Uint8Array(0), [], () => [], false);
    const why = e instanceof Error ? e.message : String(e);
    throw new RequestError("SNAPSHOT_FAILED", `cannot read the git index: ${why}`);
  }
  const oidLength = ctx.objectFormat === "sha1" ? 20 : 32;
  // Every entry is checked now; only the flagged ones and the gitlinks are built. The full list is
  // built only if a comparison needs it (a path that changed state, or an index that changed).
  const parsed = parseIndex(
    raw,
    oidLength,
    (assumeValid, skip, mode) => assumeValid || skip || isGitlink(mode),
  );
  if (parsed.ok) {
    return lazyIndex(raw, parsed.entries, () => {
      const full = parseIndex(raw, oidLength);
      if (!full.ok) throw new RequestError("SNAPSHOT_FAILED", `the git index: ${full.reason}`);
      return full.entries;
    }, false);
  }
  const out = await runPinned(ctx, ["ls-files", "-z", "-s", "-t", "-v", "--full-name"]);
  const entries = out.code === 0 ? parseLsFiles(out.stdout) : null;
  if (entries === null) {
    throw new RequestError("SNAPSHOT_FAILED", `cannot read the git index (${parsed.reason})`);
  }
  return lazyIndex(
    out.stdout,
    entries.filter((e) => e.assumeValid || e.skipWorktree || isGitlink(e.mode)),
    () => entries,
    true,
  );
}
