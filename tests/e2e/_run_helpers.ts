/**
 * Helpers for the end-to-end tests of `agentteams run`: one "world" per test (a temp dir holding a
 * fresh HOME, key dir, TMPDIR, a scripts dir outside the project, and a real git project with one
 * commit and a brief), the CLI run as a real `deno run -A main.ts` subprocess with an explicit cwd
 * and absolute paths, command-request artifacts written outside the project, ledger rows read
 * straight from `.agentteams/proposal-ledger.jsonl`, and the refusal assertions every refusal test
 * shares (code, nothing ran, the `run-request-refused` row, `ledger verify` ok).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO, type Refusal, removeTree, runCli, type RunResult } from "../_helpers/mod.ts";
import { GIT, gitEnv, sh } from "../_helpers/git.ts";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import { AgentTeamsError } from "../../lib/errors.ts";
import { loadPolicy } from "../../lib/policy/brief.ts";
import type { RunRequestResult } from "../../lib/requests/request.ts";
import { runIn as runRequest } from "../_helpers/acts.ts";
import type { Backend } from "../../lib/sandbox/backend_choice.ts";
import type { GateRunner } from "../../lib/proposals/gates.ts";
import { withConfinedPrograms } from "../../lib/sandbox/confined_programs_io.ts";
import { assertCliRefused } from "../_helpers/assert.ts";

export type { RunResult } from "../_helpers/mod.ts";
export { GIT, gitEnv, sh } from "../_helpers/git.ts";

/** The directory of the deno running the tests (put on the CLI's PATH). */
export const DENO_BIN_DIR: string = DENO.slice(0, DENO.lastIndexOf("/"));

/** A JSON value (briefs and artifacts are plain JSON). */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A JSON object. */
export type JsonObject = { [k: string]: Json };

/** A ledger row as stored (canonical JSON object). */
export type Row = Record<string, unknown>;

/** The fields of a command-request artifact a test sets (`kind` and `dispatch` are filled in). */
export interface RequestFields {
  argv: string[];
  purpose?: string;
  cwd?: string;
  expected_writes?: string[];
  stdin_from_content?: { path: string; content: string };
  agent?: string;
  /** Overrides the nonce (a forged one). */
  dispatch?: string;
}

/** A finished `agentteams run`, with the ledger row count just before it started. */
export interface RunOutcome extends RunResult {
  /** Ledger rows before the run (after the nonce was issued). */
  rowsBefore: number;
  /** The artifact file. */
  file: string;
}

/** Options of {@link world}. */
export interface WorldOptions {
  /** The brief (written as `<project>/agentteams.jsonc`), or a function of the world's paths. */
  brief: JsonObject | ((p: WorldPaths) => JsonObject);
  /** Files committed in the project besides the brief (default: `src/a.txt`, `README.md`). */
  files?: Record<string, string>;
  /** Executable scripts written to the scripts dir (outside the project), by name. */
  scripts?: Record<string, string | ((p: WorldPaths) => string)>;
  /** Make the project a git repository with a commit (default true). */
  git?: boolean;
  /** Run `keys init` (default true). */
  keys?: boolean;
}

/** The absolute paths of a world. */
export interface WorldPaths {
  /** The temp dir holding everything. */
  readonly dir: string;
  /** HOME of every CLI call. */
  readonly home: string;
  /** AGENTTEAMS_KEY_DIR. */
  readonly keyDir: string;
  /** The project root (a git repository). */
  readonly project: string;
  /** Scripts the brief allowlists by absolute path (outside the project). */
  readonly scripts: string;
  /** TMPDIR of every CLI call (private run dirs are made here). */
  readonly tmp: string;
  /** Scratch space outside the project (artifacts, markers outside the project). */
  readonly scratch: string;
}

