/**
 * `agentteams keys init`: create the operator keys.
 *
 * @module
 */
import { initKeys } from "../crypto/keys.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `keys init`.
 *
 * @example
 * ```ts
 * import { keysInit } from "./keys_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams keys init` with HOME=/home/op
 * (await keysInit(ctx)).json?.dir; // "/home/op/.config/agentteams/keys"
 * ```
 */
export async function keysInit(ctx: Ctx): Promise<Outcome> {
  const r = await initKeys({ env: ctx.env });
  return {
    exit: 0,
    json: { ok: true, ...r },
    text: [
      `created key dir ${r.dir} (0700)`,
      `  ledger key    ${r.ledgerKeyPath} (0600)`,
      `  signing key   ${r.signingKeyPath} (0600, Ed25519 PKCS#8)`,
      `  verify key    ${r.verifyKeyPath} (Ed25519 SPKI, key id ${r.keyId})`,
      `  runner key    ${r.runnerKeyPath} (0600, X25519: seals the runner's results)`,
      `  runner public ${r.runnerPublicKeyPath} (the one key file a waiting CLI reads)`,
      "Keep this directory out of every agent session.",
    ].join("\n"),
  };
}
