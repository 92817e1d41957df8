/**
 * `agentteams apply FILE [--dry-run]`: check and apply a change or deletion proposal.
 *
 * @module
 */
import { resolve } from "node:path";
import { readArtifactFile } from "../proposals/artifact.ts";
import { applyProposal } from "../proposals/apply.ts";
import { confinedGateRunner } from "../proposals/gates.ts";
import { appendRow } from "../ledger/append.ts";
import { AgentTeamsError } from "../errors.ts";
import { reasonText } from "../ledger/fields.ts";
import { actingContext } from "./policy_ctx.ts";
import type { Ctx, Outcome } from "./types.ts";

/** Runs `apply`. */
export async function apply(ctx: Ctx): Promise<Outcome> {
  const acting = await actingContext(ctx);
  const dryRun = ctx.parsed.flags["dry-run"] === true;
  let artifact;
  try {
    artifact = readArtifactFile(resolve(ctx.parsed.positionals.FILE as string));
  } catch (e) {
    if (!dryRun && e instanceof AgentTeamsError) {
      await appendRow(ctx.project, acting.key.hmac, {
        action: "apply-proposal-refused",
        agent: "?",
        reason: reasonText(e.message),
        code: e.code,
      }, { now: ctx.now });
    }
    throw e;
  }
  const r = await applyProposal(artifact, {
    root: ctx.project,
    policy: acting.policy,
    hmac: acting.key.hmac,
    dryRun,
    now: ctx.now,
    gateRunner: async (gate, input) =>
      await confinedGateRunner({
        root: ctx.project,
        policy: acting.policy,
        parentEnv: ctx.env,
        home: acting.home,
        keyDir: acting.keyDir,
        backend: await acting.backend(),
      })(gate, input),
  });
  const what = r.new_sha256 === null ? "deleted" : "wrote";
  const gates = r.gates.length ? ` after gates ${r.gates.map((g) => g.gate).join(", ")}` : "";
  return {
    exit: 0,
    text: r.written
      ? `${what} ${r.path} for ${r.agent}${gates}`
      : `dry run: ${r.path} for ${r.agent} passes every check${gates}; nothing written`,
    json: { ok: true, ...r },
  };
}
