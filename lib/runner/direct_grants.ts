/**
 * Operator direct-write grants for the tool-server channel (the earlier tool's R5, FORMATS §2.6):
 * the pure half. A brief's `mcp_grants.<agent>.approval: "direct"` alone never lets an agent's
 * `write_file` land at once: the brief is a project file. The runner upgrades a change to a
 * direct write only under a grant record the operator signed with Ed25519 and keeps outside the
 * project (`~/.config/agentteams/mcp-grants/<the confined file's name>`), verified here against
 * the live brief: its tools, write scopes, every gate's definition (by SHA-256) and this build's
 * runner server. Limits: at most {@link MAX_ACTIVE} active grants (more activate none), at most
 * {@link MAX_DAYS} days from issue to expiry, `max_writes` from 1 to {@link MAX_WRITES}.
 *
 * Everything here decides from values: the reading of the file, of the verify keys and of the
 * ledger is `direct_grants_load.ts`'s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signedPayloadOf } from "./direct_grants.ts";
 * const payload = signedPayloadOf({
 *   grant_id: "G-1", agent: "worker", server: "agentteams_runner", map_version: 1,
 *   tools: ["write_file"], approval: "direct", write_scopes: ["src/a.txt"], gates: {},
 *   server_sha256: "0".repeat(64), issued: "2026-12-01T00:00:00+00:00",
 *   expires: "2026-12-02T00:00:00+00:00", max_writes: 5, key_id: "op1",
 * });
 * assert.equal(payload.startsWith('agentteams-mcp-direct-grant-v1|{"agent":"worker",'), true);
 * ```
 * @module
 */
import {
  canonical,
  canonicalCompact,
  compareCodePoints,
  type JsonValue,
} from "../pycompat/canonical.ts";
import { parseInstant } from "../pycompat/isoformat.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { inWriteScopes } from "../policy/scope.ts";
import { MCP_RUNNER_TOOLS } from "../policy/brief_fields.ts";
import type { GateDef, Policy } from "../policy/types.ts";
import { readJson } from "../json/reader.ts";
import { QueueError } from "../errors.ts";
import { MAX_MCP_GRANTS_BYTES } from "../sandbox/operator_file.ts";

/** Domain separation: a grant's signature verifies as nothing else the operator signs. */
export const PURPOSE_TAG = "agentteams-mcp-direct-grant-v1";
/** More active grants than this activates none. */
export const MAX_ACTIVE = 3;
/** The longest a grant may run, from `issued` to `expires`, in days. */
export const MAX_DAYS = 30;
/** The largest `max_writes`. */
export const MAX_WRITES = 500;
/** A direct agent's dispatch lives this long (hours). */
export const DIRECT_TTL_HOURS = 4;
/** A direct agent's dispatch allows this many uses. */
export const DIRECT_MAX_USES = 10;
/** The largest grants file read, in bytes. */
export const MAX_GRANTS_FILE_BYTES = MAX_MCP_GRANTS_BYTES;
/** How many problems the start-up row keeps. */
export const MAX_PROBLEMS = 10;
/** How long one problem may be, in characters (code points). */
export const MAX_PROBLEM_CHARS = 200;
/** A key id: the verify key's file name stem. */
export const DIRECT_KEY_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** How far in the future `issued` may lie (clock skew), in ms. */
const ISSUE_SKEW_MS = 5 * 60_000;

/** The 13 signed fields, in the earlier tool's order (the payload sorts them anyway). */
export const GRANT_FIELDS = Object.freeze(
  [
    "grant_id",
    "agent",
    "server",
    "map_version",
    "tools",
    "approval",
    "write_scopes",
    "gates",
    "server_sha256",
    "issued",
    "expires",
    "max_writes",
    "key_id",
  ] as const,
);

/** One field's name. */
export type GrantField = typeof GRANT_FIELDS[number];

/** A grant record's signed fields, as the operator's file holds them. */
export type GrantFields = Record<GrantField, JsonValue>;

/** A grant that verified: the record's fields, typed. */
export interface DirectGrant {
  readonly grant_id: string;
  readonly agent: string;
  readonly server: string;
  readonly map_version: JsonValue;
  readonly tools: readonly string[];
  readonly approval: "direct";
  readonly write_scopes: readonly string[];
  readonly gates: Readonly<Record<string, string>>;
  readonly server_sha256: string;
  readonly issued: string;
  readonly expires: string;
  readonly max_writes: number;
  readonly key_id: string;
  readonly signature: string;
  /** `expires` in ms since the epoch. */
  readonly expiresMs: number;
}

