/**
 * Capability grants, `references/capability-grants.log.csv` in the holder's workspace: a signed,
 * scoped, time-bounded authorization by an issuer team for a holder team to perform operations
 * (`write` is the only widening one) on a target in the issuer's workspace (FORMATS.md §6).
 *
 * Validation is ordered and fails closed: the `prev_digest` chain (checked on every read), the
 * 11 business fields present, the scheme sufficient (a `write` grant must be
 * `sig_scheme=ed25519`; an HMAC write grant is refused with a migration message), the signature
 * (Ed25519 over `agentteams-grant-v1|` + the payload with
 * `<team dir>/references/authorized-verify-keys/<key_id>.pub.pem`, or HMAC-SHA256 with
 * `AGENTTEAMS_GRANT_SIGNING_KEY`), not expired (a naive time is UTC), uses not exhausted, the
 * approver on the team dir's roster (no fallback; a project-root roster is ignored with a
 * warning), and the target safe (`~`, `..` escapes and targets outside the signed `issuer_root`
 * refused).
 *
 * Valid write grants widen the holder's confinement write roots at the runner's next start only
 * ({@link grantWriteRoots}); nothing widens a running boundary, and no grant lifts a HALT.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyGrants } from "./grants.ts";
 * const holder = Deno.makeTempDirSync(); // no grant ledger yet
 * const r = await verifyGrants(holder, `${holder}/.agentteams/team`, {
 *   env: {},
 *   now: new Date(),
 * });
 * assert.deepEqual(r.findings, []);
 * ```
 * @module
 */
import { AuthzError } from "../errors.ts";
import type { Env } from "../env.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { firstChainBreak } from "../crypto/chain.ts";
import { signHex } from "../crypto/ed25519.ts";
import { isAbsolute, join, normalize, relative } from "../fs/path.ts";
import { controlPlaneHit, staticPlane } from "../policy/control_plane.ts";
import { within } from "../fs/within.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { type CsvTable, readCsvFile, rewriteCsvFile } from "./csv.ts";
import { expiryProblem } from "./expiry.ts";
import { type DecisionLog, haltFor, readDecisionLog } from "./decisions.ts";
import { GRANT_PURPOSE } from "./grant_purpose.ts";
import { withFlock } from "../fs/flock.ts";
import { authzPaths } from "./triad_paths.ts";
import { DEFAULT_TEAM_DIR_REL, ROSTER_REL, VERIFY_KEYS_REL } from "../layout.ts";
import { approverName, readRoster } from "./roster.ts";
import {
  GRANT_KEY_ENV,
  hmacKeyFrom,
  NO_KEYS_DIR,
  type OperatorSigner,
  schemeOf,
  signatureProblem,
  signedPayload,
  VerifyKeyStore,
} from "./signed.ts";
import {
  cellsOf,
  field,
  INSTRUMENT_COLUMNS,
  recordsOf,
  SCHEME_COLUMNS,
  usesProblem,
} from "./table.ts";
import type { Finding, Problem } from "./verdict.ts";

/** The grant ledger's 17 columns; the reader requires the first 15. */
export const GRANT_COLUMNS = [
  "timestamp",
  "grant_id",
  "issuer_team",
  "holder_team",
  "target_path",
  "permitted_ops",
  ...INSTRUMENT_COLUMNS,
  "issuer_root",
  "prev_digest",
  "signature",
  ...SCHEME_COLUMNS,
] as const;

/** The signed fields, in order: the 11 business fields, then the chain link. */
const PAYLOAD_FIELDS = [...GRANT_COLUMNS.slice(1, 12), "prev_digest"] as const;

const SCHEMA = { required: GRANT_COLUMNS.slice(0, 15), known: GRANT_COLUMNS };

/** What validating grants is handed. */
export interface GrantContext {
  /** The environment (the HMAC key for non-widening grants). */
  readonly env: Env;
  /** The clock's reading. */
  readonly now: Date;
}

