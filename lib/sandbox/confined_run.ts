/**
 * Running one command under the decided backend: build the plan (`mounts_io.ts`), wrap the argv
 * (`wrapper_chain.ts`), run it in its own process group (`lib/process/spawn.ts`), and remove the
 * mask points bwrap made for the plan (planning itself creates nothing on disk). Used by proposal
 * gates and command requests alike.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /srv/repo and a working sandbox.
 * import { type ConfinedRunSpec, runConfined } from "./confined_run.ts";
 * declare const spec: ConfinedRunSpec; // the plan's inputs, the backend, stdin and a timeout
 * const r = await runConfined(spec);
 * console.log(r.backend, r.networkRefused);
 * ```
 * @module
 */
import { SandboxError } from "../errors.ts";
import { PERL_PATH } from "../host/programs.ts";
import type { NetworkRule } from "../policy/network_rules.ts";
import { proxyEnv, proxySocketIn } from "./net_forwarder.ts";
import { startNetProxy } from "./net_proxy.ts";
import { runProcess, type RunResult } from "../process/spawn.ts";
import { confineArgv } from "./wrapper_chain.ts";
import { sandboxHost } from "./host_probe.ts";
import { awaitNamespaceEnd } from "./namespace_end.ts";
import type { ConfinementPlan } from "./mounts.ts";
import type { Backend } from "./backend_choice.ts";
import { prepareConfinement, type PrepareOptions } from "./mounts_io.ts";
import type { ScanRecord } from "./write_root_scan.ts";
import { removeMaskPoints } from "./run_dir.ts";

/** What to run and how to confine it: the plan's inputs, the backend, stdin and a timeout. */
export interface ConfinedRunSpec extends PrepareOptions {
  /** The backend from `decideConfinement`. */
  readonly backend: Backend;
  /** Bytes for stdin. */
  readonly stdin?: Uint8Array | null;
  /** Timeout in milliseconds. */
  readonly timeoutMs: number;
}

/** A run's result and the backend it ran under. */
export interface ConfinedRunResult extends RunResult {
  /** `bwrap`, `seatbelt` or `unconfined-opt-out`. */
  readonly backend: Backend;
  /** Under a network list, each `host:port` its proxy refused (first ones, each once); else `null`. */
  readonly networkRefused: readonly string[] | null;
}

/** A run whose plan is built and checked, ready to start. */
export interface PreparedRun {
  /** The spec it was prepared from. */
  readonly spec: ConfinedRunSpec;
  /** The plan (`null` for the unconfined opt-out). */
  readonly plan: ConfinementPlan | null;
  /** What to spawn. */
  readonly program: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** Its whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Where to spawn it. */
  readonly cwd: string;
  /** Where bwrap writes its namespace's init pid (`null` unless bwrap runs it). */
  readonly infoFile: string | null;
  /** What the plan's scan of the writable places saw (`null` for the unconfined opt-out). */
  readonly scan: ScanRecord | null;
  /** The network list's proxy: its socket on the host and the rules (`null` without a list). */
  readonly proxy: { readonly socket: string; readonly rules: readonly NetworkRule[] } | null;
}

/**
 * Builds and checks the plan without running anything, so a command that cannot be confined
 * safely is refused before a use is spent or a start row written (its dispatch attempt is already
 * counted, and the refusal is recorded).
 *
 * @throws {SandboxError} when the command cannot be confined safely.
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /srv/repo
 * import { prepareRun } from "./confined_run.ts";
 * const prepared = prepareRun({
 *   project: "/srv/repo", home: "/home/op", tmpdir: "/tmp/agentteams-run-x", backend: "bwrap",
 *   agent: { exec: ["/usr/bin"], write: ["build"] }, cwd: ".", argv: ["/usr/bin/make", "all"],
 *   env: { PATH: "/usr/bin:/bin" }, network: false, protectedPaths: [], hiddenDirs: [],
 *   controlPlane: { git: [] }, timeoutMs: 600_000,
 * });
 * prepared.program; // "/usr/bin/bwrap": nothing has run yet
 * ```
 */
