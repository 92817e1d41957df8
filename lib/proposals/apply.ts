/**
 * Applying change and deletion proposals.
 *
 * 1. The artifact is validated (schema); the nonce is resolved to the signed dispatch record and
 *    an attempt is counted (dry runs and refusals included). The agent is the record's, never the
 *    artifact's; an artifact `agent` that differs is refused.
 * 2. The path passes the rules of `path_rules.ts`; then it is walked on disk from the project
 *    root without following any symlink (a symlinked component is refused), and the target must
 *    be absent or a regular UTF-8 file.
 * 3. Content: UTF-8 text (no lone surrogates) within 256 KiB. Base: the target's SHA-256, or
 *    `absent` exactly when there is no target.
 * 4. Gates: every requested gate and every gate whose glob matches the path run on a temporary
 *    copy of the content; a non-zero exit refuses.
 * 5. Dry run: stop here, having changed nothing and spent no use.
 * 6. Otherwise: the destination is walked again and the base re-checked; a use is spent; the
 *    write-ahead ledger row is appended; then, anchored inode by inode (`lib/fs/anchored_write.ts`),
 *    the path is walked once more, the base checked on the very file, and the file replaced
 *    atomically (its permission bits kept without setuid, setgid and sticky, new files 0644: see
 *    `replacementMode` in `lib/fs/atomic_write.ts`; the new file is the operator's) or removed.
 *
 * Every refusal outside a dry run is recorded as an `apply-proposal-refused` row.
 *
 * @example
 * ```ts
 * import { applyProposal } from "./apply.ts";
 * // const r = await applyProposal(artifact, { root, policy, hmac, gateRunner });
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { AgentTeamsError, DispatchError, FsSafetyError, ProposalError } from "../errors.ts";
import { childKind, readChild, walkDirs } from "../fs/path_walk.ts";
import { anchoredReplace, MAX_ANCHORED_TARGET } from "../fs/anchored_write.ts";
import { appendRow } from "../ledger/append.ts";
import { withFileLock } from "../ledger/lock.ts";
import { statePaths } from "../ledger/paths.ts";
import { resolveDispatch } from "../ledger/dispatch.ts";
import { dispatchTag } from "../ledger/dispatch_acts.ts";
import { ledgerText, refusalRow } from "../ledger/fields.ts";
import type { GateDef, Policy } from "../policy/types.ts";
import { type Artifact, validateArtifact } from "./artifact.ts";
import { checkProposalPath } from "./path_rules.ts";
import { type GateRunner, selectGates } from "./gates.ts";
import type { ChangeProposalT, DeleteProposalT } from "./schema.ts";

/** Largest existing target read for its base hash. */
export const MAX_TARGET_BYTES = MAX_ANCHORED_TARGET;

/** One gate's result as recorded. */
export interface GateResult {
  /** Gate name. */
  gate: string;
  /** Exit code (always 0 for recorded gates: the first failure refuses). */
  exit: number;
  /** Wall time. */
  duration_ms: number;
  /** Whether it ran inside a sandbox. */
  confined: boolean;
  /** The backend: `bwrap`, `seatbelt` or `unconfined-opt-out`. */
  backend: string;
}

/** What `applyProposal` returns. */
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

