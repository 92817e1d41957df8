/**
 * Operator direct-write grants, the I/O half: the runner reads the operator's grants file once at
 * its start (`~/.config/agentteams/mcp-grants/<the confined file's name>`: the same name, and the
 * same custody, as the confined-programs file, `lib/sandbox/operator_file_read.ts`), verifies
 * each record with the operator's verify keys (`~/.config/agentteams/verify-keys/<key_id>.pub.pem`,
 * under the same custody), counts each grant's direct writes from the verified ledger, and
 * records a `direct-grants-loaded` row. The file is pinned (`lib/queue/pins.ts`): a change stops
 * the runner. Anything unusable (the file out of custody or malformed, a ledger that does not
 * verify) activates no grant: every write is then staged, and the row says why.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a policy and a key, which it declares rather than makes.
 * import { loadDirectGrants } from "./direct_grants_load.ts";
 * import type { Policy } from "../policy/types.ts";
 * import type { LedgerKey } from "../crypto/keys.ts";
 * declare const policy: Policy;
 * declare const key: LedgerKey;
 * const g = await loadDirectGrants({ root: "/work/p", home: "/home/op", policy, key, now: () => new Date() });
 * g.state.active.byAgent.size; // 0..3
 * ```
 * @module
 */
import { sha256Hex } from "../crypto/hash.ts";
import { importPublicPem, verifyHex } from "../crypto/ed25519.ts";
import type { LedgerKey } from "../crypto/keys.ts";
import { AgentTeamsError, QueueError } from "../errors.ts";
import { join } from "../fs/path.ts";
import { lineVerifies, type RowBody } from "../ledger/row.ts";
import { readLedgerTexts, verifyLedgerAt } from "../ledger/verify.ts";
import { RUNNER_MAP_VERSION, RUNNER_SERVER_NAME, runnerServerSha256 } from "../mcp/runner.ts";
import type { Policy } from "../policy/types.ts";
import {
  confinedFileName,
  MCP_GRANTS_DIR_REL,
  OPERATOR_VERIFY_KEYS_DIR_REL,
} from "../sandbox/operator_file.ts";
import { readOperatorFile } from "../sandbox/operator_file_read.ts";
import {
  type ActiveGrants,
  activeGrants,
  countDirectWrites,
  DIRECT_KEY_ID_RE,
  type DirectGrant,
  directGrantsLoadedRow,
  MAX_GRANTS_FILE_BYTES,
  parseGrantsFile,
  type ServerIdentity,
  type VerifyGrantContext,
} from "./direct_grants.ts";

/** The largest verify key read, in bytes. */
const MAX_KEY_BYTES = 64 * 1024;

/** Where the runner's direct grants live: its grants file and the operator's verify keys. */
export interface DirectGrantPaths {
  readonly file: string;
  readonly keys: string;
}

function homeDir(home: string): string {
  const h = home.length > 1 ? home.replace(/\/+$/, "") : home;
  return h === "/" ? "" : h;
}

/**
 * The grants file of a project (named as its confined-programs file is, so two checkouts never
 * share one) and the verify-key folder, from the project's real path and the operator's home.
 * Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { directGrantPaths } from "./direct_grants_load.ts";
 * const p = directGrantPaths("/srv/repo", "/home/op");
 * assert.equal(p.file.startsWith("/home/op/.config/agentteams/mcp-grants/repo-"), true);
 * assert.equal(p.keys, "/home/op/.config/agentteams/verify-keys");
 * ```
 */
export function directGrantPaths(projectReal: string, home: string): DirectGrantPaths {
  const h = homeDir(home);
  return {
    file: `${h}/${MCP_GRANTS_DIR_REL}/${confinedFileName(projectReal)}`,
    keys: `${h}/${OPERATOR_VERIFY_KEYS_DIR_REL}`,
  };
}

/**
 * This build's runner server, as a grant binds it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runnerIdentity } from "./direct_grants_load.ts";
 * assert.equal(runnerIdentity().server, "agentteams_runner");
 * ```
 */
