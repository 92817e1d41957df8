/**
 * Helpers for the runner's end-to-end tests: a world (tests/e2e/_run_helpers.ts) whose brief says
 * `write_policy: orchestrator-only`, the runner started as a real subprocess with exactly the
 * flags `agentteams permissions serve` prints (ready once `.agentteams-status/runner.json`
 * exists, stopped with SIGTERM, killed in any case), requests written into the queue by hand
 * (each with its own X25519 reply pair, so a test can open its result as the waiter would), and
 * the snapshot of the project minus what a served request legitimately changes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  baseChildEnv,
  DENO,
  exists as present,
  MAIN_TS,
  runCli,
  runDeno,
  type RunResult,
  sha256,
  snapshotTreeSync,
  type TreeSnapshot,
} from "../_helpers/mod.ts";
import { type JsonObject, sleep, type World, type WorldPaths } from "../e2e/_run_helpers.ts";
import {
  generateSealPair,
  publicB64,
  type SealPair,
  sealPublicFromPem,
} from "../../lib/crypto/x25519.ts";
import { type OpenedResult, openResult } from "../../lib/queue/result.ts";
import { sealRequest } from "../../lib/queue/request_seal.ts";
import { loadLedgerKey, runnerSealPair } from "../../lib/crypto/keys.ts";
import { completePolicy } from "../../lib/acts/session.ts";
import { type RunnerState, serveClaimed, type Served } from "../../lib/runner/serve_one.ts";
import { lazyBackend } from "../../lib/sandbox/backend_choice_io.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { MCP_RUNNER_TOOLS } from "../../lib/policy/brief_fields.ts";
import { importPublicPem, keyIdOfKey } from "../../lib/crypto/ed25519.ts";

export { present, sleep };

const dec = new TextDecoder();
const enc = new TextEncoder();

/**
 * The runner brief: `worker` (and `other`, for the nonce-of-another-agent case) may run `true`,
 * `echo WORD...`, `sleep N`, `cat` of a queue file, and `false`; orchestrator-only, confined.
 * No agent holds a tool of the runner's MCP server ({@link mcpRunnerBrief} gives `worker` every
 * one): an agent listed in `mcp_grants` is refused on the orchestrator's channel.
 */
export function runnerBrief(p: WorldPaths, extraCommands: JsonObject[] = []): JsonObject {
  const commands: JsonObject[] = [
    { prefix: ["true"] },
    { prefix: ["false"] },
    { prefix: ["echo"], args: ["[a-z0-9][a-z0-9-]*"], variadic: true },
    { prefix: ["sleep"], args: ["[0-9]"] },
    ...extraCommands,
  ];
  const confined = { exec: ["/usr/bin", "/bin", p.scripts], write: ["src"] };
  return {
    write_policy: "orchestrator-only",
    privilege_profile: "confined",
    agent_policies: {
      worker: { write_scopes: ["src/"], commands },
      other: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] },
    },
    confined_programs: { worker: confined, other: confined },
  };
}

/**
 * {@link runnerBrief} where `worker` holds every tool of the runner's MCP server (`mcp_grants`,
 * approval `direct`; `other` has no grant): `worker` then acts through its MCP server only.
 */
export function mcpRunnerBrief(p: WorldPaths, extraCommands: JsonObject[] = []): JsonObject {
  return {
    ...runnerBrief(p, extraCommands),
    mcp_grants: { worker: { tools: [...MCP_RUNNER_TOOLS], approval: "direct" } },
  };
}

/** The environment of every subprocess of a world (the base one plus the world's own). */
export function worldEnv(w: World, extra: Record<string, string> = {}): Record<string, string> {
  return { ...baseChildEnv(), ...w.env, ...extra };
}

