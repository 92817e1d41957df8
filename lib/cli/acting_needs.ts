/**
 * What the acting commands (`apply`, `run`) need from Deno. Loaded only when one of them starts
 * (or `permissions` asks for one), so every other command's start-up skips the brief, program
 * resolution and sandbox modules these needs depend on.
 *
 * @module
 */
import { within } from "../fs/within.ts";
import { BWRAP_PATH, PERL_PATH, SETSID_PATH } from "../host/programs.ts";
import { dirname, join, resolve } from "../fs/path.ts";
import { sanitizePath } from "../process/child_env.ts";
import { diskFs, type ResolvedProgram, resolveProgram } from "../process/resolve_program.ts";
import { readShebang } from "../sandbox/gate_exec.ts";
import { loaderCandidates } from "../sandbox/landlock.ts";
import { entryKind, realPathLoose } from "../fs/entry.ts";
import { mergeNeeds, type Needs, NO_NEEDS } from "../permissions.ts";
import { loadGrantedRoots, placedGrants } from "../runner/granted.ts";
import { homeFrom } from "../env.ts";
import { teamDirOf } from "./needs.ts";
import { keyDir, RUNNER_SEAL_KEY_FILE } from "../crypto/keys.ts";
import {
  briefReads,
  confinedDirs,
  directGrantDirs,
  hostSettingsNeeds,
  keyNeeds,
  stateNeeds,
  tmpDirOf,
} from "./needs.ts";
import { artifactOf, fullPolicy } from "./policy_ctx.ts";
import { gitContextOf } from "./git_ctx.ts";
import type { Ctx } from "./command_spec.ts";

/** Absolute PATH entries (where programs are looked up). */
function pathDirs(ctx: Ctx): string[] {
  return sanitizePath(ctx.env.PATH).split(":").filter((d) => d !== "");
}

/** A program as `run` and the git context resolve it (sanitized PATH, outside the project). */
function lookUp(ctx: Ctx, name: string): ResolvedProgram {
  return resolveProgram(name, { path: ctx.env.PATH, projectRoot: ctx.project, fs: diskFs });
}

/** {@link lookUp}'s path, or nothing when the program cannot be found. */
function onPath(ctx: Ctx, name: string): string[] {
  try {
    return [lookUp(ctx, name).path];
  } catch (e) {
    return unlessNotCapable(e);
  }
}

/**
 * Nothing, for an input that is missing or bad (the command then refuses with its own error);
 * but an input the launch flags do not let us read is refused here (`NOT_CAPABLE`, naming it and
 * the flag), or `permissions` would print a line without what that input names.
 */
function unlessNotCapable(e: unknown): never[] {
  if (e instanceof Deno.errors.NotCapable) throw e;
  // The brief's reader wraps what it could not read (`BRIEF_UNREADABLE`, the refusal its cause).
  if (e instanceof Error && e.cause instanceof Deno.errors.NotCapable) throw e.cause;
  return [];
}

/**
 * The request's `argv[0]` as `run` resolves it: read either way, and, with `--unconfined`, run (it
 * then spawns it itself). Only a program some command entry of the brief names as its `prefix[0]`
 * is looked up: any other is refused by the brief before it is ever read, so it must not widen the
 * line. A missing or bad artifact or brief contributes nothing; the command then refuses with its
 * own error (one the launch flags do not let us read is refused, see {@link unlessNotCapable}).
 * The artifact is read once, through the command's own safe read ({@link artifactOf}): never
 * through a symlink, never a FIFO, at most 2 MiB.
 */
async function requestProgram(ctx: Ctx): Promise<{ read: string[]; run: string[] }> {
  if (typeof ctx.parsed.positionals.FILE !== "string") return { read: [], run: [] };
  try {
    const a = await artifactOf(ctx);
    if (a.kind !== "command-request") return { read: [], run: [] };
    const policy = await fullPolicy(ctx);
    const named = Object.values(policy.agents).some((agent) =>
      agent.commands.some((c) => c.prefix[0] === a.argv[0])
    );
    if (!named) return { read: [], run: [] };
    // Looked up confined too (bwrap then spawns it): a PATH directory the flags do not grant is
    // refused here, before anything is recorded, not after the attempt is counted. The program
    // itself is read either way (its lookup, and the sandbox's exec check, resolve it), which
    // matters for an absolute argv[0] outside the PATH directories.
    const program = onPath(ctx, a.argv[0]);
    return { read: program, run: ctx.parsed.flags.unconfined === true ? program : [] };
  } catch (e) {
    return { read: unlessNotCapable(e), run: [] };
  }
}

