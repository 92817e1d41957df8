/**
 * The destructive gate: may this destructive action run here, now? One decision, in the spec's
 * order: an unretracted HALT in the decision log blocks first (nothing lifts it: no clearance,
 * no waiver, no grant); then a clearance (a matching, unconsumed, authenticated PASS); then a
 * waiver (valid for the action). Anything unresolved blocks.
 *
 * {@link decideGate} only reads (what `gate ACTION` and a dry run report); {@link passGate}
 * decides and spends what allowed it (the clearance marked consumed, or the waiver's use
 * counted) under the project's lock, so two gates cannot spend one clearance.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideGate } from "./gate.ts";
 * // Allowed only when a clearance or waiver names the action and no HALT stands: here none does.
 * const d = await decideGate(Deno.makeTempDirSync(), "delete:old.txt", { env: {}, now: new Date() });
 * assert.equal(d.allowed, false);
 * ```
 * @module
 */
import { AuthzError } from "../errors.ts";
import { keepTriadIndexes, requireTriadExtends } from "./triad_index.ts";
import type { Env } from "../env.ts";
import {
  type Clearance,
  decideClearance,
  type DecisionLog,
  decisionLogFrom,
  decisionPayload,
  prepareClearanceSpend,
  readDecisionLog,
  readDecisionLogFor,
} from "./decisions.ts";
import type { HmacKey } from "../crypto/hash.ts";
import type { CsvText } from "./csv.ts";
import { ledgerAnchors } from "../ledger/anchors.ts";
import { clearanceSpentKey, waiverSpentKey } from "./spent.ts";
import { withFlock } from "../fs/flock.ts";
import type { SignerSource, VerifyKeyStore } from "./signed.ts";
import { findWaiver, type FoundWaiver, prepareWaiverSpend } from "./waivers.ts";
import type { Problem } from "./verdict.ts";

/** What the gate is handed. */
export interface GateContext {
  /** The environment (the decision and waiver keys). */
  readonly env: Env;
  /** The clock's reading. */
  readonly now: Date;
  /**
   * The operator's Ed25519 key, to re-sign an Ed25519 waiver it consumes (a loader is called only
   * then).
   */
  readonly signer?: SignerSource;
  /** Spent counts already read (set by the gate itself from {@link ledger}). */
  readonly spent?: ReadonlyMap<string, number>;
  /** The approver roster (default: the project's; `lib/authz/trust.ts` decides which). */
  readonly roster?: ReadonlySet<string>;
  /** The verify keys (default: the project's store). */
  readonly store?: VerifyKeyStore;
  /** Decision signing applies whatever the log's header says (under the switch, ...). */
  readonly signingRequired?: boolean;
  /**
   * The proposal ledger the spends are bound to (`lib/authz/spent.ts`): the counts of what was
   * spent, and how a spend is recorded (a `gate-pass` row, appended before the instrument's row
   * is rewritten). Without it a spend rests on the instrument's own row alone.
   */
  readonly ledger?: GateLedger;
  /**
   * The proposal-ledger key, to read the decision log and the waiver ledger through their
   * indexes (`lib/authz/csv_index.ts`: a read-only gate parses only the rows that can decide).
   */
  readonly indexKey?: HmacKey;
}

/** How the gate reads and records spends in the proposal ledger. */
export interface GateLedger {
  /** How many times each instrument was spent (read fresh under the gate's lock). */
  spent(): ReadonlyMap<string, number>;
  /** Appends the `gate-pass` row of a spend. */
  record(pass: GatePass): Promise<void>;
}

/** What a `gate-pass` row records. */
export interface GatePass {
  /** The action the gate allowed. */
  readonly gate_action: string;
  /** The instrument. */
  readonly by: "clearance" | "waiver";
  /** Which one. */
  readonly ref: string;
  /** Its spent key (`waiver:<id>`, `clearance:<digest>`). */
  readonly spent: string;
}

/** What allowed an action. */
export interface GateAuthority {
  /** The instrument. */
  readonly by: "clearance" | "waiver";
  /** Which one: `security-decisions.log.csv:<line>` or the waiver id. */
  readonly ref: string;
  /** Its spent key in the proposal ledger (`lib/authz/spent.ts`). */
  readonly spent?: string;
}

/** The gate's decision. */
export interface GateDecision {
  /** The action asked about. */
  readonly action: string;
  /** It may run. */
  readonly allowed: boolean;
  /** What allows it, when allowed. */
  readonly authority: GateAuthority | null;
  /** Why not, when blocked. */
  readonly problem: Problem | null;
  /** A HALT (or what counts as one) blocked: no instrument was consulted. */
  readonly halted: boolean;
}

/**
 * The gate's decision for `action`, read-only: HALT, then clearance, then waiver.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideGate } from "./gate.ts";
 * assert.equal(
 *   (await decideGate("/nonexistent", "delete:x", { env: {}, now: new Date() })).problem?.code,
 *   "NO_CLEARANCE",
 * );
 * ```
 */
export async function decideGate(
  root: string,
  action: string,
  ctx: GateContext,
): Promise<GateDecision> {
  return (await decide(root, action, ctx, true)).decision;
}

/** The gate's decision and what it was made on: what {@link passGate} spends. */
interface Decided {
  readonly decision: GateDecision;
  readonly log: DecisionLog;
  readonly clearance: Clearance;
  /** `null` when the clearance decided (allowed or halted) and no waiver was consulted. */
  readonly waiver: FoundWaiver | null;
  /** The spent counts it was decided with. */
  readonly spent: ReadonlyMap<string, number> | undefined;
}

