/**
 * What the acting commands (`apply`, `run`) share: the brief path, the full policy (with its
 * confined programs), the key, and the sandbox backend decided once per process.
 *
 * @module
 */
import { isAbsolute, resolve } from "../fs/path.ts";
import { keyDir, type LedgerKey, loadLedgerKey } from "../crypto/keys.ts";
import { AgentTeamsError, KeyError } from "../errors.ts";
import { appendRow } from "../ledger/append.ts";
import { refusalRow } from "../ledger/fields.ts";
import { type Artifact, readArtifactFile } from "../proposals/artifact.ts";
import { confinedGateRunner, type GateRunner } from "../proposals/gates.ts";
import { defaultBriefPath, loadPolicy } from "../policy/brief.ts";
import type { Policy } from "../policy/types.ts";
import { withConfinedPrograms } from "../sandbox/policy_confined.ts";
import { lazyBackend } from "../sandbox/backend.ts";
import type { Backend } from "../sandbox/decide.ts";
import { type GitContext, openGitContext } from "../requests/git.ts";
import { briefFlagPath } from "./commands.ts";
import { perInvocation } from "./per_invocation.ts";
import type { Ctx } from "./types.ts";

/**
 * The brief's absolute path: `--brief`, else the project's default.
 *
 * @example
 * ```ts
 * import { briefPathOf } from "./policy_ctx.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // in /work/p, without --brief
 * await briefPathOf(ctx); // "/work/p/agentteams.jsonc"
 * ```
 */
export async function briefPathOf(ctx: Ctx): Promise<string> {
  return briefFlagPath(ctx) ?? await defaultBriefPath(ctx.project);
}

/**
 * The operator's home directory.
 *
 * @example
 * ```ts
 * import { homeOf } from "./policy_ctx.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // with HOME=/home/op
 * homeOf(ctx); // "/home/op" (throws KeyError NO_KEY when HOME is not absolute)
 * ```
 */
export function homeOf(ctx: Ctx): string {
  const home = ctx.env.HOME;
  if (!home || !isAbsolute(home)) throw new KeyError("NO_KEY", "HOME must be an absolute path");
  return home;
}

/**
 * The complete policy (brief plus confined programs) for this invocation, loaded once: the
 * permission needs computed at start and the command itself share it, so the brief is read and
 * checked once per invocation.
 *
 * @example
 * ```ts
 * import { fullPolicy } from "./policy_ctx.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // a project whose brief has one agent, `worker`
 * Object.keys((await fullPolicy(ctx)).agents); // ["worker"]
 * ```
 */
export const fullPolicy: (ctx: Ctx) => Promise<Policy> = perInvocation(async (ctx) => {
  const brief = await briefPathOf(ctx);
  const home = homeOf(ctx);
  const policy = await loadPolicy(brief, { projectRoot: ctx.project });
  return withConfinedPrograms(policy, { home, project: ctx.project });
});

/**
 * The project's git context (one `git rev-parse`) for this invocation, started once: `run`'s
 * permission needs name git's own paths from it (a linked worktree's index, `core.hooksPath`
 * and the common config can lie outside the project), and the run itself then uses the same one.
 * A failure is kept in the promise and reported where the run checks git, in order.
 *
 * @example
 * ```ts
 * import { gitContextOf } from "./policy_ctx.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // in the git worktree /work/p, without core.hooksPath
 * (await gitContextOf(ctx)).watched.hooks; // "/work/p/.git/hooks"
 * ```
 */
export const gitContextOf: (ctx: Ctx) => Promise<GitContext> = perInvocation((ctx) => {
  const g = openGitContext(ctx.project, { parentEnv: ctx.env });
  g.catch(() => {}); // observed by whoever awaits it
  return g;
});

/** The artifact (or why it could not be read), read once per invocation. */
const artifactRead = perInvocation((ctx): Promise<Artifact> => {
  const p = readArtifactFile(resolve(ctx.parsed.positionals.FILE as string));
  p.catch(() => {}); // observed by whoever awaits it
  return p;
});

/**
 * The artifact named by `FILE`, read and validated once for this invocation: `run --unconfined`
 * needs its program for the permission needs, and the command itself needs all of it, so both
 * see the same bytes and the same refusal.
 *
 * @throws {ProposalError} `ARTIFACT_INVALID` (the same error object on every call).
 * @example
 * ```ts
 * import { artifactOf } from "./policy_ctx.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // `agentteams run r.json`, r.json a valid command request
 * (await artifactOf(ctx)).kind; // "command-request"
 * ```
 */
export function artifactOf(ctx: Ctx): Promise<Artifact> {
  return artifactRead(ctx);
}

/** Everything an acting command needs, loaded. */
export interface ActingContext {
  /** The ledger key. */
  key: LedgerKey;
  /** The complete policy. */
  policy: Policy;
  /** The key dir (hidden from commands and gates). */
  keyDir: string;
  /** The operator's home. */
  home: string;
  /** Decides the sandbox backend on first use (probing once). */
  backend: () => Promise<Backend>;
  /** Runs one gate under that backend. */
  gateRunner: GateRunner;
}

/**
 * Loads the key, then the brief, the confined programs and the artifact. Without a key nothing
 * runs and nothing can be recorded; once the key is loaded, any refusal while loading the rest (an
 * unexpected failure too, as `INTERNAL`) is recorded as `<action>-refused` with agent `?` (not on
 * a dry run).
 *
 * @example
 * ```ts
 * import { loadActing } from "./policy_ctx.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx; // `agentteams run r.json`
 * const { acting, artifact } = await loadActing(ctx, "run-request");
 * artifact.kind; // "command-request"
 * acting.keyDir; // "/home/op/.config/agentteams/keys"
 * ```
 */
export async function loadActing(
  ctx: Ctx,
  action: "apply-proposal" | "run-request",
): Promise<{ acting: ActingContext; artifact: Artifact }> {
  const key = loadLedgerKey({ env: ctx.env, mode: "direct" });
  try {
    const acting = await actingContext(ctx, key);
    const artifact = await artifactOf(ctx);
    return { acting, artifact };
  } catch (e) {
    if (
      ctx.parsed.flags["dry-run"] !== true &&
      !(e instanceof AgentTeamsError && e.family === "ledger")
    ) {
      await appendRow(ctx.project, key.hmac, refusalRow(action, "?", e), { now: ctx.now });
    }
    throw e;
  }
}

/**
 * Loads the brief and the confined programs, and prepares the backend decision.
 *
 * @example
 * ```ts
 * import { actingContext } from "./policy_ctx.ts";
 * import { loadLedgerKey } from "../crypto/keys.ts";
 * import type { Ctx } from "./types.ts";
 * declare const ctx: Ctx;
 * const key = loadLedgerKey({ env: ctx.env, mode: "direct" });
 * const acting = await actingContext(ctx, key);
 * await acting.backend(); // "bwrap" on Linux with bubblewrap (probed on this call)
 * ```
 */
export async function actingContext(ctx: Ctx, key: LedgerKey): Promise<ActingContext> {
  const home = homeOf(ctx);
  const policy = await fullPolicy(ctx);
  // `--unconfined` is the operator's explicit, recorded opt-out; only a brief can allow it.
  const backend = lazyBackend(policy, { unconfined: ctx.parsed.flags.unconfined === true });
  const dir = keyDir(ctx.env);
  return {
    key,
    policy,
    keyDir: dir,
    home,
    backend,
    gateRunner: confinedGateRunner({
      root: ctx.project,
      policy,
      parentEnv: ctx.env,
      home,
      keyDir: dir,
      backend,
    }),
  };
}