/**
 * With `--unconfined`, every gate's program, which `apply` (and `run`, for a request's stdin
 * gates) then spawns itself. A missing or bad brief contributes nothing; the command then refuses
 * with its own error.
 */
async function unconfinedGates(ctx: Ctx): Promise<string[]> {
  if (ctx.parsed.flags.unconfined !== true) return [];
  try {
    const policy = await fullPolicy(ctx);
    return Object.values(policy.gates).flatMap((g) => onPath(ctx, g.argv[0]));
  } catch (e) {
    return unlessNotCapable(e);
  }
}

/**
 * What the sandbox resolves for the exec lists, which must therefore be readable: the confined
 * programs' exec entries (brief or operator file; `~/` expanded), and each gate's program as its
 * brief names it (the gate runner looks it up) with the gate's `exec` list or, without one, the
 * program's real path and `#!` interpreter. Each is resolved here as the sandbox resolves it, so
 * one the launch flags do not let it resolve is refused now, before anything is recorded. A
 * missing or bad brief contributes nothing.
 */
async function confinedExecPaths(ctx: Ctx): Promise<string[]> {
  try {
    const home = ctx.env.HOME ?? "/";
    const policy = await fullPolicy(ctx);
    const entries = [
      ...Object.values(policy.confinedPrograms?.agents ?? {}).flatMap((a) => a.exec),
      ...Object.values(policy.gates).flatMap((g) =>
        gateExec(ctx, g.argv[0], g.exec !== null && g.exec.length > 0 ? g.exec : null)
      ),
    ].map((e) => e.startsWith("~/") ? join(home, e.slice(2)) : e);
    for (const e of entries) resolvable(e);
    return entries;
  } catch (e) {
    return unlessNotCapable(e);
  }
}

