/**
 * The wrapper chain one confined command runs behind. Under bwrap: the exec guard
 * (`exec_guard.ts`, with the seccomp filter), bwrap, the network forwarder when the command has a
 * network list (`net_forwarder.ts`), the inner guard when Landlock holds exec (`landlock.ts`),
 * then the command; under Seatbelt, `sandbox-exec`. Give it a plan and the decided backend, get
 * back the program, its arguments, the environment to spawn it with (with `clearEnv: true`) and
 * the working directory. The caller records `confined` and `backend` in the ledger.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs plan, which it declares rather than makes.
 * import { confineArgv } from "./wrapper_chain.ts";
 * import type { ConfinementPlan } from "./mounts.ts";
 * declare const plan: ConfinementPlan; // from `planConfinement`
 * const cmd = confineArgv(plan, "bwrap");
 * const child = new Deno.Command(cmd.program, {
 *   args: cmd.args, env: cmd.env, clearEnv: true, cwd: cmd.cwd,
 * }).spawn();
 * ```
 * @module
 */
import { forwarderArgv } from "./net_forwarder.ts";
import { BWRAP_PATH, PERL_PATH, SANDBOX_EXEC_PATH } from "../host/programs.ts";
import { BWRAP_FULL, bwrapArgv } from "./bwrap.ts";
import { innerGuardArgv } from "./landlock.ts";
import { BWRAP_INFO_ENV, guardedArgv } from "./exec_guard.ts";
import { commandFilter } from "./seccomp.ts";
import type { Backend } from "./backend_choice.ts";
import type { ConfinementPlan } from "./mounts.ts";
import { seatbeltArgv } from "./seatbelt.ts";

/** Absolute paths of the sandbox programs, and the machine they run on. */
export interface SandboxPrograms {
  /** bubblewrap. */
  readonly bwrap: string;
  /** sandbox-exec. */
  readonly sandboxExec: string;
  /** perl, which runs the exec guard in front of bwrap (`exec_guard.ts`). */
  readonly perl: string;
  /** `Deno.build.arch` (system call numbers for the guard and the seccomp filter). */
  readonly arch: string;
}

/** The default sandbox program paths. */
export const DEFAULT_SANDBOX_PROGRAMS: SandboxPrograms = Object.freeze({
  bwrap: BWRAP_PATH,
  sandboxExec: SANDBOX_EXEC_PATH,
  perl: PERL_PATH,
  arch: Deno.build.arch,
});

/** A command ready to spawn. */
export interface ConfinedCommand {
  /** The program to spawn (the sandbox, or the command itself when unconfined). */
  readonly program: string;
  /** Its arguments. */
  readonly args: string[];
  /** The whole environment to spawn with (`clearEnv: true`). */
  readonly env: Record<string, string>;
  /** The working directory to spawn in. */
  readonly cwd: string;
  /** The backend used. */
  readonly backend: Backend;
  /** False only for the unconfined opt-out. */
  readonly confined: boolean;
}

/**
 * Wraps the plan's command for `backend`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { confineArgv } from "./wrapper_chain.ts";
 * assert.equal(confineArgv({
 *   project: "/p", tmpdir: "/t", writeRoots: [], readOnly: [], masks: [], hidden: [], exec: [],
 *   network: false, cwd: "/p", env: [["PATH", "/usr/bin"]], argv: ["/usr/bin/true"],
 * }, "unconfined-opt-out").program, "/usr/bin/true");
 * ```
 */
export function confineArgv(
  plan: ConfinementPlan,
  backend: Backend,
  programs: SandboxPrograms = DEFAULT_SANDBOX_PROGRAMS,
  infoFile: string | null = null,
): ConfinedCommand {
  const env = Object.fromEntries(plan.env);
  if (backend === "bwrap") {
    // Through the exec guard: inherited descriptors closed, and the seccomp filter loaded (no
    // setuid or setgid bits; without network, no Unix sockets; before bwrap 0.8, no new user
    // namespaces). Inside, the inner guard checks the bound roots and applies Landlock.
    const features = plan.bwrapFeatures ?? BWRAP_FULL;
    const filterOf = (network: boolean) =>
      commandFilter(programs.arch, {
        network,
        blockUserns: !features.disableUserns,
        execAllowlist: plan.execAllowlist?.kind === "landlock",
      });
    const inner = innerArgv(plan, programs);
    // A network list: the sandbox's filter lets the forwarder reach the proxy's socket, and the
    // forwarder stacks the filter of a command without network before it execs the inner guard
    // (so the forwarder itself stays outside the Landlock domain, and the command inside it).
    const socket = plan.proxySocket;
    const proxied = socket !== undefined;
    const argv = proxied
      ? forwarderArgv(programs.perl, programs.arch, filterOf(false), socket, inner.argv)
      : inner.argv;
    const [program, ...args] = guardedArgv(
      programs,
      filterOf(plan.network || proxied),
      bwrapArgv({ ...plan, ...inner, argv, bwrap: programs.bwrap }),
      features.bindFd ? plan.pins ?? [] : [],
    );
    // Perl stays quiet about a locale that is not installed (its warning would land in the
    // command's stderr); bwrap's --clearenv keeps this from the command.
    return {
      program,
      args,
      env: {
        ...env,
        PERL_BADLANG: "0",
        ...(infoFile !== null ? { [BWRAP_INFO_ENV]: infoFile } : {}),
      },
      cwd: plan.cwd,
      backend,
      confined: true,
    };
  }
  if (backend === "seatbelt") {
    const [program, ...args] = seatbeltArgv({ ...plan, sandboxExec: programs.sandboxExec });
    return { program, args, env, cwd: plan.cwd, backend, confined: true };
  }
  const [program, ...args] = plan.argv;
  return { program, args, env, cwd: plan.cwd, backend, confined: false };
}

/**
 * The command as bwrap runs it: behind the inner guard (`landlock.ts`) when the plan holds exec
 * by Landlock, or when its bwrap cannot bind the roots by descriptor (the guard then checks them
 * inside); otherwise the command itself, as before.
 */
function innerArgv(
  plan: ConfinementPlan,
  programs: SandboxPrograms,
): Pick<ConfinementPlan, "argv" | "env"> {
  const ll = plan.execAllowlist?.kind === "landlock" ? plan.execAllowlist : null;
  const bindFd = (plan.bwrapFeatures ?? BWRAP_FULL).bindFd;
  if (ll === null && bindFd) return { argv: plan.argv, env: plan.env };
  // The guard's Perl stays quiet about a locale that is not installed; it drops the variable
  // again before the command runs, unless the command's own environment set it.
  const dropBadLang = !plan.env.some(([k]) => k === "PERL_BADLANG");
  const argv = innerGuardArgv(programs, {
    abi: ll?.abi ?? 0,
    rules: ll?.rules ?? [],
    checks: plan.pins ?? [],
    dropBadLang,
  }, plan.argv);
  const env = dropBadLang
    ? [...plan.env, ["PERL_BADLANG", "0"] as const].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    : plan.env;
  return { argv, env };
}
