/**
 * The run act: a command request through the recorded sequence (`pipeline.ts`).
 *
 * - Checks: `lib/requests/request.ts`'s (argv, cwd, writes, program), then git (2.31+, a
 *   worktree), the pinned cwd a real directory inside the project, the sandbox backend (refused
 *   when none is usable, unless the brief allows unconfined runs for direct use), the confinement
 *   plan built and checked (so a command that cannot be confined safely is refused before a use
 *   is spent), and the stdin gates.
 * - The write-ahead row `run-request-start`; then the project is snapshot, the command runs
 *   (confined, its own process group, a sanitized environment, output capped, the entry's
 *   timeout), the project is snapshot again.
 * - If the command touched the ledger, its head or the dispatch store, nothing more is recorded
 *   (`LEDGER_TAMPERED`): the start row without a completion is the signal. Signed appends by
 *   other processes meanwhile (another run, an apply, a dispatch) are told apart by
 *   `lib/ledger/guard.ts` and are not the command's writes. Otherwise a `run-request` (or
 *   `run-request-timeout`) row records the exit, the duration and every undeclared write;
 *   undeclared writes and timeouts then fail with exit 3.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p with a brief and the operator's ledger key (agentteams keys init)
 * import { runAct } from "./run_act.ts";
 * import { performAct } from "./pipeline.ts";
 * import { startSession } from "./session.ts";
 * const session = startSession({ root: "/work/p", env: Deno.env.toObject() });
 * const r = await performAct(session, runAct, JSON.parse(Deno.readTextFileSync("r.json")));
 * r.exit; // the command's exit code
 * ```
 * @module
 */
import { hiddenFromConfined } from "../sandbox/hidden_dirs.ts";
import { within } from "../fs/within.ts";
import { LedgerError, RequestError, RunTimeoutError, UndeclaredWritesError } from "../errors.ts";
import type { GitContext } from "../git/context.ts";
import type { StatusEntry } from "../git/status_z.ts";
import { captureStores, storesProblem } from "../ledger/guard.ts";
import type { AppendResult } from "../ledger/append.ts";
import { ledgerText } from "../ledger/row_text.ts";
import { MAX_ROW_BYTES, type RowBody, rowBytes } from "../ledger/row.ts";
import { childEnv } from "../process/child_env.ts";
import { diskFs, resolveCwd } from "../process/resolve_program.ts";
import type { Artifact } from "../artifacts/artifact.ts";
import { staticPlane } from "../policy/control_plane.ts";
import type { CommandRequestT } from "../artifacts/artifact_schema.ts";
import {
  type CheckedRequest,
  checkRequest,
  GUARDED,
  isTransientStateFile,
  LEDGER_FILES,
  type RunRequestResult,
} from "../requests/request.ts";
import {
  BLIND_SPOT,
  diffSnapshots,
  type Snapshot,
  startStatus,
  takeSnapshot,
  watchKey,
} from "../requests/snapshot.ts";
import { declaredMatcher, writeAllowed } from "../requests/writes.ts";
import type { Backend } from "../sandbox/backend_choice.ts";
import {
  guardedIdentities,
  guardedPathsChanged,
  newReadOnlyEntries,
  scrubGrantedRoots,
} from "../sandbox/read_only_guards.ts";
import {
  makePrivateTmpdir,
  removePrivateTmpdir,
  removePrivateTmpdirSoon,
  runTmpParent,
} from "../sandbox/run_dir.ts";
import { ScanCache, scanCachePath } from "../sandbox/write_root_scan_cache.ts";
import { executeRun, type PreparedRun, prepareRun } from "../sandbox/confined_run.ts";
import type { ConfinedRunResult } from "../sandbox/confined_run.ts";
import type { ActSpec } from "./pipeline.ts";
import { resolvedRunActions, runActions } from "../authz/actions.ts";
import type { Session } from "./session.ts";

/** What the checks settled for one run. */
export interface RunPlan {
  /** The checked request. */
  readonly checked: CheckedRequest;
  /** The project's git context. */
  readonly git: GitContext;
  /** The backend it runs under. */
  readonly backend: Backend;
  /** The confinement, built and checked. */
  readonly prepared: PreparedRun;
  /** The run's private TMPDIR (removed when the act is done). */
  readonly tmpdir: string;
  /** The timeout, in seconds. */
  readonly timeout: number;
  /** The result a dry run returns. */
  readonly base: RunRequestResult;
  /** The first snapshot's `git status`, started before the use is spent. */
  statusBefore: Promise<StatusEntry[]> | null;
  /** The write roots' scan as the last confined run left it (`null` unconfined). */
  readonly scanCache: ScanCache | null;
  /**
   * The private TMPDIR's removal, once the command is done with it (started while the second
   * `git status` runs); `null` until then, and the plan's disposal removes it instead.
   */
  removal: Promise<boolean> | null;
}