/** What the runner server is, as a grant binds it. */
export interface ServerIdentity {
  readonly server: string;
  readonly map_version: JsonValue;
  readonly server_sha256: string;
}

/** What a grant for an agent must bind, from the live brief and the server. */
export type GrantBinding = ServerIdentity & {
  readonly tools: string[];
  readonly approval: "direct";
  readonly write_scopes: string[];
  readonly gates: Record<string, string>;
};

/** A grant's problem: a stable code and the words (≤ {@link MAX_PROBLEM_CHARS}). */
export class GrantProblem extends Error {
  constructor(readonly code: "DIRECT_GRANT_INVALID" | "DIRECT_GRANT_EXPIRED", message: string) {
    super(clip(message));
    this.name = "GrantProblem";
  }
}

/** `s` cut to {@link MAX_PROBLEM_CHARS} code points (Python slicing). */
function clip(s: string): string {
  const cps = [...s];
  return cps.length <= MAX_PROBLEM_CHARS ? s : cps.slice(0, MAX_PROBLEM_CHARS).join("");
}

/**
 * The exact bytes a grant's signature covers (as text): {@link PURPOSE_TAG}, `|`, then the 13
 * fields as Python's `json.dumps(fields, sort_keys=True, separators=(",", ":"))` writes them.
 *
 * @throws {CanonicalError} a field JSON cannot carry exactly (a float, a lone surrogate)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signedPayloadOf } from "./direct_grants.ts";
 * // Every one of the 13 fields is needed (the module's example signs a whole record).
 * assert.throws(() => signedPayloadOf({ agent: "w", write_scopes: ["src/"] }), /no JSON encoding/);
 * ```
 */
export function signedPayloadOf(record: Readonly<Record<string, unknown>>): string {
  const body: Record<string, unknown> = {};
  for (const f of GRANT_FIELDS) body[f] = record[f];
  return `${PURPOSE_TAG}|${canonicalCompact(body)}`;
}

/**
 * A gate's digest as a grant binds it: SHA-256 of `json.dumps(definition, sort_keys=True)`, the
 * definition as the brief writes it (`argv`, and `glob` and `exec` when given).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gateDigest } from "./direct_grants.ts";
 * const d = gateDigest({ name: "lint", glob: null, argv: ["true"], exec: null });
 * assert.equal(d.length, 64);
 * ```
 */
export function gateDigest(gate: GateDef): string {
  const def: Record<string, JsonValue> = { argv: [...gate.argv] };
  if (gate.glob !== null) def.glob = gate.glob;
  if (gate.exec !== null) def.exec = [...gate.exec];
  return sha256Hex(canonical(def));
}

/**
 * What a grant for `agent` must bind now, or why the brief allows it no grant: its
 * `mcp_grants` entry must ask for `approval: "direct"`; it must have write scopes; with no gate
 * in the brief, every scope must name one file (no `/` at the end, no `*`). Pure.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs policy, which it declares rather than makes.
 * import { expectedBinding } from "./direct_grants.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy; // mcp_grants.worker: {tools: ["write_file"], approval: "direct"}
 * const server = { server: "agentteams_runner", map_version: 1, server_sha256: "0".repeat(64) };
 * expectedBinding(policy, "worker", server); // {tools: ["write_file"], write_scopes: [...], ...}
 * ```
 */
export function expectedBinding(
  policy: Policy,
  agent: string,
  server: ServerIdentity,
): GrantBinding | string {
  const entry = policy.mcpGrants !== undefined && Object.hasOwn(policy.mcpGrants, agent)
    ? policy.mcpGrants[agent]
    : undefined;
  if (entry === undefined || entry.approval !== "direct") {
    return `the brief's mcp_grants.${agent} does not ask for approval "direct"`;
  }
  const scopes = Object.hasOwn(policy.agents, agent)
    ? [...policy.agents[agent].writeScopes].sort(compareCodePoints)
    : [];
  if (scopes.length === 0) return `a direct grant needs agent ${agent} to have write scopes`;
  const gates: Record<string, string> = {};
  for (const name of Object.keys(policy.gates).sort(compareCodePoints)) {
    gates[name] = gateDigest(policy.gates[name]);
  }
  if (Object.keys(gates).length === 0 && scopes.some((s) => s.endsWith("/") || s.includes("*"))) {
    return "a direct grant needs at least one gate, or write scopes that name single files";
  }
  return {
    server: server.server,
    map_version: server.map_version,
    server_sha256: server.server_sha256,
    tools: MCP_RUNNER_TOOLS.filter((t) => entry.tools.includes(t)),
    approval: "direct",
    write_scopes: scopes,
    gates,
  };
}

