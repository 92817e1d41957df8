/**
 * A change or deletion proposal, checked into a plan and written: the capability the apply act
 * (`lib/acts/apply_act.ts`) drives through the recorded sequence.
 *
 * - {@link checkProposal}: the rationale and content (UTF-8 text within the size cap), the path's
 *   rules (`path_rules.ts`: syntax, the control plane, the brief, protected paths, the agent's
 *   write scopes), a walk of the path from the project root that follows no symlink, a target
 *   that is absent or a regular UTF-8 file, the base (the target's SHA-256, or `absent` exactly
 *   when there is no target), and every gate on a temporary copy of the content.
 * - {@link recheckProposal}: the walk and the base again, right before the use is spent.
 * - {@link proposalRow}: the write-ahead row (`apply-proposal` or `delete-proposal`);
 *   {@link stagedRow}: a staged proposal's approval's (`apply-staged`).
 * - {@link writeProposal}: anchored inode by inode (`lib/fs/anchored_write.ts`), under the
 *   project's dispatch lock: the path walked once more, the base checked on the very file, and
 *   the file replaced atomically or removed. A replaced file keeps its permission bits but never
 *   its setuid, setgid or sticky bit (`replacementMode` in `lib/fs/atomic_write.ts`: the new file
 *   is the operator's); a new file is 0644.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs an artifact and a project, which it declares rather than makes.
 * import { checkProposal } from "./proposal.ts";
 * declare const artifact: Parameters<typeof checkProposal>[0]; // from `readArtifactFile`
 * declare const ctx: Parameters<typeof checkProposal>[2]; // root, policy, plane, gateRunner
 * const plan = await checkProposal(artifact, "worker", ctx);
 * ```
 * @module
 */
import { sha256Hex } from "../crypto/hash.ts";
import { FsSafetyError, ProposalError } from "../errors.ts";
import { childKind, readChild, walkDirs } from "../fs/path_walk.ts";
import { entryKind } from "../fs/entry.ts";
import { wouldBeGitDir } from "../git/repo_shape.ts";
import { anchoredReplace, MAX_ANCHORED_TARGET } from "../fs/anchored_write.ts";
import { withFileLock } from "../ledger/ledger_lock.ts";
import { statePaths } from "../layout.ts";
import { ledgerText } from "../ledger/row_text.ts";
import type { RowBody } from "../ledger/row.ts";
import type { ControlPlane } from "../policy/control_plane.ts";
import type { Policy } from "../policy/types.ts";
import { checkProposalPath } from "./path_rules.ts";
import { type GateResult, type GateRunner, runGates, selectGates } from "./gates.ts";
import type { ChangeProposalT, DeleteProposalT } from "../artifacts/artifact_schema.ts";
import {
  decideGate,
  deletionAction,
  type GateAuthority,
  type GateContext,
  passGate,
} from "../authz/gate.ts";
import { AuthzError } from "../errors.ts";
import type { Env } from "../env.ts";

/** Largest existing target read for its base hash. */
export const MAX_TARGET_BYTES = MAX_ANCHORED_TARGET;

/** What applying a proposal returns (and what `--json` prints). */
export interface ApplyResult {
  /** The agent, from the dispatch record. */
  agent: string;
  /** The normalized path. */
  path: string;
  /** The base it was checked against (`absent` for a new file). */
  base_sha256: string;
  /** SHA-256 of the new content; `null` for a deletion. */
  new_sha256: string | null;
  /** Gates that ran. */
  gates: GateResult[];
  /** Whether the file was written or removed (false on a dry run). */
  written: boolean;
}

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });
const enc = new TextEncoder();

/** What the walk found at the target. */
interface TargetState {
  /** The parent directory's path, or `null` when some parent directory is missing. */
  dir: string | null;
  /** The target's bytes and mode, or `null` when absent. */
  file: { bytes: Uint8Array; mode: number } | null;
}

