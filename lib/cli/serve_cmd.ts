/**
 * `agentteams serve [--once]`: the out-of-session runner (lib/runner/serve.ts), stopped by
 * SIGINT or SIGTERM; with `--once`, it serves what is queued and stops.
 *
 * @module
 */
import { serve } from "../runner/serve.ts";
import { briefFlagPath } from "./needs.ts";
import { teamDirOf } from "./authz_common.ts";
import { VERSION } from "./version.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `serve`.
 *
 * @example
 * ```ts
 * import { serveCmd } from "./serve_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams serve --once` with nothing queued
 * (await serveCmd(ctx)).text; // "served 0 requests (0 refused, 0 interrupted reported)"
 * ```
 */
export async function serveCmd(ctx: Ctx): Promise<Outcome> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  try {
    const r = await serve({
      root: ctx.project,
      env: ctx.env,
      brief: briefFlagPath(ctx) ?? undefined,
      teamDir: teamDirOf(ctx),
      once: ctx.parsed.flags.once === true,
      version: VERSION,
      log: ctx.note,
      signal: stop.signal,
      now: ctx.now,
    });
    return {
      exit: 0,
      text: `served ${r.served} requests (${r.refused} refused, ${r.interrupted} interrupted ` +
        "reported)",
      json: { ok: true, ...r },
    };
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}
