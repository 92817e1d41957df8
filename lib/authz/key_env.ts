/**
 * The triad's key variables (no imports, so the command table can name them without loading the
 * crypto code).
 *
 * @example
 * ```ts
 * import { WAIVER_KEY_ENV } from "./key_env.ts";
 * WAIVER_KEY_ENV; // "AGENTTEAMS_WAIVER_SIGNING_KEY"
 * ```
 * @module
 */

/** The waiver ledger's HMAC key variable. */
export const WAIVER_KEY_ENV = "AGENTTEAMS_WAIVER_SIGNING_KEY";
/** The (non-widening) grant ledger's HMAC key variable. */
export const GRANT_KEY_ENV = "AGENTTEAMS_GRANT_SIGNING_KEY";
/** The decision log's HMAC key variable (its presence makes decision signing active). */
export const DECISION_KEY_ENV = "AGENTTEAMS_DECISION_SIGNING_KEY";