function safety(e: unknown): never {
  if (e instanceof FsSafetyError) {
    if (e.code === "ANCHOR_UNAVAILABLE") {
      throw new ProposalError("WRITE_UNAVAILABLE", e.message, { cause: e });
    }
    if (e.code === "NOT_WRITABLE") {
      throw new ProposalError(
        "WRITE_UNAVAILABLE",
        `${e.message}: nothing was written (or spent); make the folder writable and apply again`,
        { cause: e },
      );
    }
    if (e.code === "FILE_CHANGED") {
      throw new ProposalError(
        "STALE_BASE",
        `the path or the target changed between the checks and the write (${e.message}); refused`,
      );
    }
    // The anchored helper says where it failed; the path walk's file errors are the target's.
    const atTarget = e.details.at === "target" || e.code === "NOT_REGULAR_FILE" ||
      e.code === "FILE_TOO_LARGE";
    if (atTarget) {
      throw new ProposalError("TARGET_NOT_FILE", `the target cannot be used: ${e.message}`);
    }
    throw new ProposalError(
      "SYMLINK_ESCAPE",
      `a directory on the path is a symlink or not a directory (${e.message}); refused`,
    );
  }
  throw e;
}

async function walkTarget(root: string, segments: readonly string[]): Promise<TargetState> {
  try {
    const dir = walkDirs(root, segments.slice(0, -1));
    if (dir === null) return { dir: null, file: null };
    const name = segments[segments.length - 1];
    const kind = childKind(dir, name);
    if (kind === "missing") return { dir, file: null };
    if (kind !== "file") {
      throw new ProposalError(
        "TARGET_NOT_FILE",
        `the target is ${
          kind === "dir" ? "a directory" : kind === "symlink" ? "a symlink" : "not a regular file"
        }; refused`,
      );
    }
    return { dir, file: await readChild(dir, name, MAX_TARGET_BYTES) };
  } catch (e) {
    if (e instanceof ProposalError) throw e;
    return safety(e);
  }
}

function checkTargetText(file: { bytes: Uint8Array } | null): void {
  if (file === null) return;
  try {
    fatalUtf8.decode(file.bytes);
  } catch {
    throw new ProposalError("TARGET_NOT_UTF8", "the target is not UTF-8 text; refused");
  }
}

function checkBase(base: string, file: { bytes: Uint8Array } | null, rel: string): string {
  const current = file === null ? "absent" : sha256Hex(file.bytes);
  if (base !== current) {
    throw new ProposalError(
      "STALE_BASE",
      base === "absent"
        ? `${rel} exists; a proposal with base 'absent' may only create a file`
        : current === "absent"
        ? `${rel} does not exist; the proposal's base is stale`
        // The current hash is not named: in a race (a directory swapped for a symlink between
        // the walk's check and its read) it could be another file's, readable by the operator
        // only. The agent can read the file again itself.
        : `${rel} changed since the proposal was written (base ${base.slice(0, 12)})`,
    );
  }
  return current;
}

/** What a proposal's checks found: everything its write and its rows need. */
export interface ProposalPlan {
  /** The proposal. */
  readonly a: ChangeProposalT | DeleteProposalT;
  /** The agent, from the dispatch record. */
  readonly agent: string;
  /** The normalized path. */
  readonly rel: string;
  /** Its segments. */
  readonly segments: readonly string[];
  /** The content's bytes (empty for a deletion). */
  readonly content: Uint8Array;
  /** The base checked (`absent` for a new file). */
  readonly base: string;
  /** SHA-256 of the content; `null` for a deletion. */
  readonly newSha: string | null;
  /** The gates that passed. */
  readonly gates: readonly GateResult[];
  /**
   * A deletion under `deletions_need_clearance`: the clearance or waiver for `delete:<path>` the
   * check found (spent at the act, named in the row); `undefined` otherwise.
   */
  readonly clearance?: GateAuthority;
}

/**
 * Refuses a write into a directory git takes for a repository whatever its name (a bare one:
 * `HEAD`, `objects/`, `refs/`), or one that would make a directory on its path one: the
 * operator's next `git` there would obey its config and hooks. Every directory from the project
 * root down to the target's is asked (`lib/git/repo_shape.ts`).
 *
 * @throws {ProposalError} `CONTROL_PLANE`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseGitDirectory } from "./proposal.ts";
 * const root = Deno.makeTempDirSync();
 * // It passes: no repository on the way.
 * assert.doesNotThrow(() => refuseGitDirectory(root, ["src", "a.ts"], "src/a.ts"));
 * ```
 */