/** What the command did, as the completion row records it. */
interface Ran {
  readonly r: ConfinedRunResult;
  readonly undeclared: string[];
}

/** Options of {@link runActWith}. */
export interface RunActOptions {
  /** Bounds the entry's timeout (seconds); the runner sets it for some channels. */
  readonly timeoutCap?: number;
}

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

const dec = new TextDecoder();

async function checkRun(
  s: Session,
  a: CommandRequestT,
  agent: string,
  opts: RunActOptions,
): Promise<RunPlan> {
  const { policy } = s;
  // The request's own checks come first, in their order; should git fail, they are held to the
  // fixed table, and git's failure is the refusal right after them.
  const early = await s.plane().catch(() => staticPlane(s.root));
  const checked = checkRequest(a, agent, { root: s.root, policy, plane: early, parentEnv: s.env });
  const git = await s.git();
  const plane = await s.plane();
  // The pinned cwd must be a real directory inside the project (not a symlink out of it).
  resolveCwd(s.root, checked.match.cwd, diskFs);
  const backend = await s.backend();
  const timeout = Math.min(checked.match.entry.timeout, opts.timeoutCap ?? Infinity);
  // The first snapshot's git status starts now, so git reads the worktree while the plan's scan
  // of the write roots runs here (the scan costs about what git status costs on the same
  // tree). Nothing between here and the command writes the worktree unless a stdin gate runs
  // (a gate's writes must not be taken for the command's): then it starts after the gates.
  const gated = a.stdin_from_content !== undefined && checked.stdin !== null &&
    (checked.match.entry.stdinGates ?? []).length > 0;
  const statusBefore = gated ? null : startStatus(git);
  const tmpdir = makePrivateTmpdir(s.env);
  try {
    // The last confined run's scan of the write roots: the plan lists again only the directories
    // that changed since (the cache is signed with the ledger key; see write_root_scan_cache.ts).
    const scanCache = backend === "unconfined-opt-out"
      ? null
      : await ScanCache.open(scanCachePath(runTmpParent(s.env, Deno.uid()), s.root), s.key.hmac);
    // The plan is built and checked before anything acts: a command that cannot be confined
    // safely is refused without spending a use or writing a start row. Planning creates nothing
    // on disk (bwrap makes the mask points when it runs).
    const prepared = prepareRun({
      project: s.root,
      home: s.home,
      hiddenDirs: hiddenFromConfined(s.root, s.keyDir),
      tmpdir,
      backend,
      agent: policy.confinedPrograms?.agents[agent] ?? { exec: [], write: [] },
      // What the runner's valid write grants add (settled at its start; none in direct mode).
      grantedRoots: await s.grants.live(),
      execOwner: { kind: "agent", agent, source: policy.confinedPrograms?.source ?? null },
      cwd: checked.match.cwd,
      argv: [checked.program.path, ...a.argv.slice(1)],
      env: childEnv(s.env),
      network: checked.match.entry.network,
      networkAllow: checked.match.entry.networkAllow,
      protectedPaths: policy.protectedPaths,
      // What the entry's own writes globs cover of them stays writable (owned protected writes).
      ownedWrites: checked.match.entry.writes,
      controlPlane: plane,
      // The brief, wherever it lies, stays read-only even inside a write root.
      extraReadOnly: [policy.briefPath],
      stdin: checked.stdin,
      timeoutMs: timeout * 1000,
      ...(scanCache === null ? {} : { scanCache }),
    });
    // Stdin gates run once the plan stands, so a command that cannot be confined is refused
    // before any gate runs.
    const stdinFrom = a.stdin_from_content;
    if (stdinFrom !== undefined && checked.stdin !== null) {
      for (const name of checked.match.entry.stdinGates ?? []) {
        const gate = policy.gates[name];
        const r = await s.gateRunner(gate, { content: checked.stdin, rel: stdinFrom.path });
        if (r.exit !== 0) {
          throw new RequestError(
            "GATE_FAILED",
            `stdin gate '${name}' ${r.timedOut ? "timed out" : `exited ${r.exit}`}`,
          );
        }
      }
    }
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
    return {
      checked,
      git,
      backend,
      prepared,
      tmpdir,
      timeout,
      base,
      statusBefore,
      scanCache,
      removal: null,
    };
  } catch (e) {
    removePrivateTmpdir(tmpdir);
    throw e;
  }
}

async function actRun(
  s: Session,
  plan: RunPlan,
  started: () => void,
  ahead: AppendResult,
): Promise<
  { value: Ran; complete: RowBody | null }