/**
 * The records of a grants file's bytes: strict UTF-8 JSON (the one reader: duplicate keys
 * refused), a list of objects.
 *
 * @throws {QueueError} `DIRECT_GRANT_INVALID`, naming the file
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseGrantsFile } from "./direct_grants.ts";
 * assert.deepEqual(parseGrantsFile(new TextEncoder().encode("[]"), "g.json"), []);
 * ```
 */
export function parseGrantsFile(bytes: Uint8Array, path: string): Record<string, unknown>[] {
  let value: unknown;
  try {
    value = readJson(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes), {
      dialect: "json",
    }).value;
  } catch (e) {
    throw new QueueError(
      "DIRECT_GRANT_INVALID",
      `${path} is not valid UTF-8 JSON: ${(e as Error).message}`,
    );
  }
  if (
    !Array.isArray(value) ||
    !value.every((r) => typeof r === "object" && r !== null && !Array.isArray(r))
  ) {
    throw new QueueError(
      "DIRECT_GRANT_INVALID",
      `${path} must hold a JSON list of grant records`,
    );
  }
  return value as Record<string, unknown>[];
}

/** What {@link verifyGrant} checks a record with. */
export interface VerifyGrantContext {
  readonly policy: Policy;
  readonly server: ServerIdentity;
  readonly now: Date;
  /** The operator's verify key for a key id (throws when there is none usable). */
  readonly keyFor: (keyId: string) => Promise<CryptoKey>;
  /** Verifies a hex Ed25519 signature of `message` (lib/crypto/ed25519.ts `verifyHex`). */
  readonly verify: (key: CryptoKey, sigHex: string, message: string) => Promise<boolean>;
}

function idOf(record: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(typeof record.grant_id === "string" ? record.grant_id : null);
}

function instantOf(v: unknown): number | null {
  if (typeof v !== "string") return null;
  const i = parseInstant(v.trim());
  return i === null || i.naive ? null : i.ms;
}

/**
 * Verifies one record in the earlier tool's order: every field present, the key id's form, the
 * signature by the operator's key, the binding to the live brief and server (any drift refuses
 * it: re-sign), expiry, the length (≤ {@link MAX_DAYS} days, not issued in the future) and
 * `max_writes` (1 to {@link MAX_WRITES}).
 *
 * @throws {GrantProblem} `DIRECT_GRANT_INVALID` or `DIRECT_GRANT_EXPIRED`, naming the grant
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { verifyGrant, type VerifyGrantContext } from "./direct_grants.ts";
 * declare const ctx: VerifyGrantContext;
 * declare const record: Record<string, unknown>; // one record of the operator's grants file
 * (await verifyGrant(record, ctx)).grant_id; // "G-1"
 * ```
 */
