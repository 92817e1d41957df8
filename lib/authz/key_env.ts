/**
 * The triad's key variables, as the command table and the instruments name them (defined with
 * the other key variables in lib/crypto/keys.ts).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WAIVER_KEY_ENV } from "./key_env.ts";
 * assert.equal(WAIVER_KEY_ENV, "AGENTTEAMS_WAIVER_SIGNING_KEY");
 * ```
 * @module
 */
export { DECISION_KEY_ENV, GRANT_KEY_ENV, WAIVER_KEY_ENV } from "../crypto/keys.ts";
