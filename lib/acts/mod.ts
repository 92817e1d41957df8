/**
 * The surface of `lib/acts/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { applyAct } from "./apply_act.ts";
export { issueBriefDispatch, issueUnbriefedDispatch } from "./dispatch_act.ts";
export { type ActOptions, type ActSpec, performAct, type StagedApproval } from "./pipeline.ts";
export { runAct, runActWith, runExit } from "./run_act.ts";
export {
  completePolicy,
  NO_GRANTS,
  type PendingSession,
  planeFromGit,
  type Session,
  type SessionGrants,
  sessionOf,
  type SessionOptions,
  startSession,
} from "./session.ts";