export async function verifyGrant(
  record: Readonly<Record<string, unknown>>,
  ctx: VerifyGrantContext,
): Promise<DirectGrant> {
  const invalid = (why: string) =>
    new GrantProblem("DIRECT_GRANT_INVALID", `grant ${idOf(record)}: ${why}`);
  const missing = [...GRANT_FIELDS, "signature"].filter((f) => !Object.hasOwn(record, f));
  if (missing.length > 0) throw invalid(`missing ${missing.join(", ")}`);
  const keyId = record.key_id;
  if (typeof keyId !== "string" || !DIRECT_KEY_ID_RE.test(keyId)) {
    throw invalid(`malformed key_id ${JSON.stringify(keyId)}`);
  }
  let payload: string;
  try {
    payload = signedPayloadOf(record);
  } catch (e) {
    throw invalid(`a field JSON cannot sign exactly (${(e as Error).message})`);
  }
  let key: CryptoKey;
  try {
    key = await ctx.keyFor(keyId);
  } catch (e) {
    throw invalid(`can't be verified: ${(e as Error).message}`);
  }
  const sig = typeof record.signature === "string" ? record.signature : "";
  if (!await ctx.verify(key, sig, payload)) throw invalid("the signature doesn't verify");
  const agent = typeof record.agent === "string" ? record.agent : "";
  const binding = expectedBinding(ctx.policy, agent, ctx.server);
  if (typeof binding === "string") throw invalid(binding);
  for (const [name, want] of Object.entries(binding)) {
    if (canonical(record[name]) !== canonical(want)) {
      throw invalid(`${name} no longer matches the brief or the runner server; re-sign it`);
    }
  }
  const issued = instantOf(record.issued);
  const expires = instantOf(record.expires);
  if (issued === null || expires === null) {
    throw invalid("has malformed times (ISO-8601 with an offset)");
  }
  const now = ctx.now.getTime();
  if (expires <= now) {
    throw new GrantProblem("DIRECT_GRANT_EXPIRED", `grant ${idOf(record)} expired`);
  }
  if (expires - issued > MAX_DAYS * 86_400_000 || issued > now + ISSUE_SKEW_MS) {
    throw invalid(`runs longer than ${MAX_DAYS} days or starts in the future`);
  }
  const mw = record.max_writes;
  if (typeof mw !== "number" || !Number.isInteger(mw) || mw < 1 || mw > MAX_WRITES) {
    throw invalid(`max_writes must be 1-${MAX_WRITES}`);
  }
  return Object.freeze({
    grant_id: String(record.grant_id),
    agent,
    server: binding.server,
    map_version: binding.map_version,
    tools: binding.tools,
    approval: "direct",
    write_scopes: binding.write_scopes,
    gates: binding.gates,
    server_sha256: binding.server_sha256,
    issued: String(record.issued),
    expires: String(record.expires),
    max_writes: mw,
    key_id: keyId,
    signature: sig,
    expiresMs: expires,
  });
}

/** The grants a runner serves under, and what was refused. */
export interface ActiveGrants {
  /** Agent to its one verified grant. */
  readonly byAgent: ReadonlyMap<string, DirectGrant>;
  /** Each refused record's or rule's problem (every one; the row keeps {@link MAX_PROBLEMS}). */
  readonly problems: readonly string[];
}

/**
 * Every verified record, keyed by agent, under the aggregate cap: two grants for one agent
 * activate neither; more than {@link MAX_ACTIVE} activate none.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { activeGrants, type VerifyGrantContext } from "./direct_grants.ts";
 * declare const ctx: VerifyGrantContext;
 * declare const records: Record<string, unknown>[]; // the operator's grants file
 * (await activeGrants(records, ctx)).byAgent.get("worker")?.grant_id; // "G-1"
 * ```
 */
export async function activeGrants(
  records: readonly Readonly<Record<string, unknown>>[],
  ctx: VerifyGrantContext,
): Promise<ActiveGrants> {
  const problems: string[] = [];
  const found = new Map<string, DirectGrant | null>();
  for (const record of records) {
    let g: DirectGrant;
    try {
      g = await verifyGrant(record, ctx);
    } catch (e) {
      if (!(e instanceof GrantProblem)) throw e;
      problems.push(clip(`${e.code}: ${e.message}`));
      continue;
    }
    if (found.has(g.agent)) {
      problems.push(clip(`more than one grant for ${g.agent}; none of them is used`));
      found.set(g.agent, null);
      continue;
    }
    found.set(g.agent, g);
  }
  let byAgent = new Map<string, DirectGrant>();
  for (const [a, g] of found) if (g !== null) byAgent.set(a, g);
  if (byAgent.size > MAX_ACTIVE) {
    problems.push(
      `${byAgent.size} active direct grants exceed the cap of ${MAX_ACTIVE}; none is used`,
    );
    byAgent = new Map();
  }
  return { byAgent, problems };
}

/**
 * The grant a change by `agent` to `path`, vetted by the gates `gates`, is written under, or
 * `null` (it is staged): the agent's verified grant must list `write_file`, cover `path` with
 * its write scopes, and bind every one of those gates by the digest its definition has now.
 * Pure.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs active, which it declares rather than makes.
 * import { selectGrant, type ActiveGrants } from "./direct_grants.ts";
 * declare const active: ActiveGrants; // worker: write_scopes ["src/"], no gate
 * selectGrant(active, "worker", "src/a.ts", [])?.grant_id; // "G-1"
 * selectGrant(active, "worker", "docs/a.md", []); // null
 * ```
 */
export function selectGrant(
  active: ActiveGrants,
  agent: string,
  path: string,
  gates: readonly GateDef[],
): DirectGrant | null {
  const g = active.byAgent.get(agent);
  if (g === undefined || !g.tools.includes("write_file")) return null;
  if (!inWriteScopes(path, g.write_scopes)) return null;
  for (const gate of gates) {
    if (!Object.hasOwn(g.gates, gate.name) || g.gates[gate.name] !== gateDigest(gate)) return null;
  }
  return g;
}

