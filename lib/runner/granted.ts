/**
 * The write roots the runner's capability grants add, settled once at its start and never again
 * while it runs (the grants ledger is pinned: a change stops the runner). Each valid write grant
 * (`lib/authz/grants.ts`: Ed25519, unexpired, on the team dir's roster, no HALT on the write) names
 * a root in the issuer's workspace; each root then passes the sandbox's own rule for granted roots
 * (`lib/sandbox/write_exec_roots.ts`), checked here as every confined run checks it again. A root
 * that fails is left out, with its reason, and nothing widens; the `grants-loaded` ledger row
 * records what was added and what was not.
 *
 * @module
 */
import { AgentTeamsError } from "../errors.ts";
import type { Env } from "../env.ts";
import { lstatOrNullSync, realPathLoose } from "../fs/entry.ts";
import {
  type GrantedWrite,
  grantsLoadedRow,
  grantStopped,
  grantWriteRoots,
} from "../authz/grants.ts";
import { readDecisionLog } from "../authz/decisions.ts";
import { NO_GRANTS, planeFromGit, type SessionGrants } from "../acts/session.ts";
import { authzPaths } from "../authz/triad_paths.ts";
import { VERIFY_KEYS_REL } from "../layout.ts";
import { VerifyKeyStore } from "../authz/signed.ts";
import { join } from "../fs/path.ts";
import type { RowBody } from "../ledger/row.ts";
import { hiddenFromConfined } from "../sandbox/hidden_dirs.ts";
import {
  existingHidden,
  grantKeepClear,
  homeRealOf,
  resolveRoots,
} from "../sandbox/write_exec_roots_io.ts";
import {
  grantedPlaceProblem,
  type GrantedRoot,
  type GrantedRootBounds,
  type KeepClear,
} from "../sandbox/write_exec_roots.ts";
import { childEnv } from "../process/child_env.ts";
import { type GitControlPath, openGitContext } from "../git/context.ts";
import { makePrivateTmpdir, removePrivateTmpdir, runTmpParent } from "../sandbox/run_dir.ts";

/** What the runner's grants add. */
export interface LoadedGrants {
  /** The roots confined runs of this runner may write besides their agent's own, HALTs aside. */
  readonly granted: readonly GrantedWrite[];
  /** The same, as the runner's sessions take them (each run asks again for HALTs). */
  readonly session: SessionGrants;
  /** The `grants-loaded` row (`null` when there is no grants ledger). */
  readonly row: RowBody | null;
  /** One line per root added and per problem, for the runner's log. */
  readonly lines: readonly string[];
}

/** Inputs of {@link loadGrantedRoots}. */
export interface LoadGrantsOptions {
  readonly root: string;
  /** The holder's team dir (its roster and verify keys). */
  readonly teamDir: string;
  readonly env: Env;
  readonly home: string;
  /** The key dir (hidden from confined commands: a granted root must keep clear of it). */
  readonly keyDir: string;
  /** The runner's clock. */
  readonly now: () => Date;
}

const MAX_PROBLEMS = 10;

/**
 * Reads and verifies the grants ledger, and keeps each valid write grant's root that the sandbox
 * accepts as a granted root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadGrantedRoots } from "./granted.ts";
 * // A holder with no grants file: nothing is granted.
 * const holder = Deno.makeTempDirSync();
 * const g = await loadGrantedRoots({
 *   root: holder, teamDir: `${holder}/.agentteams/team`, env: {}, home: "/home/op",
 *   keyDir: "/home/op/.config/agentteams/keys", now: () => new Date(),
 * });
 * assert.deepEqual(g.granted, []);
 * ```
 */
