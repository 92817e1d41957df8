/**
 * Clearances: the decision log `references/security-decisions.log.csv`, the clearance engine of
 * the destructive gate (FORMATS.md §4).
 *
 * Two schemas, told apart by the header: the current 9 columns (`date, plan_slug, step,
 * decision, status, conditions, conditions_verified, evidence, owner`) and the legacy 6
 * (`timestamp, requesting_agent, action_reviewed, verdict, conditions, conditions_verified`),
 * each with the optional signing columns (`prev_digest`, `signature`, `sig_scheme`, `key_id`,
 * `consumed`, `scope`, `author`, `derives_from`, ...).
 *
 * The decision order for an action:
 * 1. an unretracted HALT anywhere in the log blocks, first; only an authenticated
 *    `HALT-RETRACTED` row carrying evidence clears the HALTs before it (a later HALT reopens);
 * 2. the latest matching row not yet consumed decides: an authenticated `PASS` allows, a
 *    `CONDITIONAL PASS` allows only with `conditions_verified = verified` (else it blocks as a
 *    HALT would); anything else is no clearance;
 * 3. a consumed row is skipped: a clearance is never replayed.
 *
 * Authentication: the row's `scope` (when set) names the action, its author is on the roster,
 * and when signing is active (the header has `signature`, or `AGENTTEAMS_DECISION_SIGNING_KEY`
 * is set) its signature verifies: HMAC-SHA256 over `date|action|verdict|conditions_verified|
 * author|prev_digest[|derives_from=…][|sig_scheme=…][|key_id=…]`, or, for `sig_scheme=ed25519`,
 * Ed25519 over the same payload with `references/authorized-verify-keys/<key_id>.pub.pem`. With
 * `prev_digest` in the header the SHA-256 chain over the payloads is checked on every read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkClearance } from "./decisions.ts";
 * // Allowed only for a matching, unconsumed, authenticated PASS and no HALT: this project has no log.
 * const r = await checkClearance(Deno.makeTempDirSync(), "delete:old.txt", { env: {}, now: new Date() });
 * assert.equal(r.allowed, false);
 * ```
 * @module
 */
import { AuthzError } from "../errors.ts";
import type { Env } from "../env.ts";
import { type HmacKey, sha256Hex } from "../crypto/hash.ts";
import { firstChainBreak } from "../crypto/chain.ts";
import { signHex } from "../crypto/ed25519.ts";
import {
  type CsvTable,
  type CsvText,
  parseCsv,
  parseCsvRead,
  readCsvText,
  rewriteCsvFile,
} from "./csv.ts";
import type { TriadHold } from "./triad_hold.ts";
import {
  anchorStateOf,
  dropIndex,
  keepIndex,
  readIndexed,
  refuseGoneIndexed,
} from "./csv_index.ts";
import type { Anchors, AnchorState } from "../ledger/anchor_state.ts";
import { withFlock } from "../fs/flock.ts";
import { authzPaths } from "./triad_paths.ts";
import { approverName, projectRoster } from "./roster.ts";
import {
  DECISION_KEY_ENV,
  hmacKeyFrom,
  type OperatorSigner,
  signatureProblem,
  signedPayload,
  VerifyKeyStore,
} from "./signed.ts";
import { GRANT_PURPOSE } from "./grant_purpose.ts";
import { authorizes, cellsOf, field, haltReacher, recordsOf } from "./table.ts";
import { actionFormProblem, isEverything } from "./actions.ts";
import { clearanceSpentKey } from "./spent.ts";
import type { Finding, Problem } from "./verdict.ts";

/** The legacy schema's columns (checked first). */
export const LEGACY_DECISION_COLUMNS = [
  "timestamp",
  "requesting_agent",
  "action_reviewed",
  "verdict",
  "conditions",
  "conditions_verified",
] as const;

/** The current schema's 9 columns. */
export const DECISION_COLUMNS = [
  "date",
  "plan_slug",
  "step",
  "decision",
  "status",
  "conditions",
  "conditions_verified",
  "evidence",
  "owner",
] as const;

/** The optional columns with a meaning (signing, chain, consumption, lineage, effects). */
export const DECISION_EXTRA_COLUMNS = [
  "prev_digest",
  "signature",
  "sig_scheme",
  "key_id",
  "consumed",
  "scope",
  "author",
  "derives_from",
  "action_reviewed",
  "verdict",
  "timestamp",
  "date",
  "effect_class",
  "effect_grants",
  "effect_targets",
  "effect_relaxes",
  "effect_destructive",
  "effect_cross_repo",
  "effect_bulk",
] as const;

/** The header this tool creates a signed log with. */
export const NEW_DECISION_HEADER = [...DECISION_COLUMNS, "prev_digest", "signature"];

const KNOWN = [
  ...new Set([...LEGACY_DECISION_COLUMNS, ...DECISION_COLUMNS, ...DECISION_EXTRA_COLUMNS]),
];

