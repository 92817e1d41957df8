/**
 * The library surface of agentteams: sessions and acts, what the CLI does, callable without it,
 * through the same session and the same recorded act sequence (`acts/`). The audit and the
 * authorization triad have their own entry points (`deno.json` exports `./audit`:
 * `lib/team_audit.ts`, and `./triad`: `lib/triad.ts`). Every function takes the project root
 * and, optionally, the ledger key and the environment explicitly: a program that embeds the
 * library passes what it means and never has to change its own environment. One convention: the
 * arguments the spec names, positional, then one options object (`key`, `env` and the act's own
 * options; an act's names its `root` or an open `session`). Without them, the
 * key is loaded under the same custody rules as the CLI's (a 0600 file in the 0700 key dir;
 * direct mode's key variables), reading only the variables it needs from the process.
 *
 * @example
 * ```ts
 * import { issueDispatch, openSession, verifyLedger } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/agentteams.json`, '{"agent_policies": {"worker": {"write_scopes": ["docs/"]}}}');
 * const key = new Uint8Array(32).fill(7);
 * const nonce = await issueDispatch(root, "worker", { key }); // the brief names `worker`
 * assert.equal(nonce.length, 32);
 * assert.equal((await verifyLedger(root, { key })).ok, true);
 * assert.equal(typeof openSession, "function"); // one session for many acts
 * ```
 * @module
 */
import { GIT_CONFIG_ENV } from "./git/config_env.ts";
import { KEY_ENV, type LedgerKey, loadLedgerKey } from "./crypto/keys.ts";
import { HmacKey } from "./crypto/hash.ts";
import { type Env, readEnv } from "./env.ts";
import { type AppendResult, appendRow } from "./ledger/append.ts";
import { agentFor as agentForKey } from "./ledger/dispatch.ts";
import { issueBriefDispatch } from "./acts/dispatch_act.ts";
import type { RowBody } from "./ledger/row.ts";
import { verifyLedgerAt, type VerifyReport } from "./ledger/verify.ts";
import type { Policy } from "./policy/types.ts";
import { CHILD_ENV } from "./process/child_env.ts";
import type { ApplyResult } from "./proposals/proposal.ts";
import type { RunRequestResult } from "./requests/request.ts";
import { applyAct } from "./acts/apply_act.ts";
import { performAct } from "./acts/pipeline.ts";
import { runActWith } from "./acts/run_act.ts";
import { completePolicy, type PendingSession, startSession } from "./acts/session.ts";

export * from "./errors.ts";
export type { ApplyResult } from "./proposals/proposal.ts";
export type { RunRequestResult } from "./requests/request.ts";
export type { LedgerProblem, VerifyCode, VerifyReport } from "./ledger/verify.ts";
export type { Policy } from "./policy/types.ts";
export type { LedgerKey } from "./crypto/keys.ts";
export type { Env } from "./env.ts";
export type { PendingSession, Session, SessionGrants, SessionOptions } from "./acts/session.ts";
export type { AppendResult, LedgerEnd } from "./ledger/append.ts";
export type { RowBody } from "./ledger/row.ts";
export type { HmacKey } from "./crypto/hash.ts";
export type { GateInput, GateResult, GateRunner } from "./proposals/gates.ts";
export type { ConfinedRunResult } from "./sandbox/confined_run.ts";
export type { RunResult } from "./process/spawn.ts";
export type {
  AgentPolicy,
  CommandEntry,
  ConfinedAgent,
  ConfinedPrograms,
  GateDef,
  McpGrant,
  PrivilegeProfile,
  WritePolicy,
} from "./policy/types.ts";
export type { NetworkRule } from "./policy/network_rules.ts";
export type { Backend } from "./sandbox/backend_choice.ts";
export type { GrantedRoot } from "./sandbox/write_exec_roots.ts";
export type { GitContext, GitControlPath, WatchedGitPaths } from "./git/context.ts";
export type { ControlPlane } from "./policy/control_plane.ts";
// What a session holds of the triad (its checks are `lib/triad.ts`'s).
export type { TrustRoots } from "./authz/trust.ts";
export type { DecisionContext } from "./authz/decisions.ts";
export type { VerifyKeyStore } from "./authz/signed.ts";
/** How a library call finds its key and its environment. */
export interface KeyOptions {
  /**
   * The ledger key: its raw bytes, or a loaded key. Default: loaded from the key file (or a key
   * variable, in direct mode) named by `env`.
   */
  readonly key?: Uint8Array | LedgerKey;
  /**
   * The environment: HOME, PATH, the key variables, the locale. Default: the variables the tool
   * reads, read from the process by name (nothing else of the process's environment is read).
   */
  readonly env?: Env;
}

