/**
 * The surface of `lib/proposals/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export {
  confinedGateRunner,
  type GateInput,
  type GateResult,
  type GateRunner,
  selectGates,
} from "./gates.ts";
export {
  type ApplyResult,
  checkProposal,
  type ProposalPlan,
  proposalResult,
  proposalRow,
  recheckProposal,
  spendClearance,
  stagedRow,
  writeProposal,
} from "./proposal.ts";
export { checkRelativePath } from "./path_rules.ts";