/** Which schema a log is in. */
export type DecisionSchema = "legacy" | "current";

/** A decision log as read. */
export interface DecisionLog {
  /** The table (null: no log yet). */
  readonly table: CsvTable | null;
  /** Its schema. */
  readonly schema: DecisionSchema;
  /** Its rows as records. */
  readonly recs: Record<string, string>[];
  /**
   * The whole log's chain was checked as it was read ({@link readDecisionLogFor}), which may then
   * hold only the rows that can decide: the chain is not checked again.
   */
  readonly chainHeld?: boolean;
}

/** What the clearance engine is handed. */
export interface DecisionContext {
  /** The environment (the decision HMAC key). */
  readonly env: Env;
  /** The clock's reading. */
  readonly now: Date;
  /** The roster's names (default: the project's, else `security`). */
  readonly roster?: ReadonlySet<string>;
  /** The Ed25519 verify-key store (default: the project's). */
  readonly store?: VerifyKeyStore;
  /**
   * Decision signing applies whatever the log's header says: under the switch, or when an
   * Ed25519 decision key is configured (`lib/authz/trust.ts` decides it). A log without the
   * `signature` column is then a legacy log whose rows authorize nothing (its HALTs still stop).
   */
  readonly signingRequired?: boolean;
  /**
   * How many times each instrument was spent, from the proposal ledger (`lib/authz/spent.ts`): a
   * row spent there is spent whatever its `consumed` cell says now.
   */
  readonly spent?: ReadonlyMap<string, number>;
}

/**
 * A record's action (`action_reviewed`, else `decision`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { actionOf } from "./decisions.ts";
 * assert.equal(actionOf({ decision: "overwrite" }), "overwrite");
 * ```
 */
export function actionOf(r: Record<string, string>): string {
  return (field(r, "action_reviewed") || field(r, "decision")).trim();
}

/**
 * A record's verdict (`verdict`, else `status`), stripped and upper-cased.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verdictOf } from "./decisions.ts";
 * assert.equal(verdictOf({ status: "conditional pass" }), "CONDITIONAL PASS");
 * ```
 */
export function verdictOf(r: Record<string, string>): string {
  return (field(r, "verdict") || field(r, "status")).trim().toUpperCase();
}

/**
 * A record's author: the first non-empty of `requesting_agent`, `owner`, `author`, as the roster
 * compares names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authorOf } from "./decisions.ts";
 * assert.equal(authorOf({ owner: "@Security" }), "security");
 * ```
 */
export function authorOf(r: Record<string, string>): string {
  for (let i = 0; i < AUTHOR_FIELDS.length; i++) {
    const v = field(r, AUTHOR_FIELDS[i]).trim();
    if (v !== "") return approverName(v);
  }
  return "";
}

const AUTHOR_FIELDS = ["requesting_agent", "owner", "author"] as const;

/**
 * The signed payload of a decision row (also what the chain hashes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decisionPayload } from "./decisions.ts";
 * assert.equal(
 *   decisionPayload({
 *     date: "2026-11-29", decision: "overwrite", status: "PASS", conditions_verified: "verified",
 *     owner: "@security", prev_digest: "",
 *   }),
 *   "2026-11-29|overwrite|PASS|verified|security|",
 * );
 * ```
 */
export function decisionPayload(r: Record<string, string>): string {
  const values = [
    field(r, "date") || field(r, "timestamp"),
    field(r, "action_reviewed") || field(r, "decision"),
    field(r, "verdict") || field(r, "status"),
    field(r, "conditions_verified"),
    authorOf(r),
    field(r, "prev_digest"),
  ];
  for (let i = 0; i < LINEAGE.length; i++) {
    const v = field(r, LINEAGE[i]).trim();
    if (v !== "") values.push(`${LINEAGE[i]}=${v}`);
  }
  return signedPayload(values);
}

const LINEAGE = ["derives_from", "sig_scheme", "key_id"] as const;

/**
 * Reads the decision log (no log: no rows), telling the schema by its header.
 *
 * @throws {AuthzError} `CSV_COLUMNS` when the header is neither schema, `CSV_MALFORMED`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readDecisionLog } from "./decisions.ts";
 * assert.equal(readDecisionLog("/nonexistent").recs.length, 0);
 * ```
 */
export function readDecisionLog(root: string): DecisionLog {
  return decisionLogFrom(readCsvText(authzPaths(root).decisions));
}

/**
 * The decision log as {@link readDecisionLog} reads it, from bytes already read (`null`: no log):
 * what a writer parses after checking those very bytes.
 *
 * @throws {AuthzError} what {@link readDecisionLog} throws.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decisionLogFrom } from "./decisions.ts";
 * assert.equal(decisionLogFrom(null).recs.length, 0);
 * ```
 */
