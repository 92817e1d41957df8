/**
 * Signed waivers, `references/security-waivers.log.csv`: a waiver lifts a gate's block (never a
 * HALT) for one action id, scoped, expiring, use-counted, approved by someone on the roster and
 * signed. Validity, in the order the earlier tool checked it (FORMATS.md §5): the action matches,
 * `conditions_verified` is `verified`, `waiver_id`, `action_reviewed`, `approver`, `ticket_id` and
 * `reason_code` are non-empty, the approver is on the roster, `expires_at` is in the future (equal
 * is expired; no offset is refused), `uses < max_uses`, the key is present, the signature
 * verifies.
 *
 * The signature is HMAC-SHA256 with `AGENTTEAMS_WAIVER_SIGNING_KEY` over
 * `waiver_id|action_reviewed|expires_at|max_uses|uses|approver|ticket_id|reason_code|conditions_verified`
 * (each stripped; not the timestamp, not the signature). Beyond the earlier tool, a row may be
 * signed with Ed25519 instead (`sig_scheme=ed25519`, `key_id`), over
 * `agentteams-waiver-v1|` + that payload + `|sig_scheme=ed25519|key_id=<id>`, verified with
 * `references/authorized-verify-keys/<key_id>.pub.pem`, so a CI job holding only public keys can
 * verify. A row is verified only by the scheme it names, and re-signed by it when consumed: it
 * never changes scheme.
 *
 * Consuming increments `uses` and re-signs the row, so a counter lowered by hand breaks the
 * signature.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkWaiver } from "./waivers.ts";
 * // A project with no waivers: nothing names the action.
 * const r = await checkWaiver(Deno.makeTempDirSync(), "delete:src/a.ts", {
 *   env: { AGENTTEAMS_WAIVER_SIGNING_KEY: "k" },
 *   now: new Date(),
 * });
 * assert.equal(r.ok, false);
 * ```
 * @module
 */
import { AuthzError } from "../errors.ts";
import type { Env } from "../env.ts";
import { signHex } from "../crypto/ed25519.ts";
import type { HmacKey } from "../crypto/hash.ts";
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
import { expiryProblem } from "./expiry.ts";
import { withFlock } from "../fs/flock.ts";
import { authzPaths } from "./triad_paths.ts";
import { approverName, projectRoster } from "./roster.ts";
import {
  hmacKeyFrom,
  type OperatorSigner,
  schemeOf,
  signatureProblem,
  signerOf,
  type SignerSource,
  VerifyKeyStore,
  WAIVER_KEY_ENV,
} from "./signed.ts";
import { pyStrip } from "../pycompat/str.ts";
import {
  authorizes,
  cellsOf,
  counter,
  field,
  INSTRUMENT_COLUMNS,
  recordOf,
  recordsOf,
  SCHEME_COLUMNS,
  usesProblem,
} from "./table.ts";
import type { Finding, Problem } from "./verdict.ts";
import { waiverSpentKey } from "./spent.ts";

/** The columns a waiver ledger must have (FORMATS.md §5.1). */
export const WAIVER_COLUMNS = [
  "timestamp",
  "waiver_id",
  "action_reviewed",
  ...INSTRUMENT_COLUMNS,
  "conditions_verified",
  "signature",
] as const;

/** The columns this tool adds for Ed25519 rows. */
export const WAIVER_SCHEME_COLUMNS = SCHEME_COLUMNS;

/** The purpose tag an Ed25519 waiver signature starts with. */
export const WAIVER_PURPOSE = "agentteams-waiver-v1";

const SCHEMA = {
  required: WAIVER_COLUMNS,
  known: [...WAIVER_COLUMNS, ...WAIVER_SCHEME_COLUMNS],
};