export function refuseGitDirectory(root: string, segments: readonly string[], rel: string): void {
  let dir = root;
  for (let i = 0; i < segments.length; i++) {
    if (wouldBeGitDir(dir, segments[i], entryKind)) {
      const at = i === 0 ? "the project root" : segments.slice(0, i).join("/");
      throw new ProposalError(
        "CONTROL_PLANE",
        `${rel} would lie in a git repository (${at} has, or would have, HEAD, objects/ and ` +
          "refs/): git obeys its config and hooks whatever the directory's name; no proposal " +
          "may change it",
      );
    }
    dir = dir === "/" ? `/${segments[i]}` : `${dir}/${segments[i]}`;
  }
}

/** What {@link checkProposal} works with. */
export interface ProposalContext {
  /** Absolute project root. */
  readonly root: string;
  /** The policy. */
  readonly policy: Policy;
  /** The project's control plane. */
  readonly plane: ControlPlane;
  /** Runs one gate (confined). */
  readonly gateRunner: GateRunner;
  /** The environment and clock the destructive gate reads (its keys); needed for deletions under
   * `deletions_need_clearance`. */
  readonly authz?: {
    readonly env: Env;
    readonly now: () => Date;
    /**
     * The trust roots (verify keys, roster, signing) the gate reads with (`lib/authz/trust.ts`),
     * and the operator key an Ed25519 waiver's spend is re-signed with.
     */
    readonly trust?: () => Promise<
      Pick<GateContext, "roster" | "store" | "signingRequired" | "ledger" | "indexKey" | "signer">
    >;
  };
}

/**
 * The destructive gate's check for a deletion when the brief sets `deletions_need_clearance`:
 * the clearance or waiver for `delete:<rel>` that allows it (read-only: nothing is spent here, so
 * a dry run checks without consuming), or `undefined` when the brief does not ask.
 *
 * @throws {AuthzError} the gate's refusal (`NO_CLEARANCE`, `HALTED`, a waiver's rule).
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { deletionClearance, type ProposalContext } from "./proposal.ts";
 * declare const ctx: ProposalContext; // deletions_need_clearance: true, a PASS for delete:old.txt
 * (await deletionClearance("old.txt", ctx))?.by; // "clearance"
 * ```
 */
export async function deletionClearance(
  rel: string,
  ctx: ProposalContext,
): Promise<GateAuthority | undefined> {
  if (ctx.policy.deletionsNeedClearance !== true) return undefined;
  const action = deletionAction(rel);
  const d = await decideGate(ctx.root, action, await gateContext(ctx.authz));
  if (!d.allowed) {
    throw new AuthzError(
      d.problem!.code,
      `deleting ${rel} needs a clearance or waiver for ${action} (deletions_need_clearance): ` +
        d.problem!.reason,
    );
  }
  return d.authority!;
}

/**
 * Spends, at the act, the clearance or waiver a deletion's plan found (the same one, or the act
 * is refused having spent nothing).
 *
 * @throws {AuthzError} as {@link passGate}.
 * @example
 * ```ts ignore
 * // Not run: it needs plan, ctx, which it declares rather than makes.
 * import { spendClearance, type ProposalContext, type ProposalPlan } from "./proposal.ts";
 * declare const plan: ProposalPlan;
 * declare const ctx: ProposalContext;
 * await spendClearance(plan, ctx);
 * ```
 */
export async function spendClearance(
  plan: ProposalPlan,
  ctx: Pick<ProposalContext, "root" | "authz">,
): Promise<void> {
  if (plan.clearance === undefined) return;
  await passGate(ctx.root, deletionAction(plan.rel), await gateContext(ctx.authz), plan.clearance);
}

/** The gate's environment and clock from a proposal's (none given: no keys, the clock now). */
async function gateContext(authz: ProposalContext["authz"]): Promise<GateContext> {
  const trust = authz?.trust === undefined ? {} : await authz.trust();
  return { env: authz?.env ?? {}, now: authz?.now() ?? new Date(), ...trust };
}