/**
 * A grant's payload (what the chain hashes; HMAC rows sign it, Ed25519 rows sign
 * {@link grantMessage}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantPayload } from "./grants.ts";
 * assert.equal(
 *   grantPayload({
 *     grant_id: "G-1", issuer_team: "team-a", holder_team: "team-b", target_path: "docs/shared",
 *     permitted_ops: "write", expires_at: "2026-12-31T00:00:00+00:00", max_uses: "1", uses: "0",
 *     approver: "alice", ticket_id: "T-9", reason_code: "cross-repo", prev_digest: "",
 *     issuer_root: "/home/op/team-a", sig_scheme: "ed25519", key_id: "op1",
 *   }),
 *   "G-1|team-a|team-b|docs/shared|write|2026-12-31T00:00:00+00:00|1|0|alice|T-9|cross-repo|" +
 *     "|/home/op/team-a|sig_scheme=ed25519|key_id=op1",
 * );
 * ```
 */
export function grantPayload(r: Record<string, string>): string {
  const values: string[] = PAYLOAD_FIELDS.map((k) => field(r, k));
  if (field(r, "issuer_root").trim() !== "") values.push(field(r, "issuer_root"));
  for (const k of ["sig_scheme", "key_id"]) {
    const v = field(r, k).trim();
    if (v !== "") values.push(`${k}=${v}`);
  }
  return signedPayload(values);
}

/**
 * What an Ed25519 grant signature covers: the purpose tag, then the payload.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantMessage } from "./grants.ts";
 * assert.equal(grantMessage({ grant_id: "G-1" }).startsWith("agentteams-grant-v1|G-1|"), true);
 * ```
 */
export function grantMessage(r: Record<string, string>): string {
  return `${GRANT_PURPOSE}|${grantPayload(r)}`;
}

/**
 * A grant's operations (`;`-separated, stripped, lower-cased, as a set).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantOps } from "./grants.ts";
 * assert.deepEqual([...grantOps(" read ; WRITE;read")], ["read", "write"]);
 * ```
 */
export function grantOps(v: string): Set<string> {
  return new Set(v.split(";").map((s) => s.trim().toLowerCase()).filter((s) => s !== ""));
}

/**
 * Whether a target is refused: empty, `/`, `~` or `~/…`, a relative path escaping with `..`, or an
 * absolute path outside a non-empty absolute `issuer_root`; `null` when safe.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { targetProblem } from "./grants.ts";
 * assert.equal(targetProblem("../x", "/srv/a")?.code, "TARGET_REFUSED");
 * assert.equal(targetProblem("docs", "/srv/a"), null);
 * ```
 */
export function targetProblem(target: string, issuerRoot: string): Problem | null {
  const t = target.trim();
  const root = issuerRoot.trim();
  const refuse = (why: string): Problem => ({
    code: "TARGET_REFUSED",
    reason: `target_path ${JSON.stringify(t)} is refused: ${why}`,
  });
  if (t === "" || t === "/") return refuse("it names no directory or the whole filesystem");
  if (t === "~" || t.startsWith("~/") || t.startsWith("~")) return refuse("a home-relative path");
  if (root !== "" && !isAbsolute(root)) {
    return refuse(`issuer_root ${JSON.stringify(root)} is not absolute`);
  }
  if (isAbsolute(t)) {
    if (root === "") return refuse("an absolute target needs a signed issuer_root");
    if (!within(normalize(t), normalize(root))) {
      return refuse(`it lies outside issuer_root ${root}`);
    }
    return null;
  }
  const n = normalize(t);
  if (n === ".." || n.startsWith("../") || t.split("/").includes("..")) {
    return refuse("it escapes with ..");
  }
  return null;
}

/** The chain's first broken row (1-based), or `null`. */
function chainBreak(recs: readonly Record<string, string>[]): number | null {
  const broken = firstChainBreak(
    recs.map(grantPayload),
    recs.map((r) => field(r, "prev_digest").trim()),
  );
  return broken === null ? null : broken + 1;
}

