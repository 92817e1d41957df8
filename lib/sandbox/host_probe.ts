/**
 * The start-up probe: is a working sandbox here? It runs the real thing (bwrap with the same
 * isolation flags every confined run uses, or `sandbox-exec` with a parameterized profile), so an
 * old bwrap, missing user namespaces, or a Seatbelt that cannot nest inside another sandbox all
 * show up as a failed probe rather than as a later surprise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeSandbox } from "./host_probe.ts";
 * const probe = await probeSandbox();
 * // Either a backend that confines, or the reason none does.
 * assert.ok(probe.ok ? probe.backend !== null : probe.reason.length > 0);
 * ```
 * @module
 */

import { BWRAP_PATH, PERL_PATH, SANDBOX_EXEC_PATH } from "../host/programs.ts";
import { BWRAP_BASE_MOUNTS, BWRAP_FULL, bwrapIsolationFlags, parseBwrapHelp } from "./bwrap.ts";
import { commandFilter } from "./seccomp.ts";
import { type LandlockFacts, landlockProbeArgv, parseLandlockProbe } from "./landlock.ts";
import type { BwrapFeatures } from "./mounts.ts";

/** A sandbox backend that can confine. */
export type SandboxKind = "bwrap" | "seatbelt";

/** What the Linux host offers the plan: its bwrap's features and the kernel's Landlock. */
export interface SandboxHost {
  /** What `bwrap --help` lists. */
  readonly bwrap: BwrapFeatures;
  /** The kernel's Landlock ABI (0: none, and why). */
  readonly landlock: LandlockFacts;
}

/** What the probe found. */
export type ProbeResult =
  | {
    readonly ok: true;
    readonly backend: SandboxKind;
    readonly program: string;
    /** Linux: what the host offers (absent from a hand-made result: a full bwrap, no Landlock). */
    readonly host?: SandboxHost;
  }
  | {
    readonly ok: false;
    readonly backend: SandboxKind | null;
    readonly program: string | null;
    readonly reason: string;
  };

/**
 * The bwrap probe argv: the full isolation shape around `/bin/sh -c :`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bwrapProbeArgv } from "./host_probe.ts";
 * assert.equal(bwrapProbeArgv("/usr/bin/bwrap").includes("--cap-drop"), true);
 * ```
 */
export function bwrapProbeArgv(
  bwrap: string = BWRAP_PATH,
  features: BwrapFeatures = BWRAP_FULL,
): string[] {
  return [
    bwrap,
    ...BWRAP_BASE_MOUNTS,
    "--tmpfs",
    "/tmp",
    "--remount-ro",
    "/tmp",
    ...bwrapIsolationFlags(false, features),
    "--clearenv",
    "--chdir",
    "/",
    "--",
    "/bin/sh",
    "-c",
    ":",
  ];
}

/**
 * The Seatbelt probe argv: a profile with one parameter, around `/usr/bin/true`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { seatbeltProbeArgv } from "./host_probe.ts";
 * assert.equal(seatbeltProbeArgv()[0], "/usr/bin/sandbox-exec");
 * ```
 */
export function seatbeltProbeArgv(sandboxExec: string = SANDBOX_EXEC_PATH): string[] {
  return [
    sandboxExec,
    "-D",
    "PROBE=/nonexistent-agentteams-probe",
    "-p",
    '(version 1)\n(allow default)\n(deny file-write* (subpath (param "PROBE")))\n',
    "/usr/bin/true",
  ];
}

/** Options of {@link probeSandbox}. */
export interface ProbeOptions {
  /** The platform (default: `Deno.build.os`). */
  readonly os?: string;
  /** Absolute path of bwrap (default `/usr/bin/bwrap`). */
  readonly bwrap?: string;
  /** Absolute path of sandbox-exec (default `/usr/bin/sandbox-exec`). */
  readonly sandboxExec?: string;
  /** Give up after this many milliseconds (default 20000). */
  readonly timeoutMs?: number;
  /** Absolute path of perl, which runs the exec guard in front of bwrap (default `/usr/bin/perl`). */
  readonly perl?: string;
  /** The machine (default `Deno.build.arch`): the seccomp filter needs its numbers. */
  readonly arch?: string;
}

