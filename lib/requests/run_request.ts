/**
 * Running a command request, end to end.
 *
 * 1. The artifact is validated; the nonce resolves to the signed dispatch record (an attempt is
 *    counted, dry runs and refusals included); a claimed `agent` must match it.
 * 2. The argv must match one of the agent's allowlisted entries (prefix, whole-string argument
 *    patterns, arity, variadic), no argument may hold a `..` segment, the cwd must be the entry's
 *    pinned one, `expected_writes` must lie in the entry's `writes` or the agent's scopes and
 *    never in the control plane; `argv[0]` is resolved on a sanitized PATH and must not live in
 *    the project. `stdin_from_content` is accepted only by entries with `stdin_gates`, which run
 *    on it first.
 * 3. Git must be 2.31+ and the project a worktree; the sandbox backend is decided (refused when
 *    none is usable, unless the brief allows unconfined runs for direct use).
 * 4. Dry run: stop here. Otherwise a use is spent, the write-ahead `run-request-start` row is
 *    appended, the project is snapshot, the command runs (confined, its own process group, a
 *    sanitized environment, output capped, the entry's timeout), the project is snapshot again.
 * 5. If the command touched the ledger, its head or the dispatch store, nothing more is recorded
 *    (`LEDGER_TAMPERED`): the start row without a completion is the signal. Signed appends by
 *    other processes meanwhile (another run, an apply, a dispatch) are told apart by
 *    `../ledger/guard.ts` and are not the command's writes. Otherwise a
 *    `run-request` (or `run-request-timeout`) row records the exit, the duration and every
 *    undeclared write; undeclared writes and timeouts fail with exit 3.
 *
 * @example
 * ```ts
 * import { runRequest } from "./run_request.ts";
 * // const r = await runRequest(artifact, { root, policy, hmac, backend, parentEnv, home, keyDir });
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import {
  AgentTeamsError,
  DispatchError,
  LedgerError,
  ProposalError,
  RequestError,
  RunTimeoutError,
  UndeclaredWritesError,
} from "../errors.ts";
import { appendRow } from "../ledger/append.ts";
import { writeAhead } from "../ledger/write_ahead.ts";
import type { RowBody } from "../ledger/row.ts";
import { resolveDispatch } from "../ledger/dispatch.ts";
import { dispatchTag } from "../ledger/dispatch_acts.ts";
import { captureStores, storesProblem } from "../ledger/guard.ts";
import { ledgerText, refusalRow } from "../ledger/fields.ts";
import { statePaths } from "../ledger/paths.ts";
import { isTempNameFor } from "../fs/atomic_write.ts";
import { fnmatch, protectedMatch } from "../policy/fnmatch.ts";
import { inWriteScopes } from "../policy/scope.ts";
import type { Policy } from "../policy/types.ts";
import { lonelySurrogateAt, validateArtifact } from "../proposals/artifact.ts";
import type { GateRunner } from "../proposals/gates.ts";
import type { CommandRequestT } from "../proposals/schema.ts";
import type { Backend } from "../sandbox/decide.ts";
import { makePrivateTmpdir, removePrivateTmpdir } from "../sandbox/run_dir.ts";
import { executeRun, prepareRun } from "../sandbox/run_confined.ts";
import { childEnv } from "./env.ts";
import { type GitContext, openGitContext } from "./git.ts";
import { matchRequest } from "./match.ts";
import { diskFs, resolveCwd, resolveProgram } from "./resolve.ts";
import {
  guardedIdentities,
  guardedPathsChanged,
  newReadOnlyEntries,
} from "../sandbox/guards_io.ts";
import { stdinPathProblem } from "./paths.ts";
import { BLIND_SPOT, diffSnapshots, startStatus, takeSnapshot, watchKey } from "./snapshot.ts";
import { declaredMatcher, type Guards, writeAllowed } from "./writes.ts";

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
  /** What the undeclared-write check cannot see. */
  blind_spot: string;
}

