/**
 * `agentteams serve [--once]`: the out-of-session runner (lib/runner/serve.ts), stopped by
 * SIGINT or SIGTERM; with `--once`, it serves what is queued and stops.
 *
 * @module
 */
import { oneLine } from "./terminal.ts";
import { serve, type ServeReport } from "../runner/serve.ts";
import { briefFlagPath } from "./needs.ts";
import { teamDirOf } from "./needs.ts";
import { VERSION } from "./version.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `serve`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { serveCmd } from "./serve_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams serve --once` with nothing queued
 * (await serveCmd(ctx)).text; // "answered 0 requests (0 served, 0 refused); ..."
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
      // Its lines carry names a session chose (a stray in the queue folder): shown, never obeyed,
      // one line each (probe 22c C5).
      log: (line) => ctx.note(oneLine(line)),
      signal: stop.signal,
      now: ctx.now,
    });
    return { exit: 0, text: serveSummary(r), json: { ok: true, ...r } };
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The line `serve` ends with: every request answered, split into served and refused (expired
 * and invalid ones included), the names that were no request's, and the interrupted ones
 * reported. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { serveSummary } from "./serve_cmd.ts";
 * assert.equal(
 *   serveSummary({ served: 1, refused: 1, strays: 0, interrupted: 0, stopped: "once" }),
 *   "answered 2 requests (1 served, 1 refused); 0 names not requests recorded; 0 interrupted requests reported",
 * );
 * ```
 */
export function serveSummary(r: ServeReport): string {
  return `answered ${plural(r.served + r.refused, "request", "requests")} (${r.served} served, ` +
    `${r.refused} refused); ${plural(r.strays, "name not a request", "names not requests")} ` +
    `recorded; ${plural(r.interrupted, "interrupted request", "interrupted requests")} reported`;
}