/**
 * Every check on one proposal, gates included (see the module doc); writes nothing.
 *
 * @throws {ProposalError} `ARTIFACT_INVALID`, `CONTENT_NOT_UTF8`, `CONTENT_TOO_LARGE`, the path
 *   rules' codes, `TARGET_NOT_FILE`, `TARGET_NOT_UTF8`, `SYMLINK_ESCAPE`, `STALE_BASE`,
 *   `UNKNOWN_GATE`, `GATE_FAILED`.
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { checkProposal } from "./proposal.ts";
 * import type { ProposalContext } from "./proposal.ts";
 * declare const ctx: ProposalContext; // agent `worker` may write docs/
 * const plan = await checkProposal({
 *   kind: "change-proposal", dispatch: "3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d", path: "docs/guide.md",
 *   base_sha256: "absent", content: "# Guide\n", rationale: "add the user guide",
 * }, "worker", ctx);
 * plan.rel; // "docs/guide.md"
 * ```
 */
export async function checkProposal(
  a: ChangeProposalT | DeleteProposalT,
  agent: string,
  ctx: ProposalContext,
): Promise<ProposalPlan> {
  const { rel, segments } = checkProposalPath(a.path, agent, ctx.policy, ctx.plane);
  if (a.kind === "change-proposal") refuseGitDirectory(ctx.root, segments, rel);
  const isChange = a.kind === "change-proposal";
  if (!a.rationale.isWellFormed()) {
    throw new ProposalError("ARTIFACT_INVALID", "rationale: a lone surrogate is not UTF-8 text");
  }
  let content = new Uint8Array(0);
  if (isChange) {
    if (!a.content.isWellFormed()) {
      throw new ProposalError("CONTENT_NOT_UTF8", "the content has a lone surrogate; not UTF-8");
    }
    content = enc.encode(a.content);
    if (content.length > ctx.policy.sizeCap) {
      throw new ProposalError(
        "CONTENT_TOO_LARGE",
        `the content is ${content.length} bytes, over the ${ctx.policy.sizeCap}-byte cap`,
      );
    }
  }
  const first = await walkTarget(ctx.root, segments);
  if (!isChange && first.file === null) {
    throw new ProposalError("STALE_BASE", `${rel} does not exist; nothing to delete`);
  }
  checkTargetText(first.file);
  const base = checkBase(a.base_sha256, first.file, rel);
  const clearance = isChange ? undefined : await deletionClearance(rel, ctx);
  const gateDefs = isChange ? selectGates(ctx.policy, rel, a.gates) : [];
  const gates = await runGates(gateDefs, content, rel, ctx.gateRunner);
  return {
    a,
    agent,
    rel,
    segments,
    content,
    base,
    newSha: isChange ? sha256Hex(content) : null,
    gates,
    ...(clearance === undefined ? {} : { clearance }),
  };
}

/**
 * The result of a plan: `written` says whether the file was written or removed.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs plan, which it declares rather than makes.
 * import { proposalResult, type ProposalPlan } from "./proposal.ts";
 * declare const plan: ProposalPlan;
 * proposalResult(plan, false).written; // false: a dry run
 * ```
 */
export function proposalResult(plan: ProposalPlan, written: boolean): ApplyResult {
  return {
    agent: plan.agent,
    path: plan.rel,
    base_sha256: plan.base,
    new_sha256: plan.newSha,
    gates: plan.gates.map((g) => ({ ...g })),
    written,
  };
}

/**
 * Walks the path again and re-checks the target and the base, right before a use is spent.
 *
 * @throws {ProposalError} as {@link checkProposal}'s target and base checks.
 * @example
 * ```ts ignore
 * // Not run: it needs plan, which it declares rather than makes.
 * import { recheckProposal, type ProposalPlan } from "./proposal.ts";
 * declare const plan: ProposalPlan;
 * await recheckProposal("/work/p", plan); // throws STALE_BASE when the file changed meanwhile
 * ```
 */
export async function recheckProposal(root: string, plan: ProposalPlan): Promise<void> {
  const second = await walkTarget(root, plan.segments);
  checkTargetText(second.file);
  checkBase(plan.a.base_sha256, second.file, plan.rel);
}