function envOf(opts: KeyOptions): Env {
  return opts.env ?? readEnv([...KEY_ENV, ...CHILD_ENV, ...GIT_CONFIG_ENV]);
}

function keyOf(opts: KeyOptions): LedgerKey {
  const k = opts.key;
  if (k === undefined) return loadLedgerKey({ env: envOf(opts), mode: "direct" });
  if (k instanceof Uint8Array) {
    return { bytes: k, source: "env", path: null, envName: null, hmac: new HmacKey(k) };
  }
  return k;
}

/** Options of {@link openSession}. */
export interface OpenSessionOptions extends KeyOptions {
  /** The brief; default `<root>/agentteams.jsonc`, then `agentteams.json`. */
  readonly brief?: string;
  /** A policy already loaded with {@link loadPolicy}; default: loaded from the brief. */
  readonly policy?: Policy;
  /**
   * `false`: run gates and commands outside the sandbox, the operator's recorded opt-out (needs the
   * brief's `allow_unconfined_runs`). Default `true`.
   */
  readonly confine?: boolean;
}

/**
 * Opens a session on a project: the key now, the brief, HOME and the rest behind `ready` (a
 * failure there is recorded by the first act that awaits it). One session serves many acts.
 *
 * @throws {KeyError} when no key can be loaded.
 * @example
 * ```ts
 * import { openSession } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/agentteams.json`, '{"agent_policies": {"worker": {"write_scopes": ["docs/"]}}}');
 * const env = { HOME: Deno.makeTempDirSync(), PATH: "/usr/bin:/bin" };
 * const session = openSession(root, { key: new Uint8Array(32).fill(2), env });
 * assert.deepEqual(Object.keys((await session.ready).policy.agents), ["worker"]);
 * ```
 */
export function openSession(root: string, opts: OpenSessionOptions = {}): PendingSession {
  return startSession({
    root,
    env: envOf(opts),
    key: keyOf(opts),
    brief: opts.brief,
    policy: opts.policy === undefined ? undefined : Promise.resolve(opts.policy),
    unconfined: opts.confine === false,
  });
}

/** Options of {@link issueDispatch}. */
export interface IssueDispatchOptions extends KeyOptions {
  /** The brief; default `<root>/agentteams.jsonc`, then `agentteams.json`. */
  readonly brief?: string;
  /** A policy already loaded with {@link loadPolicy}; default: loaded from the brief. */
  readonly policy?: Policy;
  /** Fewer uses than the spec's 25 (never more: `BAD_LIMITS`). */
  readonly maxUses?: number;
  /** A shorter life than the spec's 24 hours (never longer: `BAD_LIMITS`). */
  readonly ttlHours?: number;
  /**
   * The environment (HOME, the key dir) the HALT check finds the trust roots with; without it no
   * retraction can be authenticated, so a HALT on `*` stands (docs/authz.md).
   */
  readonly env?: Env;
}