/**
 * The decision; `sparse`: read through the indexes when a key is given (a read-only decision: what
 * is spent rewrites the whole file, so {@link passGate} reads it whole).
 */
async function decide(
  root: string,
  action: string,
  given: GateContext,
  sparse = false,
  reads?: Partial<Record<"decisions" | "waivers", CsvText | null>>,
): Promise<Decided> {
  const ctx: GateContext = given.ledger !== undefined
    ? { ...given, spent: given.ledger.spent() }
    : given;
  const key = sparse ? ctx.indexKey : undefined;
  // Both ledgers held to one reading of the signed ledger's anchors.
  const anchors = key === undefined ? undefined : ledgerAnchors(root, key);
  const log = reads?.decisions !== undefined
    ? decisionLogFrom(reads.decisions)
    : key === undefined
    ? readDecisionLog(root)
    : await readDecisionLogFor(root, action, key, anchors);
  const c = await decideClearance(log, action, ctx, root);
  const on = (decision: GateDecision, waiver: FoundWaiver | null = null): Decided => ({
    decision,
    log,
    clearance: c,
    waiver,
    spent: ctx.spent,
  });
  if (c.allowed) {
    return on({
      action,
      allowed: true,
      authority: {
        by: "clearance",
        ref: `security-decisions.log.csv:${c.line}`,
        spent: clearanceSpentKey(decisionPayload(log.recs[c.index!])),
      },
      problem: null,
      halted: false,
    });
  }
  if (c.halted) {
    return on({ action, allowed: false, authority: null, problem: c.problem, halted: true });
  }
  const found = await findWaiver(root, action, ctx, key, anchors, reads?.waivers);
  const w = found.check;
  if (w.ok) {
    return on({
      action,
      allowed: true,
      authority: { by: "waiver", ref: w.waiverId!, spent: waiverSpentKey(w.waiverId!) },
      problem: null,
      halted: false,
    }, found);
  }
  // The more specific refusal: a waiver that names the action but is invalid says why; with no
  // waiver at all, the clearance's reason stands (and both are named).
  const problem: Problem = w.problem!.code === "NO_WAIVER"
    ? { code: c.problem!.code, reason: `${c.problem!.reason}; and ${w.problem!.reason}` }
    : { code: w.problem!.code, reason: `waiver ${w.waiverId}: ${w.problem!.reason}` };
  return on({ action, allowed: false, authority: null, problem, halted: false }, found);
}

/**
 * Decides and, when allowed, spends what allowed it, under the project's lock. With `expect`,
 * refuses (spending nothing) unless the same instrument still allows: what a dry run or the
 * plan named is what the act spends.
 *
 * @throws {AuthzError} the decision's problem (`HALTED`, `NO_CLEARANCE`, `EXPIRED`, ...), or
 *   `NO_CLEARANCE` when the authority changed since `expect`.
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p (its .agentteams/ state folder) and the operator's keys
 * import assert from "node:assert/strict";
 * import { passGate } from "./gate.ts";
 * const d = await passGate("/work/p", "delete:old.txt", { env: {}, now: new Date() });
 * assert.deepEqual(d.authority, { by: "clearance", ref: "security-decisions.log.csv:4" });
 * ```
 */
export function passGate(
  root: string,
  action: string,
  ctx: GateContext,
  expect?: GateAuthority,
): Promise<GateDecision> {
  return withFlock(root, { target: "directory" }, async () => {
    // A ledger cut or rewritten since the operator's last write is refused, not spent from: the
    // bytes checked are the bytes decided from and rewritten (a cut after the check is not read).
    const reads = ctx.indexKey !== undefined
      ? await requireTriadExtends(root, ctx.indexKey, "both")
      : undefined;
    const decided = await decide(root, action, ctx, false, reads);
    const d = decided.decision;
    if (!d.allowed) throw new AuthzError(d.problem!.code, `gate ${action}: ${d.problem!.reason}`);
    const a = d.authority!;
    if (expect !== undefined && (expect.by !== a.by || expect.ref !== a.ref)) {
      throw new AuthzError(
        "NO_CLEARANCE",
        `gate ${action}: ${expect.by} ${expect.ref} no longer allows it (now: ${a.by} ${a.ref}); ` +
          "check again",
      );
    }
    // The spend is made ready first, from what was decided under this same lock (nothing read
    // twice), so one that cannot be signed is refused with nothing recorded. Then recorded
    // (write-ahead: a crash after it leaves the instrument spent, never unspent), then written.
    const spent = decided.spent;
    const spend = a.by === "clearance"
      ? await prepareClearanceSpend(root, decided.log, decided.clearance, { ...ctx, spent })
      : await prepareWaiverSpend(root, decided.waiver!, { ...ctx, spent });
    await ctx.ledger?.record({ gate_action: action, by: a.by, ref: a.ref, spent: a.spent! });
    const written = spend.write();
    // The rewritten ledger's index and anchor, of what was written (or, without the key, the
    // index removed), for the next read.
    await keepTriadIndexes(
      root,
      ctx.indexKey ?? null,
      a.by === "clearance" ? "decisions" : "waivers",
      written,
    );
    return d;
  });
}

/**
 * The action id a deletion proposal of `path` (project-relative) needs a clearance or waiver
 * for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deletionAction } from "./gate.ts";
 * assert.equal(deletionAction("build/out.bin"), "delete:build/out.bin");
 * ```
 */
export function deletionAction(path: string): string {
  return `delete:${path}`;
}