export function decisionLogFrom(read: CsvText | null): DecisionLog {
  const table = parseCsvRead(read, DECISION_SCHEMA);
  if (table === null) return { table: null, schema: "current", recs: [] };
  return logOf(table);
}

const DECISION_SCHEMA = { required: [], known: KNOWN, what: "security-decisions.log.csv" };

/**
 * The decision log as a gate reads it: with the proposal-ledger key (`key`), through the log's
 * index (`lib/authz/csv_index.ts`), so that only the rows that can decide for `action` (its
 * HALTs and retractions, the rows naming `action`) and the rows appended since the last whole
 * read are parsed, and the chain is checked from the last checked row on. The log it returns has
 * those rows only and {@link DecisionLog.chainHeld}: what {@link decideClearance} decides on it is
 * what it decides on the whole log. `action` `null`: the HALT rows only (what the HALT check of an
 * act reads, `lib/authz/stop.ts`). Without a key, or when the index does not fit, the whole log
 * is read. A read writes nothing: the writers keep the index ({@link indexDecisionLog}); a log
 * that no longer extends its index (cut, rewritten, or gone) is refused. `anchors`: the signed
 * ledger's anchors as the caller read them for this decision (the gate reads them once for both
 * ledgers); default: read now.
 *
 * @throws {AuthzError} what {@link readDecisionLog} throws; `LEDGER_ROLLED_BACK`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readDecisionLogFor } from "./decisions.ts";
 * assert.equal((await readDecisionLogFor("/nonexistent", "delete:x")).recs.length, 0);
 * ```
 */
export async function readDecisionLogFor(
  root: string,
  action: string | null,
  key?: HmacKey,
  anchors?: Anchors,
): Promise<DecisionLog> {
  const file = authzPaths(root).decisions;
  const read = readCsvText(file);
  const ref = key === undefined ? null : { root, name: "decisions", key, file, anchors };
  if (read === null) {
    if (ref !== null) refuseGoneIndexed(ref);
    return { table: null, schema: "current", recs: [] };
  }
  if (ref !== null) {
    const fast = await readIndexed(read, ref, DECISION_SCHEMA, { halts: true, action });
    if (fast !== null) {
      const log = logOf(fast.table);
      if (chainCarry(log.table!, log.recs.slice(fast.tail), fast.carry) !== null) {
        return { ...log, chainHeld: true };
      }
    }
  }
  return logOf(parseCsv(read.text, DECISION_SCHEMA));
}

/**
 * Keeps the decision log's index (`lib/authz/csv_index.ts`) after a write: the whole log read and,
 * when its chain holds, indexed with the proposal-ledger key; what {@link readDecisionLogFor}
 * then reads through. A log that does not hold is left unindexed (every read reads it whole).
 * Returns what the log holds, for its anchor (`lib/authz/triad_index.ts`).
 *
 * @throws {AuthzError} what {@link readDecisionLog} throws.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { indexDecisionLog } from "./decisions.ts";
 * import { csvIndexPath } from "./csv_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * await indexDecisionLog(root, new HmacKey(new Uint8Array(32)));
 * // No log: nothing kept.
 * assert.throws(() => Deno.statSync(csvIndexPath(root, "decisions")), Deno.errors.NotFound);
 * ```
 */
export async function indexDecisionLog(
  root: string,
  key: HmacKey,
  given?: CsvText | null,
): Promise<AnchorState> {
  const read = given !== undefined ? given : readCsvText(authzPaths(root).decisions);
  if (read === null) {
    dropIndex(root, "decisions");
    return anchorStateOf(null, 0);
  }
  const log = logOf(parseCsv(read.text, DECISION_SCHEMA));
  const carry = chainCarry(log.table!, log.recs, "");
  if (carry !== null) {
    await keepIndex(read, { root, name: "decisions", key }, log.table!, carry, actionOf);
  } else dropIndex(root, "decisions");
  return anchorStateOf(read, log.recs.length);
}

/**
 * The chain's carry after `recs` (the hash of the last payload), starting from `carry`, or `null`
 * when a row breaks it; `""` for a log without `prev_digest`.
 */
function chainCarry(
  table: CsvTable,
  recs: readonly Record<string, string>[],
  carry: string,
): string | null {
  if (!table.header.includes("prev_digest")) return "";
  if (recs.length === 0) return carry;
  if (decisionChainBreak(recs, carry) !== null) return null;
  return sha256Hex(decisionPayload(recs[recs.length - 1]));
}

function logOf(table: CsvTable): DecisionLog {
  const has = new Set(table.header);
  const schema: DecisionSchema | null = LEGACY_DECISION_COLUMNS.every((c) => has.has(c))
    ? "legacy"
    : DECISION_COLUMNS.every((c) => has.has(c))
    ? "current"
    : null;
  if (schema === null) {
    throw new AuthzError(
      "CSV_COLUMNS",
      "security-decisions.log.csv: line 1: the security decisions log is malformed: its header " +
        `holds neither the 9-column set (${DECISION_COLUMNS.join(",")}) nor the legacy 6 ` +
        `(${LEGACY_DECISION_COLUMNS.join(",")})`,
    );
  }
  return { table, schema, recs: recordsOf(table) };
}

