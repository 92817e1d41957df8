/**
 * The purpose tag an Ed25519 grant signature covers first, so a decision's or a waiver's
 * signature is never a grant and a grant's never a decision.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GRANT_PURPOSE } from "./grant_purpose.ts";
 * assert.equal(GRANT_PURPOSE, "agentteams-grant-v1");
 * ```
 * @module
 */

/** The grant purpose tag. */
export const GRANT_PURPOSE = "agentteams-grant-v1";