/**
 * Why a confined run on Linux could not start bwrap the way `wrapper_chain.ts` does, or `null`:
 * perl (the exec guard) must be an executable file and the architecture must have a seccomp filter.
 * Checked without running anything, so a machine missing either is told so up front instead of
 * every run failing inside bwrap.
 */
function guardProblem(perl: string, arch: string): string | null {
  try {
    commandFilter(arch, { network: false });
  } catch (e) {
    return (e as Error).message;
  }
  try {
    const st = Deno.statSync(perl);
    if (!st.isFile || ((st.mode ?? 0) & 0o111) === 0) return `${perl} is not an executable file`;
  } catch (e) {
    // A path the launch flags do not grant is refused as such, not reported as missing.
    if (e instanceof Deno.errors.NotCapable) throw e;
    return `${perl}, which starts bwrap (the exec guard), is missing`;
  }
  return null;
}

/** What a probe program printed (stdout then stderr), and whether it succeeded. */
interface ProbeText {
  readonly ok: boolean;
  readonly out: string;
}

function probeCommand(program: string, args: string[]): Deno.Command {
  return new Deno.Command(program, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: { PERL_BADLANG: "0" },
  });
}

function probeText(r: Deno.CommandOutput): ProbeText {
  const td = new TextDecoder();
  return { ok: r.success, out: td.decode(r.stdout) + td.decode(r.stderr) };
}

/** A program that cannot run printed nothing; one the launch flags refuse is refused. */
function unlessNotCapable(e: unknown): ProbeText {
  if (e instanceof Deno.errors.NotCapable) throw e;
  return { ok: false, out: "" };
}

function runText(program: string, args: string[]): ProbeText {
  try {
    return probeText(probeCommand(program, args).outputSync());
  } catch (e) {
    return unlessNotCapable(e);
  }
}

async function runTextAsync(program: string, args: string[]): Promise<ProbeText> {
  try {
    return probeText(await probeCommand(program, args).output());
  } catch (e) {
    return unlessNotCapable(e);
  }
}

/** The host as `bwrap --help` and the Landlock probe answered. */
function hostFrom(help: ProbeText, ll: ProbeText): SandboxHost {
  return Object.freeze({
    bwrap: parseBwrapHelp(help.out),
    landlock: ll.ok
      ? parseLandlockProbe(ll.out)
      : { abi: 0, reason: "the Landlock probe (perl) failed" },
  });
}

/**
 * Asks this host (no FFI): `bwrap --help` for the features its bwrap lists, and the kernel for
 * its Landlock ABI (`landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` through
 * Perl's `syscall`). A bwrap that cannot print its help is taken to have none of the features
 * (its probe then fails or the filter covers for them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeSandboxHost } from "./host_probe.ts";
 * // The kernel's Landlock ABI (7 on Linux 6.18), or 0 where it has none.
 * const abi = probeSandboxHost().landlock.abi;
 * assert.ok(Number.isInteger(abi) && abi >= 0);
 * ```
 */
export function probeSandboxHost(
  bwrap: string = BWRAP_PATH,
  perl: string = PERL_PATH,
  arch: string = Deno.build.arch,
): SandboxHost {
  return hostFrom(
    runText(bwrap, ["--help"]),
    runText(perl, landlockProbeArgv(perl, arch).slice(1)),
  );
}

/**
 * {@link probeSandboxHost}, its two programs run at once and without holding up the event loop.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeSandboxHost, probeSandboxHostAsync } from "./host_probe.ts";
 * // The same answer as the blocking probe, here and on any host.
 * assert.deepEqual(await probeSandboxHostAsync(), probeSandboxHost());
 * ```
 */
export async function probeSandboxHostAsync(
  bwrap: string = BWRAP_PATH,
  perl: string = PERL_PATH,
  arch: string = Deno.build.arch,
): Promise<SandboxHost> {
  const [help, ll] = await Promise.all([
    runTextAsync(bwrap, ["--help"]),
    runTextAsync(perl, landlockProbeArgv(perl, arch).slice(1)),
  ]);
  return hostFrom(help, ll);
}

let hostMemo: SandboxHost | null = null;
let hostPending: Promise<SandboxHost> | null = null;