/**
 * Whether decision signing is active: the log's header has `signature`, the HMAC key is set, or
 * the caller requires it (`required`: under the switch, or an Ed25519 decision key configured).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signingActive } from "./decisions.ts";
 * assert.equal(signingActive(null, { AGENTTEAMS_DECISION_SIGNING_KEY: "k" }), true);
 * assert.equal(signingActive(null, {}, true), true);
 * ```
 */
export function signingActive(table: CsvTable | null, env: Env, required = false): boolean {
  return required || (table?.header.includes("signature") ?? false) ||
    hmacKeyFrom(env, DECISION_KEY_ENV) !== null;
}

/**
 * Whether a log is a legacy (unsigned) log where signing applies: its header lacks `signature`
 * while {@link signingActive} holds. Its rows may be read and verified, but none authorizes (a
 * PASS clears nothing, a HALT-RETRACTED retracts nothing; a HALT in it still stops): dropping the
 * column is no downgrade.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { legacyWhereSigned } from "./decisions.ts";
 * const t = { header: ["date", "status"], rows: [], crlf: false, bom: false };
 * assert.equal(legacyWhereSigned(t, {}, true), true);
 * assert.equal(legacyWhereSigned(t, {}, false), false);
 * ```
 */
export function legacyWhereSigned(table: CsvTable | null, env: Env, required = false): boolean {
  return table !== null && !table.header.includes("signature") &&
    signingActive(table, env, required);
}

const LEGACY_PROBLEM: Problem = {
  code: "LEGACY_UNSIGNED",
  reason: "the decision log has no signature column (a legacy, unsigned log) and decision " +
    "signing applies here (under the switch, or a decision key is configured): its rows " +
    "authorize nothing; start a signed log with agentteams decision sign",
};

/**
 * The first row whose `prev_digest` breaks the chain (1-based data row), or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decisionChainBreak } from "./decisions.ts";
 * assert.equal(decisionChainBreak([{ prev_digest: "x" }]), 1);
 * ```
 */
export function decisionChainBreak(
  recs: readonly Record<string, string>[],
  first = "",
): number | null {
  const n = recs.length;
  const payloads = new Array<string>(n);
  const prevs = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    payloads[i] = decisionPayload(recs[i]);
    prevs[i] = field(recs[i], "prev_digest").trim();
  }
  const broken = firstChainBreak(payloads, prevs, first);
  return broken === null ? null : broken + 1;
}

function consumed(r: Record<string, string>): boolean {
  return ["yes", "true", "1"].includes(field(r, "consumed").trim().toLowerCase());
}

/**
 * Checks a decision row's signature by its own scheme.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decisionSignatureProblem } from "./decisions.ts";
 * assert.equal(
 *   (await decisionSignatureProblem({ status: "PASS" }, { env: {}, now: new Date() }))?.code,
 *   "NO_SIGNING_KEY",
 * );
 * ```
 */
export async function decisionSignatureProblem(
  r: Record<string, string>,
  ctx: DecisionContext,
  root = "/",
): Promise<Problem | null> {
  const payload = decisionPayload(r);
  if (payload.startsWith(`${GRANT_PURPOSE}|`)) {
    return { code: "SIGNATURE_INVALID", reason: "a grant's payload is never a decision" };
  }
  return await signatureProblem(r, {
    env: ctx.env,
    keyEnv: DECISION_KEY_ENV,
    store: ctx.store ?? new VerifyKeyStore(authzPaths(root).verifyKeys),
    payload: () => payload,
    // An Ed25519 decision signs the same payload, with no purpose tag (the earlier tool's).
    message: () => payload,
    what: "signed decision",
  });
}

/**
 * Whether an authorizing row (PASS, CONDITIONAL PASS, HALT-RETRACTED) is authentic for
 * `action`: scope, author on the roster, signature when signing is active.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { authorProblem } from "./decisions.ts";
 * const ctx = { env: {}, now: new Date(), roster: new Set(["security"]) };
 * assert.equal((await authorProblem({ owner: "mallory" }, "x", false, ctx))?.code, "AUTHOR_NOT_APPROVED");
 * ```
 */
