/**
 * `agentteams grant sign|issue|verify`: capability grants in the holder's workspace (the
 * project) checked against the holder's team dir (`--team-dir`, default
 * `<project>/.agentteams/team`: its `references/security-approvers.txt` and
 * `references/authorized-verify-keys/`). `sign` mints with the operator's Ed25519 key (the only
 * way to a widening grant), `issue` with the HMAC key (non-widening only), `verify` is read-only.
 *
 * @module
 */
import { appendGrant, type GrantFields, verifyGrants, writeRootsOf } from "../authz/grants.ts";
import { operatorSigner } from "../authz/signed.ts";
import { findingsOutcome, maxUsesFlag, requiredFlag, stringFlag } from "./authz_common.ts";
import { teamDirOf } from "./needs.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

function fieldsOf(ctx: Ctx): GrantFields {
  const maxUses = maxUsesFlag(ctx);
  return {
    grantId: requiredFlag(ctx, "id"),
    issuerTeam: requiredFlag(ctx, "issuer-team"),
    holderTeam: requiredFlag(ctx, "holder-team"),
    targetPath: requiredFlag(ctx, "target"),
    permittedOps: requiredFlag(ctx, "ops"),
    expiresAt: requiredFlag(ctx, "expires"),
    maxUses,
    approver: requiredFlag(ctx, "approver"),
    ticketId: requiredFlag(ctx, "ticket"),
    reasonCode: requiredFlag(ctx, "reason"),
    issuerRoot: stringFlag(ctx, "issuer-root") ?? undefined,
  };
}

function written(r: Record<string, string>): Outcome {
  return {
    exit: 0,
    text: `wrote grant ${r.grant_id}: ${r.permitted_ops} ${r.target_path} for ${r.holder_team} ` +
      `(${
        r.sig_scheme === "ed25519" ? `Ed25519, key ${r.key_id}` : "HMAC"
      }, expires ${r.expires_at})`,
    json: { ok: true, ...r },
  };
}

/**
 * Runs `grant sign` (Ed25519, the operator's key from `keys init`).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { grantSign } from "./grant_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams grant sign --id G-1 --ops write ...`
 * (await grantSign(ctx)).json?.sig_scheme; // "ed25519"
 * ```
 */
export async function grantSign(ctx: Ctx): Promise<Outcome> {
  const f = fieldsOf(ctx);
  const signer = await operatorSigner(ctx.env);
  return written(
    await appendGrant(ctx.project, teamDirOf(ctx), f, { env: ctx.env, now: ctx.now() }, signer),
  );
}

/**
 * Runs `grant issue` (HMAC with `AGENTTEAMS_GRANT_SIGNING_KEY`; never `write`).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { grantIssue } from "./grant_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams grant issue --id G-2 --ops read ...`
 * (await grantIssue(ctx)).json?.sig_scheme; // ""
 * ```
 */
export async function grantIssue(ctx: Ctx): Promise<Outcome> {
  return written(
    await appendGrant(ctx.project, teamDirOf(ctx), fieldsOf(ctx), {
      env: ctx.env,
      now: ctx.now(),
    }, null),
  );
}

/**
 * Runs `grant verify`: one valid/invalid line per row, nothing changed.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { grantVerify } from "./grant_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams grant verify`
 * (await grantVerify(ctx)).exit; // 0 when every row is valid
 * ```
 */
export async function grantVerify(ctx: Ctx): Promise<Outcome> {
  const gctx = { env: ctx.env, now: ctx.now() };
  const r = await verifyGrants(ctx.project, teamDirOf(ctx), gctx);
  for (const w of r.warnings) ctx.note(`warning: ${w}`);
  const out = findingsOutcome("grant", r.findings);
  if (ctx.parsed.flags.roots !== true) return out;
  // The write roots a runner of this holder would add at its next start (never while it runs).
  const g = await writeRootsOf(ctx.project, r, gctx);
  const lines = [
    `write roots the holder's runner adds at its next start: ${g.roots.join(", ") || "none"}`,
    ...g.problems.filter((p) => p.includes(": HALTED: ")).map((p) => `not added: ${p}`),
  ];
  return {
    ...out,
    text: [out.text, ...lines].join("\n"),
    json: { ...out.json, write_roots: g.roots, active: g.active, problems: g.problems },
  };
}