/**
 * {@link probeSandboxHost} of the default programs, asked once per process: the probe and every
 * plan see the same answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sandboxHost } from "./host_probe.ts";
 * // bwrap 0.8 (Debian 12) has no --disable-userns; later ones do.
 * assert.equal(typeof sandboxHost().bwrap.disableUserns, "boolean");
 * ```
 */
export function sandboxHost(): SandboxHost {
  return hostMemo ??= probeSandboxHost();
}

/**
 * Takes `host` as this process's answer (the one a kept probe recorded, `probe_cache.ts`), unless
 * one was already asked: every later plan sees it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rememberSandboxHost, sandboxHost } from "./host_probe.ts";
 * rememberSandboxHost(sandboxHost()); // already asked: kept as it was
 * assert.ok(sandboxHost());
 * ```
 */
export function rememberSandboxHost(host: SandboxHost): void {
  hostMemo ??= host;
}

/**
 * {@link sandboxHost}, asked without blocking (the backend's probe asks it this way): the same
 * one answer per process, whichever of the two asks first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sandboxHost, sandboxHostAsync } from "./host_probe.ts";
 * assert.equal(await sandboxHostAsync(), sandboxHost());
 * ```
 */
export function sandboxHostAsync(): Promise<SandboxHost> {
  if (hostMemo !== null) return Promise.resolve(hostMemo);
  return hostPending ??= probeSandboxHostAsync().then((h) => hostMemo ??= h);
}

/**
 * Runs the probe for this platform and reports whether confinement works.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeSandbox } from "./host_probe.ts";
 * const r = await probeSandbox({ os: "windows" });
 * assert.equal(r.ok, false); // no sandbox on this platform
 * ```
 */
export async function probeSandbox(opts: ProbeOptions = {}): Promise<ProbeResult> {
  const os = opts.os ?? Deno.build.os;
  let backend: SandboxKind;
  let argv: string[];
  let host: SandboxHost | undefined;
  if (os === "linux") {
    backend = "bwrap";
    host = opts.bwrap === undefined && opts.perl === undefined && opts.arch === undefined
      ? await sandboxHostAsync()
      : await probeSandboxHostAsync(opts.bwrap, opts.perl, opts.arch);
    argv = bwrapProbeArgv(opts.bwrap ?? BWRAP_PATH, host.bwrap);
    const problem = guardProblem(opts.perl ?? PERL_PATH, opts.arch ?? Deno.build.arch);
    if (problem !== null) return { ok: false, backend, program: argv[0], reason: problem };
  } else if (os === "darwin") {
    backend = "seatbelt";
    argv = seatbeltProbeArgv(opts.sandboxExec ?? SANDBOX_EXEC_PATH);
  } else {
    return { ok: false, backend: null, program: null, reason: `no sandbox backend for ${os}` };
  }
  const program = argv[0];
  if (!program.startsWith("/")) {
    return { ok: false, backend, program, reason: `${program} is not an absolute path` };
  }
  try {
    const out = await new Deno.Command(program, {
      args: argv.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      clearEnv: true,
      env: {},
      signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
    }).output();
    if (out.success) return { ok: true, backend, program, ...(host ? { host } : {}) };
    const err = new TextDecoder().decode(out.stderr).trim().slice(0, 500);
    return {
      ok: false,
      backend,
      program,
      reason: `${program} probe failed (exit ${out.code}${out.signal ? `, ${out.signal}` : ""})` +
        (err ? `: ${err}` : ""),
    };
  } catch (e) {
    return {
      ok: false,
      backend,
      program,
      reason: `${program} could not run: ${(e as Error).message}`,
    };
  }
}

/**
 * What the probe reads and runs on a platform (for the permission layer: `doctor`'s needs):
 * bwrap (and perl, whose exec guard it checks and which asks the kernel for Landlock) on Linux,
 * sandbox-exec on macOS.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probePrograms } from "./host_probe.ts";
 * assert.deepEqual(probePrograms("linux").run, ["/usr/bin/bwrap", "/usr/bin/perl"]);
 * ```
 */
export function probePrograms(os: string = Deno.build.os): { read: string[]; run: string[] } {
  return os === "darwin"
    ? { read: [SANDBOX_EXEC_PATH], run: [SANDBOX_EXEC_PATH] }
    : { read: [BWRAP_PATH, PERL_PATH], run: [BWRAP_PATH, PERL_PATH] };
}