/** Options of {@link runRequest}. */
export interface RunRequestOptions {
  /** Absolute project root. */
  root: string;
  /** The loaded policy (with confined programs). */
  policy: Policy;
  /** The ledger HMAC. */
  hmac: HmacKey;
  /** Check only. */
  dryRun?: boolean;
  /** Decides the backend (probing once). */
  backend: () => Promise<Backend>;
  /** The parent environment (read by name at start). */
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** The operator's home. */
  home: string;
  /** The key dir (hidden from the command). */
  keyDir: string;
  /** Runs a stdin gate on `stdin_from_content`. */
  gateRunner: GateRunner;
  /** Bounds the entry's timeout (seconds); the runner sets it for some channels. */
  timeoutCap?: number;
  /** The clock. */
  now?: () => Date;
  /**
   * The project's git context, when the caller started it already (the CLI does, to name git's
   * paths in its permission needs); default: started here.
   */
  git?: Promise<GitContext>;
}

/** The signed state, as the watch keys it (project-relative). */
const STATE = statePaths("");
/** Ledger files a command must never change (key holders append to them alongside). */
const LEDGER_FILES = [STATE.ledger, STATE.head, STATE.dispatches, STATE.dispatchLock];
/** Compared by content by the ledger's guard, so the watch only stats them. */
const GUARDED: ReadonlySet<string> = new Set([STATE.ledger, STATE.dispatches]);

/**
 * A key holder's temporary file beside the head or the dispatch store (`.<name>.<hex>.tmp`),
 * renamed away before its writer let go of the lock: seen by the watch while it existed, gone now.
 * One that still exists is reported like any other write.
 */
function isTransientStateFile(root: string, rel: string): boolean {
  if (!isTempNameFor(rel, STATE.head) && !isTempNameFor(rel, STATE.dispatches)) return false;
  try {
    Deno.lstatSync(`${root}/${rel}`);
    return false;
  } catch (e) {
    return e instanceof Deno.errors.NotFound;
  }
}

const dec = new TextDecoder();

/**
 * Both values, once both promises have settled; a failure of `a` is thrown before one of `b`, so
 * which refusal is reported never depends on which finished first.
 */
async function bothSettled<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === "rejected") throw ra.reason;
  if (rb.status === "rejected") throw rb.reason;
  return [ra.value, rb.value];
}

/**
 * Checks and runs one command request (see the module doc).
 *
 * @throws {RequestError}, {@link UndeclaredWritesError} and {@link RunTimeoutError} (exit 3, with
 *   `.result`), dispatch, ledger and sandbox errors. Refusals before the command ran are recorded
 *   as `run-request-refused` rows (not on a dry run).
 * @example
 * ```ts
 * import { runRequest } from "./run_request.ts";
 * import { lazyBackend } from "../sandbox/backend.ts";
 * import type { HmacKey } from "../crypto/hash.ts";
 * import type { Policy } from "../policy/types.ts";
 * import type { GateRunner } from "../proposals/gates.ts";
 * declare const policy: Policy; // with confined programs (`withConfinedPrograms`)
 * declare const hmac: HmacKey;
 * declare const gateRunner: GateRunner; // from `confinedGateRunner`
 * const r = await runRequest({
 *   kind: "command-request", dispatch: "3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d",
 *   argv: ["git", "status", "--short"], purpose: "list changed files",
 * }, {
 *   root: "/work/p", policy, hmac, backend: lazyBackend(policy, { unconfined: false }),
 *   parentEnv: Deno.env.toObject(), home: "/home/op", keyDir: "/home/op/.config/agentteams/keys",
 *   gateRunner,
 * });
 * r.exit; // git's exit code; the run is recorded as a `run-request` row
 * ```
 */
export async function runRequest(
  artifact: unknown,
  opts: RunRequestOptions,
): Promise<RunRequestResult> {
  const now = opts.now ?? (() => new Date());
  let agent = "?";
  let acted = false;
  try {
    const a = validateArtifact(artifact);
    if (a.kind !== "command-request") {
      throw new ProposalError("ARTIFACT_INVALID", "a proposal is applied with `apply`, not run");
    }
    // Git's context (one read-only rev-parse) starts now, so git works while the attempt is
    // counted; it is awaited where its checks come in order, and its failure reported there.
    const gitStarted = opts.git ?? openGitContext(opts.root, { parentEnv: opts.parentEnv });
    gitStarted.catch(() => {});
    const rec = await resolveDispatch(opts.root, opts.hmac, a.dispatch, {
      count: "attempt",
      expectAgent: a.agent,
      now,
    });
    agent = rec.agent;
    return await runChecked(a, agent, gitStarted, opts, now, () => {
      acted = true;
    });
  } catch (e) {
    if (e instanceof DispatchError && typeof e.details.agent === "string") agent = e.details.agent;
    // Every refusal before the command ran is recorded, an unexpected failure too (as `INTERNAL`,
    // the way apply records one); only a ledger that refuses rows is left alone. Once the command
    // has run, the start row without a completion marks the failure.
    if (!opts.dryRun && !acted && !(e instanceof AgentTeamsError && e.family === "ledger")) {
      await appendRow(opts.root, opts.hmac, refusalRow("run-request", agent, e), { now });
    }
    throw e;
  }
}

