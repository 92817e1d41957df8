/**
 * Where the triad's files live. Decisions, waivers and the approver roster sit in the project's
 * `references/`; the grant ledger in the holder's workspace `references/`, and the grant roster and
 * verify keys in the holder's team dir. None is shipped: each is created on first use, and its
 * absence is normal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authzPaths } from "./triad_paths.ts";
 * assert.equal(authzPaths("/p").waivers, "/p/references/security-waivers.log.csv");
 * ```
 * @module
 */
import { join } from "../fs/path.ts";
import {
  DECISIONS_REL,
  GRANTS_REL,
  REFERENCES_DIR,
  ROSTER_REL,
  VERIFY_KEYS_REL,
  WAIVERS_REL,
} from "../layout.ts";

/** The key dir's verify-key store, relative to the key dir. */
export const KEY_DIR_VERIFY_KEYS = "authorized-verify-keys";
/** The key dir's approver roster, relative to the key dir. */
export const KEY_DIR_ROSTER = "security-approvers.txt";

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
 * import { authzPaths } from "./triad_paths.ts";
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
