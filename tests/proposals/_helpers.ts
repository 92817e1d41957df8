/**
 * Helpers for the proposal tests: a real project (a git repository with a commit, a brief, keys
 * made by `agentteams keys init`, nonces from `agentteams dispatch`), artifacts written outside
 * the project, `agentteams apply` run as a real subprocess with absolute paths, and the checks
 * every adversarial case makes: the refusal code (stderr line and `--json` agree), the bytes of
 * every file unchanged (the whole sandbox: project with `.git`, the outside directory, HOME and
 * the key dir), exactly the expected ledger row, and a ledger that still verifies.
 *
 * Nothing here performs an apply in-process: every real write happens in a child process, so
 * real writes (the anchored helper in `lib/fs/anchored_write.ts`) are exercised through the CLI.
 *
 * @module
 */
import assert from "node:assert/strict";
import { parsePolicy } from "../../lib/policy/parse.ts";
import type { Policy } from "../../lib/policy/types.ts";
import {
  confinedGateRunner,
  type GateRunner,
  type GateRunnerOptions,
} from "../../lib/proposals/gates.ts";
import { dirname, join } from "node:path";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import {
  runCli,
  type RunResult,
  type Sandbox,
  sandbox,
  sha256,
  snapshotTree,
  stateFiles,
  type TreeEntry,
} from "../_helpers/mod.ts";
import { GIT, gitEnv, sh } from "../_helpers/git.ts";
import { assertCliRefused } from "../_helpers/assert.ts";

export { sha256 };

const enc = new TextEncoder();

/** A JSON value as artifacts and rows hold them. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A parsed ledger row. */
export type Row = Record<string, Json>;

/** One test project and the world around it. */
export interface Project {
  /** The sandbox (HOME, key dir, project, all in one temp dir). */
  readonly sb: Sandbox;
  /** The project root (absolute). */
  readonly root: string;
  /** A directory outside the project, for escape attempts. */
  readonly outside: string;
  /** Where artifacts are written (outside the project, excluded from snapshots). */
  readonly artifacts: string;
  /** `{HOME, AGENTTEAMS_KEY_DIR}`. */
  readonly env: Record<string, string>;
  /** Removes everything. */
  dispose(): Promise<void>;
}

/** A file to create in a new project. */
export interface FileSpec {
  /** Content. */
  readonly content: string | Uint8Array;
  /** Mode (default 0644). */
  readonly mode?: number;
}

/** Options of {@link makeProject}. */
export interface ProjectOptions {
  /** The brief's text, or a function of the paths (to embed absolute gate arguments). */
  readonly brief:
    | string
    | ((p: { root: string; home: string; outside: string; keyDir: string }) => string);
  /** The brief's project-relative path (default `agentteams.jsonc`). */
  readonly briefRel?: string;
  /** Files by project-relative path, committed to git. */
  readonly files?: Readonly<Record<string, string | Uint8Array | FileSpec>>;
  /** Run `agentteams keys init` (default true). */
  readonly keys?: boolean;
}

/** Writes `content` at `path`, creating parents, with `mode` (chmod, not umask). */
export async function putFile(
  path: string,
  content: string | Uint8Array,
  mode = 0o644,
): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeFile(path, typeof content === "string" ? enc.encode(content) : content);
  await Deno.chmod(path, mode);
}

/**
 * A project: files and brief written, `git init` and one commit, then (by default) the operator
 * keys created with the real CLI.
 */
export async function makeProject(prefix: string, opts: ProjectOptions): Promise<Project> {
  const sb = await sandbox(`prop-${prefix}`);
  const root = sb.project;
  const outside = join(sb.dir, "outside");
  const artifacts = join(sb.dir, "artifacts");
  await Deno.mkdir(outside);
  await Deno.mkdir(artifacts);
  const p: Project = {
    sb,
    root,
    outside,
    artifacts,
    env: sb.env,
    dispose: () => sb.dispose(),
  };
  try {
    for (const [rel, spec] of Object.entries(opts.files ?? {})) {
      const s: FileSpec = typeof spec === "string" || spec instanceof Uint8Array
        ? { content: spec }
        : spec;
      await putFile(join(root, rel), s.content, s.mode ?? 0o644);
    }
    const brief = typeof opts.brief === "string"
      ? opts.brief
      : opts.brief({ root, home: sb.home, outside, keyDir: sb.keyDir });
    await putFile(join(root, opts.briefRel ?? "agentteams.jsonc"), brief);
    const env = gitEnv(sb.home);
    await sh(root, GIT, ["-c", "init.defaultBranch=main", "init", "-q"], env);
    await sh(root, GIT, ["add", "-A"], env);
    await sh(root, GIT, ["commit", "-q", "-m", "initial"], env);
    if (opts.keys ?? true) {
      const r = await runCli(["keys", "init"], { env: sb.env, cwd: root });
      assert.equal(r.code, 0, `keys init failed: ${r.stderr}`);
    }
  } catch (e) {
    await sb.dispose();
    throw e;
  }
  return p;
}

