/**
 * `agentteams clearance check ACTION` and `agentteams decision sign|verify`: the decision log
 * (lib/authz/decisions.ts). `clearance check` and `decision verify` are read-only.
 *
 * @module
 */
import { checkClearance, signDecisionRow, verifyDecisions } from "../authz/decisions.ts";
import { operatorSigner } from "../authz/signed.ts";
import {
  acceptVerified,
  findingsOutcome,
  operatorTriadWrite,
  positional,
  problemOutcome,
  requiredFlag,
  stringFlag,
  triadContext,
} from "./authz_common.ts";
import type { CsvText } from "../authz/mod.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `clearance check ACTION`: what the gate's clearance step would decide, consuming nothing.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { clearanceCheck } from "./clearance_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams clearance check delete:old.txt`
 * (await clearanceCheck(ctx)).exit; // 0: cleared; 1: not
 * ```
 */
export async function clearanceCheck(ctx: Ctx): Promise<Outcome> {
  const action = positional(ctx, "ACTION");
  const c = await checkClearance(ctx.project, action, await triadContext(ctx));
  const json = {
    ok: c.allowed,
    action,
    line: c.line,
    halted: c.halted,
    code: c.problem?.code ?? null,
    reason: c.problem?.reason ?? null,
  };
  if (c.allowed) {
    return {
      exit: 0,
      text: `ok: decision log line ${c.line} clears ${action} (not consumed)`,
      json,
    };
  }
  return problemOutcome(`no: ${c.problem!.reason}`, c.problem!, json);
}

/**
 * Runs `decision verify`: the chain and each authorizing row, one line per row.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { decisionVerify } from "./clearance_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams decision verify`
 * (await decisionVerify(ctx)).exit; // 0 when every row verifies
 * ```
 */
export async function decisionVerify(ctx: Ctx, read?: CsvText | null): Promise<Outcome> {
  return findingsOutcome(
    "decision",
    await verifyDecisions(ctx.project, await triadContext(ctx), read),
  );
}

/**
 * Runs `decision accept`: `decision verify`, then, when it passed, the log as it is now is what
 * the gate holds it to.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { decisionAccept } from "./clearance_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams decision accept`
 * (await decisionAccept(ctx)).exit; // 0 when it verified and was accepted
 * ```
 */
export async function decisionAccept(ctx: Ctx): Promise<Outcome> {
  return await acceptVerified(ctx, "decisions", (read) => decisionVerify(ctx, read));
}

/**
 * Runs `decision sign --action A --verdict V [--owner O] [--plan P] [--step S] [--conditions C]
 * [--conditions-verified V] [--evidence E] [--ed25519]`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { decisionSign } from "./clearance_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams decision sign --action delete:old.txt --verdict PASS`
 * (await decisionSign(ctx)).json?.status; // "PASS"
 * ```
 */
export async function decisionSign(ctx: Ctx): Promise<Outcome> {
  const signer = ctx.parsed.flags.ed25519 === true ? await operatorSigner(ctx.env) : null;
  const opt = (n: string) => stringFlag(ctx, n) ?? undefined;
  const context = { ...await triadContext(ctx), signer };
  const r = await operatorTriadWrite(ctx, "decisions", (hold) =>
    signDecisionRow(ctx.project, {
      action: requiredFlag(ctx, "action"),
      verdict: requiredFlag(ctx, "verdict"),
      owner: opt("owner"),
      plan: opt("plan"),
      step: opt("step"),
      conditions: opt("conditions"),
      conditionsVerified: opt("conditions-verified"),
      evidence: opt("evidence"),
    }, { ...context, hold }));
  const verdict = r.status ?? r.verdict;
  const action = r.decision ?? r.action_reviewed;
  return {
    exit: 0,
    text: `signed ${verdict} for ${action} (${r.sig_scheme === "ed25519" ? "Ed25519" : "HMAC"})`,
    json: { ok: true, ...r },
  };
}
