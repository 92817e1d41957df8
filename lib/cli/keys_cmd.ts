/**
 * `agentteams keys init`: create the operator keys.
 *
 * @module
 */
import { initKeys, type TriadKeyKind } from "../crypto/keys.ts";
import { shellQuote } from "./shell_quote.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * Runs `keys init`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { keysInit } from "./keys_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams keys init` with HOME=/home/op
 * (await keysInit(ctx)).json?.dir; // "/home/op/.config/agentteams/keys"
 * ```
 */
export async function keysInit(ctx: Ctx): Promise<Outcome> {
  const triad: TriadKeyKind[] = [
    ...(ctx.parsed.flags.decision === true ? ["decision" as const] : []),
    ...(ctx.parsed.flags.waiver === true ? ["waiver" as const] : []),
  ];
  const r = await initKeys({ env: ctx.env, triad });
  const lines = r.made
    ? [
      `created key dir ${r.dir} (0700)`,
      `  ledger key    ${r.ledgerKeyPath} (0600)`,
      `  signing key   ${r.signingKeyPath} (0600, Ed25519 PKCS#8)`,
      `  verify key    ${r.verifyKeyPath} (Ed25519 SPKI, key id ${r.keyId})`,
      `  runner key    ${r.runnerKeyPath} (0600, X25519: seals the runner's results)`,
      `  runner public ${r.runnerPublicKeyPath} (the one key file a waiting CLI reads)`,
    ]
    : [`kept the keys in ${r.dir} (ledger key, Ed25519 pair key id ${r.keyId})`];
  for (const t of r.triad) {
    lines.push(
      `  ${t.kind} key${" ".repeat(9 - t.kind.length)} ${t.path} (0600, HMAC; the triad reads it ` +
        `from ${t.env})`,
    );
  }
  if (r.triad.length > 0) {
    lines.push(
      "To sign, in the operator's shell only (the runner refuses to start with these set):",
      ...r.triad.map((t) => `  export ${t.env}="$(cat ${shellQuote(t.path)})"`),
    );
  }
  lines.push("Keep this directory out of every agent session.");
  return { exit: 0, json: { ok: true, ...r }, text: lines.join("\n") };
}