/**
 * Issues a dispatch nonce for `agent` (shown once; only its HMAC is stored), as `agentteams
 * dispatch` does: only to an agent the brief names (`UNKNOWN_AGENT`, with the nearest name it
 * has), and a missing or broken brief is refused (`BRIEF_NOT_FOUND`, `BRIEF_UNREADABLE`, ...),
 * with nothing written. `maxUses` and `ttlHours` may narrow the spec's 25 uses within 24 hours,
 * never widen them (`BAD_LIMITS`), as the earlier tool's
 * `issue_dispatch(root, agent, *, ttl_hours, max_uses)` did.
 *
 * @throws {DispatchError} `BAD_SLUG`, `BAD_LIMITS`, `UNKNOWN_AGENT`.
 * @throws {PolicyError} when the brief is missing or broken.
 * @example
 * ```ts
 * import { issueDispatch } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/agentteams.json`, '{"agent_policies": {"worker": {"write_scopes": ["docs/"]}}}');
 * const nonce = await issueDispatch(root, "worker", { key: new Uint8Array(32) });
 * assert.match(nonce, /^[0-9a-f]{32}$/);
 * await assert.rejects(issueDispatch(root, "wroker", { key: new Uint8Array(32) }), /did you mean "worker"/);
 * ```
 */
export async function issueDispatch(
  root: string,
  agent: string,
  opts: IssueDispatchOptions = {},
): Promise<string> {
  return (await issueBriefDispatch(root, agent, () => keyOf(opts).hmac, {
    brief: opts.brief,
    policy: opts.policy,
    maxUses: opts.maxUses,
    ttlHours: opts.ttlHours,
    ...(opts.env !== undefined ? { env: opts.env } : {}),
  })).nonce;
}

/**
 * The agent a nonce was issued to (counts nothing).
 *
 * @example
 * ```ts
 * import { agentFor, issueDispatch } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/agentteams.json`, '{"agent_policies": {"reviewer": {"write_scopes": ["docs/"]}}}');
 * const key = new Uint8Array(32).fill(1);
 * const nonce = await issueDispatch(root, "reviewer", { key });
 * assert.equal(await agentFor(root, nonce, { key }), "reviewer");
 * ```
 */
export async function agentFor(
  root: string,
  nonce: string,
  opts: KeyOptions = {},
): Promise<string> {
  return await agentForKey(root, keyOf(opts).hmac, nonce);
}

/**
 * Loads a brief into a policy, with its confined programs (the operator file wins over the
 * brief's block). HOME must be absolute.
 *
 * @example
 * ```ts
 * import { loadPolicy } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * // A brief is JSONC: comments and trailing commas are allowed.
 * Deno.writeTextFileSync(`${root}/agentteams.jsonc`, `{
 *   // who may write what
 *   "agent_policies": { "worker": { "write_scopes": ["src/"] }, },
 * }`);
 * const policy = await loadPolicy(`${root}/agentteams.jsonc`, {
 *   projectRoot: root,
 *   env: { HOME: Deno.makeTempDirSync() },
 * });
 * assert.deepEqual(policy.agents.worker.writeScopes, ["src/"]);
 * ```
 */
export async function loadPolicy(
  brief: string,
  opts: { readonly projectRoot: string; readonly env?: Env },
): Promise<Policy> {
  return await completePolicy(opts.projectRoot, brief, envOf(opts));
}

/** Where an act runs: an open session, or a root to open one on. */
export type ActTarget =
  | { readonly session: PendingSession }
  | ({ readonly root: string } & OpenSessionOptions);

function sessionFor(target: ActTarget): PendingSession {
  return "session" in target ? target.session : openSession(target.root, target);
}

