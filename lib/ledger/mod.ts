/**
 * The surface of `lib/ledger/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { anchorRow, type Anchors, type AnchorState, lineEndingAt } from "./anchor_state.ts";
export { ledgerAnchors } from "./anchors.ts";
export { type AppendResult, appendRow, type LedgerEnd } from "./append.ts";
export {
  checkpointProblem,
  parseCheckpoint,
  signCheckpoint,
  verifyWithPublicKey,
} from "./checkpoint.ts";
export {
  agentFor,
  type DispatchOptions,
  type DispatchRecord,
  type IssuedDispatch,
  issueDispatch,
  limitsProblem,
  NONCE_RE,
  resolveDispatch,
} from "./dispatch.ts";
export { dispatchTag } from "./dispatch_acts.ts";
export { captureStores, storesProblem } from "./guard.ts";
export { withFileLock } from "./ledger_lock.ts";
export { problemLine } from "./problem_line.ts";
export { repairTornTail } from "./repair.ts";
export { lineVerifies, MAX_ROW_BYTES, type RowBody, rowBytes, utcSeconds } from "./row.ts";
export { ledgerText, refusalRow } from "./row_text.ts";
export {
  assessLedger,
  type LedgerProblem,
  readLedgerTexts,
  type VerifyCode,
  verifyLedgerAt,
  type VerifyReport,
} from "./verify.ts";
export { checkLedgerBytes } from "./verify_rows.ts";
export { writeAhead } from "./write_ahead.ts";
