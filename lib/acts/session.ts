/**
 * A session: what every act of one project shares, opened once. The CLI opens one per
 * invocation, the library per call (or once, for a program that embeds it), the runner once for
 * all the requests it serves; all three open it here, the same way.
 *
 * Opening takes the ledger key first (passed in, or loaded from the key file under the custody
 * rules, with direct mode's environment fallbacks), synchronously: without a key nothing can be
 * recorded, so a missing key is refused with nothing written. Everything else (HOME, which must
 * be absolute; the brief and the operator's confined programs; the sandbox backend, decided on
 * first use; the gate runner; git's context and the project's control plane, resolved on first
 * use) loads behind {@link PendingSession.ready}, and a failure there is recorded by the act that
 * awaited it, as a refusal.
 *
 * The environment is passed in, never read from the process: a program that embeds the library
 * gives the variables it means and keeps its own environment as it is.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p with a brief and the operator's ledger key (agentteams keys init), under HOME=/home/op
 * import assert from "node:assert/strict";
 * import { startSession } from "./session.ts";
 * const pending = startSession({ root: "/work/p", env: { HOME: "/home/op", PATH: "/usr/bin:/bin" } });
 * const session = await pending.ready; // the brief loaded, HOME checked
 * assert.equal(session.policy.briefRel, "agentteams.jsonc");
 * ```
 * @module
 */
import { keyDir as keyDirOf, type LedgerKey, loadLedgerKey } from "../crypto/keys.ts";
import { type Env, homeFrom } from "../env.ts";
import { RequestError } from "../errors.ts";
import { resolve } from "../fs/path.ts";
import { type GitContext, openGitContext } from "../git/context.ts";
import { type ControlPlane, planeOf, staticPlane } from "../policy/control_plane.ts";
import { loadPolicy } from "../policy/brief.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import type { Policy } from "../policy/types.ts";
import { confinedGateRunner, type GateRunner } from "../proposals/gates.ts";
import { lazyBackend } from "../sandbox/backend_choice_io.ts";
import { probeCachePath } from "../sandbox/probe_cache.ts";
import { runTmpParent } from "../sandbox/run_dir.ts";
import type { Backend } from "../sandbox/backend_choice.ts";
import type { GrantedRoot } from "../sandbox/write_exec_roots.ts";
import { withConfinedPrograms } from "../sandbox/confined_programs_io.ts";
import type { TrustRoots } from "../authz/trust.ts";
import type { DecisionContext } from "../authz/decisions.ts";

/** Everything an act needs, loaded. */
export interface Session {
  /** The project root (absolute). */
  readonly root: string;
  /** The ledger key. */
  readonly key: LedgerKey;
  /** The environment acts and their children are built from. */
  readonly env: Env;
  /** The operator's home (absolute). */
  readonly home: string;
  /** The key dir (hidden from every command and gate). */
  readonly keyDir: string;
  /** The complete policy: the brief with its confined programs. */
  readonly policy: Policy;
  /** The sandbox backend, decided on first use (probing once). */
  readonly backend: () => Promise<Backend>;
  /** Runs one gate under that backend. */
  readonly gateRunner: GateRunner;
  /** The project's git context, resolved once on first use (rejects outside a worktree). */
  readonly git: () => Promise<GitContext>;
  /** The project's control plane: the fixed table, and git's resolved paths in a worktree. */
  readonly plane: () => Promise<ControlPlane>;
  /** The clock. */
  readonly now: () => Date;
  /** The anchored-write helper program (default `/usr/bin/perl`). */
  readonly perl?: string;
  /** Write roots capability grants add (the runner's; none in direct mode). */
  readonly grants: SessionGrants;
  /**
   * The triad's trust roots (verify keys, roster, whether decision signing applies), read once
   * per session on first use (`lib/authz/trust.ts`).
   */
  readonly trust: () => Promise<TrustRoots>;
  /** What the decision log is read with now (the HALT check, the gate): the trust roots, the clock. */
  readonly decisions: () => Promise<DecisionContext>;
}

