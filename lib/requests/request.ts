/**
 * A command request, checked into a plan: the capability the run act (`lib/acts/run_act.ts`)
 * drives through the recorded sequence.
 *
 * {@link checkRequest} decides, without running anything: no lone surrogate in any string; a
 * `stdin_from_content.path` that can be handed to a stdin gate; the argv matching one of the
 * agent's allowlisted entries (prefix, whole-string argument patterns, arity, variadic), no
 * argument holding a `..` segment, the cwd the entry's pinned one, `expected_writes` in the
 * entry's `writes` or the agent's scopes and never in the control plane (the table and git's
 * resolved paths); and `argv[0]` resolved on a sanitized PATH, outside the project.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs an artifact and a project, which it declares rather than makes.
 * import { checkRequest } from "./request.ts";
 * declare const artifact: Parameters<typeof checkRequest>[0]; // from `readArtifactFile`
 * declare const ctx: Parameters<typeof checkRequest>[2]; // root, policy, plane, parentEnv
 * const checked = checkRequest(artifact, "worker", ctx);
 * ```
 * @module
 */
import { agentPolicyOf } from "../policy/agents.ts";
import { RequestError } from "../errors.ts";
import { isTempNameFor } from "../fs/atomic_write.ts";
import { entryKind } from "../fs/entry.ts";
import { statePaths } from "../layout.ts";
import type { ControlPlane } from "../policy/control_plane.ts";
import { fnmatch } from "../pycompat/fnmatch.ts";
import { protectedMatch } from "../policy/protected_match.ts";
import { inWriteScopes } from "../policy/scope.ts";
import type { AgentPolicy, Policy } from "../policy/types.ts";
import { lonelySurrogateAt } from "../artifacts/artifact.ts";
import type { CommandRequestT } from "../artifacts/artifact_schema.ts";
import type { Backend } from "../sandbox/backend_choice.ts";
import { diskFs, type ResolvedProgram, resolveProgram } from "../process/resolve_program.ts";
import { matchRequest, type RequestMatch } from "./match.ts";
import { stdinPathProblem } from "./arg_paths.ts";
import type { Guards } from "./writes.ts";

/** What a run returns (and what `--json` prints). */
export interface RunRequestResult {
  /** The agent, from the dispatch record. */
  agent: string;
  /** The argv as requested. */
  argv: string[];
  /** Exit code (negative: the signal); `null` on a dry run. */
  exit: number | null;
  /** Captured stdout (UTF-8, invalid bytes replaced), at most 256 KiB of bytes. */
  stdout: string;
  /** Captured stderr, likewise. */
  stderr: string;
  /** Whether output was cut at the cap. */
  truncated: boolean;
  /** Changed paths nothing declared, sorted. */
  undeclared_writes: string[];
  /** Whether the command ran (false on a dry run). */
  ran: boolean;
  /** Wall time of the command (absent on a dry run). */
  duration_ms?: number;
  /** Whether it ran inside a sandbox. */
  confined?: boolean;
  /** The backend: `bwrap`, `seatbelt` or `unconfined-opt-out`. */
  backend?: Backend;
  /** Whether processes outlived the command and were killed. */
  survivors_killed?: boolean;
  /** Under a network list: each `host:port` the run's proxy refused. */
  network_refused?: string[];
  /** What the undeclared-write check cannot see. */
  blind_spot: string;
}

/** What {@link checkRequest} works with. */
export interface RequestContext {
  /** Absolute project root. */
  readonly root: string;
  /** The loaded policy (with confined programs). */
  readonly policy: Policy;
  /** The project's control plane. */
  readonly plane: ControlPlane;
  /** The parent environment (its PATH is where `argv[0]` is looked up, sanitized). */
  readonly parentEnv: Readonly<Record<string, string | undefined>>;
}

/** A request that passed every check. */
export interface CheckedRequest {
  /** The request. */
  readonly a: CommandRequestT;
  /** The agent, from the dispatch record. */
  readonly agent: string;
  /** The agent's policy entry. */
  readonly agentPolicy: AgentPolicy;
  /** The entry that allows it, and the pinned cwd. */
  readonly match: RequestMatch;
  /** `argv[0]`, resolved. */
  readonly program: ResolvedProgram;
  /** The stdin content's bytes, or `null`. */
  readonly stdin: Uint8Array | null;
  /** The guards every declared and changed path is held to. */
  readonly guards: Guards;
}