/**
 * The write-ahead row of a plan, naming the dispatch its use was spent on (so verify can count
 * each dispatch's acts against the uses its store rows record).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs plan, which it declares rather than makes.
 * import { proposalRow, type ProposalPlan } from "./proposal.ts";
 * declare const plan: ProposalPlan; // a change proposal
 * proposalRow(plan, "3f2a9c0d4b1e").action; // "apply-proposal"
 * ```
 */
export function proposalRow(plan: ProposalPlan, dispatch: string): RowBody {
  return planRow(plan, plan.a.kind === "change-proposal" ? "apply-proposal" : "delete-proposal", {
    dispatch,
  });
}

/**
 * The write-ahead row of a staged proposal's approval (FORMATS.md §1.2: `apply-staged`, a change
 * or a deletion alike): no dispatch (a staged approval spends none), the agent the verified
 * record names.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs plan, which it declares rather than makes.
 * import { stagedRow, type ProposalPlan } from "./proposal.ts";
 * declare const plan: ProposalPlan;
 * stagedRow(plan).action; // "apply-staged"
 * ```
 */
export function stagedRow(plan: ProposalPlan): RowBody {
  return planRow(plan, "apply-staged", {});
}

/** A plan's write-ahead row under `action`, with `extra` after the agent (a dispatch tag). */
function planRow(plan: ProposalPlan, action: string, extra: Record<string, string>): RowBody {
  const rationale = ledgerText(plan.a.rationale);
  if (plan.a.kind === "change-proposal") {
    return {
      action,
      agent: plan.agent,
      ...extra,
      path: plan.rel,
      base: plan.base,
      new: plan.newSha as string,
      bytes: plan.content.length,
      gates: plan.gates.map((g) => ({ ...g })),
      rationale,
    };
  }
  return {
    action,
    agent: plan.agent,
    ...extra,
    path: plan.rel,
    base: plan.base,
    rationale,
    ...(plan.clearance === undefined ? {} : { clearance: { ...plan.clearance } }),
  };
}

/**
 * Writes (or removes) the file, anchored: the walk is repeated inode by inode (missing parents are
 * created), and the base must still hold for the very file that is replaced or removed. Under the
 * project's dispatch lock, so two applies of one base cannot both pass that check and both write
 * (the second would silently undo the first); the lock file already exists, so taking it changes
 * nothing a concurrent run's watch could see. `spend` (a deletion's clearance or waiver, see
 * {@link spendClearance}) runs once the very file to be changed has passed the base check, right
 * before it is changed: a target that changed since the plan is refused with nothing spent.
 *
 * @throws {ProposalError} `STALE_BASE`, `TARGET_NOT_FILE`, `SYMLINK_ESCAPE`, `WRITE_UNAVAILABLE`;
 *   and whatever `spend` throws (nothing is then changed).
 * @example
 * ```ts ignore
 * // Not run: it needs plan, which it declares rather than makes.
 * import { writeProposal, type ProposalPlan } from "./proposal.ts";
 * declare const plan: ProposalPlan;
 * await writeProposal(plan, { root: "/work/p" });
 * ```
 */
export async function writeProposal(
  plan: ProposalPlan,
  opts: { readonly root: string; readonly perl?: string; readonly spend?: () => Promise<void> },
): Promise<void> {
  const isChange = plan.a.kind === "change-proposal";
  // What the spend throws is its own refusal (a HALT, a key it lacks, a triad file it refuses),
  // passed on as it is, never read as the anchored write's.
  let spendFailed = false;
  try {
    await withFileLock(statePaths(opts.root).dispatchLock, () =>
      anchoredReplace({
        root: opts.root,
        dirs: plan.segments.slice(0, -1),
        name: plan.segments[plan.segments.length - 1],
        op: isChange ? "write" : "unlink",
        createDirs: isChange,
        perl: opts.perl,
        decide: async (cur) => {
          checkBase(plan.a.base_sha256, cur, plan.rel);
          try {
            await opts.spend?.();
          } catch (e) {
            spendFailed = true;
            throw e;
          }
          // An existing file keeps its permission bits, never setuid, setgid or sticky
          // (`replacementMode` in lib/fs/atomic_write.ts); a new one is 0644.
          return { newFileMode: 0o644, content: plan.content };
        },
      }));
  } catch (e) {
    if (spendFailed || e instanceof ProposalError) throw e;
    safety(e);
  }
}
