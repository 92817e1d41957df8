/**
 * The one recorded sequence every act goes through, for the CLI, the library and the runner
 * alike. An act is a change or deletion proposal applied, or a command request run; each kind
 * supplies its checks and its act ({@link ActSpec}), and this module alone decides the order and
 * what is recorded:
 *
 * 1. the session is ready (brief, confined programs, HOME) and the artifact is validated and of a
 *    kind the act takes;
 * 2. the nonce resolves to its signed dispatch record and an **attempt** is counted (dry runs and
 *    refusals included; its fsync overlaps the checks and is awaited before the use, a dry run's
 *    answer or a refusal row); the agent is the record's, an artifact `agent` that differs is refused.
 *    Then no unretracted HALT may reach the act's action ids (a HALT on `*`, the operator's
 *    emergency stop, reaches every act): `requireNoHalt`, asked again right before the use is
 *    spent;
 * 3. the kind's checks run (gates included) and the write-ahead row must fit the ledger's line
 *    limit; a dry run stops here, having spent no use and written no row;
 * 4. the kind re-checks what could have changed meanwhile; a **use** is spent;
 * 5. the **write-ahead row** is appended, naming the dispatch the use was spent on;
 * 6. the act runs; its **completion row**, when the kind has one, is appended;
 * 7. any refusal before the act started is recorded as an `<action>-refused` row (not on a dry
 *    run, and never when the ledger itself refused: a tampered or unsafe ledger gets no row).
 *    Once the act has started, a failure leaves the write-ahead row without its completion,
 *    which is the signal `ledger verify` and the operator look for.
 *
 * The agent comes from one of two places ({@link ActOptions.identity}): the artifact's nonce
 * (steps 2 and 4 above), or, for the orchestrator's approval of a staged proposal, the staged
 * record the runner verified (its MAC, binding, content hash and expiry; `lib/runner/staged.ts`).
 * Then no nonce is resolved and nothing is counted (staging was the agent's act; approving it
 * is the orchestrator's), and the kind's staged form names the rows (`apply-staged`,
 * `apply-staged-refused`); every other step is the same, the checks and the gates re-run against
 * the tree as it is now.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs session, which it declares rather than makes.
 * import { performAct } from "./pipeline.ts";
 * import { applyAct } from "./apply_act.ts";
 * import type { Session } from "./session.ts";
 * declare const session: Session;
 * const result = await performAct(session, applyAct, JSON.parse(Deno.readTextFileSync("p.json")), {
 *   dryRun: true,
 * });
 * ```
 * @module
 */
import { AgentTeamsError, DispatchError, ProposalError } from "../errors.ts";
import { type AppendResult, appendRow } from "../ledger/append.ts";
import { type DispatchRecord, resolveDispatch } from "../ledger/dispatch.ts";
import { dispatchTag } from "../ledger/dispatch_acts.ts";
import { refusalRow } from "../ledger/row_text.ts";
import { MAX_ROW_BYTES, type RowBody, rowBytes } from "../ledger/row.ts";
import { writeAhead } from "../ledger/write_ahead.ts";
import { type Artifact, validateArtifact } from "../artifacts/artifact.ts";
import { requireNoHalt } from "../authz/stop.ts";
import type { PendingSession, Session } from "./session.ts";

/**
 * A staged proposal the runner verified (`lib/runner/staged.ts` `openStaged`): the agent it was
 * staged for and the artifact as stored (no `dispatch`, no `agent`).
 */
export interface StagedApproval {
  /** The staged record's id (32 hex). */
  readonly sid: string;
  /** The agent, from the verified record. */
  readonly agent: string;
  /** The artifact as the record keeps it. */
  readonly artifact: Readonly<Record<string, unknown>>;
}