/** One test's world. */
export interface World extends WorldPaths {
  /** `{HOME, AGENTTEAMS_KEY_DIR, TMPDIR, PATH}` for every CLI call. */
  readonly env: Record<string, string>;
  /** Runs `agentteams <args>` with this world's environment (plus `env`), cwd the world dir. */
  cli(args: string[], opts?: { env?: Record<string, string>; cwd?: string }): Promise<RunResult>;
  /** Issues a dispatch nonce for `agent` (default `worker`) through the CLI. */
  dispatch(agent?: string): Promise<string>;
  /**
   * Issues a nonce for `agent` with the store's own primitive, as one issued before the brief
   * dropped that agent (the CLI's `dispatch` reads the brief and would refuse it).
   */
  dispatchBeforeBriefChanged(agent: string): Promise<string>;
  /** One `worker` nonce shared by the runs of a test that do not ask for their own. */
  sharedNonce(): Promise<string>;
  /** Writes a command-request artifact (outside the project); returns its absolute path. */
  artifact(fields: RequestFields, nonce: string): Promise<string>;
  /**
   * Writes the artifact (nonce: `fields.dispatch`, else `opts.nonce`, else the shared nonce) and
   * runs `agentteams run FILE --project P [flags]`.
   */
  run(
    fields: RequestFields,
    opts?: { flags?: string[]; env?: Record<string, string>; nonce?: string; cwd?: string },
  ): Promise<RunOutcome>;
  /** Ledger rows, parsed. */
  rows(): Row[];
  /** Asserts `agentteams ledger verify --json` succeeds. */
  verifyOk(): Promise<void>;
  /** Runs git in the project (test setup). */
  git(...args: string[]): Promise<string>;
  /** Removes the world. */
  dispose(): Promise<void>;
}

const enc = new TextEncoder();

/** Writes `text` at `abs`, creating parents. */
export async function writeFileAt(
  abs: string,
  text: string | Uint8Array,
  mode?: number,
): Promise<void> {
  await Deno.mkdir(abs.slice(0, abs.lastIndexOf("/")), { recursive: true });
  if (typeof text === "string") await Deno.writeTextFile(abs, text);
  else await Deno.writeFile(abs, text);
  if (mode !== undefined) await Deno.chmod(abs, mode);
}

/** Whether something exists at `path` (not following a final symlink). */
import { exists } from "../_helpers/mod.ts";
export { exists };

/** Parses a JSON-lines file under the project's `.agentteams/` (empty when absent). */
function readJsonLines(project: string, name: string): Row[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(join(project, ".agentteams", name));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Row);
}

/** Parses the ledger file of a project (empty when absent). */
export function readRows(project: string): Row[] {
  return readJsonLines(project, "proposal-ledger.jsonl");
}

/** Dispatch-store rows of a project (`{use: id}` and `{attempt: id}` among them). */
export function readDispatchStore(project: string): Row[] {
  return readJsonLines(project, "dispatches.jsonl");
}

/** Counts `{use: …}` rows in the dispatch store. */
export function useCount(project: string): number {
  return readDispatchStore(project).filter((r) => typeof r.use === "string").length;
}

