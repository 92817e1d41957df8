/**
 * The surface of `lib/runner/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { DIRECT_MAX_USES, DIRECT_TTL_HOURS } from "./direct_grants.ts";
export { issueDirectGrant, listDirectGrants } from "./direct_grants_issue.ts";
export { holdsDirectGrant } from "./direct_grants_load.ts";
export { loadGrantedRoots, placedGrants } from "./granted.ts";
export { type Check, operatorSettingsInput, preflight, preflightExit } from "./preflight.ts";
export { serve, type ServeReport } from "./serve.ts";
export { checkSid } from "./staged.ts";