/** What one kind of act supplies to the pipeline. */
export interface ActSpec<A extends Artifact, P, V, R> {
  /** The action its refusal rows name (`apply-proposal`, `apply-direct`, `run-request`). */
  readonly action: "apply-proposal" | "apply-direct" | "run-request";
  /**
   * The kind's form for a staged proposal's approval (identity `staged`): the action its
   * write-ahead and refusal rows name, and its write-ahead row. A kind without one is never
   * approved from a staged record.
   */
  readonly staged?: {
    readonly action: "apply-staged";
    ahead(plan: P): RowBody;
  };
  /** Whether the artifact is of a kind this act takes. */
  accepts(a: Artifact): a is A;
  /**
   * The action ids the act is checked under for a HALT (`lib/authz/actions.ts`: `write:PATH`,
   * `delete:PATH`, `run:PROGRAM`); a HALT on `*` reaches every act whatever they are.
   */
  actions(a: A): readonly string[];
  /**
   * The action ids only the checks know (the program a run resolved), checked with
   * {@link actions} right before the use is spent.
   */
  planActions?(plan: P): readonly string[];
  /** The refusal when it is not (e.g. "a command request is run with `run`, not applied"). */
  readonly wrongKind: string;
  /**
   * Refuses a dispatch record the act may not act under (a direct write's nonce must be a direct
   * agent's: short-lived, few uses), right after its attempt is counted. Pure; throws.
   */
  admit?(rec: DispatchRecord, now: Date): void;
  /** Work that may overlap the attempt being counted (started, not awaited). */
  begin?(s: Session): void;
  /** Every check (gates included); returns the plan the act follows. Spends nothing. */
  check(s: Session, a: A, agent: string): Promise<P>;
  /** What a dry run returns. */
  dry(plan: P): R;
  /** Re-checks, right before the use is spent, what could have changed since {@link check}. */
  recheck?(s: Session, plan: P): Promise<void>;
  /** The write-ahead row, naming the dispatch the use was spent on. */
  ahead(plan: P, dispatch: string): RowBody;
  /**
   * The act. `started()` marks the point after which a failure is no longer a refusal (the
   * write-ahead row stands alone instead); `ahead` is what the write-ahead row's append wrote
   * (the ledger's end, for the stores snapshot of an act that runs code). Returns a value and the
   * completion row (`null`: the kind records none, or nothing more may be recorded).
   */
  act(
    s: Session,
    plan: P,
    started: () => void,
    ahead: AppendResult,
  ): Promise<{ value: V; complete: RowBody | null }>;
  /** The result, once the completion row is written; may throw the act's outcome (exit 3). */
  finish(plan: P, value: V): R;
  /** Frees what the plan holds (a private TMPDIR), whatever happened. */
  dispose?(plan: P): void;
}

/** Options of {@link performAct}. */
export interface ActOptions {
  /** Check and run gates only: no use spent, no row written. */
  readonly dryRun?: boolean;
  /**
   * Where the agent comes from: `nonce` (the default), the artifact's dispatch nonce, an attempt
   * and a use counted; `staged`, the orchestrator's approval of a staged proposal: the artifact
   * argument is (a promise of) the {@link StagedApproval} the runner verified, whose agent acts,
   * and nothing is counted. A failure to verify the record (the promise rejected) is recorded as
   * the kind's staged refusal, under agent `?`.
   */
  readonly identity?: "nonce" | "staged";
  /**
   * A check of the agent the nonce resolved to, right after the attempt is counted (the runner's
   * orchestrator channel refuses the agents that act only through their MCP server); it throws
   * the refusal.
   */
  readonly refuseAgent?: (agent: string) => void;
}

/**
 * The nonce a staged record's artifact is validated with: the record keeps no nonce, and the
 * artifact's shape is checked as if it carried one. It is never resolved.
 */
const STAGED_NONCE = "0".repeat(32);

function isStagedApproval(v: unknown): v is StagedApproval {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.sid === "string" && typeof o.agent === "string" &&
    typeof o.artifact === "object" && o.artifact !== null && !Array.isArray(o.artifact);
}

/** Either a ready session or one still loading (whose failures are recorded as refusals). */
export type SessionSource = Session | PendingSession;

function isPending(s: SessionSource): s is PendingSession {
  return "ready" in s;
}

/**
 * Runs one act through the recorded sequence (see the module doc). `artifact` is the parsed JSON
 * (or a promise of it: a file still being read, whose failure is a refusal like any other).
 *
 * @throws the kind's refusals (`ProposalError`, `RequestError`, ...), dispatch, ledger and sandbox
 *   errors, and the kind's outcome errors (`UndeclaredWritesError`, `RunTimeoutError`).
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p with a brief and the operator's ledger key (agentteams keys init)
 * import { performAct } from "./pipeline.ts";
 * import { runAct } from "./run_act.ts";
 * import { startSession } from "./session.ts";
 * const session = startSession({ root: "/work/p", env: Deno.env.toObject() });
 * const r = await performAct(session, runAct, {
 *   kind: "command-request", dispatch: "3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d", argv: ["git", "status"],
 *   purpose: "see what changed",
 * });
 * ```
 */