/** Builds the world (see {@link WorldOptions}). */
export async function world(name: string, opts: WorldOptions): Promise<World> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: `at-e2e-${name}-` }));
  const paths: WorldPaths = {
    dir,
    home: join(dir, "home"),
    keyDir: join(dir, "keys"),
    project: join(dir, "project"),
    scripts: join(dir, "scripts"),
    tmp: join(dir, "tmp"),
    scratch: join(dir, "scratch"),
  };
  for (const d of [paths.home, paths.project, paths.scripts, paths.tmp, paths.scratch]) {
    await Deno.mkdir(d);
  }
  const env: Record<string, string> = {
    HOME: paths.home,
    AGENTTEAMS_KEY_DIR: paths.keyDir,
    TMPDIR: paths.tmp,
    PATH: `${DENO_BIN_DIR}:/usr/bin:/bin`,
  };
  const genv = gitEnv(paths.home);
  const git = (...args: string[]) => sh(paths.project, GIT, args, genv);
  for (const [n, body] of Object.entries(opts.scripts ?? {})) {
    const text = typeof body === "function" ? body(paths) : body;
    await writeFileAt(join(paths.scripts, n), text, 0o755);
  }
  const brief = typeof opts.brief === "function" ? opts.brief(paths) : opts.brief;
  const files = opts.files ?? { "README.md": "hello\n", "src/a.txt": "hello\n" };
  for (const [rel, text] of Object.entries(files)) {
    await writeFileAt(join(paths.project, rel), text);
  }
  await writeFileAt(join(paths.project, "agentteams.jsonc"), JSON.stringify(brief, null, 2) + "\n");
  if (opts.git ?? true) {
    await git("init", "-q", "-b", "main");
    await git("add", "-A");
    await git("commit", "-q", "-m", "init");
  }

  let seq = 0;
  let shared: string | null = null;
  const cli = (args: string[], o: { env?: Record<string, string>; cwd?: string } = {}) =>
    runCli(args, { env: { ...env, ...(o.env ?? {}) }, cwd: o.cwd ?? dir, hangGuardMs: 120_000 });
  const w: World = {
    ...paths,
    env,
    cli,
    async dispatch(agent = "worker") {
      const r = await cli(["dispatch", "--agent", agent, "--project", paths.project]);
      assert.equal(r.code, 0, `dispatch failed: ${r.stderr}`);
      const nonce = r.stdout.trim();
      assert.match(nonce, /^[0-9a-f]{32}$/);
      return nonce;
    },
    async dispatchBeforeBriefChanged(agent) {
      const key = loadLedgerKey({ env, mode: "direct" });
      return (await issueDispatch(paths.project, key.hmac, agent)).nonce;
    },
    async sharedNonce() {
      shared ??= await w.dispatch();
      return shared;
    },
    async artifact(fields, nonce) {
      const a: JsonObject = {
        kind: "command-request",
        dispatch: fields.dispatch ?? nonce,
        argv: fields.argv,
        purpose: fields.purpose ?? "e2e test",
      };
      if (fields.cwd !== undefined) a.cwd = fields.cwd;
      if (fields.expected_writes !== undefined) a.expected_writes = fields.expected_writes;
      if (fields.stdin_from_content !== undefined) {
        a.stdin_from_content = fields.stdin_from_content;
      }
      if (fields.agent !== undefined) a.agent = fields.agent;
      const file = join(paths.scratch, `request-${++seq}.json`);
      await Deno.writeFile(file, enc.encode(JSON.stringify(a)));
      return file;
    },
    async run(fields, o = {}) {
      const nonce = fields.dispatch ?? o.nonce ?? await w.sharedNonce();
      const file = await w.artifact(fields, nonce);
      const rowsBefore = readRows(paths.project).length;
      const r = await cli(["run", file, "--project", paths.project, ...(o.flags ?? [])], {
        env: o.env,
        cwd: o.cwd,
      });
      return { ...r, rowsBefore, file };
    },
    rows: () => readRows(paths.project),
    async verifyOk() {
      const r = await cli(["ledger", "verify", "--project", paths.project, "--json"]);
      assert.equal(r.code, 0, `ledger verify failed:\n${r.stdout}\n${r.stderr}`);
      const out = JSON.parse(r.stdout.trim()) as { ok: boolean; problems: unknown[] };
      assert.equal(out.ok, true, r.stdout);
      assert.deepEqual(out.problems, [], r.stdout);
    },
    git,
    dispose: () => removeTree(dir),
  };
  if (opts.keys ?? true) {
    const r = await cli(["keys", "init"]);
    assert.equal(r.code, 0, `keys init failed: ${r.stderr}`);
  }
  return w;
}