export async function loadGrantedRoots(opts: LoadGrantsOptions): Promise<LoadedGrants> {
  if (lstatOrNullSync(authzPaths(opts.root).grants) === null) {
    return { granted: [], session: NO_GRANTS, row: null, lines: [] };
  }
  // The verify keys it trusts now, recorded (the earlier tool's key_fingerprints).
  const fingerprints = new VerifyKeyStore(join(opts.teamDir, VERIFY_KEYS_REL)).fingerprints();
  let found;
  try {
    found = await grantWriteRoots(opts.root, opts.teamDir, { env: opts.env, now: opts.now() });
  } catch (e) {
    // An unreadable or malformed ledger widens nothing; the runner serves without it.
    if (!(e instanceof AgentTeamsError)) throw e;
    const problem = `${e.code}: ${e.message}`.slice(0, 200);
    return {
      granted: [],
      session: NO_GRANTS,
      row: grantsLoadedRow({ roots: [], active: [], problems: [problem] }, fingerprints),
      lines: [`grants: none added: ${problem}`],
    };
  }
  const kept: GrantedWrite[] = [];
  const problems: string[] = [...found.problems];
  const tmpdir = makePrivateTmpdir(opts.env);
  const issuers = new IssuerGit(opts.env);
  try {
    // The same check every confined run makes, against a private TMPDIR made the same way.
    const { bounds, keepClear } = placeBounds(opts, Deno.realPathSync(tmpdir));
    for (const g of found.granted) {
      // Where it lies first, with no look at it: a root refused there is never read (and the
      // runner's flags grant it nothing).
      const place = grantedPlaceProblem(
        { path: g.root, grant: g.grant, issuerRoot: g.issuerRoot, issuerGit: [] },
        bounds,
      );
      if (place !== null) {
        problems.push(`${g.grant}: ${place.code}: ${place.message}`.slice(0, 200));
        continue;
      }
      try {
        resolveRoots({
          project: opts.root,
          home: opts.home,
          tmpdir,
          agent: { exec: [], write: [] },
          grantedRoots: [{ ...g, issuerGit: await issuers.of(g.issuerRoot) }],
          grantKeepClear: keepClear,
        });
        kept.push(g);
      } catch (e) {
        const why = e instanceof Deno.errors.NotCapable
          ? `${g.root} is not readable under the runner's flags; launch it with the line ` +
            "`agentteams permissions serve` prints now"
          : e instanceof AgentTeamsError
          ? `${e.code}: ${e.message}`
          : null;
        if (why === null) throw e;
        problems.push(`${g.grant}: ${why}`.slice(0, 200));
      }
    }
  } finally {
    removePrivateTmpdir(tmpdir);
  }
  const lines = [
    ...kept.map((g) => `grants: ${g.grant} adds the write root ${g.root}`),
    ...problems.map((p) => `grants: not added: ${p}`),
  ];
  return {
    granted: kept,
    session: kept.length === 0 ? NO_GRANTS : liveGrants(kept, opts),
    row: grantsLoadedRow({
      roots: [...new Set(kept.map((g) => g.root))],
      active: [...new Set(kept.map((g) => g.grant))],
      problems: problems.slice(0, MAX_PROBLEMS),
    }, fingerprints),
    lines,
  };
}

/** The bounds a granted root's place is checked against (as every confined run checks it). */
function placeBounds(
  opts: Pick<LoadGrantsOptions, "root" | "keyDir" | "home" | "env">,
  tmpdirReal: string,
): { bounds: GrantedRootBounds; keepClear: readonly KeepClear[] } {
  const projectReal = Deno.realPathSync(opts.root);
  const keepClear = grantKeepClear({
    hidden: existingHidden(hiddenFromConfined(opts.root, opts.keyDir)),
    projectReal,
    home: opts.home,
    path: childEnv(opts.env).PATH,
  });
  return {
    keepClear,
    bounds: {
      projectReal,
      homeReal: homeRealOf(opts.home),
      tmpdirReal,
      keepClear,
      foldCase: Deno.build.os === "darwin",
    },
  };
}