/**
 * Checks and applies a change or deletion proposal (gates run confined), through the recorded
 * sequence.
 *
 * @example
 * ```ts
 * import { applyProposal, issueDispatch, verifyLedger } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/agentteams.json`, '{"agent_policies": {"worker": {"write_scopes": ["docs/"]}}}');
 * const key = new Uint8Array(32).fill(9);
 * const env = { HOME: Deno.makeTempDirSync(), PATH: "/usr/bin:/bin" };
 * const dispatch = await issueDispatch(root, "worker", { key });
 * const proposal = {
 *   kind: "change-proposal", dispatch, path: "docs/guide.md", base_sha256: "absent",
 *   content: "# Guide\n", rationale: "add the user guide",
 * };
 * const dry = await applyProposal(proposal, { root, key, env, dryRun: true });
 * assert.equal(dry.written, false);
 * const r = await applyProposal(proposal, { root, key, env });
 * assert.equal(r.written, true);
 * assert.equal(Deno.readTextFileSync(`${root}/docs/guide.md`), "# Guide\n");
 * // The control plane is never written, whatever the scopes say.
 * await assert.rejects(
 *   applyProposal({ ...proposal, path: ".git/hooks/pre-commit" }, { root, key, env }),
 *   (e: Error & { code?: string }) => e.code === "CONTROL_PLANE",
 * );
 * assert.equal((await verifyLedger(root, { key })).ok, true);
 * ```
 */
export async function applyProposal(
  artifact: unknown,
  opts: ActTarget & { readonly dryRun?: boolean },
): Promise<ApplyResult> {
  return await performAct(sessionFor(opts), applyAct, artifact, { dryRun: opts.dryRun });
}

/**
 * Checks and runs a command request through the recorded sequence: confined unless the session is
 * opened with `confine: false` (which needs `allow_unconfined_runs`), with the entry's timeout
 * bounded by `timeoutCap` seconds.
 *
 * @example
 * ```ts
 * import { issueDispatch, runRequest } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/agentteams.json`, JSON.stringify({
 *   allow_unconfined_runs: true,
 *   agent_policies: { worker: { write_scopes: [], commands: [{ prefix: ["true"] }] } },
 * }));
 * new Deno.Command("git", { args: ["init", "-q"], cwd: root }).outputSync();
 * const key = new Uint8Array(32).fill(5);
 * const env = { HOME: Deno.makeTempDirSync(), PATH: "/usr/bin:/bin" };
 * const dispatch = await issueDispatch(root, "worker", { key });
 * // confine: false is the operator's recorded opt-out, allowed by this brief only.
 * const r = await runRequest(
 *   { kind: "command-request", dispatch, argv: ["true"], purpose: "check the tool runs" },
 *   { root, key, env, confine: false },
 * );
 * assert.deepEqual([r.ran, r.exit, r.undeclared_writes], [true, 0, []]);
 * ```
 */
export async function runRequest(
  artifact: unknown,
  opts: ActTarget & { readonly dryRun?: boolean; readonly timeoutCap?: number },
): Promise<RunRequestResult> {
  return await performAct(
    sessionFor(opts),
    runActWith({ timeoutCap: opts.timeoutCap }),
    artifact,
    { dryRun: opts.dryRun },
  );
}

/**
 * Appends one signed row to the project's ledger.
 *
 * @example
 * ```ts
 * import { record } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const r = await record(Deno.makeTempDirSync(), { action: "note", text: "release 1.2 cut" }, {
 *   key: new Uint8Array(32),
 * });
 * assert.equal(r.count, 1);
 * assert.match(r.line, /"action": "note"/);
 * ```
 */
export async function record(
  root: string,
  entry: RowBody,
  opts: KeyOptions = {},
): Promise<AppendResult> {
  return await appendRow(root, keyOf(opts).hmac, entry);
}

/**
 * Verifies the project's ledger, head and dispatch store.
 *
 * @example
 * ```ts
 * import { record, verifyLedger } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = Deno.makeTempDirSync();
 * const key = new Uint8Array(32).fill(3);
 * await record(root, { action: "note", text: "x" }, { key });
 * assert.deepEqual((await verifyLedger(root, { key })).problems, []);
 * ```
 */
export function verifyLedger(root: string, opts: KeyOptions = {}): Promise<VerifyReport> {
  return Promise.resolve(verifyLedgerAt(root, keyOf(opts)));
}