/**
 * The write roots the runner's grants add to a confined run starting now (`live`: settled at the
 * runner's start; a HALT or an expiry since then takes a root away, and nothing is ever added
 * while the runner runs).
 */
export interface SessionGrants {
  /** The roots a run starting now may write (asked once per run). */
  readonly live: () => Promise<readonly GrantedRoot[]>;
}

/** No grants: direct mode, and every session the runner does not make. */
export const NO_GRANTS: SessionGrants = Object.freeze({ live: () => Promise.resolve([]) });

/** A session whose key is loaded and whose rest is still loading. */
export interface PendingSession {
  /** The project root. */
  readonly root: string;
  /** The ledger key (loaded when the session was started). */
  readonly key: LedgerKey;
  /** The clock. */
  readonly now: () => Date;
  /** The session, once the brief and the rest are loaded; rejects with the reason they are not. */
  readonly ready: Promise<Session>;
}

/** Options of {@link startSession}. */
export interface SessionOptions {
  /** The project root. */
  readonly root: string;
  /** The environment (HOME, PATH, the key variables, the locale); never read from the process. */
  readonly env: Env;
  /** The ledger key; default: loaded from the key file (or, in direct mode, a key variable). */
  readonly key?: LedgerKey;
  /** The brief; default `<root>/agentteams.jsonc`, then `agentteams.json`. */
  readonly brief?: string;
  /** A policy already loaded (with its confined programs); default: loaded from the brief. */
  readonly policy?: Promise<Policy>;
  /** The operator's explicit, recorded opt-out of the sandbox (needs `allow_unconfined_runs`). */
  readonly unconfined?: boolean;
  /** A git context already started for this project; default: started on first use. */
  readonly git?: Promise<GitContext>;
  /** The clock; default the system's. */
  readonly now?: () => Date;
}

/**
 * The brief's policy with its confined programs (the operator file wins over the brief's block).
 * `loaded` is the brief as `loadPolicy` already read it from that path (the runner's preflight
 * did): it is then not read again.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p with a brief
 * import { completePolicy } from "./session.ts";
 * const policy = await completePolicy("/work/p", undefined, { HOME: "/home/op" });
 * Object.keys(policy.agents);
 * ```
 */
export async function completePolicy(
  root: string,
  brief: string | undefined,
  env: Env,
  loaded?: Policy,
): Promise<Policy> {
  const home = homeFrom(env);
  if (loaded === undefined) {
    const path = brief !== undefined ? resolve(brief) : await defaultBriefPath(root);
    loaded = await loadPolicy(path, { projectRoot: root });
  }
  return withConfinedPrograms(loaded, { home, project: root });
}

/**
 * The control plane of a project from its git context: the table and git's resolved paths; the
 * table alone when the project is not inside a git worktree (there is no repository whose hooks or
 * config could run). Any other failure to resolve git refuses (`GIT_UNAVAILABLE`).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a git worktree at /work/p
 * import { planeFromGit } from "./session.ts";
 * import { openGitContext } from "../git/context.ts";
 * const plane = await planeFromGit("/work/p", openGitContext("/work/p"));
 * plane.git.length > 0; // true inside a worktree
 * ```
 */
export async function planeFromGit(root: string, git: Promise<GitContext>): Promise<ControlPlane> {
  try {
    return planeOf(await git);
  } catch (e) {
    if (e instanceof RequestError && e.code === "NO_WORKTREE") {
      return staticPlane(Deno.realPathSync(root));
    }
    throw e;
  }
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | null = null;
  return () => {
    if (p === null) {
      p = make();
      p.catch(() => {}); // observed by whoever awaits it
    }
    return p;
  };
}

/**
 * Starts a session: loads the key now (see the module doc), the rest behind `ready`.
 *
 * @throws {KeyError} when no key can be loaded (nothing can be recorded then).
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p with a brief and the operator's ledger key (agentteams keys init)
 * import { startSession } from "./session.ts";
 * const s = startSession({ root: "/work/p", env: Deno.env.toObject() });
 * s.key.source; // "file": the key file in the key dir
 * ```
 */
