/**
 * What the acting commands (`apply`, `run`) and their permission needs share, once per
 * invocation: the brief path, the full policy (with its confined programs), git's context (its
 * own module, lib/cli/git_ctx.ts, so it can start before this one loads), the artifact, and the
 * session every act of the invocation goes through.
 *
 * @module
 */
import { resolve } from "../fs/path.ts";
import { gitContextOf } from "./git_ctx.ts";
import { type Artifact, readArtifactFile } from "../artifacts/artifact.ts";
import type { Policy } from "../policy/types.ts";
import { completePolicy, type PendingSession, startSession } from "../acts/session.ts";
import { briefFlagPath } from "./needs.ts";
import { perInvocation } from "./per_invocation.ts";
import type { Ctx } from "./command_spec.ts";

/**
 * The complete policy (brief plus confined programs) for this invocation, loaded once: the
 * permission needs computed at start and the command itself share it, so the brief is read and
 * checked once per invocation. Its lint warnings (`Policy.warnings`) are printed on stderr then,
 * once: `agentteams run: warning: agentteams.jsonc:3:24: ...`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { fullPolicy } from "./policy_ctx.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // a project whose brief has one agent, `worker`
 * Object.keys((await fullPolicy(ctx)).agents); // ["worker"]
 * ```
 */
export const fullPolicy: (ctx: Ctx) => Promise<Policy> = perInvocation((ctx) => {
  const p = completePolicy(ctx.project, briefFlagPath(ctx) ?? undefined, ctx.env).then(
    (policy) => {
      // The lint's warnings (not refusals), once per invocation, on stderr.
      for (const w of policy.warnings ?? []) ctx.note(`agentteams ${ctx.name}: warning: ${w}`);
      return policy;
    },
  );
  p.catch(() => {}); // observed by whoever awaits it
  return p;
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
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { artifactOf } from "./policy_ctx.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams run r.json`, r.json a valid command request
 * (await artifactOf(ctx)).kind; // "command-request"
 * ```
 */
export function artifactOf(ctx: Ctx): Promise<Artifact> {
  return artifactRead(ctx);
}

/**
 * The session of this invocation (`lib/acts/session.ts`), started once: the key now (a missing
 * one is refused with nothing recorded), then the brief and the rest, sharing the policy and the
 * git context the permission needs already loaded. `--unconfined` is the operator's explicit,
 * recorded opt-out; only a brief can allow it.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { sessionOfCtx } from "./policy_ctx.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams run r.json`
 * const session = sessionOfCtx(ctx);
 * (await session.ready).keyDir; // "/home/op/.config/agentteams/keys"
 * ```
 */
export const sessionOfCtx: (ctx: Ctx) => PendingSession = perInvocation((ctx) =>
  startSession({
    root: ctx.project,
    env: ctx.env,
    policy: fullPolicy(ctx),
    unconfined: ctx.parsed.flags.unconfined === true,
    git: gitContextOf(ctx),
    now: ctx.now,
  })
);
