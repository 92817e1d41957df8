/**
 * Shared fixtures for the sandbox tests: a real temp project (real `git init`), a temp HOME with
 * an operator key directory, a runner that confines one shell command with real bwrap, and what a
 * tree snapshot (`snapshotTreeSync` of ../_helpers/mod.ts) leaves out to prove nothing outside the
 * writable roots changed.
 *
 * @module
 */

import { assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import {
  confineArgv,
  type ConfinementPlan,
  DEFAULT_SANDBOX_PROGRAMS,
  makePrivateTmpdir,
  prepareConfinement,
  type PrepareOptions,
  probeSandboxHost,
  removeMaskPoints,
  removePrivateTmpdir,
  type SandboxHost,
  sandboxHost,
  type SandboxPrograms,
} from "../../lib/sandbox/mod.ts";
import { BWRAP_PATH } from "../../lib/host/programs.ts";

/**
 * The bwrap the live tests run: `/usr/bin/bwrap`, or `AGENTTEAMS_TEST_BWRAP` (an older bwrap
 * built elsewhere, to run the same tests against it).
 */
export const TEST_BWRAP: string = Deno.env.get("AGENTTEAMS_TEST_BWRAP") ?? BWRAP_PATH;

/** The sandbox programs with {@link TEST_BWRAP}. */
export const TEST_PROGRAMS: SandboxPrograms = { ...DEFAULT_SANDBOX_PROGRAMS, bwrap: TEST_BWRAP };

let testHostMemo: SandboxHost | null = null;

/** What {@link TEST_BWRAP} and this kernel offer (as `sandboxHost()` is for the default bwrap). */
export function testHost(): SandboxHost {
  return testHostMemo ??= TEST_BWRAP === BWRAP_PATH ? sandboxHost() : probeSandboxHost(TEST_BWRAP);
}

/** Throws (never skips) when a program the test needs is missing. */
export function requireProgram(path: string): void {
  try {
    const st = Deno.statSync(path);
    if (!st.isFile) throw new Error("not a file");
  } catch {
    throw new Error(`${path} is required by this test and is missing: install it`);
  }
}

/** A temp project with a git repo, a write root `build`, a nested `.GIT` inside it, and a HOME. */
export interface Fixture {
  readonly base: string;
  readonly project: string;
  readonly home: string;
  readonly keyDir: string;
  readonly secret: string;
  readonly cleanup: () => void;
}

/** Runs a program to completion and returns its output. */
export function runSync(
  program: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): { code: number; stdout: string; stderr: string } {
  const out = new Deno.Command(program, {
    args,
    cwd: opts.cwd,
    env: opts.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Creates the fixture: `proj/` (git repo, README, build/, build/sub/.GIT/config) and `home/`. */
export function makeFixture(): Fixture {
  requireProgram("/usr/bin/git");
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-sandbox-" }));
  const project = `${base}/proj`;
  const home = `${base}/home`;
  Deno.mkdirSync(project);
  const git = runSync("/usr/bin/git", ["init", "-q", project]);
  if (git.code !== 0) throw new Error(`git init failed: ${git.stderr}`);
  Deno.mkdirSync(`${project}/.git/hooks`, { recursive: true });
  Deno.writeTextFileSync(`${project}/README`, "readme\n");
  Deno.mkdirSync(`${project}/build/sub/.GIT`, { recursive: true });
  Deno.writeTextFileSync(`${project}/build/sub/.GIT/config`, "[core]\n\tnested = true\n");
  Deno.writeTextFileSync(`${project}/build/existing.txt`, "old\n");
  const keyDir = `${home}/.config/agentteams/keys`;
  Deno.mkdirSync(keyDir, { recursive: true });
  Deno.chmodSync(keyDir, 0o700);
  const secret = "operator-ledger-secret-" + crypto.randomUUID();
  Deno.writeTextFileSync(`${keyDir}/proposal-ledger.key`, secret + "\n");
  Deno.chmodSync(`${keyDir}/proposal-ledger.key`, 0o600);
  Deno.writeTextFileSync(`${home}/.bashrc`, "# rc\n");
  return {
    base,
    project,
    home,
    keyDir,
    secret,
    cleanup: () => Deno.removeSync(base, { recursive: true }),
  };
}

/** The result of one confined run. */
export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly plan: ConfinementPlan;
}

/** Options for {@link runConfined}. */
export interface RunOptions {
  readonly write?: readonly string[];
  readonly network?: boolean;
  readonly protectedPaths?: readonly string[];
  readonly tmpdir?: string;
  readonly extra?: Partial<PrepareOptions>;
  /**
   * Wait only for the sandbox to exit, not for its output pipes to close (output is discarded).
   * A process that outlives the command would hold the pipes open; this lets a test see it.
   */
  readonly discardOutput?: boolean;
}

/** The plan the fixture's runs use, for `argv`, with the given private TMPDIR. */
export function planFor(
  fx: Fixture,
  argv: readonly string[],
  tmpdir: string,
  opts: RunOptions = {},
): ConfinementPlan {
  return prepareConfinement({
    project: fx.project,
    home: fx.home,
    tmpdir,
    agent: { exec: ["/usr/bin"], write: opts.write ?? ["build"] },
    cwd: ".",
    argv,
    env: { PATH: "/usr/bin:/bin", HOME: fx.home, LANG: "C" },
    network: opts.network ?? false,
    protectedPaths: opts.protectedPaths ?? [],
    hiddenDirs: [fx.keyDir],
    controlPlane: { git: [] },
    // As a run gets it (confined_run.ts): this host's bwrap features and Landlock.
    host: Deno.build.os === "linux" ? testHost() : null,
    ...opts.extra,
  });
}

/** Spawns a confined command as `confineArgv` made it (a clear environment) and decodes its output. */
export async function spawnCommand(
  cmd: { program: string; args: string[]; env: Record<string, string>; cwd: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(cmd.program, {
    args: cmd.args,
    env: cmd.env,
    clearEnv: true,
    cwd: cmd.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Confines `argv` (absolute program) with real bwrap for the fixture's project. */
export async function runConfined(
  fx: Fixture,
  argv: readonly string[],
  opts: RunOptions = {},
): Promise<RunResult> {
  requireProgram(TEST_BWRAP);
  const tmpdir = opts.tmpdir ?? makePrivateTmpdir();
  try {
    const plan = planFor(fx, argv, tmpdir, opts);
    const cmd = confineArgv(plan, "bwrap", TEST_PROGRAMS);
    if (opts.discardOutput) {
      const status = await new Deno.Command(cmd.program, {
        args: cmd.args,
        env: cmd.env,
        clearEnv: true,
        cwd: cmd.cwd,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn().status;
      removeMaskPoints(plan);
      return { code: status.code, stdout: "", stderr: "", plan };
    }
    const out = await spawnCommand(cmd);
    removeMaskPoints(plan);
    return { ...out, plan };
  } finally {
    if (opts.tmpdir === undefined) removePrivateTmpdir(tmpdir);
  }
}

/** Shell-runs `script` inside the sandbox. */
export function sh(script: string): string[] {
  return ["/bin/sh", "-c", script];
}

/** Ignores what the write root `build` holds, except its nested `.GIT` (which must not change). */
export function outsideRoots(fx: Fixture): (path: string) => boolean {
  const build = `${fx.project}/build`;
  const nested = `${build}/sub/.GIT`;
  return (path) =>
    (path === build || path.startsWith(build + "/")) && path !== nested &&
    !path.startsWith(nested + "/");
}

/** {@link outsideRoots}, also ignoring the given paths (files the test itself creates). */
export function ignoring(fx: Fixture, ...paths: string[]): (path: string) => boolean {
  const roots = outsideRoots(fx);
  return (path) => roots(path) || paths.some((p) => path === p || path.startsWith(p + "/"));
}

/** True when a path exists (without following a final link). */
export { exists as lexists } from "../_helpers/mod.ts";

/**
 * Runs `body` on a fresh {@link makeFixture} and then asserts that nothing outside the writable
 * roots changed ({@link outsideRoots}); the fixture is removed either way.
 */
export async function withUnchangedOutside(
  body: (fx: Fixture) => Promise<void> | void,
): Promise<void> {
  const fx = makeFixture();
  try {
    const before = snapshotTreeSync(fx.base, outsideRoots(fx));
    await body(fx);
    assertSameTree(before, snapshotTreeSync(fx.base, outsideRoots(fx)));
  } finally {
    fx.cleanup();
  }
}