/** What validating and consuming a waiver is handed. */
export interface WaiverContext {
  /** The environment (the HMAC key variable). */
  readonly env: Env;
  /** The clock's reading. */
  readonly now: Date;
  /** The roster's names (default: the project's, else `security`). */
  readonly roster?: ReadonlySet<string>;
  /** The Ed25519 verify-key store (default: the project's). */
  readonly store?: VerifyKeyStore;
  /**
   * How many times each instrument was spent, from the proposal ledger (`lib/authz/spent.ts`):
   * a waiver's uses are the larger of its row's `uses` and that count.
   */
  readonly spent?: ReadonlyMap<string, number>;
}

/**
 * The signed payload of a waiver row (HMAC rows; an Ed25519 row signs {@link waiverMessage}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { waiverPayload } from "./waivers.ts";
 * assert.equal(
 *   waiverPayload({
 *     waiver_id: "W-7", action_reviewed: "security-intel-freshness",
 *     expires_at: "2026-12-01T00:00:00Z", max_uses: "2", uses: "0", approver: "alice",
 *     ticket_id: "OPS-1", reason_code: "offline", conditions_verified: "verified",
 *   }),
 *   "W-7|security-intel-freshness|2026-12-01T00:00:00Z|2|0|alice|OPS-1|offline|verified",
 * );
 * ```
 */
export function waiverPayload(rec: Record<string, string>): string {
  // Hot in a verify of many rows: unrolled, so each read site always sees the same name (every
  // record of a table shares one shape: each read is a direct one; a loop over the names is ~10%
  // slower), and concatenated (no array to join; the encoder flattens the result once).
  const f = SIGNED_FIELDS;
  let out = signed(rec[f[0]]) + "|" + signed(rec[f[1]]) + "|" + signed(rec[f[2]]) + "|" +
    signed(rec[f[3]]) + "|" + signed(rec[f[4]]) + "|" + signed(rec[f[5]]) + "|" +
    signed(rec[f[6]]) + "|" + signed(rec[f[7]]) + "|" + signed(rec[f[8]]);
  const scheme = field(rec, "sig_scheme");
  if (scheme !== "" && scheme.trim() !== "") out += `|sig_scheme=${scheme.trim()}`;
  const keyId = field(rec, "key_id");
  if (keyId !== "" && keyId.trim() !== "") out += `|key_id=${keyId.trim()}`;
  return out;
}

/**
 * The nine fields an HMAC waiver signs, in order: every column but the timestamp and the
 * signature (what {@link waiverPayload} reads, by position).
 */
const SIGNED_FIELDS = WAIVER_COLUMNS.slice(1, 10) as readonly string[];

/** A signed field's text: stripped as Python strips; absent (or not a string) is empty. */
function signed(v: unknown): string {
  return typeof v === "string" ? pyStrip(v) : "";
}

/**
 * What an Ed25519 waiver signature covers: the purpose tag, then the payload.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { waiverMessage } from "./waivers.ts";
 * assert.equal(waiverMessage({ waiver_id: "W-1" }).startsWith("agentteams-waiver-v1|W-1|"), true);
 * ```
 */
export function waiverMessage(rec: Record<string, string>): string {
  return `${WAIVER_PURPOSE}|${waiverPayload(rec)}`;
}

/**
 * Checks a waiver's signature by the scheme it names (synchronously for HMAC rows).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { waiverSignatureProblem } from "./waivers.ts";
 * const p = await waiverSignatureProblem({ waiver_id: "W-1", signature: "00" }, { env: {}, now: new Date() });
 * assert.equal(p?.code, "NO_SIGNING_KEY");
 * ```
 */
export function waiverSignatureProblem(
  rec: Record<string, string>,
  ctx: WaiverContext,
  root = "/",
): Problem | null | Promise<Problem | null> {
  return signatureProblem(rec, {
    env: ctx.env,
    keyEnv: WAIVER_KEY_ENV,
    store: ctx.store ?? new VerifyKeyStore(authzPaths(root).verifyKeys),
    payload: () => waiverPayload(rec),
    message: () => waiverMessage(rec),
    what: "waiver",
  });
}