/** The roster and keys a team dir holds, read once per verify. */
export interface TeamDir {
  /** The team dir. */
  readonly dir: string;
  /** Its roster's names (empty: none, so no grant is approved). */
  readonly roster: ReadonlySet<string>;
  /** Its verify-key store. */
  readonly store: VerifyKeyStore;
  /** Warnings (a project-root roster ignored). */
  readonly warnings: readonly string[];
}

/**
 * Reads a holder's team dir: its roster (no fallback) and its verify-key store; a roster at the
 * project root is ignored with a warning (an agent inside the project could have planted it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readTeamDir } from "./grants.ts";
 * assert.equal(readTeamDir("/work/holder", "/work/holder/.agentteams/team").roster.size, 0); // without a roster
 * ```
 */
export function readTeamDir(project: string, teamDir: string): TeamDir {
  const warnings: string[] = [];
  // A trust root: a team dir inside the project must lie in its control plane (the default,
  // `.agentteams/team`, does), where no proposal or run writes; anywhere else in the project a
  // session's own command could plant a roster or a key there, so it is not read (fail closed).
  if (within(teamDir, project) && teamDir !== project) {
    const rel = relative(project, teamDir);
    if (controlPlaneHit(rel, staticPlane(project)) === null) {
      warnings.push(
        `the team dir ${teamDir} lies in the project outside its control plane (a session's ` +
          "commands can write there), so its roster and verify keys are not read: keep it in " +
          `${DEFAULT_TEAM_DIR_REL} or outside the project`,
      );
      return {
        dir: teamDir,
        roster: new Set(),
        store: new VerifyKeyStore(NO_KEYS_DIR, {
          untrusted: { dir: join(teamDir, VERIFY_KEYS_REL), why: warnings[0] },
        }),
        warnings,
      };
    }
  }
  const projectRoster = authzPaths(project).roster;
  const teamRoster = join(teamDir, ROSTER_REL);
  if (projectRoster !== teamRoster && lstatOrNullSync(projectRoster) !== null) {
    warnings.push(
      `${projectRoster} is ignored for grants: their approvers come from the team dir's ` +
        `${teamRoster} only`,
    );
  }
  return {
    dir: teamDir,
    roster: readRoster(teamRoster),
    store: new VerifyKeyStore(join(teamDir, VERIFY_KEYS_REL)),
    warnings,
  };
}

/**
 * Validates one grant row in order (the chain is checked by the reader); `null` when valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantProblem, readTeamDir } from "./grants.ts";
 * const team = readTeamDir("/work/h", "/work/h/.agentteams/team");
 * assert.equal(
 *   (await grantProblem({ grant_id: "G-1" }, team, { env: {}, now: new Date() }))?.code,
 *   "FIELDS_MISSING",
 * );
 * ```
 */
export async function grantProblem(
  r: Record<string, string>,
  team: TeamDir,
  ctx: GrantContext,
): Promise<Problem | null> {
  const empty = PAYLOAD_FIELDS.filter((k) => k !== "prev_digest" && field(r, k).trim() === "");
  if (empty.length > 0) return { code: "FIELDS_MISSING", reason: `empty ${empty.join(", ")}` };
  const ops = grantOps(field(r, "permitted_ops"));
  if (ops.has("write") && schemeOf(r) !== "ed25519") {
    return {
      code: "SCHEME_INSUFFICIENT",
      reason: `grant ${field(r, "grant_id").trim()} permits write but is not Ed25519-signed: an ` +
        "HMAC grant can no longer widen anything; have the operator re-sign it with " +
        "`agentteams grant sign` (--sign-grant)",
    };
  }
  const sig = await signatureProblem(r, {
    env: ctx.env,
    keyEnv: GRANT_KEY_ENV,
    store: team.store,
    payload: () => grantPayload(r),
    message: () => grantMessage(r),
    what: "HMAC grant",
  });
  if (sig !== null) return sig;
  const exp = expiryProblem(field(r, "expires_at"), ctx.now, "utc");
  if (exp !== null) return exp;
  const uses = usesProblem(r, "grant");
  if (uses !== null) return uses;
  if (!team.roster.has(approverName(field(r, "approver")))) {
    return {
      code: "APPROVER_NOT_ON_ROSTER",
      reason: team.roster.size === 0
        ? `no approver roster in the team dir (${join(team.dir, ROSTER_REL)}); a cross-workspace ` +
          "grant needs one (there is no fallback)"
        : `approver ${JSON.stringify(field(r, "approver").trim())} is not on ${
          join(team.dir, ROSTER_REL)
        }`,
    };
  }
  return targetProblem(field(r, "target_path"), field(r, "issuer_root"));
}