/** Resolves `path` as the sandbox will (`realPathLoose`); only `NotCapable` matters here. */
function resolvable(path: string): void {
  try {
    realPathLoose(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
  }
}

/**
 * One gate's program as its brief names it (the gate runner looks it up there), its real path and
 * `#!` interpreter (the runner reads them, and they are what the gate may execute by default,
 * `gateExecPaths`; they lie outside the PATH directories when the program is a symlink or its
 * interpreter lives elsewhere), and its `exec` list when it declares one.
 */
function gateExec(ctx: Ctx, name: string, exec: readonly string[] | null): string[] {
  try {
    const program = lookUp(ctx, name);
    // The runner reads the program's `#!` line through its real path, exec list or not.
    const interpreter = readShebang(program.real);
    const own = [program.path, program.real, ...(interpreter === null ? [] : [interpreter])];
    return exec === null ? own : [...own, ...exec];
  } catch (e) {
    return [...unlessNotCapable(e), ...(exec ?? [])];
  }
}

/**
 * The git paths `apply` and `run` read that may lie outside the project: the index and every
 * path of the control plane git resolves (its hooks, config files and includes, `info`, the git
 * dirs; a linked worktree keeps them in the main repository's git dir, a project below its
 * worktree's top finds them above it, and `core.hooksPath` or an include can name any path), each
 * read to resolve it and, for `run`, watched. Found by the git context's `rev-parse` and
 * `config --list`, which the act then reuses. No git worktree, or no usable git, contributes
 * nothing: the act refuses with its own error.
 */
async function gitPaths(ctx: Ctx): Promise<string[]> {
  try {
    const g = await gitContextOf(ctx);
    const gitDirs = [g.gitDir, g.commonDir];
    // The repository dirs themselves are not read (only resolved where the flags allow): their
    // behaviour-changing parts are listed on their own.
    const read = g.controlPaths.filter((c) => c.watch !== null).map((c) => c.abs);
    return [g.indexPath, ...read]
      .filter((p) => !within(p, g.root))
      .map((p) => grantedGitPath(p, gitDirs));
  } catch (e) {
    return unlessNotCapable(e);
  }
}

/**
 * What to grant for one git path: the path itself when something is there. A missing one inside
 * git's own directories (`gitDirs`: the worktree's git dir and the common dir) is granted through
 * its nearest existing ancestor there, since the sandbox resolves a missing path through its
 * parents (a worktree's `config.worktree` usually does not exist). A missing one elsewhere (a
 * `core.hooksPath` naming a missing directory) is granted as itself only: its nearest ancestor
 * could be `/` or HOME. A confined run then refuses `NOT_CAPABLE` on that ancestor; creating the
 * directory lets the line grant it exactly.
 */
function grantedGitPath(path: string, gitDirs: readonly string[]): string {
  if (entryKind(path) !== "missing") return path;
  const dir = gitDirs.find((d) => within(path, d) && d !== path);
  if (dir === undefined) return path;
  let cur = dirname(path);
  while (cur !== dir && entryKind(cur) === "missing") cur = dirname(cur);
  return cur;
}

/**
 * The roots of the write grants a runner started now could accept ({@link placedGrants}): a
 * confined gate's exec paths are checked against every write grant's root in the holder's ledger,
 * and the act resolves each root it may read. Only these are granted: a grant no runner would
 * accept (too broad, HALTed, expired, unverified) adds no read, and the act compares its root as
 * written (`foreignRootReal`).
 */
async function grantRootReads(ctx: Ctx): Promise<string[]> {
  try {
    const placed = await placedGrants({
      root: ctx.project,
      teamDir: teamDirOf(ctx),
      env: ctx.env,
      home: homeFrom(ctx.env),
      keyDir: keyDir(ctx.env),
      now: ctx.now,
    });
    return [...new Set(placed.map((g) => g.root))];
  } catch (e) {
    return unlessNotCapable(e);
  }
}

/**
 * What `apply` and `run` need: the project, the brief, the artifact, the key, the sandbox
 * (`/usr/bin/bwrap`, a private TMPDIR, `/proc` for process groups), the PATH directories
 * where programs are resolved, and the roots of the write grants a runner could accept (a
 * confined gate is checked against them: {@link grantRootReads}).
 */
async function actingNeeds(
  ctx: Ctx,
  run: string[],
  reads: string[] = [],
  grantReads: () => Promise<string[]> = () => grantRootReads(ctx),
): Promise<Needs> {
  const brief = briefReads(ctx);
  const file = typeof ctx.parsed.positionals.FILE === "string"
    ? [resolve(ctx.parsed.positionals.FILE)]
    : [];
  const tmp = tmpDirOf(ctx);
  return mergeNeeds(keyNeeds(ctx), stateNeeds(ctx, true), {
    ...NO_NEEDS,
    read: [
      ctx.project,
      ...brief,
      ...file,
      tmp,
      "/proc",
      ...confinedDirs(ctx),
      ...pathDirs(ctx),
      BWRAP_PATH,
      PERL_PATH,
      SETSID_PATH,
      ...await confinedExecPaths(ctx),
      // The ELF interpreters Landlock must let every confined command execute
      // (lib/sandbox/mounts_io.ts).
      ...loaderCandidates(Deno.build.arch),
      ...await grantReads(),
      ...reads,
    ],
    write: [ctx.project, tmp],
    // perl runs the exec guard in front of bwrap (and the anchored writes of `apply`).
    run: [BWRAP_PATH, PERL_PATH, SETSID_PATH, ...run],
    sys: ["uid"],
  });
}

/**
 * `apply`'s needs: {@link actingNeeds} plus git (the control plane's resolved paths) and, with
 * `--unconfined`, every gate's program.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { applyNeeds } from "./acting_needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams apply p.json`, without --unconfined, git in /usr/bin
 * (await applyNeeds(ctx)).run; // ["/usr/bin/bwrap", "/usr/bin/git", "/usr/bin/perl", "/usr/bin/setsid"]
 * ```
 */
export async function applyNeeds(ctx: Ctx): Promise<Needs> {
  // git's context starts first, so it works while the brief is read.
  gitContextOf(ctx);
  // (The waiver key's variable, for a deletion a waiver may allow, is in apply's `env`.)
  return await actingNeeds(
    ctx,
    [...onPath(ctx, "git"), ...await unconfinedGates(ctx)],
    await gitPaths(ctx),
  );
}

/**
 * `run`'s needs: {@link actingNeeds} plus git and, with `--unconfined`, the request's program.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { runNeeds } from "./acting_needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams run r.json`, without --unconfined, git in /usr/bin
 * (await runNeeds(ctx)).run; // ["/usr/bin/bwrap", "/usr/bin/git", "/usr/bin/perl", "/usr/bin/setsid"]
 * ```
 */
export async function runNeeds(ctx: Ctx): Promise<Needs> {
  // git's context starts first, so it works while the artifact and the brief are read.
  gitContextOf(ctx);
  // git resolved as the git context resolves it, so the flag names the very path it spawns.
  const program = await requestProgram(ctx);
  return await actingNeeds(
    ctx,
    [...onPath(ctx, "git"), ...program.run, ...await unconfinedGates(ctx)],
    [...program.read, ...await gitPaths(ctx)],
  );
}

/**
 * The programs working out {@link applyNeeds} and {@link runNeeds} spawns: git, for its
 * `rev-parse` and `config --list` (so `permissions`, asked about either, needs to run it too).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { actingNeedsSpawns } from "./acting_needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams run r.json`, git in /usr/bin
 * actingNeedsSpawns(ctx); // ["/usr/bin/git"]
 * ```
 */
export function actingNeedsSpawns(ctx: Ctx): string[] {
  return onPath(ctx, "git");
}

/**
 * What the runner needs for its grants: read of the team dir and of each issuer's workspace a
 * valid write grant reaches into (it asks git what steers it, checks the granted root and scans
 * it), and write of each granted root itself: bwrap makes mask points there that the runner
 * removes after each run, and it removes what a run left there that would steer the issuer's git
 * (`scrubGrantedRoots`). The confined command writes there through bwrap, not the runner.
 */
async function grantedNeeds(ctx: Ctx): Promise<{ read: string[]; write: string[] }> {
  const teamDir = teamDirOf(ctx);
  // Exactly the roots the runner would add at its start: the same verification and the same
  // sandbox rule (a root it refuses, such as one holding the project, is granted nothing).
  let g;
  try {
    g = await loadGrantedRoots({
      root: ctx.project,
      teamDir,
      env: ctx.env,
      home: homeFrom(ctx.env),
      keyDir: keyDir(ctx.env),
      now: ctx.now,
    });
  } catch (e) {
    // The runner's own start reports why (a HOME it refuses, say); the needs add no root.
    return { read: [teamDir, ...unlessNotCapable(e)], write: [] };
  }
  const roots = [...new Set(g.granted.map((r) => r.root))];
  const issuers = [...new Set(g.granted.map((r) => r.issuerRoot))];
  return { read: [teamDir, ...issuers, ...roots], write: roots };
}

/**
 * What `serve` needs: everything `apply` and `run` need for any request of the brief (every
 * program its agents may run, resolved on PATH; all confined), the key dir (and writing it, only
 * while the runner's own X25519 pair is still to be made), and the queue, inside the project.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { serveNeeds } from "./acting_needs.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams serve` in /p
 * (await serveNeeds(ctx)).write.includes("/p"); // true
 * ```
 */
export async function serveNeeds(ctx: Ctx): Promise<Needs> {
  gitContextOf(ctx);
  let programs: string[] = [];
  try {
    const policy = await fullPolicy(ctx);
    const names = new Set(
      Object.values(policy.agents).flatMap((a) => a.commands.map((c) => c.prefix[0])),
    );
    programs = [...names].flatMap((n) => onPath(ctx, n));
  } catch (e) {
    programs = unlessNotCapable(e);
  }
  const kd = keyDir(ctx.env);
  const makePair = entryKind(join(kd, RUNNER_SEAL_KEY_FILE)) === "missing";
  const granted = await grantedNeeds(ctx);
  return mergeNeeds(
    // The roots it accepts at its start (granted.read), not every placed one: a grant the runner
    // does not accept adds nothing to its line.
    await actingNeeds(ctx, onPath(ctx, "git"), [
      ...programs,
      ...await gitPaths(ctx),
      ...granted.read,
      // The operator's direct-write grants and their verify keys, read at the start.
      ...directGrantDirs(ctx),
    ], () => Promise.resolve([])),
    // (Every key variable, so the runner can refuse to start while one is set, is in serve's
    // `env`.)
    { ...NO_NEEDS, write: [...(makePair ? [kd] : []), ...granted.write] },
    // Claude Code's user and managed settings, which the start's settings check reads.
    hostSettingsNeeds(ctx),
  );
}
