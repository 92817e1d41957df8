/**
 * The authorization triad's entry point (`deno.json` exports `./triad`): the checks of
 * clearances, waivers and grants, the destructive gate and the HALT check (docs/authz.md),
 * read-only unless named consume, pass or issue. The error classes are `lib/mod.ts`'s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deletionAction } from "./triad.ts";
 * assert.equal(deletionAction("docs/old.md"), "delete:docs/old.md");
 * ```
 * @module
 */

// The authorization triad's checks (docs/authz.md): read-only unless named consume/pass/issue.
export { decideGate, deletionAction, passGate } from "./authz/gate.ts";
export type {
  GateAuthority,
  GateContext,
  GateDecision,
  GateLedger,
  GatePass,
} from "./authz/gate.ts";
// The HALT check every act makes (the emergency stop on `*` included), and the trust roots.
export { haltStop, requireNoHalt } from "./authz/stop.ts";
export type { TrustRoots } from "./authz/trust.ts";
export { checkClearance, consumeClearance, verifyDecisions } from "./authz/decisions.ts";
export type { Clearance, DecisionContext } from "./authz/decisions.ts";
export { checkWaiver, consumeWaiver, issueWaiver, verifyWaivers } from "./authz/waivers.ts";
export type { WaiverCheck, WaiverContext, WaiverFields } from "./authz/waivers.ts";
export { grantWriteRoots, verifyGrants } from "./authz/grants.ts";
export type { GrantContext, GrantedWrite, GrantReport, GrantRoots } from "./authz/grants.ts";
export type { Finding as AuthzFinding, Problem } from "./authz/verdict.ts";
export { operatorSigner, operatorSignerIfAny, VerifyKeyStore } from "./authz/signed.ts";
export type { OperatorSigner, SignerSource } from "./authz/signed.ts";
// An operator's write with the ledger key (issueWaiver) takes its hold from triadWrite: the bytes
// it read are checked, the bytes it wrote indexed and anchored (lib/authz/triad_hold.ts).
export { triadHold, triadWrite } from "./authz/triad_index.ts";
export type { CsvText, TriadHold, TriadLedger } from "./authz/mod.ts";

export type { AuthzCode } from "./errors.ts";
export type { Env } from "./env.ts";