/** Runs `fn` with a fresh world, disposing it afterwards. */
export async function withWorld(
  name: string,
  opts: WorldOptions,
  fn: (w: World) => Promise<void>,
): Promise<void> {
  const w = await world(name, opts);
  try {
    await fn(w);
  } finally {
    await w.dispose();
  }
}

/** The JSON object `--json` printed (the last stdout line). */
export function jsonOut(r: RunResult): Record<string, unknown> {
  const lines = r.stdout.trim().split("\n");
  assert.ok(lines.length >= 1 && lines[lines.length - 1] !== "", `no JSON on stdout: ${r.stderr}`);
  return JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
}

/** The rows a run appended. */
export function newRows(w: World, r: { rowsBefore: number }): Row[] {
  return w.rows().slice(r.rowsBefore);
}

/** What {@link assertRunRefused} checks besides the code. */
export interface RefusedExpect {
  /** The `agent` of the `run-request-refused` row. */
  agent: string | readonly string[];
  /** Paths (absolute) a run would have created: each must be absent. */
  absent?: readonly string[];
  /** Expected exit (default 1). */
  exit?: number;
  /** Run `ledger verify` (default true; a loop verifies once at its end instead). */
  verify?: boolean;
}

/**
 * Asserts a finished `agentteams run` refused with `code`: one refusal line, the exit code,
 * every marker absent, exactly one new ledger row (`run-request-refused` with the agent and the
 * code, never a `run-request-start`), and `ledger verify` passes.
 */
export async function assertRunRefused(
  w: World,
  r: RunOutcome,
  code: string,
  expect: RefusedExpect,
): Promise<Refusal> {
  const refusal = assertCliRefused(r, "run", code, expect.exit ?? 1);
  for (const p of expect.absent ?? []) {
    assert.equal(exists(p), false, `${p} exists: the refused command ran`);
  }
  const added = newRows(w, r);
  assert.equal(
    added.length,
    1,
    `exactly one new ledger row expected, got ${JSON.stringify(added, null, 1)}`,
  );
  const row = added[0];
  assert.equal(row.action, "run-request-refused", JSON.stringify(row));
  const agents = typeof expect.agent === "string" ? [expect.agent] : expect.agent;
  assert.ok(agents.includes(row.agent as string), `row agent ${row.agent}: ${JSON.stringify(row)}`);
  assert.equal(row.code, code, JSON.stringify(row));
  assert.equal(typeof row.reason, "string");
  if (expect.verify ?? true) await w.verifyOk();
  return refusal;
}

/**
 * Runs each request in turn (`worker`'s shared nonce) and asserts each refused with `code`
 * ({@link assertRunRefused}, agent `worker`, every `absent` marker absent; with `json`, also the
 * `--json` object, {@link assertJsonRefused}); then `ledger verify` once (unless `verify: false`).
 *
 * @example
 * ```ts ignore
 * await assertEachRefused(w, [{ argv: ["bash", "-c", "x"] }], "ARGV_NOT_ALLOWED", { absent: [m] });
 * ```
 */
export async function assertEachRefused(
  w: World,
  requests: readonly RequestFields[],
  code: string,
  opts: { absent: readonly string[]; json?: boolean; verify?: boolean },
): Promise<void> {
  for (const fields of requests) {
    const r = await w.run(fields, opts.json ? { flags: ["--json"] } : {});
    if (opts.json) assertJsonRefused(r, code);
    await assertRunRefused(w, r, code, { agent: "worker", absent: opts.absent, verify: false });
  }
  if (opts.verify ?? true) await w.verifyOk();
}

/** Asserts the `--json` refusal object of a run carries `code`. */
export function assertJsonRefused(r: RunResult, code: string): Record<string, unknown> {
  const out = jsonOut(r);
  assert.equal(out.ok, false, r.stdout);
  const err = out.error as Record<string, unknown>;
  assert.equal(err.code, code, r.stdout);
  return out;
}

/** A `#!/bin/sh` script body. */
export function shScript(body: string): string {
  return `#!/bin/sh\n${body}\n`;
}

