/**
 * Shared helpers for the foundation tests (canonical, crypto, ledger, cli, permissions): temp
 * sandboxes with their own HOME and key dir, the CLI run as a real `deno run` subprocess, tree
 * snapshots to prove that nothing was written, signed-ledger fixtures, and an independent
 * re-statement of Python's `json.dumps(obj, sort_keys=True)` used as a test oracle. The checks
 * built on them (assertCliRefused, assertSameTree, assertRefusal) are in ./assert.ts.
 *
 * @module
 */
import { createHash, createHmac } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { headText } from "../../lib/ledger/head.ts";
import { type RowBody, signRow } from "../../lib/ledger/row.ts";
import type { VerifyKey } from "../../lib/ledger/verify.ts";

/** The repository root (absolute, with a trailing slash removed). */
export const REPO_ROOT: string = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
/** The CLI entry point. */
export const MAIN_TS: string = join(REPO_ROOT, "main.ts");
/** The deno running the tests (the same binary runs every subprocess). */
export const DENO: string = Deno.execPath();

const enc = new TextEncoder();
const dec = new TextDecoder();

// ---------------------------------------------------------------------------------------------
// Temp dirs and sandboxes

/** A fresh temp directory (`/tmp/at-<prefix>-XXXX`). */
export function tempDir(prefix: string): Promise<string> {
  return Deno.makeTempDir({ prefix: `at-${prefix}-` });
}

/**
 * A fresh temp directory (`/tmp/at-<prefix>-XXXX`, real path) removed when the test file's run
 * ends (its module's `unload`), for tests that hand a root to a helper and never see it again.
 */
export function fileTempDir(prefix: string): string {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: `at-${prefix}-` }));
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  });
  return dir;
}