export async function authorProblem(
  r: Record<string, string>,
  action: string,
  active: boolean,
  ctx: DecisionContext,
  root = "/",
): Promise<Problem | null> {
  const scope = field(r, "scope").trim();
  if (scope !== "") {
    const names = scope.split(";").map((s) => s.trim().toLowerCase());
    if (!names.includes(action.trim().toLowerCase())) {
      return {
        code: "SCOPE_MISMATCH",
        reason: `the row's scope ${JSON.stringify(scope)} does not name ${action}`,
      };
    }
  }
  const roster = ctx.roster ?? projectRoster(authzPaths(root).roster);
  const author = authorOf(r);
  if (!roster.has(author)) {
    return {
      code: "AUTHOR_NOT_APPROVED",
      reason: `author ${
        JSON.stringify(author)
      } is not on the roster (references/security-approvers.txt)`,
    };
  }
  return active ? await decisionSignatureProblem(r, ctx, root) : null;
}

/** {@link authorProblem} on a log: a legacy log where signing applies authorizes nothing. */
function rowProblem(
  log: DecisionLog,
  r: Record<string, string>,
  action: string,
  ctx: DecisionContext,
  root: string,
): Promise<Problem | null> {
  if (legacyWhereSigned(log.table, ctx.env, ctx.signingRequired)) {
    return Promise.resolve(LEGACY_PROBLEM);
  }
  return authorProblem(
    r,
    action,
    signingActive(log.table, ctx.env, ctx.signingRequired),
    ctx,
    root,
  );
}

/** What the clearance engine decided for an action. */
export interface Clearance {
  /** The action may run. */
  readonly allowed: boolean;
  /** Why not, or `null`. */
  readonly problem: Problem | null;
  /** The decision row that decided (0-based data index), when any. */
  readonly index: number | null;
  /** Its line in the file. */
  readonly line: number | null;
  /** Whether an unretracted HALT blocked (no instrument can lift it). */
  readonly halted: boolean;
}

/**
 * The HALT scan: the first unretracted HALT reaching `action`, or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { haltFor } from "./decisions.ts";
 * const ctx = { env: {}, now: new Date() };
 * assert.equal((await haltFor({ table: null, schema: "current", recs: [] }, "x", ctx)), null);
 * ```
 */
export async function haltFor(
  log: DecisionLog,
  action: string,
  ctx: DecisionContext,
  root = "/",
): Promise<{ index: number; line: number; problem: Problem } | null> {
  // A HALT on `*` (the emergency stop) reaches every action and is retracted only by a
  // retraction of `*`; a retraction of `*` retracts only HALTs on `*`.
  let open: number | null = null;
  let star: number | null = null;
  let lastRetraction: Problem | null = null;
  const reaches = haltReacher(action);
  for (let i = 0; i < log.recs.length; i++) {
    const r = log.recs[i];
    // Only HALT and HALT-RETRACTED rows matter: the verdict is read first, so the other rows
    // cost no action normalisation.
    const v = verdictOf(r);
    if (v !== "HALT" && v !== "HALT-RETRACTED") continue;
    const rowAction = actionOf(r);
    const everything = isEverything(rowAction);
    if (!everything && !reaches(rowAction)) continue;
    if (v === "HALT") {
      if (everything) star = i;
      else open = i;
    } else if (v === "HALT-RETRACTED" && (everything ? star : open) !== null) {
      const evidence = (field(r, "evidence") || field(r, "conditions")).trim();
      const p = evidence === ""
        ? {
          code: "RETRACTION_UNPROVEN" as const,
          reason: "the HALT-RETRACTED row carries no evidence",
        }
        : await rowProblem(log, r, actionOf(r), ctx, root);
      if (p !== null) lastRetraction = p;
      else if (everything) star = null;
      else open = null;
    }
  }
  if (star !== null) open = star;
  if (open === null) return null;
  const line = log.table!.rows[open].line;
  const why = lastRetraction === null
    ? ""
    : ` (a retraction was not accepted: ${lastRetraction.reason})`;
  return {
    index: open,
    line,
    problem: {
      code: "HALTED",
      reason:
        (star !== null
          ? `the emergency stop (a HALT on "*", decision log line ${line}) stands${why}; every ` +
            'act of the project is stopped until the operator signs a HALT-RETRACTED on "*"'
          : `a HALT on ${JSON.stringify(actionOf(log.recs[open]))} (decision log line ${line}) ` +
            `stands${why}`) + "; no clearance, waiver or grant lifts a HALT",
    },
  };
}

/**
 * The clearance engine, read-only: HALT first, then the latest unconsumed decision naming the
 * action. Consumes nothing (what `clearance check` reports).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideClearance, readDecisionLog } from "./decisions.ts";
 * const root = Deno.makeTempDirSync(); // a project with no decision log
 * const log = readDecisionLog(root);
 * assert.equal((await decideClearance(log, "delete:old.txt", { env: {}, now: new Date() }, root)).allowed, false);
 * ```
 */