> {
  const { git, checked, backend, prepared } = plan;
  const { a, agent, guards } = checked;
  const purpose = ledgerText(a.purpose);
  const confined = backend !== "unconfined-opt-out";
  // The shared stores as they are now (other processes may append while the command runs),
  // read while git status works for the first snapshot: the ledger's end as the start row's
  // append left it (under its lock), the dispatch store under its own.
  const [before, stores] = await bothSettled(
    takeSnapshot(git, { status: plan.statusBefore ?? undefined, statOnly: GUARDED }),
    captureStores(s.root, s.key.hmac, ahead),
  );
  // Acted from here on: a failure before this point (git cannot read the worktree) is a refusal
  // row after the start row; after it, the start row stands alone.
  started();
  const cplan = prepared.plan;
  const guardedBefore = cplan === null ? null : guardedIdentities(cplan);
  const r = await executeRun(prepared);
  // A read-only path inside a write root the command got past by moving a parent, keyed as the
  // write check keys it (so one it also reports is named once).
  const changed = cplan === null || guardedBefore === null
    ? []
    : guardedPathsChanged(cplan, guardedBefore);
  const moved = changed.map((abs) => watchKey(git, abs));
  // The shared stores are checked while git status runs for the second snapshot.
  const second = bothSettled(
    takeSnapshot(git, { previous: before, statOnly: GUARDED }),
    storesProblem(s.root, s.key.hmac, stores, s.now()),
  );
  second.catch(() => {}); // awaited below, after the scan
  // A `.git` (or a protected entry) made in a write root, scanned for while git status works:
  // bwrap could not stop it, and git status never lists a `.git`.
  const appeared = cplan === null ? [] : newReadOnlyEntries(
    cplan,
    s.policy.protectedPaths,
    checked.match.entry.writes,
    undefined,
    prepared.scan ?? undefined,
  )
    .map((abs) => watchKey(git, abs));
  // What it left in another team's workspace that would steer git or agents there is removed at
  // once, and named among the undeclared writes.
  const scrubbed = cplan === null ? [] : (await scrubGrantedRoots(
    cplan,
    (prepared.spec.grantedRoots ?? []).map((g) => g.root),
    changed,
    guardedBefore ?? new Map(),
  )).map((abs) => watchKey(git, abs));
  // Nothing reads the private TMPDIR any more (the scans above are done): it is removed while
  // git status runs, unless it lies in the worktree git lists (a TMPDIR set there), where the
  // second snapshot must see what the command left in it.
  const overlapRemoval = !within(plan.tmpdir, git.top) && !within(plan.tmpdir, s.root);
  if (overlapRemoval) plan.removal = removePrivateTmpdirSoon(plan.tmpdir);
  let after: Snapshot;
  let problem: string | null;
  try {
    [after, problem] = await second;
  } finally {
    plan.removal ??= removePrivateTmpdirSoon(plan.tmpdir);
    await plan.removal;
  }
  // What the plan's scan saw (before the command: a directory it changed is listed again next
  // time, its identity no longer the one recorded).
  if (prepared.scan !== null) plan.scanCache?.save(prepared.scan, plan.tmpdir);
  const declared = declaredMatcher(a.expected_writes ?? [], {
    guards,
    entryWrites: checked.match.entry.writes,
    allowed: (rel) =>
      writeAllowed({ rel, dir: false }, checked.match.entry, checked.agentPolicy, guards.matchers),
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
    !LEDGER_FILES.includes(p) && !isTransientStateFile(s.root, p)
  );
  const undeclared = [...new Set([...seen, ...moved, ...appeared, ...scrubbed])];
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
      // Under a network list, what its proxy refused (an empty list: nothing was).
      ...(r.networkRefused !== null ? { network_refused: [...r.networkRefused] } : {}),
    };
  return { value: { r, undeclared }, complete: withinRowLimit(complete, undeclared) };
}

/**
 * The completion row as recordable: when every undeclared write does not fit the ledger's line
 * limit (thousands of long names), as many as fit, in order, with `undeclared_writes_total`
 * giving how many there were. The run's result and its exit 3 keep them all.
 */
function withinRowLimit(row: RowBody, undeclared: readonly string[]): RowBody {
  if (rowBytes(row) <= MAX_ROW_BYTES) return row;
  const cut = (n: number): RowBody => ({
    ...row,
    undeclared_writes: undeclared.slice(0, n),
    undeclared_writes_total: undeclared.length,
  });
  let lo = 0; // fits (an empty list leaves the row as small as the start row, which fit)
  let hi = undeclared.length; // does not fit
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (rowBytes(cut(mid)) <= MAX_ROW_BYTES) lo = mid;
    else hi = mid;
  }
  return cut(lo);
}

/**
 * The `expected_writes` entries that would declare these paths: each file's directory (`dir/`),
 * or the file itself at the project root, each once; at most eight.
 */
