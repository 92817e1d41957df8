/**
 * The project's git context for this invocation, on its own so a command can start it before
 * the act's code is loaded (lib/cli/policy_ctx.ts, which brings the acts and the sandbox, uses the
 * same one).
 *
 * @module
 */
import { type GitContext, openGitContext } from "../git/context.ts";
import { perInvocation } from "./per_invocation.ts";
import type { Ctx } from "./command_spec.ts";

/**
 * The project's git context (one `git rev-parse`) for this invocation, started once: `run`'s
 * permission needs name git's own paths from it (a linked worktree's index, `core.hooksPath`
 * and the common config can lie outside the project), and the run itself then uses the same one.
 * A failure is kept in the promise and reported where the run checks git, in order.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { gitContextOf } from "./git_ctx.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // in the git worktree /work/p, without core.hooksPath
 * (await gitContextOf(ctx)).watched.hooks; // "/work/p/.git/hooks"
 * ```
 */
export const gitContextOf: (ctx: Ctx) => Promise<GitContext> = perInvocation((ctx) => {
  const g = openGitContext(ctx.project, { parentEnv: ctx.env });
  g.catch(() => {}); // observed by whoever awaits it
  return g;
});
