/**
 * `agentteams waiver issue|verify|check`: signed waivers (lib/authz/waivers.ts). `verify` and
 * `check` are read-only; `issue` appends a signed row (HMAC with
 * `AGENTTEAMS_WAIVER_SIGNING_KEY`, or Ed25519 with the operator's key under `--ed25519`).
 *
 * @module
 */
import { checkWaiver, issueWaiver, verifyWaivers } from "../authz/waivers.ts";
import { operatorSigner } from "../authz/signed.ts";
import {
  acceptVerified,
  findingsOutcome,
  maxUsesFlag,
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
 * Runs `waiver verify`: one valid/invalid line per row, nothing changed.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { waiverVerify } from "./waiver_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams waiver verify`
 * (await waiverVerify(ctx)).exit; // 0 when every row is valid
 * ```
 */
export async function waiverVerify(ctx: Ctx, read?: CsvText | null): Promise<Outcome> {
  return findingsOutcome(
    "waiver",
    await verifyWaivers(ctx.project, await triadContext(ctx), read),
    { strict: ctx.parsed.flags.strict === true },
  );
}

/**
 * Runs `waiver accept`: `waiver verify`, then, when no row is invalid, the ledger as it is now
 * is what the gate holds it to.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { waiverAccept } from "./waiver_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams waiver accept`
 * (await waiverAccept(ctx)).exit; // 0 when it verified and was accepted
 * ```
 */
export async function waiverAccept(ctx: Ctx): Promise<Outcome> {
  return await acceptVerified(ctx, "waivers", (read) => waiverVerify(ctx, read));
}

/**
 * Runs `waiver check ACTION`: whether a valid waiver names the action; consumes nothing.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { waiverCheck } from "./waiver_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams waiver check delete:old.txt`
 * (await waiverCheck(ctx)).exit; // 0: a valid waiver names it; 1: none does
 * ```
 */
export async function waiverCheck(ctx: Ctx): Promise<Outcome> {
  const action = positional(ctx, "ACTION");
  const r = await checkWaiver(ctx.project, action, await triadContext(ctx));
  const json = {
    ok: r.ok,
    action,
    waiver_id: r.waiverId,
    line: r.line,
    code: r.problem?.code ?? null,
    reason: r.problem?.reason ?? null,
  };
  if (r.ok) {
    return {
      exit: 0,
      text: `ok: waiver ${r.waiverId} (line ${r.line}) would lift ${action}`,
      json,
    };
  }
  return problemOutcome(`no: ${r.problem!.reason}`, r.problem!, json);
}

/**
 * Runs `waiver issue --id ID --action ACTION --expires ISO --max-uses N --approver NAME
 * --ticket T --reason R [--conditions-verified V] [--ed25519]`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { waiverIssue } from "./waiver_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams waiver issue --id W-1 --action delete:old.txt ...`
 * (await waiverIssue(ctx)).json?.waiver_id; // "W-1"
 * ```
 */
export async function waiverIssue(ctx: Ctx): Promise<Outcome> {
  const maxUses = maxUsesFlag(ctx);
  const signer = ctx.parsed.flags.ed25519 === true ? await operatorSigner(ctx.env) : null;
  const context = { ...await triadContext(ctx), signer };
  const rec = await operatorTriadWrite(ctx, "waivers", (hold) =>
    issueWaiver(ctx.project, {
      waiverId: requiredFlag(ctx, "id"),
      action: requiredFlag(ctx, "action"),
      expiresAt: requiredFlag(ctx, "expires"),
      maxUses,
      approver: requiredFlag(ctx, "approver"),
      ticketId: requiredFlag(ctx, "ticket"),
      reasonCode: requiredFlag(ctx, "reason"),
      conditionsVerified: stringFlag(ctx, "conditions-verified") ?? undefined,
    }, { ...context, hold }));
  return {
    exit: 0,
    text: `issued waiver ${rec.waiver_id} for ${rec.action_reviewed} (${rec.max_uses} use(s), ` +
      `expires ${rec.expires_at}, ${rec.sig_scheme === "ed25519" ? "Ed25519" : "HMAC"}-signed)`,
    json: { ok: true, ...rec },
  };
}
