/**
 * Where the triad's files live. Decisions, waivers and the approver roster sit in the project's
 * `references/`; the grant ledger in the holder's workspace `references/`, and the grant roster and
 * verify keys in the holder's team dir. None is shipped: each is created on first use, and its
 * absence is normal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authzPaths } from "./paths.ts";
 * assert.equal(authzPaths("/p").waivers, "/p/references/security-waivers.log.csv");
 * ```
 * @module
 */
import { join } from "../fs/path.ts";

/** The folder every triad file lives in, relative to its root. */
export const REFERENCES_DIR = "references";
/** The decision log (clearances), relative to the project. */
export const DECISIONS_REL = "references/security-decisions.log.csv";
/** The waiver ledger, relative to the project. */
export const WAIVERS_REL = "references/security-waivers.log.csv";
/** The grant ledger, relative to the holder's workspace. */
export const GRANTS_REL = "references/capability-grants.log.csv";
/** The approver roster, relative to the project (decisions, waivers) or team dir (grants). */
export const ROSTER_REL = "references/security-approvers.txt";
/** The Ed25519 verify-key store, relative to the team dir (`<key_id>.pub.pem` inside). */
export const VERIFY_KEYS_REL = "references/authorized-verify-keys";
/** The default team dir, relative to the project (`--team-dir` names another). */
export const DEFAULT_TEAM_DIR_REL = ".agentteams/team";

/** The triad's absolute paths for one project. */
export interface AuthzPaths {
  /** `references/` itself. */
  readonly references: string;
  /** The decision log. */
  readonly decisions: string;
  /** The waiver ledger. */
  readonly waivers: string;
  /** The grant ledger (this project as the holder's workspace). */
  readonly grants: string;
  /** The project's roster (decisions, waivers; ignored for grants). */
  readonly roster: string;
  /** The project's verify-key store (decisions, waivers signed with Ed25519). */
  readonly verifyKeys: string;
}

/**
 * The triad's paths under a project root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authzPaths } from "./paths.ts";
 * assert.equal(authzPaths("/p").decisions, "/p/references/security-decisions.log.csv");
 * ```
 */
export function authzPaths(root: string): AuthzPaths {
  return {
    references: join(root, REFERENCES_DIR),
    decisions: join(root, DECISIONS_REL),
    waivers: join(root, WAIVERS_REL),
    grants: join(root, GRANTS_REL),
    roster: join(root, ROSTER_REL),
    verifyKeys: join(root, VERIFY_KEYS_REL),
  };
}