/**
 * Validates one waiver row for `action` in the earlier tool's order; `null` when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { waiverProblem } from "./waivers.ts";
 * assert.equal(
 *   (await waiverProblem({ action_reviewed: "x" }, "y", { env: {}, now: new Date() }))?.code,
 *   "SCOPE_MISMATCH",
 * );
 * ```
 */
export function waiverProblem(
  rec: Record<string, string>,
  action: string,
  ctx: WaiverContext,
  root = "/",
): Promise<Problem | null> {
  try {
    return Promise.resolve(waiverProblemNow(rec, action, ctx, root));
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * {@link waiverProblem} without a promise for an HMAC row (an Ed25519 row's answer is one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { waiverProblemNow } from "./waivers.ts";
 * assert.equal((waiverProblemNow({ action_reviewed: "x" }, "y", { env: {}, now: new Date() }) as { code: string })
 *   .code, "SCOPE_MISMATCH");
 * ```
 */
export function waiverProblemNow(
  rec: Record<string, string>,
  action: string,
  ctx: WaiverContext,
  root = "/",
): Problem | null | Promise<Problem | null> {
  // (A verify asks each row about its own action: the very string, which always matches.)
  if (
    action !== field(rec, "action_reviewed") && !authorizes(field(rec, "action_reviewed"), action)
  ) {
    return {
      code: "SCOPE_MISMATCH",
      reason: `the waiver is for ${JSON.stringify(field(rec, "action_reviewed").trim())}, not ${
        JSON.stringify(action)
      }`,
    };
  }
  const cv = field(rec, "conditions_verified");
  if (cv !== "verified" && cv.trim().toLowerCase() !== "verified") {
    return {
      code: "CONDITIONS_UNVERIFIED",
      reason: `conditions_verified is ${
        JSON.stringify(field(rec, "conditions_verified"))
      }, not "verified"`,
    };
  }
  let empty: string[] | null = null;
  for (const k of REQUIRED_TEXT) {
    if (pyStrip(field(rec, k)) === "") (empty ??= []).push(k);
  }
  if (empty !== null) {
    return { code: "FIELDS_MISSING", reason: `empty ${empty.join(", ")}` };
  }
  const roster = ctx.roster ?? projectRoster(authzPaths(root).roster);
  const approver = field(rec, "approver");
  if (!roster.has(approver) && !roster.has(approverName(approver))) {
    return {
      code: "APPROVER_NOT_ON_ROSTER",
      reason: `approver ${
        JSON.stringify(field(rec, "approver").trim())
      } is not on the roster (references/security-approvers.txt)`,
    };
  }
  const exp = expiryProblem(field(rec, "expires_at"), ctx.now, "refuse");
  if (exp !== null) return exp;
  const uses = usesProblem(rec, "waiver");
  if (uses !== null) return uses;
  const spent = ctx.spent?.get(waiverSpentKey(field(rec, "waiver_id"))) ?? 0;
  const max = counter(field(rec, "max_uses")) ?? 0;
  if (spent >= max) {
    return {
      code: "USES_EXHAUSTED",
      reason: `waiver use limit has been reached (${spent} of ${max} spent, as the proposal ` +
        `ledger's gate-pass rows record; the row's own uses says ${field(rec, "uses").trim()})`,
    };
  }
  return waiverSignatureProblem(rec, ctx, root);
}

/** The fields that must not be empty. */
const REQUIRED_TEXT = ["waiver_id", "approver", "ticket_id", "reason_code"] as const;

/** The waiver ledger as read (`null`: no file; default: read now), parsed. */
function waiversFrom(
  root: string,
  read: CsvText | null = readCsvText(authzPaths(root).waivers),
): CsvTable | null {
  return parseCsvRead(read, WAIVERS_SCHEMA);
}

/**
 * The waiver ledger as a gate reads it with the proposal-ledger key: through its index
 * (`lib/authz/csv_index.ts`), only the rows naming `action` and those appended since it was
 * kept (what {@link latestFor} chooses among); else whole. A read writes nothing.
 */
async function readWaiversFor(
  root: string,
  action: string,
  key: HmacKey,
  anchors?: Anchors,
): Promise<CsvTable | null> {
  const file = authzPaths(root).waivers;
  const read = readCsvText(file);
  const ref = { root, name: "waivers", key, file, anchors };
  if (read === null) {
    refuseGoneIndexed(ref);
    return null;
  }
  const fast = await readIndexed(read, ref, WAIVERS_SCHEMA, { halts: false, action });
  return fast?.table ?? parseCsv(read.text, WAIVERS_SCHEMA);
}

/**
 * Keeps the waiver ledger's index (`lib/authz/csv_index.ts`) after a write: the whole ledger read
 * and indexed with the proposal-ledger key, for the gate's next read. Returns what the ledger
 * holds, for its anchor (`lib/authz/triad_index.ts`).
 *
 * @throws {AuthzError} `CSV_MALFORMED`, `CSV_COLUMNS`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { indexWaivers } from "./waivers.ts";
 * import { csvIndexPath } from "./csv_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * await indexWaivers(root, new HmacKey(new Uint8Array(32)));
 * // No ledger: nothing kept.
 * assert.throws(() => Deno.statSync(csvIndexPath(root, "waivers")), Deno.errors.NotFound);
 * ```
 */
export async function indexWaivers(
  root: string,
  key: HmacKey,
  given?: CsvText | null,
): Promise<AnchorState> {
  const read = given !== undefined ? given : readCsvText(authzPaths(root).waivers);
  if (read === null) {
    dropIndex(root, "waivers");
    return anchorStateOf(null, 0);
  }
  const t = parseCsv(read.text, WAIVERS_SCHEMA);
  await keepIndex(read, { root, name: "waivers", key }, t, "", (r) => field(r, ACTION_COLUMN));
  return anchorStateOf(read, t.rows.length);
}

const WAIVERS_WHAT = "security-waivers.log.csv";
const WAIVERS_SCHEMA = { ...SCHEMA, what: WAIVERS_WHAT };

/**
 * Verifies every waiver row against its own action, read-only: one finding per row.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyWaivers } from "./waivers.ts";
 * // A project with no waivers file: no rows.
 * const rows = await verifyWaivers(Deno.makeTempDirSync(), { env: {}, now: new Date() });
 * assert.deepEqual(rows, []);
 * ```
 */
export async function verifyWaivers(
  root: string,
  ctx: WaiverContext,
  read?: CsvText | null,
): Promise<Finding[]> {
  const t = waiversFrom(root, read);
  if (t === null) return [];
  const roster = ctx.roster ?? projectRoster(authzPaths(root).roster);
  const store = ctx.store ?? new VerifyKeyStore(authzPaths(root).verifyKeys);
  const c = { ...ctx, roster, store };
  const rows = t.rows;
  const out = new Array<Finding>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    // Each row's record is made, checked and dropped in turn (none is kept: less to collect).
    const rec = recordOf(t.header, rows[i].cells);
    const action = field(rec, "action_reviewed");
    const now = waiverProblemNow(rec, action, c, root);
    const p = now instanceof Promise ? await now : now;
    out[i] = {
      line: rows[i].line,
      id: field(rec, "waiver_id").trim(),
      action: action.trim(),
      valid: p === null,
      code: p?.code ?? null,
      reason: p?.reason ?? "valid",
      ...(p?.code === "USES_EXHAUSTED" ? { spent: true } : {}),
    };
  }
  return out;
}

/** What a waiver check found. */
export interface WaiverCheck {
  /** A valid waiver names the action. */
  readonly ok: boolean;
  /** Why not (or `null`). */
  readonly problem: Problem | null;
  /** The waiver chosen (the last row naming the action), when any. */
  readonly waiverId: string | null;
  /** Its line. */
  readonly line: number | null;
}

/** The column a waiver names its action in: a gate chooses waivers by it (and the index hashes it). */
const ACTION_COLUMN = "action_reviewed";

function latestFor(t: CsvTable, action: string): number {
  // The one column read from the cells as parsed: no record is made of a row that is not chosen.
  // (A record holds a repeated column's last value: so does this.)
  const col = t.header.lastIndexOf(ACTION_COLUMN);
  for (let i = t.rows.length - 1; i >= 0; i--) {
    if (authorizes(col < 0 ? "" : t.rows[i].cells[col], action)) return i;
  }
  return -1;
}

/** A waiver check with the ledger it was made on (what consuming the waiver rewrites). */
export interface FoundWaiver {
  /** What the check found. */
  readonly check: WaiverCheck;
  /** The ledger as read (`null`: none yet). */
  readonly table: CsvTable | null;
  /** The chosen row as a record (`null`: no waiver names the action). */
  readonly rec: Record<string, string> | null;
  /** The chosen row's index in the table's rows (-1: no waiver names the action). */
  readonly index: number;
}

/**
 * {@link checkWaiver}, keeping the ledger it read (for {@link prepareWaiverSpend}). With `key`, the
 * ledger is read through its index, held to `anchors` (the signed ledger's anchors as the caller
 * read them for this decision; default: read now).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findWaiver } from "./waivers.ts";
 * assert.equal((await findWaiver("/nonexistent", "x", { env: {}, now: new Date() })).index, -1);
 * ```
 */
export async function findWaiver(
  root: string,
  action: string,
  ctx: WaiverContext,
  key?: HmacKey,
  anchors?: Anchors,
  read?: CsvText | null,
): Promise<FoundWaiver> {
  const t = read !== undefined
    ? waiversFrom(root, read)
    : key === undefined
    ? waiversFrom(root)
    : await readWaiversFor(root, action, key, anchors);
  const i = t === null ? -1 : latestFor(t, action);
  if (t === null || i < 0) {
    const check: WaiverCheck = {
      ok: false,
      problem: { code: "NO_WAIVER", reason: `no waiver names ${JSON.stringify(action)}` },
      waiverId: null,
      line: null,
    };
    return { check, table: t, rec: null, index: -1 };
  }
  const rec = recordOf(t.header, t.rows[i].cells);
  const problem = await waiverProblem(rec, action, ctx, root);
  const check: WaiverCheck = {
    ok: problem === null,
    problem,
    waiverId: field(rec, "waiver_id").trim(),
    line: t.rows[i].line,
  };
  return { check, table: t, rec, index: i };
}

/**
 * Whether a waiver lifts the gate for `action`, read-only: the last row naming it is validated;
 * an invalid one refuses (no fallback to an older row).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkWaiver } from "./waivers.ts";
 * assert.equal(
 *   (await checkWaiver("/nonexistent", "x", { env: {}, now: new Date() })).problem?.code,
 *   "NO_WAIVER",
 * );
 * ```
 */
export async function checkWaiver(
  root: string,
  action: string,
  ctx: WaiverContext,
): Promise<WaiverCheck> {
  return (await findWaiver(root, action, ctx)).check;
}

async function signWaiver(
  rec: Record<string, string>,
  hmac: HmacKey | null,
  source: SignerSource | undefined,
): Promise<string> {
  if (schemeOf(rec) === "ed25519") {
    const signer = await signerOf(source);
    if (signer === null || signer.keyId !== field(rec, "key_id").trim()) {
      throw new AuthzError(
        "NO_SIGNING_KEY",
        `the waiver is Ed25519-signed by key ${field(rec, "key_id").trim()}; re-signing it needs ` +
          "that operator key (an Ed25519 row is never re-signed with HMAC)",
      );
    }
    return await signHex(signer.key, waiverMessage(rec));
  }
  if (hmac === null) {
    throw new AuthzError("NO_SIGNING_KEY", `${WAIVER_KEY_ENV} is not set; refused (fail closed)`);
  }
  return hmac.hex(waiverPayload(rec));
}

/**
 * Consumes the waiver that allows `action`: validated again under the lock, `uses` incremented,
 * the row re-signed by its own scheme, the file rewritten atomically (mode kept).
 *
 * @throws {AuthzError} the waiver's problem (`NO_WAIVER`, `EXPIRED`, ...), `NO_SIGNING_KEY`.
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p (its .agentteams/ state folder) and the operator's keys
 * import { consumeWaiver } from "./waivers.ts";
 * const r = await consumeWaiver("/work/p", "delete:src/a.ts", {
 *   env: { AGENTTEAMS_WAIVER_SIGNING_KEY: "k" },
 *   now: new Date(),
 * });
 * r.uses; // 1 after the first use
 * ```
 */
export function consumeWaiver(
  root: string,
  action: string,
  ctx: WaiverContext & { readonly signer?: SignerSource },
): Promise<{ waiverId: string; uses: number; maxUses: number; line: number }> {
  return withFlock(root, { target: "directory" }, async () => {
    const found = await findWaiver(root, action, ctx);
    const problem = found.check.problem;
    if (found.index < 0) throw new AuthzError("NO_WAIVER", problem!.reason);
    if (problem !== null) throw new AuthzError(problem.code, `waiver: ${problem.reason}`);
    const { write, ...spent } = await prepareWaiverSpend(root, found, ctx);
    write();
    return spent;
  });
}

/**
 * The spend of a valid waiver {@link findWaiver} found, made ready and not yet written, for a
 * caller holding the project's lock that found it under that same lock (the gate, which decides
 * and spends under one lock, so the ledger is not read or validated twice): `uses` incremented and
 * the row re-signed by its own scheme now, so a spend that cannot be signed (no key, another
 * operator's Ed25519 key) is refused before the caller records anything; `write()` then rewrites
 * the file atomically (mode kept) and returns what it wrote.
 *
 * @throws {AuthzError} `NO_SIGNING_KEY`.
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p (its .agentteams/ state folder) and the operator's keys
 * import { findWaiver, prepareWaiverSpend } from "./waivers.ts";
 * import { withFlock } from "../fs/flock.ts";
 * const ctx = { env: { AGENTTEAMS_WAIVER_SIGNING_KEY: "k" }, now: new Date() };
 * await withFlock("/work/p", { target: "directory" }, async () => {
 *   const found = await findWaiver("/work/p", "delete:old.txt", ctx);
 *   if (found.check.ok) (await prepareWaiverSpend("/work/p", found, ctx)).write();
 * });
 * ```
 */
export async function prepareWaiverSpend(
  root: string,
  found: FoundWaiver,
  ctx: WaiverContext & { readonly signer?: SignerSource },
): Promise<
  { waiverId: string; uses: number; maxUses: number; line: number; write(): CsvText }
> {
  const t = found.table!;
  const i = found.index;
  const rec = found.rec!;
  const spent = ctx.spent?.get(waiverSpentKey(field(rec, "waiver_id"))) ?? 0;
  const uses = Math.max(counter(field(rec, "uses")) ?? 0, spent) + 1;
  const next: Record<string, string> = { ...rec, uses: String(uses) };
  next.signature = await signWaiver(next, hmacKeyFrom(ctx.env, WAIVER_KEY_ENV), ctx.signer);
  // The other rows as they were read; the spent one from its record.
  const rows = t.rows.map((r) => r.cells);
  rows[i] = cellsOf(next, t.header);
  return {
    waiverId: field(rec, "waiver_id").trim(),
    uses,
    maxUses: counter(field(rec, "max_uses")) ?? 0,
    line: t.rows[i].line,
    write: () => rewriteCsvFile(authzPaths(root).waivers, t.header, rows, t),
  };
}

/** The business fields of a new waiver. */
export interface WaiverFields {
  /** Its id (unique in the ledger). */
  readonly waiverId: string;
  /** The action id it clears. */
  readonly action: string;
  /** When it expires (ISO-8601 with an offset). */
  readonly expiresAt: string;
  /** How many uses it allows. */
  readonly maxUses: number;
  /** Who approved it (on the roster). */
  readonly approver: string;
  /** The ticket. */
  readonly ticketId: string;
  /** The reason code. */
  readonly reasonCode: string;
  /** `verified` (default) or `pending`. */
  readonly conditionsVerified?: string;
}

/**
 * Issues a waiver: validated as it will be read (so an expired, unapproved or unsigned waiver is
 * never written), signed with the HMAC key, or with the operator's Ed25519 key when `signer` is
 * given, and appended (the ledger and `references/` are created on first use).
 *
 * @throws {AuthzError} `DUPLICATE_ID` and every validity rule's code.
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/p (its .agentteams/ state folder) and the operator's keys
 * import { issueWaiver } from "./waivers.ts";
 * await issueWaiver("/work/p", {
 *   waiverId: "W-1", action: "delete:old.txt", expiresAt: "2026-12-31T00:00:00Z", maxUses: 1,
 *   approver: "security", ticketId: "OPS-1", reasonCode: "cleanup",
 * }, { env: { AGENTTEAMS_WAIVER_SIGNING_KEY: "k" }, now: new Date() });
 * ```
 */
export function issueWaiver(
  root: string,
  f: WaiverFields,
  ctx: WaiverContext & {
    readonly signer?: OperatorSigner | null;
    /** With the ledger key: the ledger as read is checked, and what is written anchored. */
    readonly hold?: TriadHold | null;
  },
): Promise<Record<string, string>> {
  const paths = authzPaths(root);
  return withFlock(root, { target: "directory" }, async () => {
    const read = readCsvText(paths.waivers);
    await ctx.hold?.held(read);
    const t = waiversFrom(root, read);
    const recs = t === null ? [] : recordsOf(t);
    if (recs.some((r) => field(r, "waiver_id").trim() === f.waiverId.trim())) {
      throw new AuthzError("DUPLICATE_ID", `waiver_id ${f.waiverId} is already in the ledger`);
    }
    const signer = ctx.signer ?? null;
    const rec: Record<string, string> = {
      timestamp: ctx.now.toISOString().replace(/\.\d{3}Z$/, "Z"),
      waiver_id: f.waiverId,
      action_reviewed: f.action,
      expires_at: f.expiresAt,
      max_uses: String(f.maxUses),
      uses: "0",
      approver: f.approver,
      ticket_id: f.ticketId,
      reason_code: f.reasonCode,
      conditions_verified: f.conditionsVerified ?? "verified",
      signature: "",
    };
    let header: string[] = t === null ? [...WAIVER_COLUMNS] : [...t.header];
    if (signer !== null) {
      rec.sig_scheme = "ed25519";
      rec.key_id = signer.keyId;
      for (const c of WAIVER_SCHEME_COLUMNS) if (!header.includes(c)) header = [...header, c];
    }
    rec.signature = await signWaiver(rec, hmacKeyFrom(ctx.env, WAIVER_KEY_ENV), signer);
    const problem = await waiverProblem(rec, f.action, ctx, root);
    if (problem !== null) {
      throw new AuthzError(problem.code, `waiver not issued: ${problem.reason}`);
    }
    recs.push(rec);
    const written = rewriteCsvFile(paths.waivers, header, recs.map((r) => cellsOf(r, header)), t);
    await ctx.hold?.kept(written);
    return rec;
  });
}