export async function decideClearance(
  log: DecisionLog,
  action: string,
  ctx: DecisionContext,
  root = "/",
): Promise<Clearance> {
  const no = (problem: Problem, index: number | null = null, halted = false): Clearance => ({
    allowed: false,
    problem,
    index,
    line: index === null ? null : log.table!.rows[index].line,
    halted,
  });
  if (log.table !== null && log.chainHeld !== true && log.table.header.includes("prev_digest")) {
    const broken = decisionChainBreak(log.recs);
    if (broken !== null) {
      return no(
        {
          code: "CHAIN_BROKEN",
          reason: `the decision log's prev_digest chain is broken at row ${broken} (line ` +
            `${log.table.rows[broken - 1].line}): a row was edited, removed or re-ordered`,
        },
        broken - 1,
        true,
      );
    }
  }
  const halt = await haltFor(log, action, ctx, root);
  if (halt !== null) return no(halt.problem, halt.index, true);
  let index = -1;
  for (let i = log.recs.length - 1; i >= 0; i--) {
    const r = log.recs[i];
    if (consumed(r) || verdictOf(r) === "HALT-RETRACTED") continue;
    if (!authorizes(actionOf(r), action)) continue;
    // Spent in the ledger, whatever its `consumed` cell says now (a row put back is still spent).
    if ((ctx.spent?.get(clearanceSpentKey(decisionPayload(r))) ?? 0) > 0) continue;
    index = i;
    break;
  }
  if (index < 0) {
    return no({
      code: "NO_CLEARANCE",
      reason: `no unconsumed PASS decision names ${JSON.stringify(action)} in the decision log`,
    });
  }
  const r = log.recs[index];
  const v = verdictOf(r);
  if (v === "USED" || v === "HALT") {
    return no(
      { code: "NO_CLEARANCE", reason: `no matching PASS decision found (latest is ${v})` },
      index,
    );
  }
  if (v !== "PASS" && v !== "CONDITIONAL PASS") {
    return no(
      { code: "UNSUPPORTED_VERDICT", reason: `unsupported verdict ${JSON.stringify(v)}` },
      index,
    );
  }
  const p = await rowProblem(log, r, action, ctx, root);
  if (p !== null) return no(p, index);
  if (
    v === "CONDITIONAL PASS" && field(r, "conditions_verified").trim().toLowerCase() !== "verified"
  ) {
    return no(
      {
        code: "CONDITIONS_UNVERIFIED",
        reason: `the CONDITIONAL PASS for ${action} has conditions_verified ${
          JSON.stringify(field(r, "conditions_verified"))
        }: it blocks as a HALT until its conditions are verified`,
      },
      index,
      true,
    );
  }
  return { allowed: true, problem: null, index, line: log.table!.rows[index].line, halted: false };
}

/**
 * {@link decideClearance} on the project's log.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkClearance } from "./decisions.ts";
 * assert.equal(
 *   (await checkClearance("/nonexistent", "x", { env: {}, now: new Date() })).problem?.code,
 *   "NO_CLEARANCE",
 * );
 * ```
 */
export function checkClearance(
  root: string,
  action: string,
  ctx: DecisionContext,
): Promise<Clearance> {
  return decideClearance(readDecisionLog(root), action, ctx, root);
}

/**
 * Consumes the clearance that allows `action`: decided again under the lock, the row marked
 * `consumed = yes` (the column added when absent), re-signed by its own scheme when signing is
 * active (the signature and chain do not cover `consumed`, so the value is the same and the
 * chain holds; a missing key refuses), the log rewritten atomically.
 *
 * @throws {AuthzError} the clearance's problem (`HALTED`, `NO_CLEARANCE`, ...).
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p (its .agentteams/ state folder) and the operator's keys
 * import { consumeClearance } from "./decisions.ts";
 * await consumeClearance("/work/p", "delete:old.txt", { env: {}, now: new Date() });
 * ```
 */
export function consumeClearance(
  root: string,
  action: string,
  ctx: DecisionContext,
): Promise<{ line: number; payload: string }> {
  return withFlock(root, { target: "directory" }, async () => {
    const log = readDecisionLog(root);
    const c = await decideClearance(log, action, ctx, root);
    if (!c.allowed) throw new AuthzError(c.problem!.code, `clearance: ${c.problem!.reason}`);
    const { write, ...spent } = await prepareClearanceSpend(root, log, c, ctx);
    write();
    return spent;
  });
}

