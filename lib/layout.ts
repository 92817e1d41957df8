/**
 * Where the ledger and the dispatch store live inside a project, and the checks that the state
 * directory is what it claims to be (a real directory, never a symlink planted by an agent).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statePaths } from "./layout.ts";
 * assert.equal(statePaths("/repo").ledger, "/repo/.agentteams/proposal-ledger.jsonl");
 * ```
 * @module
 */
import { join } from "./fs/path.ts";
import { FsSafetyError, LedgerError } from "./errors.ts";
import { readRegularFileSync } from "./fs/safe_read.ts";
import { describeKind, lstatOrNullSync } from "./fs/entry.ts";
import { fsyncDirSync } from "./fs/atomic_write.ts";

/** The state directory's name inside a project. */
export const STATE_DIR = ".agentteams";
/** The directory sessions write runner requests into (sealed to the runner; hidden from commands). */
export const QUEUE_DIR = ".agentteams-queue";
/** The session-readable directory the runner publishes its liveness and results into. */
export const STATUS_DIR = ".agentteams-status";

/** The brief names `defaultBriefPath` looks for at the project root, in order. */
export const DEFAULT_BRIEF_NAMES: readonly string[] = Object.freeze([
  "agentteams.jsonc",
  "agentteams.json",
]);

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

/** Agent slugs (`agent_policies` keys, dispatches, queue requests). */
export const SLUG_RE = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Why `agent` is no agent slug, or `null`: the one slug rule, for the library and the CLI.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { slugProblem } from "./layout.ts";
 * assert.equal(slugProblem("worker"), null);
 * assert.equal(slugProblem("Bad Slug"), 'agent slug "Bad Slug" must match ^[a-z0-9][a-z0-9-]*$');
 * ```
 */
export function slugProblem(agent: unknown): string | null {
  if (typeof agent === "string" && SLUG_RE.test(agent)) return null;
  return `agent slug ${JSON.stringify(agent)} must match ^[a-z0-9][a-z0-9-]*$`;
}

/** Every path of the signed state of one project. */
export interface StatePaths {
  /** `<root>/.agentteams` */
  readonly dir: string;
  /** `proposal-ledger.jsonl` */
  readonly ledger: string;
  /** `proposal-ledger.head` */
  readonly head: string;
  /** `dispatches.jsonl` */
  readonly dispatches: string;
  /** `dispatches.lock` (never replaced) */
  readonly dispatchLock: string;
  /** `anchors.json`: the MAC'd cache of the triad anchors every append keeps (lib/ledger/anchor_state.ts) */
  readonly anchors: string;
}

/**
 * The state paths of a project root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statePaths } from "./layout.ts";
 * assert.equal(statePaths("/repo").head, "/repo/.agentteams/proposal-ledger.head");
 * ```
 */
export function statePaths(root: string): StatePaths {
  const dir = join(root, STATE_DIR);
  return {
    dir,
    ledger: join(dir, "proposal-ledger.jsonl"),
    head: join(dir, "proposal-ledger.head"),
    dispatches: join(dir, "dispatches.jsonl"),
    dispatchLock: join(dir, "dispatches.lock"),
    anchors: join(dir, "anchors.json"),
  };
}

/**
 * Refuses a state path that exists as anything but the expected kind (a symlink above all).
 * Returns whether it exists.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkStatePath } from "./layout.ts";
 * assert.equal(checkStatePath("/nonexistent/x", "file"), false);
 * ```
 */
export function checkStatePath(path: string, kind: "file" | "dir"): boolean {
  const st = lstatOrNullSync(path);
  if (st === null) return false;
  if (st.isSymlink) {
    throw new LedgerError("LEDGER_UNSAFE_PATH", `${path} is a symlink; refused`, {
      details: { path },
    });
  }
  if (kind === "file" ? !st.isFile : !st.isDirectory) {
    throw new LedgerError(
      "LEDGER_UNSAFE_PATH",
      `${path} is ${describeKind(st)}, expected a ${
        kind === "file" ? "regular file" : "directory"
      }`,
      { details: { path } },
    );
  }
  return true;
}

/**
 * Reads a state file, `null` when it is absent: {@link checkStatePath} first, then a safe read of
 * at most `maxBytes` (an unsafe file is `LEDGER_UNSAFE_PATH`).
 *
 * @throws {LedgerError} `LEDGER_UNSAFE_PATH`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readStateFileSync } from "./layout.ts";
 * assert.equal(readStateFileSync("/nonexistent/x", "ledger head", 4096), null);
 * ```
 */
export function readStateFileSync(path: string, what: string, maxBytes: number): Uint8Array | null {
  try {
    if (!checkStatePath(path, "file")) return null;
    return readRegularFileSync(path, { maxBytes, what }).bytes;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    if (e instanceof FsSafetyError) {
      throw new LedgerError("LEDGER_UNSAFE_PATH", e.message, { cause: e });
    }
    throw e;
  }
}

/**
 * Creates `<root>/.agentteams` (0700) when missing; refuses a symlink or non-directory there.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ensureStateDir } from "./layout.ts";
 * const p = ensureStateDir(Deno.makeTempDirSync());
 * assert.ok(Deno.statSync(p.dir).isDirectory);
 * ```
 */
export function ensureStateDir(root: string): StatePaths {
  const paths = statePaths(root);
  if (!checkStatePath(paths.dir, "dir")) {
    try {
      Deno.mkdirSync(paths.dir, { mode: 0o700 });
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
    checkStatePath(paths.dir, "dir");
    fsyncDirSync(root);
  }
  return paths;
}
