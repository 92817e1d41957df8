/**
 * The library surface of agentteams: what the CLI does, callable without it. Every function that
 * needs the ledger key loads it under the same custody rules as the CLI (a 0600 file in the 0700
 * key dir; direct-mode environment fallbacks), reading only the variables it needs.
 *
 * @example
 * ```ts
 * import { issueDispatch, verifyLedger } from "./mod.ts";
 * const root = "/path/to/project";
 * const nonce = await issueDispatch(root, "worker");
 * (await verifyLedger(root)).ok;
 * ```
 * @module
 */
import { keyDir as keyDirOf, type LedgerKey, loadLedgerKey } from "./crypto/keys.ts";
import { readEnv } from "./env.ts";
import { CHILD_ENV, KEY_ENV } from "./permissions.ts";
import { type AppendResult, appendRow } from "./ledger/append.ts";
import { agentFor as agentForKey, issueDispatch as issue } from "./ledger/dispatch.ts";
import type { RowBody } from "./ledger/row.ts";
import { verifyLedgerAt, type VerifyReport } from "./ledger/verify.ts";
import { loadPolicy as loadBrief } from "./policy/brief.ts";
import type { Policy } from "./policy/types.ts";
import { applyProposal as apply, type ApplyResult } from "./proposals/apply.ts";
import { confinedGateRunner } from "./proposals/gates.ts";
import { runRequest as run, type RunRequestResult } from "./requests/run_request.ts";
import type { Backend } from "./sandbox/decide.ts";
import { lazyBackend } from "./sandbox/backend.ts";
import { withConfinedPrograms } from "./sandbox/policy_confined.ts";
import { dirname } from "./fs/path.ts";

export * from "./errors.ts";
export type { ApplyResult } from "./proposals/apply.ts";
export type { RunRequestResult } from "./requests/run_request.ts";
export type { LedgerProblem, VerifyCode, VerifyReport } from "./ledger/verify.ts";
export type { Policy } from "./policy/types.ts";
export { canonical } from "./canonical.ts";

function envNow(): Record<string, string | undefined> {
  return readEnv([...KEY_ENV, ...CHILD_ENV]);
}

function key(env: Record<string, string | undefined> = envNow()): LedgerKey {
  return loadLedgerKey({ env, mode: "direct" });
}

/**
 * Issues a dispatch nonce for `agent` (shown once; only its HMAC is stored).
 *
 * @example
 * ```ts
 * import { issueDispatch } from "./mod.ts";
 * const nonce = await issueDispatch("/path/to/project", "worker");
 * ```
 */
export async function issueDispatch(root: string, agent: string): Promise<string> {
  return (await issue(root, key().hmac, agent)).nonce;
}

/**
 * The agent a nonce was issued to (counts nothing).
 *
 * @example
 * ```ts
 * import { agentFor } from "./mod.ts";
 * await agentFor("/path/to/project", "0123456789abcdef0123456789abcdef");
 * ```
 */
export async function agentFor(root: string, nonce: string): Promise<string> {
  return await agentForKey(root, key().hmac, nonce);
}

/**
 * Loads a brief into a policy, with its confined programs (the operator file wins over the
 * brief's block).
 *
 * @example
 * ```ts
 * import { loadPolicy } from "./mod.ts";
 * const policy = await loadPolicy("/path/to/project/agentteams.jsonc", { projectRoot: "/path/to/project" });
 * ```
 */
export async function loadPolicy(
  brief: string,
  opts: { projectRoot?: string } = {},
): Promise<Policy> {
  const projectRoot = opts.projectRoot ?? dirname(brief);
  const env = envNow();
  return withConfinedPrograms(await loadBrief(brief, { projectRoot }), {
    home: env.HOME ?? "/",
    project: projectRoot,
  });
}

function gateRunnerFor(
  root: string,
  policy: Policy,
  backend: () => Promise<Backend>,
  env: Record<string, string | undefined>,
) {
  return confinedGateRunner({
    root,
    policy,
    parentEnv: env,
    home: env.HOME ?? "/",
    keyDir: keyDirOf(env),
    backend,
  });
}

/**
 * Checks and applies a change or deletion proposal (gates run confined).
 *
 * @example
 * ```ts
 * import { applyProposal, loadPolicy } from "./mod.ts";
 * const root = "/path/to/project";
 * const policy = await loadPolicy(`${root}/agentteams.jsonc`, { projectRoot: root });
 * const r = await applyProposal(JSON.parse(Deno.readTextFileSync("p.json")), { root, policy });
 * ```
 */
export async function applyProposal(
  artifact: unknown,
  opts: { root: string; policy: Policy; dryRun?: boolean },
): Promise<ApplyResult> {
  const env = envNow();
  return await apply(artifact, {
    root: opts.root,
    policy: opts.policy,
    hmac: key(env).hmac,
    dryRun: opts.dryRun,
    gateRunner: gateRunnerFor(
      opts.root,
      opts.policy,
      lazyBackend(opts.policy, { unconfined: false }),
      env,
    ),
  });
}

/**
 * Checks and runs a command request: confined unless `confine: false` (which needs
 * `allow_unconfined_runs`), with the entry's timeout bounded by `timeoutCap` seconds.
 *
 * @example
 * ```ts
 * import { loadPolicy, runRequest } from "./mod.ts";
 * const root = "/path/to/project";
 * const policy = await loadPolicy(`${root}/agentteams.jsonc`, { projectRoot: root });
 * const r = await runRequest(JSON.parse(Deno.readTextFileSync("r.json")), { root, policy });
 * ```
 */
export async function runRequest(
  artifact: unknown,
  opts: { root: string; policy: Policy; dryRun?: boolean; confine?: boolean; timeoutCap?: number },
): Promise<RunRequestResult> {
  const backend = lazyBackend(opts.policy, { unconfined: opts.confine === false });
  const env = envNow();
  const gateRunner = gateRunnerFor(opts.root, opts.policy, backend, env);
  return await run(artifact, {
    root: opts.root,
    policy: opts.policy,
    hmac: key(env).hmac,
    dryRun: opts.dryRun,
    backend,
    parentEnv: env,
    home: env.HOME ?? "/",
    keyDir: keyDirOf(env),
    gateRunner,
    timeoutCap: opts.timeoutCap,
  });
}

/**
 * Appends one signed row to the project's ledger.
 *
 * @example
 * ```ts
 * import { record } from "./mod.ts";
 * await record("/path/to/project", { action: "note", text: "release 1.2 cut" });
 * ```
 */
export async function record(root: string, entry: RowBody): Promise<AppendResult> {
  return await appendRow(root, key().hmac, entry);
}

/**
 * Verifies the project's ledger, head and dispatch store.
 *
 * @example
 * ```ts
 * import { verifyLedger } from "./mod.ts";
 * const report = await verifyLedger("/path/to/project");
 * report.problems.map((p) => p.code);
 * ```
 */
export function verifyLedger(root: string): Promise<VerifyReport> {
  return Promise.resolve(verifyLedgerAt(root, key()));
}