/** The argv (after the deno binary) of `agentteams permissions <words...>`, run in the world. */
export async function permissionsArgs(w: World, words: string[]): Promise<string[]> {
  const r = await w.cli(["permissions", ...words]);
  assert.equal(r.code, 0, `permissions ${words.join(" ")} failed: ${r.stderr}`);
  const line = r.stdout.trim().split("\n").filter((l) => l !== "").at(-1) ?? "";
  const tokens = line.split(" ");
  assert.ok(tokens.length > 3, `no command line printed: ${r.stdout}`);
  assert.match(tokens[0], /\/deno$/, line);
  assert.equal(tokens[1], "run", line);
  assert.ok(!tokens.includes("-A") && !tokens.includes("--allow-all"), line);
  assert.ok(tokens.includes(MAIN_TS), `${MAIN_TS} not on the line: ${line}`);
  return tokens.slice(1);
}

/** The paths a `--allow-<what>=` flag of an argv grants (empty when absent). */
export function allowList(args: readonly string[], what: string): string[] {
  const flag = args.find((a) => a.startsWith(`--allow-${what}=`));
  return flag === undefined ? [] : flag.slice(`--allow-${what}=`.length).split(",");
}

/** Whether a Deno read/write grant of `entry` covers `path` (the entry or a folder above it). */
export function grantCovers(entry: string, path: string): boolean {
  return path === entry || path.startsWith(entry.endsWith("/") ? entry : entry + "/");
}

/** A running runner subprocess. */
export interface Runner {
  /** Its pid (the deno process; also the `pid` of runner.json). */
  readonly pid: number;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** Resolves when it exits. */
  readonly exited: Promise<Deno.CommandStatus>;
  /** SIGTERM, then the exit (SIGKILL after a generous bound). */
  stop(): Promise<Deno.CommandStatus>;
  /** SIGKILL now, then the exit. */
  kill9(): Promise<Deno.CommandStatus>;
  /** The peak resident set (VmHWM, kB) from /proc/<pid>/status while it runs. */
  peakRssKb(): number;
}

