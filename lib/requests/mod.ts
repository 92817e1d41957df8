/**
 * The surface of `lib/requests/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export {
  type CheckedRequest,
  checkRequest,
  GUARDED,
  isTransientStateFile,
  LEDGER_FILES,
  type RunRequestResult,
} from "./request.ts";
export {
  BLIND_SPOT,
  diffSnapshots,
  type Snapshot,
  startStatus,
  takeSnapshot,
  watchKey,
} from "./snapshot.ts";
export { declaredMatcher, writeAllowed } from "./writes.ts";