/**
 * The spend of the row an allowing clearance `c` names, made ready and not yet written, for a
 * caller holding the project's lock that decided `c` on `log` under that same lock (the gate,
 * which decides and spends under one lock, so the log is not read or decided twice): the row
 * marked `consumed = yes` and re-signed now when signing is active, so a spend that cannot be
 * signed is refused before the caller records anything (an HMAC row without its key; an Ed25519
 * row keeps its signature, which does not cover `consumed`, so no operator key is needed);
 * `write()` then rewrites the log atomically and returns what it wrote.
 *
 * @throws {AuthzError} `NO_SIGNING_KEY` (an HMAC row, signing active, no key).
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p (its .agentteams/ state folder) and the operator's keys
 * import { decideClearance, prepareClearanceSpend, readDecisionLog } from "./decisions.ts";
 * import { withFlock } from "../fs/flock.ts";
 * const ctx = { env: {}, now: new Date() };
 * await withFlock("/work/p", { target: "directory" }, async () => {
 *   const log = readDecisionLog("/work/p");
 *   const c = await decideClearance(log, "delete:old.txt", ctx, "/work/p");
 *   if (c.allowed) (await prepareClearanceSpend("/work/p", log, c, ctx)).write();
 * });
 * ```
 */
export async function prepareClearanceSpend(
  root: string,
  log: DecisionLog,
  c: Clearance,
  ctx: DecisionContext,
): Promise<{ line: number; payload: string; write(): CsvText }> {
  const t = log.table!;
  const header = t.header.includes("consumed") ? t.header : [...t.header, "consumed"];
  const r: Record<string, string> = { ...log.recs[c.index!], consumed: "yes" };
  if (signingActive(t, ctx.env) && t.header.includes("signature")) {
    // No signer: an Ed25519 row keeps its own signature (the payload does not cover `consumed`).
    r.signature = await signDecision(r, ctx.env, null);
  }
  const recs = log.recs.slice();
  recs[c.index!] = r;
  return {
    line: c.line!,
    payload: decisionPayload(r),
    write: () =>
      rewriteCsvFile(authzPaths(root).decisions, header, recs.map((x) => cellsOf(x, header)), t),
  };
}

async function signDecision(
  r: Record<string, string>,
  env: Env,
  signer: OperatorSigner | null,
): Promise<string> {
  if (field(r, "sig_scheme").trim().toLowerCase() === "ed25519") {
    if (signer === null || signer.keyId !== field(r, "key_id").trim()) {
      // The signature does not cover `consumed`: an Ed25519 row keeps its own signature, which
      // still verifies; it is never re-signed with HMAC.
      return field(r, "signature");
    }
    return await signHex(signer.key, decisionPayload(r));
  }
  const key = hmacKeyFrom(env, DECISION_KEY_ENV);
  if (key === null) {
    throw new AuthzError("NO_SIGNING_KEY", `${DECISION_KEY_ENV} is not set; refused (fail closed)`);
  }
  return key.hex(decisionPayload(r));
}

/** The fields of a decision row to sign and append. */
export interface DecisionFields {
  /** The action id. */
  readonly action: string;
  /** PASS, CONDITIONAL PASS, HALT or HALT-RETRACTED. */
  readonly verdict: string;
  /** The author (on the roster; default `@security`). */
  readonly owner?: string;
  /** The plan slug. */
  readonly plan?: string;
  /** The step. */
  readonly step?: string;
  /** Conditions. */
  readonly conditions?: string;
  /** `verified` or `pending` (default: verified for PASS, pending for CONDITIONAL PASS). */
  readonly conditionsVerified?: string;
  /** Evidence (required for HALT-RETRACTED). */
  readonly evidence?: string;
}

const VERDICTS = ["PASS", "CONDITIONAL PASS", "HALT", "HALT-RETRACTED"];

/**
 * Signs and appends a decision row (HMAC with the decision key, or Ed25519 with `signer`),
 * chained to the last row. A new log gets the 9 columns plus `prev_digest, signature` (and
 * `sig_scheme, key_id` for Ed25519), its header ended in LF and its first row in CRLF, as the
 * earlier tool created it.
 *
 * @throws {AuthzError} `ACTION_FORM` (not one of the grammar's forms, `lib/authz/actions.ts`),
 *   `UNSUPPORTED_VERDICT`, `NO_SIGNING_KEY`, `AUTHOR_NOT_APPROVED`,
 *   `CSV_COLUMNS` (an existing log without `signature`), `CHAIN_BROKEN`.
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p (its .agentteams/ state folder) and the operator's keys
 * import { signDecisionRow } from "./decisions.ts";
 * await signDecisionRow("/work/p", { action: "delete:old.txt", verdict: "PASS" }, {
 *   env: { AGENTTEAMS_DECISION_SIGNING_KEY: "k" }, now: new Date(),
 * });
 * ```
 */