/** Quotes a string for a POSIX shell script. */
export function q(s: string): string {
  return `'${s.replaceAll("'", `'"'"'`)}'`;
}

/** Sleeps (for "wait past the delay" checks, never a timing assertion). */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Reads a file's bytes or `null`. */
export function bytesOrNull(path: string): Uint8Array | null {
  try {
    return Deno.readFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** A brief with one agent (`worker`), its commands, and confined programs. */
export function workerBrief(
  p: WorldPaths,
  commands: JsonObject[],
  extra: {
    write?: string[];
    scopes?: string[];
    exec?: string[];
    top?: JsonObject;
  } = {},
): JsonObject {
  return {
    agent_policies: {
      worker: { write_scopes: extra.scopes ?? ["src/"], commands },
    },
    confined_programs: {
      worker: {
        exec: extra.exec ?? ["/usr/bin", "/bin", p.scripts],
        write: extra.write ?? ["src"],
      },
    },
    ...(extra.top ?? {}),
  };
}

/** How an in-process run ended, with the ledger row count just before it started. */
export interface InProcessOutcome {
  /** The result, when it succeeded. */
  result?: RunRequestResult;
  /** The typed error, when it failed. */
  error?: AgentTeamsError;
  /** Ledger rows before the run (after its nonce was issued). */
  rowsBefore: number;
}

/**
 * Calls `runRequest` in this process with the unconfined opt-out backend (the brief must allow
 * it), on `root` (default: the world's project), with a fresh nonce from the CLI: the view of a
 * command with the operator's own reach, where only the checks around it stand in its way.
 */
export async function runUnconfinedInProcess(
  w: World,
  fields: {
    argv: string[];
    purpose: string;
    cwd?: string;
    stdin_from_content?: { path: string; content: string };
  },
  opts: { root?: string; backend?: () => Promise<Backend>; gateRunner?: GateRunner } = {},
): Promise<InProcessOutcome> {
  const root = opts.root ?? w.project;
  const env = { HOME: w.home, AGENTTEAMS_KEY_DIR: w.keyDir };
  const key = loadLedgerKey({ env, mode: "direct" });
  const policy = withConfinedPrograms(
    await loadPolicy(join(root, "agentteams.jsonc"), { projectRoot: root }),
    { home: w.home, project: root },
  );
  assert.equal(policy.allowUnconfinedRuns, true);
  const r = await w.cli(["dispatch", "--agent", "worker", "--project", root]);
  assert.equal(r.code, 0, r.stderr);
  const nonce = r.stdout.trim();
  const rowsBefore = readRows(root).length;
  try {
    const result = await runRequest({ kind: "command-request", dispatch: nonce, ...fields }, {
      root,
      policy,
      hmac: key.hmac,
      backend: opts.backend ?? (() => Promise.resolve("unconfined-opt-out")),
      parentEnv: { PATH: "/usr/bin:/bin", HOME: w.home, LANG: "C.UTF-8" },
      home: w.home,
      keyDir: w.keyDir,
      gateRunner: opts.gateRunner ??
        (() => Promise.reject(new Error("no gate runs in these tests"))),
    });
    return { result, rowsBefore };
  } catch (e) {
    if (e instanceof AgentTeamsError) return { error: e, rowsBefore };
    throw e;
  }
}

/**
 * Runs a printed `deno run` line exactly, through a POSIX shell (it quotes the words that need it),
 * from the project, with the world's environment: its HOME, key dir and TMPDIR (which is not an
 * ancestor of the project).
 */
export function runPrinted(w: World, line: string): Promise<Deno.CommandOutput> {
  return new Deno.Command("/bin/sh", {
    args: ["-c", line],
    cwd: w.project,
    clearEnv: true,
    env: {
      ...w.env,
      PATH: `${DENO_BIN_DIR}:/usr/bin:/bin`,
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache/deno"),
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
}
