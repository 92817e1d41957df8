/**
 * The surface of `lib/queue/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export {
  fromTicket,
  type OutgoingRequest,
  resultOrRefusal,
  submitRequest,
  type Submitted,
  ticketOf,
  waitForResult,
  withdrawRequest,
} from "./client.ts";
export { checkRunnerDirs, ensureQueueDir, ensureRunnerDirs } from "./dirs.ts";
export { BEAT_EVERY_MS, liveRunner, STATUS_NAME, writeStatus } from "./liveness.ts";
export { takeRunnerLock } from "./runner_lock.ts";
export { BRIEF_UNREADABLE_REASON, briefQueueReason, queueModeReason } from "./mode.ts";
export {
  type Channel,
  idOfName,
  isRequestId,
  isTempName,
  type QueuePaths,
  queuePaths,
} from "./queue_paths.ts";
export { checkPins, pinPaths, type Pins, readPins } from "./pins.ts";
export {
  isExpired,
  kindOf,
  MAX_REQUEST_BYTES,
  MCP_TIMEOUT_CAP_S,
  parseRequest,
  type QueueRequestT,
  REQUEST_GRACE_S,
  requestJsonSchema,
  type RequestKind,
  SEALED_REQUEST_V,
  SealedRequestFile,
  type SealedRequestFileT,
  SID_RE,
  toolOfRequest,
} from "./queued_request.ts";
export {
  openRequest,
  type OpenRequestOptions,
  runnerKeyTag,
  sealRequest,
  type SealRequestOptions,
} from "./request_seal.ts";
export {
  PUBLISHED_KEY_NAME,
  publishRunnerKey,
  runnerKeyOnce,
  type RunnerPublic,
  runnerPublicKey,
} from "./runner_key.ts";
export { contextOf, replyKeyOf, type ResultBody, resultText } from "./result.ts";