/** What a grant verify found. */
export interface GrantReport {
  /** One finding per row. */
  readonly findings: Finding[];
  /** The valid rows, with their records. */
  readonly valid: Record<string, string>[];
  /** Warnings (a project-root roster ignored). */
  readonly warnings: readonly string[];
}

function readGrants(project: string): CsvTable | null {
  return readCsvFile(authzPaths(project).grants, { ...SCHEMA, what: "capability-grants.log.csv" });
}

/**
 * Verifies every grant row read-only: the chain first (a break makes that row and every later
 * one invalid), then each row's rules.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyGrants } from "./grants.ts";
 * assert.deepEqual(
 *   (await verifyGrants("/nonexistent", "/nonexistent/t", { env: {}, now: new Date() })).findings,
 *   [],
 * );
 * ```
 */
export async function verifyGrants(
  project: string,
  teamDir: string,
  ctx: GrantContext,
): Promise<GrantReport> {
  const team = readTeamDir(project, teamDir);
  const t = readGrants(project);
  if (t === null) return { findings: [], valid: [], warnings: team.warnings };
  const recs = recordsOf(t);
  const broken = t.header.includes("prev_digest") ? chainBreak(recs) : null;
  const findings: Finding[] = [];
  const valid: Record<string, string>[] = [];
  for (let i = 0; i < recs.length; i++) {
    const r = recs[i];
    const p: Problem | null = broken !== null && i + 1 >= broken
      ? {
        code: "CHAIN_BROKEN",
        reason: `the prev_digest chain is broken at row ${broken} (line ${
          t.rows[broken - 1].line
        })`,
      }
      : await grantProblem(r, team, ctx);
    if (p === null) valid.push(r);
    findings.push({
      line: t.rows[i].line,
      id: field(r, "grant_id").trim(),
      action: `${field(r, "permitted_ops").trim()} ${field(r, "target_path").trim()}`,
      valid: p === null,
      code: p?.code ?? null,
      reason: p?.reason ?? "valid",
    });
  }
  return { findings, valid, warnings: team.warnings };
}

/** One valid write grant's root. */
export interface GrantedWrite {
  /** The absolute root (the target, resolved against the issuer's root). */
  readonly root: string;
  /** The issuer's workspace root. */
  readonly issuerRoot: string;
  /** The grant's id. */
  readonly grant: string;
  /**
   * The action ids a HALT on which stops this grant: `write:<target_path>`, `write:<root>`,
   * `grant:<id>` (a HALT reaches a parent path too).
   */
  readonly actions: readonly string[];
  /** Its `expires_at`, as signed. */
  readonly expiresAt: string;
}

/**
 * What stops a valid write grant from widening anything now, or `null`: its expiry passed, or an
 * unretracted HALT in the holder's decision log names its write or the grant (no grant lifts a
 * HALT). The runner asks again before every run, so a grant that expires or is HALTed while it
 * serves loses its root at once (that only narrows; nothing widens while it runs).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantStopped } from "./grants.ts";
 * import { readDecisionLog } from "./decisions.ts";
 * const g = { root: "/srv/a/docs", issuerRoot: "/srv/a", grant: "G-1",
 *   actions: ["write:docs", "grant:G-1"], expiresAt: "2099-01-01T00:00:00Z" };
 * assert.equal(await grantStopped(readDecisionLog("/nonexistent"), g, { env: {}, now: new Date() }, "/nonexistent"), null);
 * ```
 */