/**
 * The valid write grants (verified, unexpired, on the roster, no HALT: `grantWriteRoots`) whose
 * root passes the granted-root rule's place clauses (`grantedPlaceProblem`, no look at the root):
 * the grants a runner started now could accept, found without reading any granted root or
 * issuer workspace. What an act that checks a gate against the grants' roots may resolve
 * (`lib/cli/acting_needs.ts` grants their reads); a grant not here adds no read. No grants
 * ledger, or one that cannot be read or verified, gives none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { placedGrants } from "./granted.ts";
 * // A holder with no grants file: nothing is placed.
 * const holder = Deno.makeTempDirSync();
 * const g = await placedGrants({
 *   root: holder, teamDir: `${holder}/.agentteams/team`, env: {}, home: "/home/op",
 *   keyDir: "/home/op/.config/agentteams/keys", now: () => new Date(),
 * });
 * assert.deepEqual(g, []);
 * ```
 */
export async function placedGrants(opts: LoadGrantsOptions): Promise<GrantedWrite[]> {
  if (lstatOrNullSync(authzPaths(opts.root).grants) === null) return [];
  let found;
  try {
    found = await grantWriteRoots(opts.root, opts.teamDir, { env: opts.env, now: opts.now() });
  } catch (e) {
    if (e instanceof AgentTeamsError) return [];
    throw e;
  }
  if (found.granted.length === 0) return [];
  // Against where a run's private TMPDIR is made (a name below its parent, made by nothing here:
  // `permissions`, which asks this too, writes nothing): a root holding the parent holds every
  // run's private TMPDIR, as the runner's own check finds.
  const parent = realPathLoose(runTmpParent(opts.env, Deno.uid()));
  const { bounds } = placeBounds(opts, join(parent, "agentteams-run-any"));
  return found.granted.filter((g) =>
    grantedPlaceProblem(
      { path: g.root, grant: g.grant, issuerRoot: g.issuerRoot, issuerGit: [] },
      bounds,
    ) === null
  );
}

/**
 * The runner's grants as its sessions take them: before every run the holder's decision log is
 * read again, and a root whose grant has expired or a HALT now stops is left out (an unreadable
 * log leaves all out: it fails closed).
 */
function liveGrants(kept: readonly GrantedWrite[], opts: LoadGrantsOptions): SessionGrants {
  return {
    live: async () => {
      const ctx = { env: opts.env, now: opts.now() };
      let log;
      try {
        log = readDecisionLog(opts.root);
      } catch (e) {
        if (e instanceof AgentTeamsError) return [];
        throw e;
      }
      // The issuer's git paths as they are now (its config may have moved a hooks directory).
      const issuers = new IssuerGit(opts.env);
      const out: GrantedRoot[] = [];
      for (const g of kept) {
        if (await grantStopped(log, g, ctx, opts.root) !== null) continue;
        try {
          out.push({ ...g, issuerGit: await issuers.of(g.issuerRoot) });
        } catch (e) {
          // git cannot say what steers the issuer's workspace (or may not look): not granted.
          if (!(e instanceof AgentTeamsError) && !(e instanceof Deno.errors.NotCapable)) throw e;
        }
      }
      return out;
    },
  };
}

/**
 * Git's resolved paths for each issuer's workspace (one `rev-parse` and `config --list` per
 * workspace, cached for one check): none when it is no git worktree; a failure of git refuses.
 */
class IssuerGit {
  readonly #env: Env;
  readonly #seen = new Map<string, Promise<readonly GitControlPath[]>>();

  constructor(env: Env) {
    this.#env = env;
  }

  of(issuerRoot: string): Promise<readonly GitControlPath[]> {
    let p = this.#seen.get(issuerRoot);
    if (p === undefined) {
      p = planeFromGit(issuerRoot, openGitContext(issuerRoot, { parentEnv: this.#env })).then(
        (plane) => plane.git,
      );
      this.#seen.set(issuerRoot, p);
    }
    return p;
  }
}