/** Options of {@link applyProposal}. */
export interface ApplyOptions {
  /** Absolute project root. */
  root: string;
  /** The loaded policy. */
  policy: Policy;
  /** The ledger HMAC. */
  hmac: HmacKey;
  /** Run checks and gates only. */
  dryRun?: boolean;
  /** Runs one gate (confined); see `gates.ts`. */
  gateRunner: GateRunner;
  /** The clock. */
  now?: () => Date;
  /** The anchored-write helper program (default `/usr/bin/perl`, see `lib/fs/anchored_write.ts`). */
  perl?: string;
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
    if (kind === "absent") return { dir, file: null };
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

async function runGates(
  gates: readonly GateDef[],
  content: Uint8Array,
  rel: string,
  runner: GateRunner,
): Promise<GateResult[]> {
  const results: GateResult[] = [];
  for (const gate of gates) {
    const r = await runner(gate, { content, rel });
    if (r.exit !== 0) {
      const why = new TextDecoder().decode(r.stderr.length ? r.stderr : r.stdout).trim();
      throw new ProposalError(
        "GATE_FAILED",
        `gate '${gate.name}' ${r.timedOut ? "timed out" : `exited ${r.exit}`}` +
          (why ? `: ${why.slice(0, 200)}` : ""),
        { details: { gate: gate.name, exit: r.exit } },
      );
    }
    results.push({
      gate: gate.name,
      exit: 0,
      duration_ms: r.durationMs,
      confined: r.backend !== "unconfined-opt-out",
      backend: r.backend,
    });
  }
  return results;
}

/**
 * Checks and applies one change or deletion proposal (see the module doc).
 *
 * @throws {ProposalError} and the dispatch, ledger and sandbox errors; every refusal outside a
 *   dry run is recorded first.
 * @example
 * ```ts
 * import { applyProposal } from "./apply.ts";
 * import type { GateRunner } from "./gates.ts";
 * import type { HmacKey } from "../crypto/hash.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy;
 * declare const hmac: HmacKey;
 * declare const gateRunner: GateRunner; // from `confinedGateRunner`
 * const r = await applyProposal({
 *   kind: "change-proposal", dispatch: "3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d", path: "docs/guide.md",
 *   base_sha256: "absent", content: "# Guide\n", rationale: "add the user guide",
 * }, { root: "/work/p", policy, hmac, gateRunner, dryRun: true });
 * r.written; // false: a dry run checks and runs the gates but writes nothing
 * ```
 */
export async function applyProposal(artifact: unknown, opts: ApplyOptions): Promise<ApplyResult> {
  const now = opts.now ?? (() => new Date());
  let agent = "?";
  try {
    const a: Artifact = validateArtifact(artifact);
    if (a.kind === "command-request") {
      throw new ProposalError(
        "ARTIFACT_INVALID",
        "a command request is run with `run`, not applied",
      );
    }
    const rec = await resolveDispatch(opts.root, opts.hmac, a.dispatch, {
      count: "attempt",
      expectAgent: a.agent,
      now,
    });
    agent = rec.agent;
    return await applyChecked(a, agent, opts, now);
  } catch (e) {
    if (e instanceof DispatchError && typeof e.details.agent === "string") agent = e.details.agent;
    // Every refusal is recorded, an unexpected failure too (it may follow the write-ahead row);
    // only a ledger that refuses rows is left alone.
    if (!opts.dryRun && !(e instanceof AgentTeamsError && e.family === "ledger")) {
      await appendRow(opts.root, opts.hmac, refusalRow("apply-proposal", agent, e), { now });
    }
    throw e;
  }
}

async function applyChecked(
  a: ChangeProposalT | DeleteProposalT,
  agent: string,
  opts: ApplyOptions,
  now: () => Date,
): Promise<ApplyResult> {
  const { rel, segments } = checkProposalPath(a.path, agent, opts.policy);
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
    if (content.length > opts.policy.sizeCap) {
      throw new ProposalError(
        "CONTENT_TOO_LARGE",
        `the content is ${content.length} bytes, over the ${opts.policy.sizeCap}-byte cap`,
      );
    }
  }
  const first = await walkTarget(opts.root, segments);
  if (!isChange && first.file === null) {
    throw new ProposalError("STALE_BASE", `${rel} does not exist; nothing to delete`);
  }
  checkTargetText(first.file);
  const base = checkBase(a.base_sha256, first.file, rel);
  const gateDefs = isChange ? selectGates(opts.policy, rel, a.gates) : [];
  const gates = await runGates(gateDefs, content, rel, opts.gateRunner);
  const newSha = isChange ? sha256Hex(content) : null;
  const result: ApplyResult = {
    agent,
    path: rel,
    base_sha256: base,
    new_sha256: newSha,
    gates,
    written: false,
  };
  if (opts.dryRun) return result;

  // Re-resolve and re-check right before acting.
  const second = await walkTarget(opts.root, segments);
  checkTargetText(second.file);
  checkBase(a.base_sha256, second.file, rel);
  const used = await resolveDispatch(opts.root, opts.hmac, a.dispatch, {
    count: "use",
    expectAgent: agent,
    now,
  });
  // The act names its dispatch (as `issue-dispatch` rows do), so verify can count each
  // dispatch's acts against the uses its store rows record.
  const dispatch = dispatchTag(used.id);
  const rationale = ledgerText(a.rationale);
  const gateRows = gates.map((g) => ({ ...g }));
  if (isChange) {
    await appendRow(opts.root, opts.hmac, {
      action: "apply-proposal",
      agent,
      dispatch,
      path: rel,
      base,
      new: newSha as string,
      bytes: content.length,
      gates: gateRows,
      rationale,
    }, { now });
  } else {
    await appendRow(opts.root, opts.hmac, {
      action: "delete-proposal",
      agent,
      dispatch,
      path: rel,
      base,
      rationale,
    }, { now });
  }
  const name = segments[segments.length - 1];
  try {
    // The act, anchored: the walk is repeated inode by inode (missing parents are created), and
    // the base must still hold for the very file that is replaced or removed. Under the project's
    // dispatch lock, so two applies of one base cannot both pass that check and both write (the
    // second would silently undo the first); the lock file already exists, so taking it changes
    // nothing a concurrent run's watch could see.
    await withFileLock(statePaths(opts.root).dispatchLock, () =>
      anchoredReplace({
        root: opts.root,
        dirs: segments.slice(0, -1),
        name,
        op: isChange ? "write" : "unlink",
        createDirs: isChange,
        perl: opts.perl,
        decide: (cur) => {
          checkBase(a.base_sha256, cur, rel);
          // The writer keeps an existing file's permission bits, never setuid, setgid or sticky.
          return { newFileMode: 0o644, content };
        },
      }));
  } catch (e) {
    if (e instanceof ProposalError) throw e;
    safety(e);
  }
  result.written = true;
  return result;
}