export async function grantStopped(
  log: DecisionLog,
  g: Pick<GrantedWrite, "actions" | "expiresAt">,
  ctx: GrantContext,
  project: string,
): Promise<string | null> {
  const exp = expiryProblem(g.expiresAt, ctx.now, "utc");
  if (exp !== null) return `${exp.code}: ${exp.reason}`;
  for (const action of g.actions) {
    const halt = await haltFor(log, action, ctx, project);
    if (halt !== null) return `HALTED: ${halt.problem.reason}`;
  }
  return null;
}

/** The write roots valid grants add, and what the runner records about them. */
export interface GrantRoots {
  /** Absolute write roots (sorted): each valid write grant's target. */
  readonly roots: string[];
  /** Each root with its issuer's workspace root and its grant (by root, then id). */
  readonly granted: GrantedWrite[];
  /** The grant ids they come from (sorted). */
  readonly active: string[];
  /** Why other rows did not count (at most 10, each at most 200 characters). */
  readonly problems: string[];
}

/**
 * The write roots a holder's valid write grants add to its confinement, as the runner reads them
 * once at its start (never while it runs). A relative target is resolved against its
 * `issuer_root`. A grant whose write has an unretracted HALT in the holder's decision log
 * (action `write:<target_path>` or `grant:<grant_id>`) adds nothing: no grant lifts a HALT.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantWriteRoots } from "./grants.ts";
 * // A holder with no grants file: no root is granted.
 * const h = Deno.makeTempDirSync();
 * const g = await grantWriteRoots(h, `${h}/.agentteams/team`, { env: {}, now: new Date() });
 * assert.deepEqual(g.roots, []);
 * ```
 */
export async function grantWriteRoots(
  project: string,
  teamDir: string,
  ctx: GrantContext,
): Promise<GrantRoots> {
  return writeRootsOf(project, await verifyGrants(project, teamDir, ctx), ctx);
}

/**
 * {@link grantWriteRoots} from a report {@link verifyGrants} already made (`grant verify --roots`,
 * which prints both, so the ledger and team dir are read and verified once).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyGrants, writeRootsOf } from "./grants.ts";
 * const ctx = { env: {}, now: new Date() };
 * // A holder with no grants file: no root is granted.
 * const h = Deno.makeTempDirSync();
 * const report = await verifyGrants(h, `${h}/.agentteams/team`, ctx);
 * assert.deepEqual((await writeRootsOf(h, report, ctx)).roots, []);
 * ```
 */
export async function writeRootsOf(
  project: string,
  report: GrantReport,
  ctx: GrantContext,
): Promise<GrantRoots> {
  const roots = new Set<string>();
  const granted: GrantedWrite[] = [];
  const active: string[] = [];
  const halts: string[] = [];
  const log = readDecisionLog(project);
  for (const r of report.valid) {
    if (!grantOps(field(r, "permitted_ops")).has("write")) continue;
    const t = field(r, "target_path").trim();
    const grant = field(r, "grant_id").trim();
    const { root, issuerRoot } = grantRootOf(r);
    const g: GrantedWrite = {
      root,
      issuerRoot,
      grant,
      // The write as signed and as the absolute root (a HALT on either spelling, or on a parent
      // directory, stops it: `haltReaches`), and the grant itself.
      actions: [...new Set([`write:${t}`, `write:${root}`, `grant:${grant}`])],
      expiresAt: field(r, "expires_at").trim(),
    };
    // A grant widens a boundary; it never lifts a HALT on the granted write.
    const stop = await grantStopped(log, g, ctx, project);
    if (stop !== null) {
      halts.push(`${grant}: ${stop}`.slice(0, 200));
      continue;
    }
    roots.add(root);
    granted.push(g);
    active.push(grant);
  }
  const problems = [
    ...halts,
    ...report.findings.filter((f) => !f.valid).map((f) =>
      `${f.id}: ${f.code}: ${f.reason}`.slice(0, 200)
    ),
  ].slice(0, 10);
  granted.sort((a, b) => cmp(a.root, b.root) || cmp(a.grant, b.grant));
  return { roots: [...roots].sort(), granted, active: active.sort(), problems };
}