export function startSession(opts: SessionOptions): PendingSession {
  const key = opts.key ?? loadLedgerKey({ env: opts.env, mode: "direct" });
  const now = opts.now ?? (() => new Date());
  const root = opts.root;
  const ready = (async (): Promise<Session> => {
    const home = homeFrom(opts.env);
    const policy = await (opts.policy ?? completePolicy(root, opts.brief, opts.env));
    return sessionOf({
      root,
      key,
      env: opts.env,
      home,
      policy,
      unconfined: opts.unconfined === true,
      git: opts.git,
      now,
    });
  })();
  ready.catch(() => {}); // observed by the act that awaits it
  return { root, key, now, ready };
}

/** The parts {@link sessionOf} assembles a session from. */
export interface SessionParts {
  /** The project root. */
  readonly root: string;
  /** The ledger key. */
  readonly key: LedgerKey;
  /** The environment. */
  readonly env: Env;
  /** The operator's home (absolute). */
  readonly home: string;
  /** The complete policy. */
  readonly policy: Policy;
  /** The operator's opt-out of the sandbox. */
  readonly unconfined?: boolean;
  /** True under the out-of-session runner: every command and gate confined, no opt-out. */
  readonly runner?: boolean;
  /** A backend decision to use instead of probing (tests pin one). */
  readonly backend?: () => Promise<Backend>;
  /** A gate runner to use instead of the confined one. */
  readonly gateRunner?: GateRunner;
  /** A git context already started. */
  readonly git?: Promise<GitContext>;
  /** The clock. */
  readonly now?: () => Date;
  /** The anchored-write helper program. */
  readonly perl?: string;
  /** The runner's granted write roots (default none). */
  readonly grants?: SessionGrants;
}

/**
 * Assembles a session from loaded parts (what {@link startSession} does once the brief is in):
 * the key dir from the environment, the backend and git decided lazily, the confined gate runner.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs key, policy, which it declares rather than makes.
 * import { sessionOf } from "./session.ts";
 * import type { LedgerKey } from "../crypto/keys.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const key: LedgerKey;
 * declare const policy: Policy;
 * const s = sessionOf({ root: "/work/p", key, env: { HOME: "/home/op" }, home: "/home/op", policy });
 * await s.plane(); // the table, and git's paths when /work/p is in a worktree
 * ```
 */
export function sessionOf(parts: SessionParts): Session {
  const { root, env, home, policy } = parts;
  const backend = parts.backend ??
    lazyBackend(policy, {
      unconfined: parts.unconfined === true,
      runner: parts.runner === true,
      // A working probe's answer is kept (signed) beside the runs' private directories.
      probeCache: { path: probeCachePath(runTmpParent(env, Deno.uid())), hmac: parts.key.hmac },
    });
  const keyDir = keyDirOf(env);
  const git = once(() => parts.git ?? openGitContext(root, { parentEnv: env }));
  const plane = once(() => planeFromGit(root, git()));
  const grants = parts.grants ?? NO_GRANTS;
  const now = parts.now ?? (() => new Date());
  // The trust roots and the grants ledger are loaded (their code too) only when asked for: an act
  // asks for the trust roots only when there is a decision log to read.
  const trust = once(async () =>
    (await import("../authz/trust.ts")).trustFor(
      root,
      env,
      policy.writePolicy === "orchestrator-only",
    )
  );
  return {
    root,
    key: parts.key,
    env,
    home,
    keyDir,
    policy,
    backend,
    gateRunner: parts.gateRunner ?? confinedGateRunner({
      root,
      policy,
      parentEnv: env,
      home,
      keyDir,
      backend,
      plane,
      grantTargets: async () => (await import("../authz/grants.ts")).writeGrantTargets(root),
    }),
    git,
    plane,
    now,
    grants,
    trust,
    decisions: async () => {
      const t = await trust();
      return {
        env,
        now: now(),
        roster: t.roster,
        store: t.store,
        signingRequired: t.signingRequired,
      };
    },
    ...(parts.perl !== undefined ? { perl: parts.perl } : {}),
  };
}