/** Removes a directory tree, ignoring what is already gone. */
export async function removeTree(path: string): Promise<void> {
  try {
    await Deno.remove(path, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/** One test's world: a temp dir holding a HOME, a (not yet created) key dir and a project. */
export interface Sandbox {
  /** The temp dir holding everything below. */
  readonly dir: string;
  /** A fresh HOME (exists, empty). */
  readonly home: string;
  /** `AGENTTEAMS_KEY_DIR` (does not exist until `keys init`). */
  readonly keyDir: string;
  /** A project root (exists, empty). */
  readonly project: string;
  /** `{HOME, AGENTTEAMS_KEY_DIR}` for this sandbox. */
  readonly env: Record<string, string>;
  /** Removes the sandbox. */
  dispose(): Promise<void>;
}

/** Creates a {@link Sandbox}. */
export async function sandbox(prefix: string): Promise<Sandbox> {
  const dir = await tempDir(prefix);
  const home = join(dir, "home");
  const project = join(dir, "project");
  const keyDir = join(dir, "keys");
  await Deno.mkdir(home);
  await Deno.mkdir(project);
  return {
    dir,
    home,
    keyDir,
    project,
    env: { HOME: home, AGENTTEAMS_KEY_DIR: keyDir },
    dispose: () => removeTree(dir),
  };
}

// ---------------------------------------------------------------------------------------------
// Subprocesses

/** The output of a finished subprocess. */
export interface RunResult {
  /** Exit code. */
  code: number;
  /** Signal that ended it, if any. */
  signal: Deno.Signal | null;
  /** Decoded stdout. */
  stdout: string;
  /** Decoded stderr. */
  stderr: string;
}

/**
 * The environment every subprocess starts from: PATH (with this deno first), the deno cache of
 * the test process (so nothing is downloaded or recompiled per temp HOME), no colour, no update
 * check. Nothing else of the test process leaks in.
 */
export function baseChildEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: `${dirname(DENO)}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
  };
  const denoDir = Deno.env.get("DENO_DIR") ??
    (Deno.env.get("HOME") ? join(Deno.env.get("HOME") as string, ".cache", "deno") : undefined);
  if (denoDir !== undefined) env.DENO_DIR = denoDir;
  return env;
}

/**
 * The words that run a program as this user (root here) without the capabilities that bypass file
 * permissions, as an unprivileged operator's process runs: a folder's mode then holds for it.
 * Throws when setpriv is missing, so a test that needs it fails rather than passes.
 */
export function withoutBypass(): string[] {
  Deno.statSync("/usr/bin/setpriv");
  return ["/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner"];
}

/** Writes an executable `#!/bin/sh` program at `path` that runs `body`; returns `path`. */
export function shellProgram(path: string, body: string): string {
  Deno.writeTextFileSync(path, `#!/bin/sh\n${body}`);
  Deno.chmodSync(path, 0o755);
  return path;
}

/** Options of {@link runDeno} and {@link runCli}. */
export interface RunOptions {
  /** Variables added to {@link baseChildEnv}. */
  env?: Record<string, string>;
  /** Working directory (default: a neutral temp-free `/`). */
  cwd?: string;
  /** Kill the child after this long: a guard against hangs, not a timing assertion. */
  hangGuardMs?: number;
}

/** Runs `deno <args>` with a clean environment and collects its output. */
export async function runDeno(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const out = await new Deno.Command(DENO, {
    args,
    cwd: opts.cwd ?? "/",
    clearEnv: true,
    env: { ...baseChildEnv(), ...(opts.env ?? {}) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(opts.hangGuardMs ?? 120_000),
  }).output();
  return {
    code: out.code,
    signal: out.signal,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/**
 * Runs the CLI as a real process: `deno run <denoFlags> main.ts <args>` (default flags `-A`).
 */
export function runCli(
  args: string[],
  opts: RunOptions & { denoFlags?: string[] } = {},
): Promise<RunResult> {
  return runDeno(["run", ...(opts.denoFlags ?? ["-A"]), MAIN_TS, ...args], opts);
}

/** A parsed refusal line `agentteams <command>: refused: <CODE>: <reason>`. */
export interface Refusal {
  command: string;
  code: string;
  reason: string;
}

/** A refusal line, or a usage error's (worded so: the command line is the user's to fix). */
const REFUSAL_RE =
  /^agentteams ([^:\n]+): (?:refused|usage error|ran, but): ([A-Z][A-Z0-9_]*): (.+)$/;

/** Every refusal line on stderr. */
export function refusals(stderr: string): Refusal[] {
  const out: Refusal[] = [];
  for (const line of stderr.split("\n")) {
    const m = REFUSAL_RE.exec(line);
    if (m !== null) out.push({ command: m[1], code: m[2], reason: m[3] });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Nothing-written checks

/**
 * One entry of a tree snapshot: its kind, permission bits, owner, inode and size, and for a file
 * its content digest, for a symlink its target. Times are left out (a read may move atime).
 */
export type TreeEntry =
  & { mode: number; uid: number | null; ino: number | null; size: number }
  & (
    | { kind: "file"; sha256: string }
    | { kind: "dir" }
    | { kind: "symlink"; target: string }
    | { kind: "other" }
  );

/** A tree snapshot: every entry by absolute path (roots first, then each dir's entries by name). */
export type TreeSnapshot = Map<string, TreeEntry>;

/**
 * Every object at and below the roots (not following symlinks), by absolute path; a missing root
 * (or an entry gone meanwhile) is left out. Entries for which `ignore(path)` holds are not
 * recorded, but an ignored directory is still walked, so what lies below it is recorded.
 */
export function snapshotTreeSync(
  roots: string | readonly string[],
  ignore: (path: string) => boolean = () => false,
): TreeSnapshot {
  const out: TreeSnapshot = new Map();
  const visit = (p: string) => {
    let st: Deno.FileInfo;
    try {
      st = Deno.lstatSync(p);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      throw e;
    }
    if (!ignore(p)) {
      const common = { mode: (st.mode ?? 0) & 0o7777, uid: st.uid, ino: st.ino, size: st.size };
      if (st.isSymlink) out.set(p, { ...common, kind: "symlink", target: Deno.readLinkSync(p) });
      else if (st.isFile) {
        out.set(p, { ...common, kind: "file", sha256: sha256(Deno.readFileSync(p)) });
      } else if (st.isDirectory) out.set(p, { ...common, kind: "dir" });
      else out.set(p, { ...common, kind: "other" });
    }
    if (st.isDirectory && !st.isSymlink) {
      const names = [...Deno.readDirSync(p)].map((e) => e.name).sort();
      for (const n of names) visit(join(p, n));
    }
  };
  for (const r of typeof roots === "string" ? [roots] : roots) visit(r);
  return out;
}

/** {@link snapshotTreeSync} of the roots, for async callers. */
export function snapshotTree(...roots: string[]): Promise<TreeSnapshot> {
  return Promise.resolve().then(() => snapshotTreeSync(roots));
}

// ---------------------------------------------------------------------------------------------
// Keys, rows, state files

/** Hex SHA-256 (node:crypto). */
export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Hex HMAC-SHA256 (node:crypto), independent of lib's HmacKey. */
export function hmacHex(key: string | Uint8Array, data: string | Uint8Array): string {
  return createHmac("sha256", key).update(data).digest("hex");
}

/** A {@link VerifyKey} from a text (its UTF-8 bytes). */
export function keyOf(text: string): VerifyKey {
  const bytes = enc.encode(text);
  return { bytes, hmac: new HmacKey(bytes) };
}

/** The fixed clock of fixtures: 2026-11-29T18:02:10Z. */
export const FIXED_TIME = "2026-11-29T18:02:10+00:00";

/** A signed ledger built in memory (no fsync): its lines, text and head. */
export interface BuiltLedger {
  /** Lines without newlines. */
  lines: string[];
  /** The file text (every line terminated). */
  text: string;
  /** The head file text for all lines. */
  head: string;
}

/** Signs `bodies` into a chained ledger with `hmac` (the format `appendRow` writes). */
export function buildLedger(bodies: RowBody[], hmac: HmacKey, time = FIXED_TIME): BuiltLedger {
  const lines: string[] = [];
  let prev = "";
  for (const b of bodies) {
    const line = signRow(b, hmac, { time, prev });
    lines.push(line);
    prev = sha256(line);
  }
  return { lines, text: joinLines(lines), head: headFor(lines, hmac) };
}

/** Lines joined with a newline after each. */
export function joinLines(lines: readonly string[]): string {
  return lines.map((l) => l + "\n").join("");
}

/** The head text matching `lines`. */
export function headFor(lines: readonly string[], hmac: HmacKey): string {
  return headText(lines.length, lines.length === 0 ? null : sha256(lines[lines.length - 1]), hmac);
}

/** The state files of a project. */
export function stateFiles(project: string): {
  dir: string;
  ledger: string;
  head: string;
  anchors: string;
  dispatches: string;
  lock: string;
} {
  const dir = join(project, ".agentteams");
  return {
    dir,
    ledger: join(dir, "proposal-ledger.jsonl"),
    head: join(dir, "proposal-ledger.head"),
    // Every append keeps it beside the head (lib/ledger/anchor_state.ts).
    anchors: join(dir, "anchors.json"),
    dispatches: join(dir, "dispatches.jsonl"),
    lock: join(dir, "dispatches.lock"),
  };
}

/**
 * Writes a brief (`agentteams.json`) naming `agents` (each may write `src/`): `dispatch` issues
 * nonces only to agents the brief names.
 */
export function writeBrief(project: string, agents: readonly string[] = ["worker"]): void {
  const policies = Object.fromEntries(agents.map((a) => [a, { write_scopes: ["src/"] }]));
  Deno.writeTextFileSync(
    join(project, "agentteams.json"),
    JSON.stringify({ agent_policies: policies }),
  );
}

/** Writes (or, with `null`, removes) state files; creates `.agentteams` (0700) when needed. */
export async function writeState(
  project: string,
  files: { ledger?: string | Uint8Array | null; head?: string | null; dispatches?: string | null },
): Promise<void> {
  const p = stateFiles(project);
  await Deno.mkdir(p.dir, { recursive: true, mode: 0o700 });
  const put = async (path: string, v: string | Uint8Array | null | undefined) => {
    if (v === undefined) return;
    if (v === null) {
      await Deno.remove(path).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
    } else if (typeof v === "string") await Deno.writeTextFile(path, v);
    else await Deno.writeFile(path, v);
  };
  await put(p.ledger, files.ledger);
  await put(p.head, files.head);
  await put(p.dispatches, files.dispatches);
}

/** Copies a directory tree (files, dirs; symlinks recreated), making everything user-writable. */
export async function copyTree(src: string, dst: string): Promise<void> {
  const st = await Deno.lstat(src);
  if (st.isSymlink) {
    await Deno.symlink(await Deno.readLink(src), dst);
  } else if (st.isDirectory) {
    await Deno.mkdir(dst, { recursive: true });
    for await (const e of Deno.readDir(src)) await copyTree(join(src, e.name), join(dst, e.name));
    await Deno.chmod(dst, ((st.mode ?? 0o755) & 0o777) | 0o700);
  } else {
    await Deno.writeFile(dst, await Deno.readFile(src));
    await Deno.chmod(dst, ((st.mode ?? 0o644) & 0o777) | 0o600);
  }
}

// ---------------------------------------------------------------------------------------------
// An independent oracle for Python's json.dumps(obj, sort_keys=True)

function pyString(s: string): string {
  // JSON.stringify handles quote, backslash, the short escapes and lower-case \u00XX controls;
  // Python's ensure_ascii then escapes everything outside 0x20..0x7e, DEL included.
  return JSON.stringify(s).replace(
    /[\u007f-\uffff]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}

/** Code-point order, computed by expanding to code points (unlike lib's unit arithmetic). */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * Python's `json.dumps(v, sort_keys=True)` for JSON values made of strings without lone
 * surrogates, safe integers, booleans, null, arrays and plain objects. A test oracle only.
 */
export function pyDumps(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return Object.is(v, -0) ? "0" : v.toString();
  if (typeof v === "string") return pyString(v);
  if (Array.isArray(v)) return "[" + v.map(pyDumps).join(", ") + "]";
  const o = v as Record<string, unknown>;
  return "{" +
    Object.keys(o).sort(byCodePoint).map((k) => pyString(k) + ": " + pyDumps(o[k])).join(", ") +
    "}";
}

/** Bytes of a string (UTF-8). */
export function utf8(s: string): Uint8Array {
  return enc.encode(s);
}

/** Text of bytes (UTF-8). */
export function text(b: Uint8Array): string {
  return dec.decode(b);
}

/** Whether something exists at `path` (not following a final symlink); other errors throw. */
export function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}
