/**
 * `agentteams apply FILE [--dry-run]`: check and apply a change or deletion proposal.
 *
 * @module
 */
import { applyAct } from "../acts/apply_act.ts";
import { performAct } from "../acts/pipeline.ts";
import { artifactOf, sessionOfCtx } from "./policy_ctx.ts";
import { artifactAct } from "./queue_mode.ts";
import type { ApplyResult } from "../proposals/proposal.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `apply`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { apply } from "./apply_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams apply p.json` in /work/p
 * (await apply(ctx)).text; // "wrote src/a.ts for worker after gates test"
 * ```
 */
export async function apply(ctx: Ctx): Promise<Outcome> {
  const r = await artifactAct<ApplyResult>(
    ctx,
    "apply-proposal",
    (dryRun) => performAct(sessionOfCtx(ctx), applyAct, artifactOf(ctx), { dryRun }),
  );
  const what = r.new_sha256 === null ? "deleted" : "wrote";
  const gates = r.gates.length ? ` after gates ${r.gates.map((g) => g.gate).join(", ")}` : "";
  return {
    exit: 0,
    text: r.written
      ? `${what} ${r.path} for ${r.agent}${gates}`
      : `dry run: ${r.path} for ${r.agent} passes every check${gates}; nothing written`,
    json: { ok: true, ...r },
  };
}