async function runChecked(
  a: CommandRequestT,
  agent: string,
  gitStarted: Promise<GitContext>,
  opts: RunRequestOptions,
  now: () => Date,
  markActed: () => void,
): Promise<RunRequestResult> {
  const { policy } = opts;
  const guards: Guards = {
    matchers: {
      inScopes: inWriteScopes,
      fnmatch: (rel, glob) => fnmatch(rel, glob),
      isProtected: (rel) => protectedMatch(rel, policy.protectedPaths),
    },
    briefRel: policy.briefRel,
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
  const agentPolicy = Object.hasOwn(policy.agents, agent) ? policy.agents[agent] : undefined;
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
  const parent = opts.parentEnv;
  const program = resolveProgram(a.argv[0], {
    path: parent.PATH,
    projectRoot: opts.root,
    fs: diskFs,
  });
  const stdinFrom = a.stdin_from_content;
  const stdin = stdinFrom === undefined ? null : new TextEncoder().encode(stdinFrom.content);
  const git = await gitStarted;
  // The pinned cwd must be a real directory inside the project (not a symlink out of it).
  resolveCwd(opts.root, match.cwd, diskFs);
  const backend = await opts.backend();
  const base: RunRequestResult = {
    agent,
    argv: [...a.argv],
    exit: null,
    stdout: "",
    stderr: "",
    truncated: false,
    undeclared_writes: [],
    ran: false,
    blind_spot: BLIND_SPOT,
  };
  const timeout = Math.min(match.entry.timeout, opts.timeoutCap ?? Infinity);
  const tmpdir = makePrivateTmpdir();
  try {
    // The plan is built and checked before anything acts: a command that cannot be confined
    // safely is refused without spending a use or writing a start row.
    const prepared = prepareRun({
      project: opts.root,
      home: opts.home,
      hiddenDirs: [opts.keyDir],
      tmpdir,
      backend,
      agent: policy.confinedPrograms?.agents[agent] ?? { exec: [], write: [] },
      cwd: match.cwd,
      argv: [program.path, ...a.argv.slice(1)],
      env: childEnv(parent),
      network: match.entry.network,
      protectedPaths: policy.protectedPaths,
      extraReadOnly: [
        // The brief, wherever it lies, and git's behaviour-changing paths stay read-only even
        // inside a write root.
        policy.briefPath,
        git.watched.hooks,
        git.watched.config,
        git.watched.configWorktree,
        git.watched.info,
      ],
      stdin,
      timeoutMs: timeout * 1000,
    });
    // Stdin gates run once the plan stands, so a command that cannot be confined is refused
    // before any gate runs.
    if (stdinFrom !== undefined && stdin !== null) {
      for (const name of match.entry.stdinGates ?? []) {
        const gate = policy.gates[name];
        const r = await opts.gateRunner(gate, { content: stdin, rel: stdinFrom.path });
        if (r.exit !== 0) {
          throw new RequestError(
            "GATE_FAILED",
            `stdin gate '${name}' ${r.timedOut ? "timed out" : `exited ${r.exit}`}`,
          );
        }
      }
    }
    // Planning creates nothing on disk (bwrap makes the mask points when it runs).
    if (opts.dryRun) return base;
    // The first snapshot's git status runs while the use and the start row are written (git's
    // view of the control plane, where they go, is never compared; the watch reads it later).
    const statusBefore = startStatus(git);
    const used = await resolveDispatch(opts.root, opts.hmac, a.dispatch, {
      count: "use",
      expectAgent: agent,
      now,
    });
    const purpose = ledgerText(a.purpose);
    const confined = backend !== "unconfined-opt-out";
    // Write-ahead: the start row, the command, then its completion row; a command that touched
    // the ledger gets no completion row, so the lone start row marks it.
    const outcome = await writeAhead(opts.root, opts.hmac, {
      action: "run-request-start",
      agent,
      // The dispatch the use was spent on: verify counts acts against store uses.
      dispatch: dispatchTag(used.id),
      argv: [...a.argv],
      purpose,
      confined,
      backend,
    }, async () => {
      // The shared stores as they are now (other processes may append while the command runs),
      // read while git status works for the first snapshot.
      const [before, stores] = await bothSettled(
        takeSnapshot(git, { status: statusBefore, statOnly: GUARDED }),
        captureStores(opts.root, opts.hmac),
      );
      // Acted from here on: a failure before this point (git cannot read the worktree) is a
      // refusal row after the start row; after it, the start row stands alone.
      markActed();
      const plan = prepared.plan;
      const guardedBefore = plan === null ? null : guardedIdentities(plan);
      const r = await executeRun(prepared);
      // A read-only path inside a write root the command got past by moving a parent, keyed as
      // the write check keys it (so one it also reports is named once).
      const moved = plan === null || guardedBefore === null
        ? []
        : guardedPathsChanged(plan, guardedBefore).map((abs) => watchKey(git, abs));
      // The shared stores are checked while git status runs for the second snapshot.
      const second = bothSettled(
        takeSnapshot(git, { previous: before, statOnly: GUARDED }),
        storesProblem(opts.root, opts.hmac, stores, now()),
      );
      second.catch(() => {}); // awaited below, after the scan
      // A `.git` (or a protected entry) made in a write root, scanned for while git status works:
      // bwrap could not stop it, and git status never lists a `.git`.
      const appeared = plan === null
        ? []
        : newReadOnlyEntries(plan, policy.protectedPaths).map((abs) => watchKey(git, abs));
      const [after, problem] = await second;
      const declared = declaredMatcher(a.expected_writes ?? [], {
        guards,
        allowed: (rel) =>
          writeAllowed({ rel, dir: false }, match.entry, agentPolicy!, guards.matchers),
      });
      const check = diffSnapshots(before, after, declared);
      // The ledger, its head and the dispatch store change when key holders append alongside
      // (another run, an apply, a dispatch); the guard tells those from the command's doing.
      if (problem !== null) {
        const touched = check.changed.filter((p) => LEDGER_FILES.includes(p));
        throw new LedgerError(
          "LEDGER_TAMPERED",
          `the command changed ${touched.length > 0 ? touched.join(", ") : "the ledger"} ` +
            `(${problem}); nothing more is recorded. The run-request-start row without a ` +
            "completion marks it: inspect with `agentteams ledger verify`",
        );
      }
      const seen = check.undeclared.filter((p) =>
        !LEDGER_FILES.includes(p) && !isTransientStateFile(opts.root, p)
      );
      const undeclared = [...new Set([...seen, ...moved, ...appeared])];
      const complete: RowBody = r.timedOut
        ? {
          action: "run-request-timeout",
          agent,
          argv: [...a.argv],
          group_killed: r.groupKilled,
          undeclared_writes: undeclared,
          purpose,
          duration_ms: r.durationMs,
        }
        : {
          action: "run-request",
          agent,
          argv: [...a.argv],
          exit: r.exit,
          undeclared_writes: undeclared,
          purpose,
          duration_ms: r.durationMs,
          confined,
          backend,
          survivors_killed: r.survivors,
        };
      return { result: { r, undeclared }, complete };
    }, { now });
    const { r, undeclared } = outcome;
    const result: RunRequestResult = {
      ...base,
      exit: r.exit,
      stdout: dec.decode(r.stdout),
      stderr: dec.decode(r.stderr),
      truncated: r.truncated,
      undeclared_writes: undeclared,
      ran: true,
      duration_ms: r.durationMs,
      confined,
      backend,
      survivors_killed: r.survivors,
    };
    if (r.timedOut) {
      throw new RunTimeoutError(
        `the command outlived its ${timeout}-second timeout; its process group was killed` +
          (undeclared.length ? ` (undeclared writes: ${undeclared.join(", ")})` : ""),
        result as unknown as Record<string, unknown>,
      );
    }
    if (undeclared.length > 0) {
      throw new UndeclaredWritesError(
        `the command wrote what it did not declare: ${undeclared.slice(0, 20).join(", ")}` +
          (undeclared.length > 20 ? ` and ${undeclared.length - 20} more` : ""),
        result as unknown as Record<string, unknown>,
      );
    }
    return result;
  } finally {
    removePrivateTmpdir(tmpdir);
  }
}