export function runnerIdentity(): ServerIdentity {
  return {
    server: RUNNER_SERVER_NAME,
    map_version: RUNNER_MAP_VERSION,
    server_sha256: runnerServerSha256(),
  };
}

/** A refusal of the operator's grants file or a verify key under custody. */
function unsafe(path: string, why: string): QueueError {
  return new QueueError("DIRECT_GRANTS_UNSAFE", `operator direct-grant file ${path}: ${why}`, {
    details: { path },
  });
}

/** Custody of the operator's files, for the reads below. */
export interface Custody {
  readonly projectReal: string;
  readonly uid?: number;
}

/**
 * The grants file's records and the SHA-256 of its bytes, or `null` when there is none.
 *
 * @throws {QueueError} `DIRECT_GRANTS_UNSAFE` (custody: a link, not the user's, writable by
 *   others, inside the project, over 256 KiB), `DIRECT_GRANT_INVALID` (not a JSON list of
 *   objects)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readGrantsFile } from "./direct_grants_load.ts";
 * assert.equal(readGrantsFile("/nonexistent/mcp-grants/x.json", { projectReal: "/srv/repo" }), null);
 * ```
 */
export function readGrantsFile(
  path: string,
  custody: Custody,
): { records: Record<string, unknown>[]; sha256: string } | null {
  const got = readOperatorFile(path, {
    ...custody,
    maxBytes: MAX_GRANTS_FILE_BYTES,
    what: "operator direct-grant file",
    unsafe,
  });
  if (got === null) return null;
  return { records: parseGrantsFile(got.bytes, path), sha256: got.sha256 };
}

/**
 * The operator's verify keys (`<dir>/<key_id>.pub.pem`, under the operator files' custody), each
 * read once: a key swapped after it was read is not read again.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorKeys } from "./direct_grants_load.ts";
 * const keys = new OperatorKeys("/nonexistent/verify-keys", { projectReal: "/srv/repo" });
 * assert.equal(keys.pem("op1"), null);
 * assert.equal(keys.fingerprint("op1"), "unreadable");
 * ```
 */
export class OperatorKeys {
  readonly #dir: string;
  readonly #custody: Custody;
  readonly #pem = new Map<string, string | null | Error>();

  constructor(dir: string, custody: Custody) {
    this.#dir = dir;
    this.#custody = custody;
  }