/** Starts `agentteams serve` (no wait); `args` from {@link permissionsArgs}. */
export function spawnServe(
  w: World,
  args: readonly string[],
  env: Record<string, string> = {},
): Runner {
  const child = new Deno.Command(DENO, {
    args: [...args],
    cwd: w.dir,
    clearEnv: true,
    env: worldEnv(w, env),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let err = "";
  const reading = (async () => {
    for await (const c of child.stderr.pipeThrough(new TextDecoderStream())) err += c;
  })();
  const exited = child.status.then(async (s) => {
    await reading;
    return s;
  });
  let done = false;
  exited.then(() => done = true);
  const signal = async (sig: Deno.Signal) => {
    if (!done) {
      try {
        child.kill(sig);
      } catch { /* exited meanwhile */ }
    }
    return await exited;
  };
  return {
    pid: child.pid,
    stderr: () => err,
    exited,
    async stop() {
      if (done) return await exited;
      const t = setTimeout(() => signal("SIGKILL"), 20_000);
      try {
        return await signal("SIGTERM");
      } finally {
        clearTimeout(t);
      }
    },
    kill9: () => signal("SIGKILL"),
    peakRssKb() {
      const s = Deno.readTextFileSync(`/proc/${child.pid}/status`);
      const m = /^VmHWM:\s+(\d+) kB$/m.exec(s);
      assert.ok(m !== null, s);
      return Number(m[1]);
    },
  };
}

/** Waits until `cond()` holds (polling), failing with `what` after a generous bound. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  boundMs = 60_000,
): Promise<void> {
  const end = Date.now() + boundMs;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`still waiting after ${boundMs / 1000} s: ${what}`);
    await sleep(50);
  }
}

/**
 * Claude Code's `sandbox` values `doctor` and `serve` require with the trust roots' rules: the
 * sandbox on, no fallback to running unsandboxed, no `dangerouslyDisableSandbox` rerun (probe
 * 22c C6: without it the deny rules do not bind Bash).
 */
export const OPERATOR_SANDBOX: { readonly [key: string]: boolean } = Object.freeze({
  enabled: true,
  failIfUnavailable: true,
  allowUnsandboxedCommands: false,
});

/**
 * The Claude Code shared project settings `doctor` asks for (the key dir's rule goes in the local
 * file: the world's key dir lies outside its HOME, {@link operatorLocalSettings}): the runner's
 * folders, the trust roots' write-deny rules without which `serve` refuses to start
 * (`references/`, `.claude/`, the brief), and the sandbox block that makes them bind Bash.
 */
export const OPERATOR_SETTINGS: string = JSON.stringify(
  {
    permissions: {
      deny: [
        "Read(./.agentteams/**)",
        "Edit(./.agentteams/**)",
        "Edit(./.agentteams-status/**)",
        "Edit(./references/**)",
        "Edit(./.claude/**)",
        "Edit(./.git/config)",
        "Edit(./.mcp.json)",
        "Edit(./agentteams.jsonc)",
        "Edit(./agentteams.json)",
      ],
    },
    sandbox: OPERATOR_SANDBOX,
  },
  null,
  2,
) + "\n";

/**
 * The local settings file doctor asks for in a world: the key dir's read-deny rule, absolute
 * since the key dir lies outside HOME (an error without it, under the trust roots' rules).
 */
export function operatorLocalSettings(w: Pick<WorldPaths, "keyDir">): string {
  return JSON.stringify({ permissions: { deny: [`Read(/${w.keyDir}/**)`] } }, null, 2) + "\n";
}

/** A way the sandbox settings leave Bash outside the deny rules (probe 22c C6). */
export interface SandboxCase {
  /** What is wrong, for the test's message. */
  readonly name: string;
  /** The shared file's `sandbox` block (`null`: none). */
  readonly shared: Record<string, unknown> | null;
  /** The local file's `sandbox` block, beside the key dir's rule (absent: none). */
  readonly local?: Record<string, unknown>;
  /** The file the finding names. */
  readonly file: ".claude/settings.json" | ".claude/settings.local.json";
  /** The `sandbox` key it is about. */
  readonly key: string;
  /** Whether the finding names a line of `file` (false: the key is set nowhere). */
  readonly at: boolean;
}

/** Every way {@link SandboxCase} names: absent, each value the wrong way, a local override, excluded commands. */
export const SANDBOX_CASES: readonly SandboxCase[] = [
  {
    name: "no sandbox block",
    shared: null,
    file: ".claude/settings.json",
    key: "enabled",
    at: false,
  },
  {
    name: "enabled: false",
    shared: { ...OPERATOR_SANDBOX, enabled: false },
    file: ".claude/settings.json",
    key: "enabled",
    at: true,
  },
  {
    name: "failIfUnavailable: false",
    shared: { ...OPERATOR_SANDBOX, failIfUnavailable: false },
    file: ".claude/settings.json",
    key: "failIfUnavailable",
    at: true,
  },
  {
    name: "allowUnsandboxedCommands: true",
    shared: { ...OPERATOR_SANDBOX, allowUnsandboxedCommands: true },
    file: ".claude/settings.json",
    key: "allowUnsandboxedCommands",
    at: true,
  },
  {
    name: "enabled in the shared file, false in the local one",
    shared: OPERATOR_SANDBOX,
    local: { enabled: false },
    file: ".claude/settings.local.json",
    key: "enabled",
    at: true,
  },
  {
    name: "allowUnsandboxedCommands false in the shared file, true in the local one",
    shared: OPERATOR_SANDBOX,
    local: { allowUnsandboxedCommands: true },
    file: ".claude/settings.local.json",
    key: "allowUnsandboxedCommands",
    at: true,
  },
  {
    name: "excludedCommands non-empty",
    shared: { ...OPERATOR_SANDBOX, excludedCommands: ["git"] },
    file: ".claude/settings.json",
    key: "excludedCommands",
    at: true,
  },
  {
    name: "excludedCommands empty in the shared file, non-empty in the local one",
    shared: { ...OPERATOR_SANDBOX, excludedCommands: [] },
    local: { excludedCommands: ["docker"] },
    file: ".claude/settings.local.json",
    key: "excludedCommands",
    at: true,
  },
];

/**
 * Writes a {@link SandboxCase}'s settings (every deny rule doctor asks for, the case's sandbox
 * blocks; `brief`: the brief's name in the project) and returns the finding's place as doctor prints it: `<file>:<line>:<column>` of the
 * key's value, or just the file when the key is set nowhere.
 */
export function writeSandboxCase(
  p: Pick<WorldPaths, "project" | "keyDir">,
  c: SandboxCase,
  brief = "agentteams.jsonc",
): string {
  const shared = JSON.parse(OPERATOR_SETTINGS) as {
    permissions: { deny: string[] };
    sandbox?: unknown;
  };
  // Both default names are in OPERATOR_SETTINGS; a brief by another name gets its own rule.
  const rule = `Edit(./${brief})`;
  if (!shared.permissions.deny.includes(rule)) shared.permissions.deny.push(rule);
  delete shared.sandbox;
  const texts: Record<string, string> = {
    ".claude/settings.json": JSON.stringify(
      { ...shared, ...(c.shared === null ? {} : { sandbox: c.shared }) },
      null,
      2,
    ) + "\n",
    ".claude/settings.local.json": JSON.stringify(
      {
        permissions: { deny: [`Read(/${p.keyDir}/**)`] },
        ...(c.local === undefined ? {} : { sandbox: c.local }),
      },
      null,
      2,
    ) + "\n",
  };
  Deno.mkdirSync(join(p.project, ".claude"), { recursive: true });
  for (const [rel, text] of Object.entries(texts)) {
    Deno.writeTextFileSync(join(p.project, rel), text);
  }
  if (!c.at) return c.file;
  const lines = texts[c.file].split("\n");
  const i = lines.findIndex((l) => l.includes(`"${c.key}": `));
  assert.ok(i >= 0, `${c.key} in ${c.file}`);
  return `${c.file}:${i + 1}:${lines[i].indexOf(`"${c.key}": `) + c.key.length + 5}`;
}

/**
 * Writes {@link OPERATOR_SETTINGS} as the world's `.claude/settings.json` and
 * {@link operatorLocalSettings} as its `.claude/settings.local.json`, unless the test wrote
 * settings of its own: the operator's set-up before `serve`.
 */
export async function denySessions(w: WorldPaths): Promise<void> {
  const file = join(w.project, ".claude", "settings.json");
  const local = join(w.project, ".claude", "settings.local.json");
  if (present(file) || present(local)) return;
  await Deno.mkdir(join(w.project, ".claude"), { recursive: true });
  await Deno.writeTextFile(file, OPERATOR_SETTINGS);
  await Deno.writeTextFile(local, operatorLocalSettings(w));
}

/**
 * Starts the runner with the flags `permissions serve` prints and waits until its liveness file
 * exists. The caller stops it (in `finally`: {@link withRunner} does that).
 */
export async function startRunner(w: World, env: Record<string, string> = {}): Promise<Runner> {
  await denySessions(w);
  const args = await permissionsArgs(w, ["serve", "--project", w.project]);
  const r = spawnServe(w, args, env);
  const json = queuePaths(w.project).runnerJson;
  let gone = false;
  r.exited.then(() => gone = true);
  try {
    // Its own status (a runner that stopped itself before leaves one saying why).
    const mine = () => {
      try {
        const v = JSON.parse(Deno.readTextFileSync(json));
        return v.pid === r.pid && v.stopped === undefined;
      } catch {
        return false;
      }
    };
    await until(() => gone || mine(), "runner.json");
    assert.ok(!gone, `the runner exited at start: ${r.stderr()}`);
  } catch (e) {
    await r.kill9();
    throw e;
  }
  return r;
}

/** Runs `fn` with a started runner; stops it (SIGTERM) after, killing it if that fails. */
export async function withRunner<T>(w: World, fn: (r: Runner) => Promise<T>): Promise<T> {
  const r = await startRunner(w);
  try {
    return await fn(r);
  } finally {
    const s = await r.stop();
    // A runner stopped by SIGTERM ends its loop and exits 0.
    assert.equal(s.code, 0, `the runner did not stop cleanly: ${r.stderr()}`);
  }
}

/** `agentteams serve` run to its end with the printed flags (for the refusals at start). */
export async function serveToEnd(
  w: World,
  env: Record<string, string> = {},
  extra: string[] = [],
): Promise<RunResult> {
  await denySessions(w);
  const args = await permissionsArgs(w, ["serve", "--project", w.project]);
  return await runDeno([...args, ...extra], {
    env: { ...w.env, ...env },
    cwd: w.dir,
    hangGuardMs: 60_000,
  });
}

/** Runs the CLI in the world with `input` on stdin (for `agentteams wait`). */
export async function cliWithStdin(w: World, args: string[], input: string): Promise<RunResult> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", MAIN_TS, ...args],
    cwd: w.dir,
    clearEnv: true,
    env: worldEnv(w),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(enc.encode(input));
  await writer.close();
  const out = await child.output();
  return {
    code: out.code,
    signal: out.signal,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/**
 * Runs `agentteams <words...>` with exactly the flags `agentteams permissions <words...>` prints
 * (started now, awaited by the caller), `input` on stdin.
 */
export async function underPrinted(
  w: World,
  words: string[],
  input = "",
  extra: string[] = [],
): Promise<{ done: Promise<RunResult> }> {
  const args = [...await permissionsArgs(w, words), ...extra];
  const child = new Deno.Command(DENO, {
    args,
    cwd: w.dir,
    clearEnv: true,
    env: worldEnv(w),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(enc.encode(input));
  await writer.close();
  return {
    done: child.output().then((o) => ({
      code: o.code,
      signal: o.signal,
      stdout: dec.decode(o.stdout),
      stderr: dec.decode(o.stderr),
    })),
  };
}

/** Starts a CLI process in the world without waiting (two waiters at once, a waiter to forge). */
export function spawnCli(w: World, args: string[]): Promise<RunResult> {
  return runCli(args, { env: w.env, cwd: w.dir, hangGuardMs: 120_000 });
}

/** A request written by hand: its id, its reply pair, the SHA-256 of its bytes. */
export interface HandRequest {
  readonly id: string;
  readonly pair: SealPair;
  readonly sha256: string;
  readonly path: string;
}

/** A fresh request id (32 hex), or one starting with `prefix` (to fix the serving order). */
export function requestId(prefix = ""): string {
  const hex = crypto.getRandomValues(new Uint8Array(16)).toHex();
  return (prefix + hex).slice(0, 32);
}

/** A request's bytes made by hand (not yet in the queue), with its id and reply pair. */
export interface MadeRequest {
  readonly id: string;
  readonly pair: SealPair;
  readonly bytes: Uint8Array;
  readonly sha256: string;
}

/**
 * A request's bytes: `body` (with the reply key of a fresh pair added unless `replyKey: false`)
 * sealed to the world's runner key for its id and channel as a waiter seals it, or as plain JSON
 * (`plain: true`, the unsealed form every runner refuses), or raw bytes.
 */
export async function makeRequest(
  w: World,
  body: Record<string, unknown> | Uint8Array,
  opts: {
    id?: string;
    replyKey?: boolean;
    plain?: boolean;
    channel?: "orchestrator" | "mcp";
  } = {},
): Promise<MadeRequest> {
  const id = opts.id ?? requestId();
  const pair = await generateSealPair();
  let bytes: Uint8Array;
  if (body instanceof Uint8Array) bytes = body;
  else if (opts.plain === true || opts.replyKey === false) {
    bytes = enc.encode(JSON.stringify(
      opts.replyKey === false ? body : { ...body, reply_key: publicB64(pair.publicRaw) },
    ));
  } else {
    bytes = await sealRequest(body, {
      waiter: pair,
      runnerPublic: (await runnerSealPair(w.env)).publicRaw,
      id,
      channel: opts.channel ?? "orchestrator",
    });
  }
  return { id, pair, bytes, sha256: sha256(bytes) };
}

/** The queue path of a request id in a channel. */
export function queuedPath(
  w: World,
  id: string,
  channel: "orchestrator" | "mcp" = "orchestrator",
): string {
  const p = queuePaths(w.project);
  return join(channel === "mcp" ? p.mcpRequests : p.requests, `${id}.json`);
}

/**
 * Writes a request into the queue by hand ({@link makeRequest}): through a temp name outside the
 * queue then a rename, unless `direct` (written in place under its final name: a half-written
 * file when the bytes are cut).
 */
export async function handRequest(
  w: World,
  body: Record<string, unknown> | Uint8Array,
  opts: {
    channel?: "orchestrator" | "mcp";
    id?: string;
    replyKey?: boolean;
    plain?: boolean;
    direct?: boolean;
  } = {},
): Promise<HandRequest> {
  const m = await makeRequest(w, body, opts);
  const path = queuedPath(w, m.id, opts.channel);
  if (opts.direct) Deno.writeFileSync(path, m.bytes);
  else {
    const tmp = join(w.scratch, `${m.id}.tmp`);
    Deno.writeFileSync(tmp, m.bytes);
    Deno.renameSync(tmp, path);
  }
  return { id: m.id, pair: m.pair, sha256: m.sha256, path };
}

/** The result file path of a request id. */
export function resultPath(w: World, id: string): string {
  return join(queuePaths(w.project).results, `${id}.json`);
}

/** Waits for the result file of `id` and returns its text. */
export async function resultOf(w: World, id: string, boundMs = 60_000): Promise<string> {
  const path = resultPath(w, id);
  await until(() => present(path), `the result of ${id}`, boundMs);
  // The runner writes results atomically (rename): present means complete.
  return Deno.readTextFileSync(path);
}

/** The runner's public key (raw) from the world's key dir. */
export async function runnerPublic(w: World): Promise<Uint8Array> {
  return await sealPublicFromPem(Deno.readTextFileSync(join(w.keyDir, "runner-x25519.pub.pem")));
}

/** Opens a hand request's result as its waiter would (refusing one not authentic). */
export async function openAs(w: World, req: HandRequest, text: string): Promise<OpenedResult> {
  return await openResult(text, {
    id: req.id,
    requestBytesSha256: req.sha256,
    own: req.pair,
    runnerPublic: await runnerPublic(w),
  });
}

/** The refusal code a result's body carries (null for a success). */
export function resultCode(o: OpenedResult): string | null {
  if (o.body.ok) return null;
  return String((o.body.error as Record<string, unknown> | undefined)?.code);
}

/**
 * The liveness file and the temporary file each beat writes it through
 * (`.runner.json.<random>.tmp`): a snapshot taken while the runner serves may catch either.
 */
export function isLivenessWrite(path: string): boolean {
  return path.endsWith("/runner.json") || /\/\.runner\.json\.[0-9a-f]+\.tmp$/.test(path);
}

/** The project's paths that change whenever the runner serves anything at all. */
export function ignoredByState(w: World): (path: string) => boolean {
  const p = queuePaths(w.project);
  const moving = [
    p.runnerJson,
    join(p.state, "proposal-ledger.jsonl"),
    join(p.state, "proposal-ledger.head"),
    join(p.state, "anchors.json"),
    // Made the first time the runner takes an ack to check it, emptied again after.
    p.ackClaimed,
  ];
  const below = [p.results, p.claimed, p.requests, p.mcpRequests, p.acks, p.ackClaimed];
  return (path) =>
    moving.includes(path) || isLivenessWrite(path) ||
    below.some((d) => path.startsWith(d + "/")) || /\/\.[^/]*\.tmp[^/]*$/.test(path);
}

/**
 * The project (and the world's scratch and home) without what serving legitimately moves (the
 * liveness file, the ledger and its head, which the tests check row by row, and the queue's and
 * results' entries, checked by name).
 */
export function projectState(w: World): TreeSnapshot {
  return snapshotTreeSync([w.project, w.home, w.keyDir], ignoredByState(w));
}

/** Ledger rows (parsed) of the world's project. */
export function ledgerRows(w: World): Record<string, unknown>[] {
  return w.rows();
}

/** Names in a directory, sorted (empty when missing). */
export function names(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

/** Every file's text under a directory tree, concatenated (a grep of the whole folder). */
export function allText(dir: string): string {
  let out = "";
  const visit = (p: string) => {
    const st = Deno.lstatSync(p);
    if (st.isDirectory) { for (const n of names(p)) visit(join(p, n)); }
    else if (st.isFile) out += Deno.readTextFileSync(p) + "\n";
  };
  if (present(dir)) visit(dir);
  return out;
}

/** `ledger verify --direct --json` (the operator's own, no runner needed) passes. */
export async function verifyDirect(w: World): Promise<void> {
  const r = await w.cli(["ledger", "verify", "--project", w.project, "--json", "--direct"]);
  assert.equal(r.code, 0, `ledger verify failed:\n${r.stdout}\n${r.stderr}`);
  const out = JSON.parse(r.stdout.trim()) as { ok: boolean; problems: unknown[] };
  assert.equal(out.ok, true, r.stdout);
  assert.deepEqual(out.problems, [], r.stdout);
}

/**
 * Installs the holder's team dir for grants: the roster (alice) and the operator's Ed25519 verify
 * key (from `keys init`) under its key id.
 */
export async function installTeamDir(w: World): Promise<void> {
  const team = join(w.project, ".agentteams", "team", "references");
  await Deno.mkdir(join(team, "authorized-verify-keys"), { recursive: true });
  await Deno.writeTextFile(join(team, "security-approvers.txt"), "alice\n");
  const pem = await Deno.readTextFile(join(w.keyDir, "operator-ed25519.pub.pem"));
  const id = await keyIdOfKey(await importPublicPem(pem));
  await Deno.writeTextFile(join(team, "authorized-verify-keys", `${id}.pub.pem`), pem);
}

/**
 * The runner's state in process over world `w`, as `serve` builds it: the brief completed, the
 * world's key dir, a confined backend; `extra` sets what a test varies (e.g. `mcpTimeoutCapS`).
 */
export async function inProcessRunner(
  w: World,
  extra: Partial<RunnerState> = {},
): Promise<RunnerState> {
  const env: Record<string, string> = { ...w.env, PATH: "/usr/bin:/bin" };
  const policy = await completePolicy(w.project, join(w.project, "agentteams.jsonc"), env);
  return {
    root: w.project,
    env,
    home: env.HOME,
    key: loadLedgerKey({ env, mode: "runner" }),
    seal: await runnerSealPair(env),
    policy,
    backend: lazyBackend(policy, { unconfined: false, runner: true }),
    now: () => new Date(),
    ...extra,
  };
}

/**
 * {@link runnerBrief} with `stager`, which stages every change and deletion through its MCP
 * server (`approval: "staged"`); `worker` has no grant.
 */
export function stagerBrief(p: Parameters<typeof runnerBrief>[0]): JsonObject {
  const b = runnerBrief(p) as { agent_policies: JsonObject; confined_programs: JsonObject };
  return {
    ...b,
    agent_policies: {
      ...b.agent_policies,
      stager: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] },
    },
    confined_programs: {
      ...b.confined_programs,
      stager: (b.confined_programs as Record<string, JsonObject>).worker,
    },
    mcp_grants: { stager: { tools: ["write_file", "delete_file"], approval: "staged" } },
  } as JsonObject;
}

/** Serves one request written by hand (its body) on `channel`, as the runner claims it. */
export async function serveWritten(
  s: RunnerState,
  w: World,
  body: Record<string, unknown>,
  channel: "orchestrator" | "mcp" = "orchestrator",
): Promise<Served> {
  const m = await makeRequest(w, body, { channel });
  const path = join(w.dir, `${m.id}.json`);
  Deno.writeFileSync(path, m.bytes);
  return await serveClaimed(s, path, m.id, channel);
}