/** Issues a nonce with `agentteams dispatch --agent AGENT`. */
export async function dispatch(p: Project, agent: string): Promise<string> {
  const r = await runCli(["dispatch", "--agent", agent, "--project", p.root], {
    env: p.env,
    cwd: p.root,
  });
  assert.equal(r.code, 0, `dispatch failed: ${r.stderr}`);
  const nonce = r.stdout.trim();
  assert.match(nonce, /^[0-9a-f]{32}$/, `dispatch printed ${JSON.stringify(r.stdout)}`);
  return nonce;
}

/**
 * Issues a nonce with the store's own primitive, as one issued before the brief changed (its
 * agent dropped, or the brief broken since): `agentteams dispatch` reads the brief and would
 * refuse it, so an act must still check the agent itself.
 */
export async function dispatchBeforeBriefChanged(p: Project, agent: string): Promise<string> {
  const key = loadLedgerKey({ env: p.env, mode: "direct" });
  return (await issueDispatch(p.root, key.hmac, agent)).nonce;
}

let artifactSeq = 0;

/** Writes an artifact (an object as JSON, or raw text) outside the project; returns its path. */
export async function writeArtifact(p: Project, artifact: Json | string): Promise<string> {
  const path = join(p.artifacts, `artifact-${++artifactSeq}.json`);
  await Deno.writeTextFile(
    path,
    typeof artifact === "string" ? artifact : JSON.stringify(artifact),
  );
  return path;
}

/** Options of {@link apply}. */
export interface ApplyRunOptions {
  /** `--dry-run`. */
  readonly dryRun?: boolean;
  /** `--brief` (absolute). */
  readonly brief?: string;
  /** Replaces the project's environment. */
  readonly env?: Record<string, string>;
  /** Hang guard for the child. */
  readonly hangGuardMs?: number;
}

/** Runs `agentteams apply FILE --project ROOT --json` (all paths absolute, cwd the project). */
export async function apply(
  p: Project,
  artifact: Json | string,
  opts: ApplyRunOptions = {},
): Promise<RunResult> {
  const file = await writeArtifact(p, artifact);
  return await applyFile(p, file, opts);
}

/** Runs `agentteams apply` on an artifact file that already exists. */
export function applyFile(
  p: Project,
  file: string,
  opts: ApplyRunOptions = {},
): Promise<RunResult> {
  const args = ["apply", file, "--project", p.root, "--json"];
  if (opts.dryRun) args.push("--dry-run");
  if (opts.brief !== undefined) args.push("--brief", opts.brief);
  return runCli(args, { env: opts.env ?? p.env, cwd: p.root, hangGuardMs: opts.hangGuardMs });
}

/** The one JSON object an `apply --json` printed. */
export function jsonOut(r: RunResult): Record<string, Json> {
  const lines = r.stdout.split("\n").filter((l) => l.trim() !== "");
  assert.equal(lines.length, 1, `one JSON line expected on stdout, got:\n${r.stdout}\n${r.stderr}`);
  const v = JSON.parse(lines[0]) as Json;
  assert.ok(typeof v === "object" && v !== null && !Array.isArray(v), lines[0]);
  return v;
}

