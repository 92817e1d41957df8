/**
 * `agentteams run FILE [--dry-run]`: check and run a command request. The command's own exit
 * code passes through; undeclared writes and timeouts exit 3; refusals exit 1.
 *
 * @module
 */
import { performAct } from "../acts/pipeline.ts";
import { runAct, runExit } from "../acts/run_act.ts";
import { artifactOf, sessionOfCtx } from "./policy_ctx.ts";
import { artifactAct } from "./queue_mode.ts";
import type { RunRequestResult } from "../requests/request.ts";
import { inert, oneLine } from "./terminal.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `run`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { run } from "./run_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams run r.json`
 * (await run(ctx)).exit; // the command's own exit code; 3 on undeclared writes or a timeout
 * ```
 */
export async function run(ctx: Ctx): Promise<Outcome> {
  const r = await artifactAct<RunRequestResult>(
    ctx,
    "run-request",
    (dryRun) => performAct(sessionOfCtx(ctx), runAct, artifactOf(ctx), { dryRun }),
  );
  if (!r.ran) {
    return {
      exit: 0,
      text: `dry run: ${JSON.stringify(r.argv)} for ${r.agent} passes every check; not run`,
      json: { ok: true, ...r },
    };
  }
  if (!ctx.json) {
    // To a terminal, the command's control characters are shown, not obeyed; to a pipe or a
    // file, its output passes unchanged.
    const show = async (text: string, to: typeof Deno.stdout | typeof Deno.stderr) => {
      if (text) await to.write(new TextEncoder().encode(to.isTerminal() ? inert(text) : text));
    };
    await show(r.stdout, Deno.stdout);
    await show(r.stderr, Deno.stderr);
  }
  ctx.note(
    `agentteams run: ${oneLine(r.argv.join(" "))} exited ${r.exit} in ${r.duration_ms} ms ` +
      `(${
        r.backend === "unconfined-opt-out"
          ? "unconfined, by the brief's opt-out"
          : `confined by ${r.backend}`
      })` +
      (r.truncated ? "; output truncated at 256 KiB" : ""),
  );
  return {
    exit: runExit(r.exit),
    json: { ok: r.exit === 0, ...r },
  };
}