  /** The key file's path. */
  path(keyId: string): string {
    return join(this.#dir, `${keyId}.pub.pem`);
  }

  /** The key's PEM text, `null` when there is no key file, or the refusal. */
  pem(keyId: string): string | null | Error {
    let got = this.#pem.get(keyId);
    if (got === undefined) {
      const path = this.path(keyId);
      try {
        if (!DIRECT_KEY_ID_RE.test(keyId)) throw new Error(`malformed key_id ${keyId}`);
        const r = readOperatorFile(path, {
          ...this.#custody,
          maxBytes: MAX_KEY_BYTES,
          what: "operator verify key",
          unsafe,
        });
        got = r === null ? null : new TextDecoder("utf-8", { fatal: true }).decode(r.bytes);
      } catch (e) {
        if (e instanceof Deno.errors.NotCapable) throw e;
        got = e instanceof Error ? e : new Error(String(e));
      }
      this.#pem.set(keyId, got);
    }
    return got;
  }

  /** The key, or throws why there is none usable. */
  async key(keyId: string): Promise<CryptoKey> {
    const pem = this.pem(keyId);
    if (pem === null) throw new Error(`no operator verify key ${this.path(keyId)}`);
    if (pem instanceof Error) throw pem;
    return await importPublicPem(pem);
  }

  /** The SHA-256 of the key's PEM text, or `unreadable`. */
  fingerprint(keyId: string): string {
    const pem = this.pem(keyId);
    return typeof pem === "string" ? sha256Hex(pem) : "unreadable";
  }
}

/**
 * What a runner verifies records with now: the live policy, this build's server, the operator's
 * keys.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperatorKeys, verifyContext } from "./direct_grants_load.ts";
 * import type { Policy } from "../policy/types.ts";
 * const keys = new OperatorKeys("/nonexistent/verify-keys", { projectReal: "/srv/repo" });
 * const ctx = verifyContext({} as Policy, new Date(), keys);
 * assert.equal(ctx.server.server, "agentteams_runner");
 * await assert.rejects(ctx.keyFor("op1"), /no operator verify key/);
 * ```
 */
export function verifyContext(policy: Policy, now: Date, keys: OperatorKeys): VerifyGrantContext {
  return {
    policy,
    server: runnerIdentity(),
    now,
    keyFor: (id) => keys.key(id),
    verify: verifyHex,
  };
}

/**
 * Each grant's direct writes in the ledger, counted only once the whole ledger verifies (else a
 * deleted row could reset a grant's count).
 *
 * @throws {QueueError} `DIRECT_GRANT_INVALID` when the ledger does not verify
 */
function ledgerWrites(root: string, key: LedgerKey): Map<string, number> {
  const report = verifyLedgerAt(root, key);
  if (!report.ok) {
    throw new QueueError(
      "DIRECT_GRANT_INVALID",
      "the proposal ledger doesn't verify, so direct-write counts can't be trusted: " +
        report.problems.slice(0, 3).map((p) => p.message).join("; "),
    );
  }
  const bytes = readLedgerTexts(root).ledger;
  if (bytes === null) return new Map();
  const text = new TextDecoder().decode(bytes);
  const rows: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes('"apply-direct"') || !lineVerifies(line, key.hmac)) continue;
    rows.push(JSON.parse(line) as Record<string, unknown>);
  }
  return countDirectWrites(rows);
}

/** The grants the runner serves under, and the writes each has made (kept in memory). */
export interface DirectGrantState {
  readonly active: ActiveGrants;
  /** Direct writes per grant id: counted from the ledger at start, then by the runner. */
  readonly writes: Map<string, number>;
}

/** What {@link loadDirectGrants} found. */
export interface LoadedDirectGrants {
  readonly paths: DirectGrantPaths;
  /** SHA-256 of the grants file's bytes as read (`null`: no file, or none could be read). */
  readonly sha256: string | null;
  readonly state: DirectGrantState;
  /** The `direct-grants-loaded` row (`null` when there is no grants file). */
  readonly row: RowBody | null;
  /** Lines for the runner's log. */
  readonly lines: readonly string[];
}

/** Inputs of {@link loadDirectGrants}. */
export interface LoadDirectGrantsOptions {
  readonly root: string;
  readonly home: string;
  readonly policy: Policy;
  readonly key: LedgerKey;
  readonly now: () => Date;
  /** The uid that must own the operator's files (default: the current uid). */
  readonly uid?: number;
}

/**
 * Whether `agent` holds an active direct grant now, as a runner started now would find it (its
 * writes not counted: that needs the ledger key). What the operator's own `dispatch --direct`
 * asks, to issue a direct agent's shorter nonce. Anything unreadable is `false`: the nonce is
 * then the normal one, which a direct write refuses (fail closed).
 *
 * @throws Deno's `NotCapable` when the launch flags do not grant the operator's folders
 * @example
 * ```ts ignore
 * // Not run: it needs a policy, which it declares rather than makes.
 * import { holdsDirectGrant } from "./direct_grants_load.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy;
 * await holdsDirectGrant({ root: "/work/p", home: "/home/op", policy, agent: "worker", now: new Date() }); // true
 * ```
 */
