/**
 * Proposal gates: which gates run on a proposal, and running one on a temporary copy of the
 * proposed content, confined, with a sanitized environment and a 120-second timeout.
 *
 * The gates that run are every gate the proposal requests (an unknown name refuses) and every
 * gate whose glob matches the path (fnmatch, case-insensitive, `*` crosses `/`), in the order
 * the brief declares them. `{file}` is replaced by the temporary copy's absolute path and
 * `{path}` by the project-relative path; both are whole arguments (the policy lint ensures it).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs policy, which it declares rather than makes.
 * import { selectGates } from "./gates.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy; // from `loadPolicy`
 * const names = selectGates(policy, "src/a.ts", ["lint"]).map((g) => g.name);
 * ```
 * @module
 */
import { hiddenFromConfined } from "../sandbox/hidden_dirs.ts";
import { basename } from "../fs/path.ts";
import { ProposalError } from "../errors.ts";
import { fnmatch } from "../pycompat/fnmatch.ts";
import { GATE_TIMEOUT, type GateDef, type Policy } from "../policy/types.ts";
import { childEnv } from "../process/child_env.ts";
import { diskFs, resolveProgram } from "../process/resolve_program.ts";
import type { ControlPlane } from "../policy/control_plane.ts";
import type { Backend } from "../sandbox/backend_choice.ts";
import { gateExecPaths, readShebang } from "../sandbox/gate_exec.ts";
import { makePrivateTmpdir, removePrivateTmpdir } from "../sandbox/run_dir.ts";
import { type ConfinedRunResult, runConfined } from "../sandbox/confined_run.ts";

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

const enc = new TextEncoder();

/** The input of one gate run. */
export interface GateInput {
  /** The proposed content. */
  readonly content: Uint8Array;
  /** The project-relative path. */
  readonly rel: string;
}

/** Runs one gate. */
export type GateRunner = (gate: GateDef, input: GateInput) => Promise<ConfinedRunResult>;

/**
 * The gates that run on a proposal for `rel`.
 *
 * @throws {ProposalError} `UNKNOWN_GATE`
 * @example
 * ```ts ignore
 * // Not run: it needs policy, which it declares rather than makes.
 * import { selectGates } from "./gates.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy; // gates: `lint` (no glob), then `tsc` (glob `*.ts`)
 * selectGates(policy, "src/a.ts", ["lint"]).map((g) => g.name); // ["lint", "tsc"]
 * ```
 */
export function selectGates(
  policy: Policy,
  rel: string,
  requested: readonly string[] | undefined,
): GateDef[] {
  const want = new Set<string>();
  for (const name of requested ?? []) {
    if (!Object.hasOwn(policy.gates, name)) {
      throw new ProposalError(
        "UNKNOWN_GATE",
        `the proposal requests gate '${name}', which the brief does not define`,
      );
    }
    want.add(name);
  }
  const out: GateDef[] = [];
  for (const [name, gate] of Object.entries(policy.gates)) {
    if (want.has(name) || (gate.glob !== null && fnmatch(rel, gate.glob))) out.push(gate);
  }
  return out;
}

/** What the confined gate runner needs. */
export interface GateRunnerOptions {
  /** Absolute project root. */
  readonly root: string;
  /** The policy. */
  readonly policy: Policy;
  /** The parent environment (read by name at start). */
  readonly parentEnv: Readonly<Record<string, string | undefined>>;
  /** The operator's home. */
  readonly home: string;
  /** The key dir, hidden from gates. */
  readonly keyDir: string;
  /** The backend, decided on first use (see `lib/sandbox/backend_choice_io.ts`). */
  readonly backend: () => Promise<Backend>;
  /** The project's control plane, kept read-only around the gate. */
  readonly plane: () => Promise<ControlPlane>;
  /**
   * Every write grant's root in the project's grants ledger (`writeGrantTargets`), read when a
   * gate first runs: a gate's exec paths may not overlap them either (a runner may have let a
   * command write there).
   */
  readonly grantTargets?: () => readonly string[] | Promise<readonly string[]>;
}