/**
 * Why one more direct write under `g` is refused, or `null`: it expired, or `used` writes have
 * spent its `max_writes`. Pure.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs g, which it declares rather than makes.
 * import { writeProblem, type DirectGrant } from "./direct_grants.ts";
 * declare const g: DirectGrant; // max_writes 2, not expired
 * writeProblem(g, 1, new Date()); // null
 * writeProblem(g, 2, new Date())?.code; // "DIRECT_GRANT_SPENT"
 * ```
 */
export function writeProblem(
  g: DirectGrant,
  used: number,
  now: Date,
): { code: "DIRECT_GRANT_EXPIRED" | "DIRECT_GRANT_SPENT"; message: string } | null {
  if (g.expiresMs <= now.getTime()) {
    return {
      code: "DIRECT_GRANT_EXPIRED",
      message: `direct grant ${JSON.stringify(g.grant_id)} expired at ${g.expires}; nothing ` +
        "was written: the operator signs a new grant (agentteams mcp grant issue) and restarts " +
        "agentteams serve",
    };
  }
  if (used >= g.max_writes) {
    return {
      code: "DIRECT_GRANT_SPENT",
      message: `direct grant ${JSON.stringify(g.grant_id)} has used its ${g.max_writes} ` +
        "writes; nothing was written: the operator signs a new grant (agentteams mcp grant " +
        "issue) and restarts agentteams serve",
    };
  }
  return null;
}

/**
 * Why a dispatch record may not carry an `apply-direct`, or `null`: a direct agent's nonce
 * allows at most {@link DIRECT_MAX_USES} uses and lives at most {@link DIRECT_TTL_HOURS} hours
 * (a minute's grace). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { directDispatchProblem } from "./direct_grants.ts";
 * const now = new Date("2026-12-01T00:00:00Z");
 * assert.equal(directDispatchProblem({ maxUses: 10, expires: "2026-12-01T04:00:00+00:00" }, now), null);
 * assert.notEqual(directDispatchProblem({ maxUses: 25, expires: "2026-12-01T04:00:00+00:00" }, now), null);
 * ```
 */
export function directDispatchProblem(
  rec: { readonly maxUses: number; readonly expires: string },
  now: Date,
): string | null {
  const expires = instantOf(rec.expires);
  if (rec.maxUses > DIRECT_MAX_USES) {
    return `the dispatch allows ${rec.maxUses} uses, over a direct agent's ${DIRECT_MAX_USES}`;
  }
  if (expires === null || expires > now.getTime() + DIRECT_TTL_HOURS * 3_600_000 + 60_000) {
    return `the dispatch lives past a direct agent's ${DIRECT_TTL_HOURS} hours`;
  }
  return null;
}

/**
 * Direct writes per grant id, from ledger rows the caller verified: each `apply-direct` row
 * with a `grant` counts once. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countDirectWrites } from "./direct_grants.ts";
 * const n = countDirectWrites([{ action: "apply-direct", grant: "G-1" }, { action: "x" }]);
 * assert.equal(n.get("G-1"), 1);
 * ```
 */
export function countDirectWrites(
  rows: Iterable<Readonly<Record<string, unknown>>>,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of rows) {
    if (row.action !== "apply-direct" || typeof row.grant !== "string" || row.grant === "") {
      continue;
    }
    counts.set(row.grant, (counts.get(row.grant) ?? 0) + 1);
  }
  return counts;
}

/**
 * The `direct-grants-loaded` row: the active grant ids and the verify keys' fingerprints,
 * sorted, and at most {@link MAX_PROBLEMS} problems; no `agent`. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { directGrantsLoadedRow } from "./direct_grants.ts";
 * const row = directGrantsLoadedRow(["G-2", "G-1"], ["b", "a"], []);
 * assert.deepEqual(row.active, ["G-1", "G-2"]);
 * ```
 */
export function directGrantsLoadedRow(
  active: readonly string[],
  fingerprints: readonly string[],
  problems: readonly string[],
): {
  action: "direct-grants-loaded";
  active: string[];
  key_fingerprints: string[];
  problems: string[];
} {
  return {
    action: "direct-grants-loaded",
    active: [...active].sort(compareCodePoints),
    key_fingerprints: [...fingerprints].sort(compareCodePoints),
    problems: problems.slice(0, MAX_PROBLEMS).map(clip),
  };
}