export function signDecisionRow(
  root: string,
  f: DecisionFields,
  ctx: DecisionContext & {
    readonly signer?: OperatorSigner | null;
    /** With the ledger key: the log as read is checked, and what is written anchored. */
    readonly hold?: TriadHold | null;
  },
): Promise<Record<string, string>> {
  const paths = authzPaths(root);
  return withFlock(root, { target: "directory" }, async () => {
    const verdict = f.verdict.trim().toUpperCase();
    if (!VERDICTS.includes(verdict)) {
      throw new AuthzError(
        "UNSUPPORTED_VERDICT",
        `verdict ${JSON.stringify(f.verdict)} is not one of ${VERDICTS.join(", ")}`,
      );
    }
    const form = actionFormProblem(f.action, verdict);
    if (form !== null) throw new AuthzError(form.code, `decision not signed: ${form.reason}`);
    if (verdict === "HALT-RETRACTED" && (f.evidence ?? "").trim() === "") {
      throw new AuthzError("RETRACTION_UNPROVEN", "a HALT-RETRACTED row needs --evidence");
    }
    const read = readCsvText(paths.decisions);
    await ctx.hold?.held(read);
    const log = decisionLogFrom(read);
    const signer = ctx.signer ?? null;
    if (signer === null && hmacKeyFrom(ctx.env, DECISION_KEY_ENV) === null) {
      throw new AuthzError("NO_SIGNING_KEY", `${DECISION_KEY_ENV} is not set (or use --ed25519)`);
    }
    let header = log.table === null ? [...NEW_DECISION_HEADER] : [...log.table.header];
    if (!header.includes("signature")) {
      throw new AuthzError(
        "CSV_COLUMNS",
        "the decision log has no signature column; a signed row cannot be appended to an unsigned log",
      );
    }
    const chained = header.includes("prev_digest");
    if (chained && decisionChainBreak(log.recs) !== null) {
      throw new AuthzError(
        "CHAIN_BROKEN",
        "the decision log's chain is broken; refusing to extend it",
      );
    }
    const last = log.recs.at(-1);
    const r: Record<string, string> = {};
    const date = ctx.now.toISOString().slice(0, 10);
    const owner = f.owner ?? "@security";
    if (log.schema === "legacy") {
      Object.assign(r, {
        timestamp: ctx.now.toISOString().replace(/\.\d{3}Z$/, "Z"),
        requesting_agent: owner,
        action_reviewed: f.action,
        verdict,
      });
    } else {
      Object.assign(r, {
        date,
        plan_slug: f.plan ?? "",
        step: f.step ?? "",
        decision: f.action,
        status: verdict,
        evidence: f.evidence ?? "",
        owner,
      });
    }
    r.conditions = f.conditions ?? "";
    r.conditions_verified = f.conditionsVerified ??
      (verdict === "PASS" ? "verified" : verdict === "CONDITIONAL PASS" ? "pending" : "");
    if (chained) r.prev_digest = last === undefined ? "" : sha256Hex(decisionPayload(last));
    if (signer !== null) {
      r.sig_scheme = "ed25519";
      r.key_id = signer.keyId;
      for (const c of ["sig_scheme", "key_id"]) if (!header.includes(c)) header = [...header, c];
    }
    r.signature = "";
    r.signature = await signDecision(r, ctx.env, signer);
    if (verdict !== "HALT") {
      const p = await authorProblem(r, f.action, true, ctx, root);
      if (p !== null) throw new AuthzError(p.code, `decision not signed: ${p.reason}`);
    }
    const recs = [...log.recs, r];
    const written = rewriteCsvFile(
      paths.decisions,
      header,
      recs.map((x) => cellsOf(x, header)),
      log.table,
      { firstRowEol: "\r\n" },
    );
    await ctx.hold?.kept(written);
    return r;
  });
}

/**
 * Verifies the decision log read-only: the chain, and for each authorizing row its author and
 * (when signing is active) its signature; one finding per row.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyDecisions } from "./decisions.ts";
 * assert.equal((await verifyDecisions("/nonexistent", { env: {}, now: new Date() })).length, 0);
 * ```
 */
export async function verifyDecisions(
  root: string,
  ctx: DecisionContext,
  read?: CsvText | null,
): Promise<Finding[]> {
  const log = read !== undefined ? decisionLogFrom(read) : readDecisionLog(root);
  if (log.table === null) return [];
  const broken = log.table.header.includes("prev_digest") ? decisionChainBreak(log.recs) : null;
  const roster = ctx.roster ?? projectRoster(authzPaths(root).roster);
  const store = ctx.store ?? new VerifyKeyStore(authzPaths(root).verifyKeys);
  const c = { ...ctx, roster, store };
  const out: Finding[] = [];
  for (let i = 0; i < log.recs.length; i++) {
    const r = log.recs[i];
    const v = verdictOf(r);
    let p: Problem | null = null;
    if (broken !== null && i + 1 >= broken) {
      p = { code: "CHAIN_BROKEN", reason: `the prev_digest chain is broken at row ${broken}` };
    } else if (v !== "HALT") {
      p = await rowProblem(log, r, actionOf(r), c, root);
    }
    out.push({
      line: log.table.rows[i].line,
      id: v,
      action: actionOf(r),
      valid: p === null,
      code: p?.code ?? null,
      reason: p?.reason ?? (consumed(r) ? "valid (consumed)" : "valid"),
    });
  }
  return out;
}