export async function holdsDirectGrant(
  opts: { root: string; home: string; policy: Policy; agent: string; now: Date },
): Promise<boolean> {
  const asks = opts.policy.mcpGrants;
  if (asks === undefined || !Object.hasOwn(asks, opts.agent)) return false;
  if (asks[opts.agent].approval !== "direct") return false;
  const projectReal = Deno.realPathSync(opts.root);
  const paths = directGrantPaths(projectReal, opts.home);
  let file;
  try {
    file = readGrantsFile(paths.file, { projectReal });
  } catch (e) {
    if (e instanceof AgentTeamsError) return false;
    throw e;
  }
  if (file === null) return false;
  const keys = new OperatorKeys(paths.keys, { projectReal });
  const found = await activeGrants(file.records, verifyContext(opts.policy, opts.now, keys));
  return found.byAgent.has(opts.agent);
}

const NONE: ActiveGrants = { byAgent: new Map<string, DirectGrant>(), problems: [] };

/**
 * Reads, verifies and counts the runner's direct grants (see the module doc).
 *
 * @throws Deno's `NotCapable` when the launch flags do not grant the operator's folders
 * @example
 * ```ts ignore
 * // Not run: it needs a policy and a key, which it declares rather than makes.
 * import { loadDirectGrants } from "./direct_grants_load.ts";
 * import type { Policy } from "../policy/types.ts";
 * import type { LedgerKey } from "../crypto/keys.ts";
 * declare const policy: Policy;
 * declare const key: LedgerKey;
 * const g = await loadDirectGrants({ root: "/work/p", home: "/home/op", policy, key, now: () => new Date() });
 * g.row; // {action: "direct-grants-loaded", active: [...], key_fingerprints: [...], problems: [...]}
 * ```
 */
export async function loadDirectGrants(opts: LoadDirectGrantsOptions): Promise<LoadedDirectGrants> {
  const projectReal = Deno.realPathSync(opts.root);
  const paths = directGrantPaths(projectReal, opts.home);
  const custody: Custody = { projectReal, ...(opts.uid !== undefined ? { uid: opts.uid } : {}) };
  const failed = (e: unknown): LoadedDirectGrants => {
    if (!(e instanceof AgentTeamsError)) throw e;
    const problem = `${e.code}: ${e.message}`;
    return {
      paths,
      sha256: null,
      state: { active: NONE, writes: new Map() },
      row: directGrantsLoadedRow([], [], [problem]),
      lines: [`direct grants: none active: ${problem}`],
    };
  };
  let file;
  try {
    file = readGrantsFile(paths.file, custody);
  } catch (e) {
    return failed(e);
  }
  if (file === null) {
    return {
      paths,
      sha256: null,
      state: { active: NONE, writes: new Map() },
      row: null,
      lines: [],
    };
  }
  const keys = new OperatorKeys(paths.keys, custody);
  const keyIds = [
    ...new Set(
      file.records.map((r) => r.key_id).filter((k): k is string =>
        typeof k === "string" && DIRECT_KEY_ID_RE.test(k)
      ),
    ),
  ];
  const fingerprints = [...new Set(keyIds.map((k) => keys.fingerprint(k)))];
  const found = await activeGrants(file.records, verifyContext(opts.policy, opts.now(), keys));
  const problems = [...found.problems];
  let active = found;
  let writes = new Map<string, number>();
  if (found.byAgent.size > 0) {
    try {
      writes = ledgerWrites(opts.root, opts.key);
    } catch (e) {
      if (!(e instanceof AgentTeamsError)) throw e;
      problems.push(`${e.code}: ${e.message}`);
      active = NONE;
    }
  }
  const ids = [...active.byAgent.values()].map((g) => g.grant_id);
  const lines = [
    ...[...active.byAgent.values()].map((g) =>
      `direct grants: ${g.grant_id} lets ${g.agent} write directly (${
        writes.get(g.grant_id) ?? 0
      } of ${g.max_writes} writes used; expires ${g.expires})`
    ),
    ...problems.map((p) => `direct grants: not active: ${p}`),
  ];
  return {
    paths,
    sha256: file.sha256,
    state: { active: { byAgent: active.byAgent, problems }, writes },
    row: directGrantsLoadedRow(ids, fingerprints, problems),
    lines,
  };
}
