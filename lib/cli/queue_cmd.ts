/**
 * `agentteams submit FILE` and `agentteams wait ID`: the two halves of queue mode, for a caller
 * that does other work between them. `submit` queues an artifact (a proposal becomes an
 * apply-proposal request, a command request a run-request) and prints its id and a ticket;
 * `wait` reads the ticket from stdin (never argv, which other processes can read), waits for the
 * result, checks it is the runner's, and prints it (JSON), exiting with its exit code. `cancel`
 * withdraws a queued request no runner has claimed yet.
 *
 * @module
 */
import type { JsonObject } from "../pycompat/canonical.ts";
import { QueueError, UsageError } from "../errors.ts";
import {
  fromTicket,
  resultOrRefusal,
  submitRequest,
  ticketOf,
  waitForResult,
  withdrawRequest,
} from "../queue/client.ts";
import { isRequestId } from "../queue/queue_paths.ts";
import { runnerKeyOnce, runnerPublicKey } from "../queue/runner_key.ts";
import { REQUEST_GRACE_S } from "../queue/queued_request.ts";
import { artifactOf } from "./policy_ctx.ts";
import { waitSeconds } from "./queue_mode.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `submit`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { submit } from "./queue_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams submit proposal.json`
 * (await submit(ctx)).text; // "<id> at1.<ticket>"
 * ```
 */
export async function submit(ctx: Ctx): Promise<Outcome> {
  const a = await artifactOf(ctx) as unknown as Record<string, unknown>;
  const dryRun = ctx.parsed.flags["dry-run"] === true;
  const kind: "run-request" | "apply-proposal" = a.kind === "command-request"
    ? "run-request"
    : "apply-proposal";
  const waitS = waitSeconds(ctx);
  const s = await submitRequest(
    ctx.project,
    { kind, artifact: a, dry_run: dryRun },
    "orchestrator",
    {
      runnerPublic: runnerKeyOnce(ctx.project, ctx.env),
      waitMs: waitS * 1000,
      now: ctx.now(),
    },
  );
  const ticket = await ticketOf(s);
  ctx.note(
    `agentteams submit: queued ${s.id} (${kind}); wait for it with: agentteams wait ${s.id} ` +
      "< the line above (the ticket opens this result only; keep it as you would the result). " +
      `A runner that has not claimed it by ${s.expires} (--wait-timeout ${waitS} s plus ` +
      `${REQUEST_GRACE_S} s) refuses it, REQUEST_EXPIRED; withdraw it sooner with: ` +
      `agentteams cancel ${s.id}`,
  );
  return {
    exit: 0,
    text: `${s.id} ${ticket}`,
    json: { ok: true, id: s.id, kind, ticket, expires: s.expires ?? null },
  };
}

async function readStdinLine(): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of Deno.stdin.readable) {
    chunks.push(c);
    size += c.length;
    if (size > 16 * 1024) break;
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all).trim();
}

/**
 * Runs `wait`: the ticket (or the whole `ID TICKET` line `submit` printed) on stdin.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { wait } from "./queue_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams wait <id> < ticket`
 * (await wait(ctx)).exit; // the act's exit code
 * ```
 */
export async function wait(ctx: Ctx): Promise<Outcome> {
  const line = await readStdinLine();
  const parts = line.split(/\s+/);
  let id = ctx.parsed.positionals.ID as string;
  let ticket = parts[parts.length - 1] ?? "";
  if (parts.length === 2) {
    if (id !== "-" && parts[0] !== id) {
      throw new UsageError("USAGE", `the ticket on stdin is for ${parts[0]}, not ${id}`);
    }
    id = parts[0];
    ticket = parts[1];
  } else if (id === "-") {
    throw new UsageError("USAGE", "wait -: stdin must carry the line submit printed (ID TICKET)");
  }
  if (ticket === "") {
    throw new UsageError(
      "USAGE",
      `wait ${id}: stdin is empty; give it the ticket (or the whole line) submit printed`,
    );
  }
  let s;
  try {
    s = await fromTicket(id, ticket);
  } catch (e) {
    // A malformed id or ticket is the command line's to fix, as every usage error (exit 2).
    if (e instanceof QueueError && e.code === "REQUEST_INVALID") {
      throw new UsageError("USAGE", `wait ${id}: ${e.message}`);
    }
    throw e;
  }
  const runnerPublic = (await runnerPublicKey(ctx.project, ctx.env)).raw;
  const opened = await waitForResult(ctx.project, s, {
    timeoutMs: waitSeconds(ctx) * 1000,
    runnerPublic,
    note: ctx.note,
  });
  const r: JsonObject = resultOrRefusal(opened);
  return {
    exit: opened.body.exit,
    text: JSON.stringify(r, null, 2),
    json: { ok: opened.body.ok, id, kind: opened.body.kind, result: r },
  };
}

/**
 * Runs `cancel ID`: withdraws a queued request that no runner has claimed yet (from either
 * channel). Nothing acts on a withdrawn request; one already claimed is being served.
 *
 * @throws {UsageError} `USAGE` for a malformed id; {QueueError} `REQUEST_NOT_QUEUED`
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { cancel } from "./queue_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams cancel <id>` for a request still queued
 * (await cancel(ctx)).exit; // 0
 * ```
 */
export function cancel(ctx: Ctx): Promise<Outcome> {
  const id = String(ctx.parsed.positionals.ID);
  if (!isRequestId(id)) {
    throw new UsageError("USAGE", `cancel: ${id} is not a request id (32 lower-case hex)`);
  }
  const withdrawn = withdrawRequest(ctx.project, id, "orchestrator") ||
    withdrawRequest(ctx.project, id, "mcp");
  if (!withdrawn) {
    throw new QueueError(
      "REQUEST_NOT_QUEUED",
      `request ${id} is not queued in ${ctx.project}: a runner claimed it already (it acts on ` +
        "it; see agentteams ledger show), or it was served, withdrawn or never queued",
      { details: { id } },
    );
  }
  return Promise.resolve({
    exit: 0,
    text: `withdrew request ${id}: nothing will act on it`,
    json: { ok: true, id, withdrawn: true },
  });
}
