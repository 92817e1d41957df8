/**
 * The surface of `lib/authz/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { applyActions, dispatchActions, resolvedRunActions, runActions } from "./actions.ts";
export {
  checkClearance,
  type Clearance,
  consumeClearance,
  type DecisionContext,
  indexDecisionLog,
  readDecisionLog,
  signDecisionRow,
  verifyDecisions,
} from "./decisions.ts";
export {
  decideGate,
  deletionAction,
  type GateAuthority,
  type GateContext,
  type GateDecision,
  type GateLedger,
  type GatePass,
  passGate,
} from "./gate.ts";
export {
  appendGrant,
  type GrantContext,
  type GrantedWrite,
  type GrantFields,
  type GrantReport,
  type GrantRoots,
  grantsLoadedRow,
  grantStopped,
  grantWriteRoots,
  verifyGrants,
  writeGrantTargets,
  writeRootsOf,
} from "./grants.ts";
export { DECISION_KEY_ENV, GRANT_KEY_ENV, WAIVER_KEY_ENV } from "./key_env.ts";
export { authzPaths, KEY_DIR_ROSTER, KEY_DIR_VERIFY_KEYS } from "./triad_paths.ts";
export {
  keepTriadIndexes,
  requireTriadExtends,
  triadHold,
  type TriadLedger,
  triadWrite,
} from "./triad_index.ts";
export type { TriadHold } from "./triad_hold.ts";
export { type CsvText, MAX_CSV_BYTES, readCsvText } from "./csv.ts";
export {
  NO_TRUSTED_KEYS,
  type OperatorSigner,
  operatorSigner,
  operatorSignerIfAny,
  type SignerSource,
  VerifyKeyStore,
} from "./signed.ts";
export { spentCounts } from "./spent.ts";
export { haltStop, requireNoHalt } from "./stop.ts";
export { trustFor, type TrustRoots } from "./trust.ts";
export { type Finding, findingLine, type Problem } from "./verdict.ts";
export {
  checkWaiver,
  consumeWaiver,
  indexWaivers,
  issueWaiver,
  verifyWaivers,
  type WaiverCheck,
  type WaiverContext,
  type WaiverFields,
} from "./waivers.ts";