/**
 * Every check on a command request that runs nothing (see the module doc).
 *
 * @throws {RequestError} `ARTIFACT_INVALID`, `STDIN_NOT_ALLOWED`, the matcher's codes, and
 *   `argv[0]`'s resolution (`PROGRAM_NOT_FOUND`, `PROGRAM_IN_PROJECT`, ...).
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { checkRequest, type RequestContext } from "./request.ts";
 * declare const ctx: RequestContext; // worker may run `git status --short`
 * const checked = checkRequest({
 *   kind: "command-request", dispatch: "3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d",
 *   argv: ["git", "status", "--short"], purpose: "list changed files",
 * }, "worker", ctx);
 * checked.match.cwd; // "."
 * ```
 */
export function checkRequest(
  a: CommandRequestT,
  agent: string,
  ctx: RequestContext,
): CheckedRequest {
  const { policy } = ctx;
  const guards: Guards = {
    matchers: {
      inScopes: inWriteScopes,
      fnmatch: (rel, glob) => fnmatch(rel, glob),
      isProtected: (rel) => protectedMatch(rel, policy.protectedPaths),
    },
    briefRel: policy.briefRel,
    plane: ctx.plane,
  };
  const bad = lonelySurrogateAt(a, "");
  if (bad !== null) {
    throw new RequestError("ARTIFACT_INVALID", `${bad}: a lone surrogate is not UTF-8 text`);
  }
  if (a.stdin_from_content !== undefined) {
    const problem = stdinPathProblem(a.stdin_from_content.path);
    if (problem !== null) {
      throw new RequestError(
        "STDIN_NOT_ALLOWED",
        `stdin_from_content.path ${JSON.stringify(a.stdin_from_content.path)} ${problem}`,
      );
    }
  }
  const agentPolicy = agentPolicyOf(policy, agent);
  const match = matchRequest(
    {
      argv: a.argv,
      cwd: a.cwd,
      expectedWrites: a.expected_writes,
      hasStdin: a.stdin_from_content !== undefined,
    },
    agentPolicy,
    guards,
  );
  const program = resolveProgram(a.argv[0], {
    path: ctx.parentEnv.PATH,
    projectRoot: ctx.root,
    fs: diskFs,
  });
  const stdinFrom = a.stdin_from_content;
  const stdin = stdinFrom === undefined ? null : new TextEncoder().encode(stdinFrom.content);
  return { a, agent, agentPolicy: agentPolicy!, match, program, stdin, guards };
}

/** The signed state, as the watch keys it (project-relative). */
export const STATE = statePaths("");
/**
 * Ledger files a command must never change (key holders append to them alongside). The anchors
 * file is a MAC'd cache every append rewrites: a forged or stale one costs a reader a re-read of
 * the rows, never an accept.
 */
export const LEDGER_FILES: readonly string[] = [
  STATE.ledger,
  STATE.head,
  STATE.dispatches,
  STATE.dispatchLock,
  STATE.anchors,
];
/**
 * What the watch only stats, never reads: every ledger file. A change to one is never reported as
 * the command's write; the ledger's guard judges the ledger, its head and the dispatch store by
 * their content and the lock by its identity, and the anchors file is the MAC'd cache above (its
 * content, hashed, would decide nothing).
 */
export const GUARDED: ReadonlySet<string> = new Set(LEDGER_FILES);

/**
 * A key holder's temporary file beside the head, the dispatch store or the anchors file
 * (`.<name>.<hex>.tmp`),
 * renamed away before its writer let go of the lock: seen by the watch while it existed, gone now.
 * One that still exists is reported like any other write.
 *
 * @example
 * ```ts
 * import { isTransientStateFile } from "./request.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * assert.equal(isTransientStateFile(root, ".agentteams/.proposal-ledger.head.0123456789abcdef.tmp"), true);
 * assert.equal(isTransientStateFile(root, ".agentteams/.proposal-ledger.head.0a1b.tmp"), false);
 * assert.equal(isTransientStateFile(root, "src/a.ts"), false);
 * ```
 */
export function isTransientStateFile(root: string, rel: string): boolean {
  if (![STATE.head, STATE.dispatches, STATE.anchors].some((f) => isTempNameFor(rel, f))) {
    return false;
  }
  try {
    return entryKind(`${root}/${rel}`) === "missing";
  } catch {
    return false; // cannot tell: reported like any other write
  }
}