/** Asserts a successful apply and returns its JSON output. */
export function assertApplied(r: RunResult): Record<string, Json> {
  assert.equal(r.code, 0, `apply failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  const out = jsonOut(r);
  assert.equal(out.ok, true, r.stdout);
  return out;
}

/**
 * Asserts `apply --json` refused with `code`: exactly one stderr refusal line with that code,
 * exit 1, and the JSON error carries the same code.
 */
export function assertApplyRefused(r: RunResult, code: string): void {
  assert.equal(r.signal, null, `the child was killed by ${r.signal} (a hang?): ${r.stderr}`);
  assertCliRefused(r, "apply", code);
  const out = jsonOut(r);
  assert.equal(out.ok, false, r.stdout);
  const err = out.error as Record<string, Json>;
  assert.equal(err.code, code, r.stdout);
}

// ---------------------------------------------------------------------------------------------
// State: ledger rows, dispatch store, snapshots

/** A file's text, `""` when it does not exist. */
async function textOrEmpty(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "";
    throw e;
  }
}

/** The ledger's lines (without newlines); empty when there is no ledger. */
export async function ledgerLines(root: string): Promise<string[]> {
  const text = await textOrEmpty(stateFiles(root).ledger);
  assert.ok(text === "" || text.endsWith("\n"), "the ledger ends in a torn line");
  return text.split("\n").slice(0, -1);
}

/** The ledger's rows, parsed. */
export async function ledgerRows(root: string): Promise<Row[]> {
  return (await ledgerLines(root)).map((l) => JSON.parse(l) as Row);
}

/** The dispatch store's lines. */
export async function storeLines(root: string): Promise<string[]> {
  return (await textOrEmpty(stateFiles(root).dispatches)).split("\n").slice(0, -1);
}

/** Counts of `{attempt}` and `{use}` rows in store lines. */
export function counts(lines: readonly string[]): { attempts: number; uses: number } {
  let attempts = 0;
  let uses = 0;
  for (const l of lines) {
    const o = JSON.parse(l) as Row;
    if ("attempt" in o) attempts++;
    if ("use" in o) uses++;
  }
  return { attempts, uses };
}

/** Verifies the ledger in-process (a read-only check) and asserts it is clean. */
export function assertLedgerVerifies(p: Project, env: Record<string, string> = p.env): void {
  const key = loadLedgerKey({ env, mode: "direct" });
  const report = verifyLedgerAt(p.root, key);
  assert.ok(report.ok, `ledger does not verify: ${JSON.stringify(report.problems)}`);
}

/** Runs `agentteams ledger verify` and asserts it passes. */
export async function assertCliLedgerVerifies(p: Project): Promise<void> {
  const r = await runCli(["ledger", "verify", "--project", p.root, "--json"], {
    env: p.env,
    cwd: p.root,
  });
  assert.equal(r.code, 0, `ledger verify failed:\n${r.stdout}\n${r.stderr}`);
  const out = jsonOut(r);
  assert.equal(out.ok, true, r.stdout);
}

/** Everything on disk that an apply could touch: the sandbox minus the artifacts dir. */
export async function snapshot(p: Project): Promise<Map<string, TreeEntry>> {
  const all = await snapshotTree(p.sb.dir);
  for (const k of [...all.keys()]) {
    if (k === p.artifacts || k.startsWith(p.artifacts + "/")) all.delete(k);
  }
  return all;
}

/** The state files an apply may change (the rest must keep every byte). */
export function stateSet(root: string): Set<string> {
  const s = stateFiles(root);
  return new Set([s.ledger, s.head, s.anchors, s.dispatches]);
}

/**
 * Asserts that nothing but the listed paths changed between two snapshots (every other file,
 * directory, symlink and mode identical), naming the first difference.
 */
export function assertOnlyChanged(
  before: Map<string, TreeEntry>,
  after: Map<string, TreeEntry>,
  allowed: ReadonlySet<string>,
  what = "tree",
): void {
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  for (const k of keys) {
    if (allowed.has(k)) continue;
    assert.deepEqual(after.get(k), before.get(k), `${what}: ${k} changed`);
  }
}

/** The state of a project before an act, to compare with after it. */
export interface Before {
  /** The snapshot. */
  readonly tree: Map<string, TreeEntry>;
  /** Ledger lines. */
  readonly ledger: string[];
  /** Dispatch store lines. */
  readonly store: string[];
}

/** Records {@link Before}. */
export async function before(p: Project): Promise<Before> {
  return {
    tree: await snapshot(p),
    ledger: await ledgerLines(p.root),
    store: await storeLines(p.root),
  };
}

/** What a refusal is expected to record. */
export interface RefusalExpect {
  /** The agent on the refusal row (`"?"` before identity). */
  readonly agent: string;
  /** Attempts the refusal counts (0 when refused before the nonce resolves). */
  readonly attempts: 0 | 1;
  /** A dry run: no ledger row at all. */
  readonly dryRun?: boolean;
}

/**
 * After a refused apply: every byte outside the ledger state is unchanged; the ledger gained
 * exactly one `apply-proposal-refused` row (none for a dry run) with the agent and code, and
 * kept every earlier line; the dispatch store gained only the expected attempt and no use; the
 * ledger verifies. Returns the new row (or `null` for a dry run).
 */
export async function assertRefusalRecorded(
  p: Project,
  b: Before,
  code: string,
  exp: RefusalExpect,
): Promise<Row | null> {
  assertOnlyChanged(b.tree, await snapshot(p), stateSet(p.root), "after a refusal");
  const lines = await ledgerLines(p.root);
  assert.deepEqual(lines.slice(0, b.ledger.length), b.ledger, "earlier ledger lines changed");
  const added = lines.slice(b.ledger.length).map((l) => JSON.parse(l) as Row);
  let row: Row | null = null;
  if (exp.dryRun) {
    assert.deepEqual(added, [], "a dry run must record no ledger row");
  } else {
    assert.equal(added.length, 1, `one refusal row expected, got ${JSON.stringify(added)}`);
    row = added[0];
    assert.equal(row.action, "apply-proposal-refused", JSON.stringify(row));
    assert.equal(row.code, code, JSON.stringify(row));
    assert.equal(row.agent, exp.agent, JSON.stringify(row));
    assert.equal(typeof row.reason, "string");
    assert.ok((row.reason as string).length > 0, "empty reason");
    assert.deepEqual(
      Object.keys(row).sort(),
      ["action", "agent", "code", "mac", "prev", "reason", "time"],
      JSON.stringify(row),
    );
  }
  const store = await storeLines(p.root);
  assert.deepEqual(store.slice(0, b.store.length), b.store, "earlier dispatch rows changed");
  const c = counts(store.slice(b.store.length));
  assert.equal(c.uses, 0, "a refusal must spend no use");
  assert.equal(c.attempts, exp.attempts, "attempts counted by the refusal");
  assert.equal(store.length - b.store.length, exp.attempts, "unexpected dispatch store rows");
  assertLedgerVerifies(p);
  return row;
}

/**
 * Writes the artifact, applies it, and asserts the refusal with {@link assertApplyRefused} and
 * {@link assertRefusalRecorded}.
 */
export async function expectRefusal(
  p: Project,
  artifact: Json | string,
  code: string,
  exp: RefusalExpect & { brief?: string; hangGuardMs?: number },
): Promise<{ run: RunResult; row: Row | null }> {
  const file = await writeArtifact(p, artifact);
  const b = await before(p);
  const run = await applyFile(p, file, {
    dryRun: exp.dryRun,
    brief: exp.brief,
    hangGuardMs: exp.hangGuardMs,
  });
  assertApplyRefused(run, code);
  const row = await assertRefusalRecorded(p, b, code, exp);
  return { run, row };
}

/** A change proposal. */
export function change(
  nonce: string,
  path: string,
  content: string,
  base = "absent",
  extra: Record<string, Json> = {},
): Record<string, Json> {
  return {
    kind: "change-proposal",
    dispatch: nonce,
    path,
    base_sha256: base,
    content,
    rationale: "test",
    ...extra,
  };
}

/** A deletion proposal. */
export function deletion(
  nonce: string,
  path: string,
  base: string,
  extra: Record<string, Json> = {},
): Record<string, Json> {
  return {
    kind: "delete-proposal",
    dispatch: nonce,
    path,
    base_sha256: base,
    rationale: "test",
    ...extra,
  };
}

/** SHA-256 of a file's bytes. */
export async function fileSha(path: string): Promise<string> {
  return sha256(await Deno.readFile(path));
}

/** Whether anything (even a dangling symlink) exists at `path`. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/**
 * Runs `body` on the project, then asserts its ledger still verifies through the CLI; the
 * project is removed either way.
 */
export async function withProject(
  made: Promise<Project>,
  body: (p: Project) => Promise<void>,
): Promise<void> {
  const p = await made;
  try {
    await body(p);
    await assertCliLedgerVerifies(p);
  } finally {
    await p.dispose();
  }
}

/** A brief parsed as the project's (`<project>/agentteams.jsonc`) for a sandbox. */
export function policyIn(sb: Sandbox, brief: string): Policy {
  return parsePolicy(brief, {
    briefPath: join(sb.project, "agentteams.jsonc"),
    projectRoot: sb.project,
    briefSha256: sha256(brief),
  });
}

/** The confined gate runner a session of the sandbox's project would make (bwrap, no git). */
export function sandboxGateRunner(
  sb: Sandbox,
  policy: Policy,
  extra: Partial<GateRunnerOptions> = {},
): GateRunner {
  return confinedGateRunner({
    root: sb.project,
    policy,
    parentEnv: { PATH: "/usr/bin:/bin", HOME: sb.home, LANG: "C.UTF-8" },
    home: sb.home,
    keyDir: sb.keyDir,
    backend: () => Promise.resolve("bwrap"),
    plane: () => Promise.resolve({ root: sb.project, git: [] }),
    ...extra,
  });
}