export async function performAct<A extends Artifact, P, V, R>(
  source: SessionSource,
  spec: ActSpec<A, P, V, R>,
  artifact: unknown,
  opts: ActOptions = {},
): Promise<R> {
  const { root, key, now } = source;
  const staged = opts.identity === "staged" ? spec.staged : undefined;
  if (opts.identity === "staged" && staged === undefined) {
    throw new TypeError(`a ${spec.action} act is never approved from a staged record`);
  }
  const action = staged?.action ?? spec.action;
  let agent = "?";
  let started = false;
  // The attempt row's fsync runs while the checks do; awaited before the use, a dry run's answer
  // and a refusal row, the first things that depend on it being on disk.
  let attemptDurable: Promise<void> = Promise.resolve();
  try {
    const session = isPending(source) ? await source.ready : source;
    const given = await artifact;
    let raw = given;
    if (staged !== undefined) {
      if (!isStagedApproval(given)) throw new TypeError("a staged act takes a StagedApproval");
      agent = given.agent;
      raw = { ...given.artifact, dispatch: STAGED_NONCE };
    }
    const a = validateArtifact(raw);
    if (!spec.accepts(a)) throw new ProposalError("ARTIFACT_INVALID", spec.wrongKind);
    spec.begin?.(session);
    // A staged approval counts nothing: its agent is the verified record's.
    const rec = staged !== undefined ? null : await resolveDispatch(root, key.hmac, a.dispatch, {
      count: "attempt",
      expectAgent: a.agent,
      now,
      attemptSyncLater: true,
    });
    if (rec !== null) {
      attemptDurable = rec.durable;
      agent = rec.agent;
      opts.refuseAgent?.(agent);
      spec.admit?.(rec, now());
    }
    // After the attempt is counted, so the refusal row names the agent.
    const actions = spec.actions(a);
    await requireNoHalt(root, actions, session.decisions, key.hmac);
    const plan = await spec.check(session, a, agent);
    const halting = [...new Set([...actions, ...(spec.planActions?.(plan) ?? [])])];
    try {
      // What only the checks know (a dry run says so too).
      if (halting.length > actions.length) {
        await requireNoHalt(root, halting, session.decisions, key.hmac);
      }
      // The write-ahead row must be recordable before anything is spent (an argv of a thousand
      // long arguments would be refused by the ledger after the use). The use is spent on the
      // same dispatch, whose tag it names.
      const ahead = rec === null ? staged!.ahead(plan) : spec.ahead(plan, dispatchTag(rec.id));
      const bytes = rowBytes(ahead);
      if (bytes > MAX_ROW_BYTES) {
        throw new ProposalError(
          "ARTIFACT_INVALID",
          `the artifact is too large to record: its ${ahead.action} row would be ${bytes} ` +
            `bytes, over the ledger's ${MAX_ROW_BYTES}-byte line limit`,
        );
      }
      await attemptDurable;
      if (opts.dryRun) return spec.dry(plan);
      await spec.recheck?.(session, plan);
      await requireNoHalt(root, halting, session.decisions, key.hmac);
      if (rec !== null) {
        await resolveDispatch(root, key.hmac, a.dispatch, {
          count: "use",
          expectAgent: agent,
          now,
        });
      }
      const value = await writeAhead(
        root,
        key.hmac,
        ahead,
        async (written) => {
          const { value, complete } = await spec.act(session, plan, () => {
            started = true;
          }, written);
          return { result: value, complete };
        },
        { now },
      );
      started = true;
      return spec.finish(plan, value);
    } finally {
      spec.dispose?.(plan);
    }
  } catch (e) {
    if (e instanceof DispatchError && typeof e.details.agent === "string") agent = e.details.agent;
    // Every refusal before the act started is recorded, an unexpected failure too (as
    // `INTERNAL`); only a ledger that refuses rows is left alone.
    // The attempt is on disk before its refusal is (a failed fsync of it is thrown instead, once
    // the refusal is recorded).
    const unsynced = await attemptDurable.then(() => null, (err: unknown) => err);
    if (!opts.dryRun && !started && !(e instanceof AgentTeamsError && e.family === "ledger")) {
      await appendRow(root, key.hmac, refusalRow(action, agent, e), { now });
    }
    throw unsynced ?? e;
  }
}