function declarationsFor(paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    if (p.startsWith("/")) continue; // outside the project: nothing declares it
    const cut = p.lastIndexOf("/");
    out.add(cut < 0 ? p : `${p.slice(0, cut)}/`);
  }
  return [...out].slice(0, 8);
}

function finishRun(plan: RunPlan, ran: Ran): RunRequestResult {
  const { r, undeclared } = ran;
  const confined = plan.backend !== "unconfined-opt-out";
  const result: RunRequestResult = {
    ...plan.base,
    exit: r.exit,
    stdout: dec.decode(r.stdout),
    stderr: dec.decode(r.stderr),
    truncated: r.truncated,
    undeclared_writes: undeclared,
    ran: true,
    duration_ms: r.durationMs,
    confined,
    backend: plan.backend,
    survivors_killed: r.survivors,
    ...(r.networkRefused !== null ? { network_refused: [...r.networkRefused] } : {}),
  };
  if (r.timedOut) {
    throw new RunTimeoutError(
      `the command outlived its ${plan.timeout}-second timeout; its process group was killed` +
        (undeclared.length ? ` (undeclared writes: ${undeclared.join(", ")})` : ""),
      result as unknown as Record<string, unknown>,
    );
  }
  if (undeclared.length > 0) {
    throw new UndeclaredWritesError(
      `the command ran (exit ${r.exit}) and wrote what it did not declare: ` +
        `${undeclared.slice(0, 20).join(", ")}` +
        (undeclared.length > 20 ? ` and ${undeclared.length - 20} more` : "") +
        `; nothing was undone. To declare such writes, the request takes "expected_writes": ` +
        `${JSON.stringify(declarationsFor(undeclared))} (where the entry's writes or the ` +
        "agent's scopes allow them)",
      result as unknown as Record<string, unknown>,
    );
  }
  return result;
}

/**
 * The run act, with the entry's timeout bounded by `timeoutCap` seconds (the runner's channels).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runActWith } from "./run_act.ts";
 * const capped = runActWith({ timeoutCap: 120 });
 * assert.equal(capped.action, "run-request");
 * ```
 */
export function runActWith(
  opts: RunActOptions,
): ActSpec<CommandRequestT, RunPlan, Ran, RunRequestResult> {
  return {
    action: "run-request",
    accepts: (a: Artifact): a is CommandRequestT => a.kind === "command-request",
    wrongKind: "a proposal is applied with `apply`, not run",
    actions: (a) => runActions(a.argv[0]),
    planActions: (plan) =>
      resolvedRunActions(
        plan.checked.a.argv[0],
        plan.checked.program.path,
        plan.checked.program.real,
      ),
    // Git's context (rev-parse and the config listing) starts now, so git works while the attempt
    // is counted; it is awaited where its checks come in order, and its failure reported there.
    begin(s) {
      s.git();
      s.plane();
      // The sandbox probe too (bwrap's features, Landlock, a probe sandbox: three processes), so
      // it runs while the attempt is counted and git answers; its failure is reported where the
      // checks come to the backend.
      s.backend().catch(() => {});
    },
    check: (s, a, agent) => checkRun(s, a, agent, opts),
    dry: (plan) => plan.base,
    // The first snapshot's git status runs while the use and the start row are written (git's
    // view of the control plane, where they go, is never compared; the watch reads it later):
    // started by the check, before the plan's scan, unless a stdin gate ran after it.
    recheck(_s, plan) {
      plan.statusBefore ??= startStatus(plan.git);
      return Promise.resolve();
    },
    ahead: (plan, dispatch) => ({
      action: "run-request-start",
      agent: plan.checked.agent,
      // The dispatch the use was spent on: verify counts acts against store uses.
      dispatch,
      argv: [...plan.checked.a.argv],
      purpose: ledgerText(plan.checked.a.purpose),
      confined: plan.backend !== "unconfined-opt-out",
      backend: plan.backend,
    }),
    act: actRun,
    finish: finishRun,
    // (Unless the act already removed it, overlapped with its second snapshot.)
    dispose: (plan) => {
      if (plan.removal === null) removePrivateTmpdir(plan.tmpdir);
    },
  };
}

/** The run act (see the module doc), the entry's own timeout unbounded. */
export const runAct: ActSpec<CommandRequestT, RunPlan, Ran, RunRequestResult> = runActWith({});

/**
 * The exit a run's result maps to, as the CLI's `run` maps it (a signal `-n` is `128 + n`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runExit } from "./run_act.ts";
 * assert.equal(runExit(0), 0);
 * assert.equal(runExit(-9), 137);
 * assert.equal(runExit(null), 1);
 * ```
 */
export function runExit(exit: number | null): number {
  return exit === null ? 1 : exit < 0 ? 128 - exit : exit;
}