/** A grant row's root: its target, resolved against its issuer's root, normalized. */
function grantRootOf(r: Record<string, string>): { root: string; issuerRoot: string } {
  const t = field(r, "target_path").trim();
  const issuerRoot = normalize(field(r, "issuer_root").trim()).replace(/(.)\/+$/, "$1");
  const root = (isAbsolute(t) ? normalize(t) : normalize(join(issuerRoot, t)))
    .replace(/(.)\/+$/, "$1");
  return { root, issuerRoot };
}

/**
 * Every absolute root a `write` row of the holder's grants ledger names, valid or not (nothing is
 * verified: for a check that must refuse more, never less). A gate's exec paths may not overlap
 * one, in the runner and in direct mode alike: what a runner let a command write there could
 * otherwise be run as a gate, deciding a proposal's verdict.
 *
 * @throws {AuthzError} a malformed ledger (`CSV_COLUMNS`, `CSV_MALFORMED`)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeGrantTargets } from "./grants.ts";
 * assert.deepEqual(writeGrantTargets("/nonexistent"), []);
 * ```
 */
export function writeGrantTargets(project: string): string[] {
  const t = readGrants(project);
  if (t === null) return [];
  const roots = new Set<string>();
  for (const r of recordsOf(t)) {
    if (!grantOps(field(r, "permitted_ops")).has("write")) continue;
    const { root } = grantRootOf(r);
    if (root.startsWith("/")) roots.add(root);
  }
  return [...roots].sort();
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The ledger row a runner writes at its start when grants exist or failed (the earlier tool's
 * `direct-grants-loaded`, here for write roots): the active grant ids, the widened roots, the
 * fingerprints of the verify keys it trusted (`VerifyKeyStore.fingerprints`), and the problems.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantsLoadedRow } from "./grants.ts";
 * assert.equal(
 *   grantsLoadedRow({ roots: ["/srv/a/docs"], active: ["G-1"], problems: [] }, []).action,
 *   "grants-loaded",
 * );
 * ```
 */
export function grantsLoadedRow(
  g: Pick<GrantRoots, "roots" | "active" | "problems">,
  keyFingerprints: readonly string[],
): {
  action: string;
  active: string[];
  roots: string[];
  key_fingerprints: string[];
  problems: string[];
} {
  return {
    action: "grants-loaded",
    active: [...g.active].sort(),
    roots: [...g.roots].sort(),
    key_fingerprints: [...keyFingerprints].sort(),
    problems: g.problems.slice(0, 10).map((p) => p.slice(0, 200)),
  };
}

/** The business fields of a new grant. */
export interface GrantFields {
  /** Its id (unique). */
  readonly grantId: string;
  /** The issuing team. */
  readonly issuerTeam: string;
  /** The holding team. */
  readonly holderTeam: string;
  /** The target in the issuer's workspace. */
  readonly targetPath: string;
  /** Operations, `;`-separated (`write` widens). */
  readonly permittedOps: string;
  /** Expiry (ISO-8601). */
  readonly expiresAt: string;
  /** Uses allowed. */
  readonly maxUses: number;
  /** The approver (on the team dir's roster). */
  readonly approver: string;
  /** The ticket. */
  readonly ticketId: string;
  /** The reason code. */
  readonly reasonCode: string;
  /** The issuer's workspace root (absolute; required for a write grant). */
  readonly issuerRoot?: string;
}

/**
 * Appends a grant to the holder's ledger: Ed25519 with the operator's key when `signer` is given
 * (the only way to mint a widening grant), else HMAC with `AGENTTEAMS_GRANT_SIGNING_KEY` (a
 * non-widening grant only). The row is chained, and verified against the team dir exactly as a
 * reader will before it is written; an older 15-column file gains `sig_scheme` and `key_id`.
 *
 * @throws {AuthzError} `SCHEME_INSUFFICIENT` (an HMAC write grant), `DUPLICATE_ID`,
 *   `CHAIN_BROKEN`, `NO_SIGNING_KEY` and every validity rule's code.
 * @example
 * ```ts ignore
 * // Not run: it needs the operator's grant ledger under /work/h and a signing key
 * import { appendGrant } from "./grants.ts";
 * await appendGrant("/work/h", "/work/h/.agentteams/team", {
 *   grantId: "G-2", issuerTeam: "a", holderTeam: "h", targetPath: "docs", permittedOps: "read",
 *   expiresAt: "2026-12-31T00:00:00Z", maxUses: 1, approver: "alice", ticketId: "T",
 *   reasonCode: "r",
 * }, { env: { AGENTTEAMS_GRANT_SIGNING_KEY: "k" }, now: new Date() }, null);
 * ```
 */
export function appendGrant(
  project: string,
  teamDir: string,
  f: GrantFields,
  ctx: GrantContext,
  signer: OperatorSigner | null,
): Promise<Record<string, string>> {
  const paths = authzPaths(project);
  return withFlock(project, { target: "directory" }, async () => {
    if (signer === null && grantOps(f.permittedOps).has("write")) {
      throw new AuthzError(
        "SCHEME_INSUFFICIENT",
        "an HMAC grant cannot permit write (it would widen a boundary with a shared key); use " +
          "`agentteams grant sign` with the operator's Ed25519 key",
      );
    }
    const t = readGrants(project);
    const recs = t === null ? [] : recordsOf(t);
    if (t !== null && t.header.includes("prev_digest") && chainBreak(recs) !== null) {
      throw new AuthzError(
        "CHAIN_BROKEN",
        "the grant ledger's chain is broken; refusing to extend it",
      );
    }
    if (recs.some((r) => field(r, "grant_id").trim() === f.grantId.trim())) {
      throw new AuthzError("DUPLICATE_ID", `grant_id ${f.grantId} is already in the ledger`);
    }
    const last = recs.at(-1);
    const r: Record<string, string> = {
      timestamp: ctx.now.toISOString().replace(/\.\d{3}Z$/, "+00:00"),
      grant_id: f.grantId,
      issuer_team: f.issuerTeam,
      holder_team: f.holderTeam,
      target_path: f.targetPath,
      permitted_ops: f.permittedOps,
      expires_at: f.expiresAt,
      max_uses: String(f.maxUses),
      uses: "0",
      approver: f.approver,
      ticket_id: f.ticketId,
      reason_code: f.reasonCode,
      issuer_root: f.issuerRoot ?? "",
      prev_digest: last === undefined ? "" : sha256Hex(grantPayload(last)),
      signature: "",
      sig_scheme: signer === null ? "" : "ed25519",
      key_id: signer === null ? "" : signer.keyId,
    };
    if (signer !== null) r.signature = await signHex(signer.key, grantMessage(r));
    else {
      const key = hmacKeyFrom(ctx.env, GRANT_KEY_ENV);
      if (key === null) {
        throw new AuthzError("NO_SIGNING_KEY", `${GRANT_KEY_ENV} is not set; refused`);
      }
      r.signature = key.hex(grantPayload(r));
    }
    if (
      grantOps(f.permittedOps).has("write") && (f.issuerRoot ?? "").trim() === "" &&
      !isAbsolute(f.targetPath.trim())
    ) {
      throw new AuthzError(
        "TARGET_REFUSED",
        "a write grant needs --issuer-root (the issuer's absolute workspace root)",
      );
    }
    const p = await grantProblem(r, readTeamDir(project, teamDir), ctx);
    if (p !== null) throw new AuthzError(p.code, `grant not written: ${p.reason}`);
    const all = [...recs, r];
    rewriteCsvFile(paths.grants, GRANT_COLUMNS, all.map((x) => cellsOf(x, GRANT_COLUMNS)), t);
    return r;
  });
}
