/**
 * `agentteams gate ACTION [--consume]`: the destructive gate (lib/authz/gate.ts). Exit 0 when
 * the action may run, 1 when it is blocked (the reason on stderr and in `--json`). With
 * `--consume` the clearance or waiver that allowed it is spent, and the spend is recorded in the
 * proposal ledger (a `gate-pass` row naming the action and what allowed it).
 *
 * @module
 */
import { decideGate, passGate } from "../authz/gate.ts";
import { loadLedgerKey } from "../crypto/keys.ts";
import type { GateLedger } from "../authz/gate.ts";
import { operatorSignerIfAny } from "../authz/signed.ts";
import { spentCounts } from "../authz/spent.ts";
import { appendRow } from "../ledger/append.ts";
import { optionalLedgerKey, positional, problemOutcome, triadContext } from "./authz_common.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `gate ACTION [--consume]`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { gate } from "./gate_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams gate delete:old.txt`
 * (await gate(ctx)).exit; // 0 allowed, 1 blocked
 * ```
 */
export async function gate(ctx: Ctx): Promise<Outcome> {
  const action = positional(ctx, "ACTION");
  const consume = ctx.parsed.flags.consume === true;
  // The ledger key first: a spend that could not be recorded must not happen. A read-only gate
  // reads the spends with it when there is one (without it, from the rows alone).
  const key = consume ? loadLedgerKey({ env: ctx.env, mode: "direct" }) : optionalLedgerKey(ctx);
  const ledger: GateLedger | undefined = key === null ? undefined : {
    spent: () => spentCounts(ctx.project, key.hmac),
    record: async (pass) => {
      await appendRow(ctx.project, key.hmac, { action: "gate-pass", agent: "operator", ...pass }, {
        now: ctx.now,
      });
      // The count's index kept up to the row just written (only a spend writes it).
      spentCounts(ctx.project, key.hmac, { persist: true });
    },
  };
  const gctx = {
    ...await triadContext(ctx),
    ...(ledger !== undefined ? { ledger } : {}),
    ...(key !== null ? { indexKey: key.hmac } : {}),
    // Spending an Ed25519 waiver re-signs it with the operator's own key, read from the key dir
    // only then (an HMAC spend never reads it); without one there, the spend is refused.
    ...(consume ? { signer: () => operatorSignerIfAny(ctx.env) } : {}),
  };
  const d = consume
    ? await passGate(ctx.project, action, gctx)
    : await decideGate(ctx.project, action, gctx);
  const json = {
    ok: d.allowed,
    action,
    allowed: d.allowed,
    consumed: consume && d.allowed,
    by: d.authority?.by ?? null,
    ref: d.authority?.ref ?? null,
    halted: d.halted,
    code: d.problem?.code ?? null,
    reason: d.problem?.reason ?? null,
  };
  if (!d.allowed) {
    // The reason is the refusal line's (stderr); stdout says only what was blocked.
    return problemOutcome(`blocked: ${action}`, d.problem!, json);
  }
  const a = d.authority!;
  return {
    exit: 0,
    text: `allowed: ${action} by ${a.by} ${a.ref}${
      consume ? " (consumed; recorded in the ledger)" : ""
    }`,
    json,
  };
}
