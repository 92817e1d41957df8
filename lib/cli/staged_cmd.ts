/**
 * `agentteams staged list|show SID|apply SID|reject SID --reason TEXT`: the orchestrator's side
 * of the proposals an agent staged through its MCP server (`.agentteams/staged/`, which only the
 * runner reads). Each is a request on the orchestrator's queue, sent and waited for as `dispatch`
 * and `apply` do in queue mode (`queue_mode.ts` `relay`); the runner answers (lib/runner/
 * orchestrator.ts). Without a runner there is nothing to ask: `NO_RUNNER`.
 *
 * @module
 */
import type { JsonObject } from "../pycompat/canonical.ts";
import { UsageError } from "../errors.ts";
import { pyStrip } from "../pycompat/str.ts";
import { checkSid } from "../runner/staged.ts";
import { relay } from "./queue_mode.ts";
import { oneLine, shownText } from "./terminal.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/** The SID positional, checked before anything is queued. */
function sidOf(ctx: Ctx): string {
  const sid = String(ctx.parsed.positionals.SID);
  checkSid(sid);
  return sid;
}

/** One listed record as a line: `<sid>  <kind> <path> for <agent> (<bytes> bytes), expires <t>`. */
function listedLine(r: JsonObject): string {
  if (r.malformed === true) {
    return `${r.sid}  malformed or unverifiable: reject it (agentteams staged reject ${r.sid} ` +
      "--reason ...)";
  }
  const what = r.kind === "delete-proposal" ? "delete" : "change";
  const gates = Array.isArray(r.gates) && r.gates.length > 0
    ? `, gates ${r.gates.map((g) => (g as JsonObject).gate).join(", ")}`
    : "";
  return `${r.sid}  ${what} ${r.path} for ${r.agent} (${r.bytes} bytes${gates}), ` +
    `expires ${r.expires}`;
}

/**
 * Runs `staged list`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { stagedList } from "./staged_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams staged list` with a runner serving
 * (await stagedList(ctx)).text; // "<sid>  change src/a.ts for worker (12 bytes), expires ..."
 * ```
 */
export async function stagedList(ctx: Ctx): Promise<Outcome> {
  const r = await relay(ctx, { kind: "list-staged" });
  const staged = (Array.isArray(r.staged) ? r.staged : []) as JsonObject[];
  return {
    exit: 0,
    text: staged.length === 0 ? "no staged proposals waiting" : staged.map(listedLine).join("\n"),
    json: { ok: true, staged },
  };
}

/**
 * Runs `staged show SID`: the record (content included) as the runner keeps it.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { stagedShow } from "./staged_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams staged show <sid>`
 * (await stagedShow(ctx)).json?.record; // { sid, agent, path, kind, artifact, ... }
 * ```
 */
export async function stagedShow(ctx: Ctx): Promise<Outcome> {
  const sid = sidOf(ctx);
  const record = await relay(ctx, { kind: "show-staged", sid });
  const artifact = (record.artifact ?? {}) as JsonObject;
  // The rationale and the content are the agent's: shown, never obeyed by the terminal (an
  // escape sequence or a carriage return could otherwise show the operator another proposal).
  const head = [
    `staged ${record.sid}: ${record.kind} of ${record.path} for ${record.agent}`,
    `base ${artifact.base_sha256}, expires ${record.expires}`,
    `rationale: ${oneLine(String(artifact.rationale))}`,
  ];
  const body = typeof artifact.content === "string"
    ? [
      `content (${record.bytes} bytes, sha256 ${record.content_sha256}):`,
      shownText(artifact.content),
    ]
    : [];
  return { exit: 0, text: [...head, ...body].join("\n"), json: { ok: true, record } };
}

/**
 * Runs `staged apply SID`: the runner re-runs every check and gate as the record's agent, then
 * writes (or deletes) and removes the record.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { stagedApply } from "./staged_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams staged apply <sid>`
 * (await stagedApply(ctx)).text; // "applied staged <sid>: wrote src/a.ts for worker"
 * ```
 */
export async function stagedApply(ctx: Ctx): Promise<Outcome> {
  const sid = sidOf(ctx);
  const r = await relay(ctx, { kind: "apply-staged", sid });
  const what = r.new_sha256 === null ? "deleted" : "wrote";
  const gates = Array.isArray(r.gates) && r.gates.length > 0
    ? ` after gates ${r.gates.map((g) => (g as JsonObject).gate).join(", ")}`
    : "";
  return {
    exit: 0,
    text: `applied staged ${sid}: ${what} ${r.path} for ${r.agent}${gates}`,
    json: { ok: true, ...r },
  };
}

/**
 * Runs `staged reject SID --reason TEXT`.
 *
 * @throws {UsageError} `USAGE` without a reason (blank counts as none)
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { stagedReject } from "./staged_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams staged reject <sid> --reason "not this way"`
 * (await stagedReject(ctx)).text; // "rejected staged <sid> (src/a.ts for worker)"
 * ```
 */
export async function stagedReject(ctx: Ctx): Promise<Outcome> {
  const sid = sidOf(ctx);
  const reason = ctx.parsed.flags.reason;
  if (typeof reason !== "string" || pyStrip(reason) === "") {
    throw new UsageError(
      "USAGE",
      `staged reject ${sid}: give the reason with --reason TEXT (it is recorded in the ledger)`,
    );
  }
  const r = await relay(ctx, { kind: "reject-staged", sid, reason });
  return {
    exit: 0,
    text: `rejected staged ${sid} (${r.path} for ${r.agent}); nothing was written`,
    json: { ok: true, ...r },
  };
}