export function prepareRun(spec: ConfinedRunSpec): PreparedRun {
  const rules = spec.networkAllow ?? null;
  if (rules !== null && spec.backend !== "bwrap") {
    // Only a network namespace of its own, with the proxy as its one way out, keeps a list; any
    // other backend would give the command every network or none.
    throw new SandboxError(
      "NETWORK_LIST_UNSUPPORTED",
      `the command's network list (${rules.map((r) => r.source).join(", ")}) needs bubblewrap ` +
        `confinement; this run would be ${spec.backend}. Use network: true or false here, or run ` +
        "it where bwrap is available",
    );
  }
  const env = { ...spec.env, TMPDIR: spec.tmpdir, ...(rules !== null ? proxyEnv() : {}) };
  if (spec.backend === "unconfined-opt-out") {
    const [program, ...args] = spec.argv;
    const cwd = spec.cwd === "." ? spec.project : `${spec.project}/${spec.cwd}`;
    return { spec, plan: null, program, args, env, cwd, infoFile: null, scan: null, proxy: null };
  }
  const scan: ScanRecord = new Map();
  // bwrap's plan says which bwrap it is for and how exec is held (asked of the host once).
  const host = spec.host !== undefined
    ? spec.host
    : spec.backend === "bwrap"
    ? sandboxHost()
    : null;
  const proxy = rules === null ? null : { socket: proxySocketIn(spec.tmpdir), rules };
  const planned = prepareConfinement({ ...spec, env, scanRecord: scan, host });
  const plan = proxy === null ? planned : { ...planned, proxySocket: proxy.socket };
  // Beside the run's private directory, in its 0700 parent (not bound writable in the sandbox).
  const infoFile = spec.backend === "bwrap" ? `${spec.tmpdir}.bwrap-info` : null;
  const cmd = confineArgv(plan, spec.backend, undefined, infoFile);
  return {
    spec,
    plan,
    program: cmd.program,
    args: cmd.args,
    env: cmd.env,
    cwd: cmd.cwd,
    infoFile,
    scan,
    proxy,
  };
}

/**
 * Runs a prepared command, then removes the mask points bwrap made for its plan.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs prepared, which it declares rather than makes.
 * import { executeRun } from "./confined_run.ts";
 * import type { PreparedRun } from "./confined_run.ts";
 * declare const prepared: PreparedRun; // from `prepareRun`
 * const r = await executeRun(prepared);
 * r.exit; // the command's exit code (negative: the signal that ended it)
 * ```
 */
export async function executeRun(p: PreparedRun): Promise<ConfinedRunResult> {
  const proxy = p.proxy === null ? null : await startNetProxy({
    socketPath: p.proxy.socket,
    rules: p.proxy.rules,
    perl: PERL_PATH,
  });
  try {
    const r = await runProcess({
      program: p.program,
      args: p.args,
      cwd: p.cwd,
      env: p.env,
      stdin: p.spec.stdin ?? null,
      timeoutMs: p.spec.timeoutMs,
    });
    return { ...r, backend: p.spec.backend, networkRefused: proxy === null ? null : proxy.refused };
  } finally {
    // Nothing the command left in its sandbox runs on past this point (nor writes after the
    // run's after-snapshot), however the run ended; the info file goes with the wait.
    if (p.infoFile !== null) await awaitNamespaceEnd(p.infoFile);
    if (proxy !== null && p.proxy !== null) {
      await proxy.close();
      await Deno.remove(p.proxy.socket).catch(() => {});
    }
    if (p.plan !== null) removeMaskPoints(p.plan);
  }
}

/**
 * Runs `spec.argv` confined (or, for the opt-out, directly in the project).
 *
 * @throws {SandboxError} when the command cannot be confined safely.
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /srv/repo and bubblewrap
 * import { runConfined } from "./confined_run.ts";
 * const r = await runConfined({
 *   project: "/srv/repo", home: "/home/op", tmpdir: "/tmp/agentteams-run-x", backend: "bwrap",
 *   agent: { exec: ["/usr/bin"], write: [] }, cwd: ".", argv: ["/usr/bin/git", "status"],
 *   env: { PATH: "/usr/bin:/bin" }, network: false, protectedPaths: [], hiddenDirs: [],
 *   controlPlane: { git: [] }, timeoutMs: 60_000,
 * });
 * new TextDecoder().decode(r.stdout); // git's output, captured inside the sandbox
 * ```
 */
export async function runConfined(spec: ConfinedRunSpec): Promise<ConfinedRunResult> {
  return await executeRun(prepareRun(spec));
}