/**
 * A gate runner that copies the content into a private TMPDIR and runs the gate on that copy, from
 * the project root, under the decided backend (no writable project roots: a gate only reads).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs policy, which it declares rather than makes.
 * import { confinedGateRunner } from "./gates.ts";
 * import { lazyBackend } from "../sandbox/backend_choice_io.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const policy: Policy;
 * const runGate = confinedGateRunner({
 *   root: "/work/p", policy, parentEnv: Deno.env.toObject(), home: "/home/op",
 *   keyDir: "/home/op/.config/agentteams/keys", backend: lazyBackend(policy, { unconfined: false }),
 *   plane: () => Promise.resolve({ root: "/work/p", git: [] }),
 * });
 * const r = await runGate(policy.gates.lint, {
 *   content: new TextEncoder().encode("export const x = 1;\n"), rel: "src/x.ts",
 * });
 * r.exit; // 0 when the gate accepts the content
 * ```
 */
export function confinedGateRunner(opts: GateRunnerOptions): GateRunner {
  const parent = opts.parentEnv;
  const agentRoots = Object.values(opts.policy.confinedPrograms?.agents ?? {}).flatMap((a) =>
    a.write
  );
  let foreign: readonly string[] | null = null;
  return async (gate, input) => {
    foreign ??= [...agentRoots, ...(await opts.grantTargets?.() ?? [])];
    const foreignWriteRoots = foreign;
    const tmpdir = makePrivateTmpdir(parent);
    try {
      const inputDir = `${tmpdir}/input`;
      Deno.mkdirSync(inputDir, { mode: 0o700 });
      const file = `${inputDir}/${basename(input.rel)}`;
      Deno.writeFileSync(file, input.content, { mode: 0o600 });
      const argv = gate.argv.map((a) => a === "{file}" ? file : a === "{path}" ? input.rel : a);
      const program = resolveProgram(argv[0], {
        path: parent.PATH,
        projectRoot: opts.root,
        fs: diskFs,
      });
      const interpreter = readShebang(program.real);
      const exec = gateExecPaths(gate, program.real, interpreter);
      const r = await runConfined({
        project: opts.root,
        home: opts.home,
        hiddenDirs: hiddenFromConfined(opts.root, opts.keyDir),
        tmpdir,
        backend: await opts.backend(),
        agent: { exec, write: [] },
        execOwner: { kind: "gate", gate: gate.name },
        foreignWriteRoots,
        cwd: ".",
        argv: [program.path, ...argv.slice(1)],
        env: childEnv(parent),
        network: false,
        protectedPaths: opts.policy.protectedPaths,
        controlPlane: await opts.plane(),
        timeoutMs: GATE_TIMEOUT * 1000,
      });
      // The gate saw the temporary copy; its output names the proposal's path instead.
      const named = (b: Uint8Array) =>
        enc.encode(new TextDecoder().decode(b).replaceAll(file, input.rel));
      return { ...r, stdout: named(r.stdout), stderr: named(r.stderr) };
    } finally {
      removePrivateTmpdir(tmpdir);
    }
  };
}

/**
 * Runs the gates in order; the first that fails refuses.
 *
 * @throws {ProposalError} `GATE_FAILED`, naming the gate and its exit (or timeout).
 * @example
 * ```ts ignore
 * // Not run: it needs gates, runner, which it declares rather than makes.
 * import { runGates, type GateRunner } from "./gates.ts";
 * import type { GateDef } from "../policy/types.ts";
 * declare const gates: GateDef[];
 * declare const runner: GateRunner;
 * const results = await runGates(gates, new TextEncoder().encode("x\n"), "src/x.ts", runner);
 * ```
 */
export async function runGates(
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
      const first = why.split("\n")[0].slice(0, 200);
      // The refusal line carries the first line; the output, as lines, is in `details.output`
      // (the CLI prints it below the refusal, inert).
      throw new ProposalError(
        "GATE_FAILED",
        `gate '${gate.name}' ${r.timedOut ? "timed out" : `exited ${r.exit}`}` +
          (first ? `: ${first}` : ""),
        { details: { gate: gate.name, exit: r.exit, output: why.slice(0, 4096) } },
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
