/**
 * `deno task bench`: speed, always as a ratio to a floor measured in the same run (the machines
 * are noisy; every figure is a median of several runs).
 *
 * 0. Start-up: whole-process `--version` from the release bundle and from the source tree against
 *    an empty `deno run` (target <= 1.6 from the bundle); `--version` is answered before the CLI
 *    loads, so a command's start (a read-only `gate` with nothing to read) is measured beside it.
 * 1. Ledger: appends per second (each with fsync) at 0 and at 100k existing rows (in process), and
 *    whole-process `dispatch` (which appends) beside a 100k-row ledger against the same beside an
 *    empty one; whole-process `ledger verify` of 10k and 100k rows, and of 100k rows whose acts
 *    name dispatches beside a live dispatch store ("tagged": verify then counts every act against
 *    the store's uses), from the source tree and from the release bundle, against a floor of one
 *    bare Deno start plus two OpenSSL SHA-256 passes over the file (target <= 2.5), and against a
 *    plain-Python verifier of the same format (scripts/bench/verify_ref.py: C json + OpenSSL
 *    HMAC, the earlier tool's cost model) run by the system interpreter, /usr/bin/python3 (never
 *    whatever `python3` is first on PATH: a pyenv shim adds ~200 ms to every start).
 * 2. Proposals: `apply --dry-run` and `apply` on 1k- and 20k-file repos, against one atomic write
 *    of the same bytes.
 * 3. Command requests: whole-process `run` of `true` (unconfined) on clean 1k-, 20k- and
 *    100k-file repos, against a floor of one bare Deno start + two `git status` + `true`; from
 *    the source tree and from the release bundle (scripts/bundle.ts). Also the 1k repo beside a
 *    100k-row ledger against the same repo beside an empty one, rounds interleaved (target <=
 *    1.15: an act's cost does not grow with the history).
 * 4. Confinement: `true` under the project's bwrap plan vs bare `bwrap --ro-bind / / true` vs
 *    plain `true` (in process); and whole-process `run` of `true` confined against the same run
 *    `--unconfined` on a 20k-file repo whose write root holds all of it (target <= 1.25).
 * 4b. Exec allowlist: confined `true` with Landlock (the inner guard in front of it) against the
 *    same plan without it, rounds interleaved (the bwrap process, and with planning).
 * 5. Doctor: whole-process `doctor` (key custody, the sandbox probe, the brief, the session
 *    settings) against a floor of one bare Deno start + one bare bwrap; the settings check alone
 *    against reading the same file with the one JSON reader (positions kept), which it must do.
 *
 * 6. Runner: whole-process `run` of `true` through the queue (a live `agentteams serve`) against
 *    the same artifact run `--direct` in the same project with the same key, rounds interleaved;
 *    and the runner's pickup latency (claim time minus the request file's mtime, as the runner
 *    reports it in `queue_wait_ms`) over 200 sequential requests, median and p95.
 *
 * 7. Audit: the AR_WRITE_POLICY audit of a generated 10,000-file team (in memory, and whole:
 *    walk, read, check) against a bare `yaml` parse of the same front matters and recipes; and the
 *    whole process (`agentteams audit DIR`) against a whole-process floor (scripts/bench/
 *    audit_floor.ts: walk, read each file, parse its front matter with the same `yaml`).
 *    7b: 10,000 realistic Claude agent files audited by the whole process from the installed
 *    launcher (text and JSON; wall, CPU, peak RSS) against reading them and parsing each front
 *    matter with the same `yaml` package, and the same in process (scripts/bench/audit_process.ts).
 *
 * 8. Authorization: `waiver verify` of 10,000 HMAC waiver rows and `grant verify` of 10,000
 *    Ed25519 grant rows (in process, the library), against a floor of one HMAC / one Ed25519
 *    verify per row in the same run (target <= 2x); and each whole process (the CLI) against a
 *    bare Deno start plus that floor.
 *
 * 9. The gate: `gate ACTION` beside a 1,000- and a 10,000-row signed, chained decision log and a
 *    waiver ledger of as many rows, the action allowed by the waiver (so both files are read and
 *    the whole log decides first): whole process from the release bundle against a floor of one
 *    bare Deno start that reads both files and HMACs each (scripts/bench/gate_floor.ts; target
 *    <= 2x at 10,000 rows), and in process against reading both files and HMAC-ing their bytes.
 *    Both read through the ledgers' indexes (lib/authz/csv_index.ts) as a gate with the ledger
 *    key does, kept as `decision sign` and `waiver issue` keep them after their writes.
 *
 * MCP readfs (scripts/bench/mcp_readfs.ts, its own process on the tests' lockfile): a `read_file`
 *    round trip through the MCP SDK client to `agentteams mcp readfs`, 1 to 256 KiB, against
 *    reading the same file and hashing it.
 *
 * Every in-process figure has a whole-process one beside it: what a user waits for is the process.
 *
 * 10. SHA-256: the WebAssembly batch, node:crypto and @noble/hashes on the verify and append
 *    paths (scripts/bench/sha256_paths.ts), against the verify floor and a bare Deno start.
 *
 * Usage: deno task bench [--quick]
 * [--only=start|ledger|apply|run|confine|execallow|doctor|runner|audit|authz|gate|mcp|sha256|netproxy]
 * [--keep]
 * (`--keep` leaves the scratch directory in place and prints its path, for profiling.)
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { recordRow, tapSections, writeBenchReport } from "./bench/report.ts";
import { netProxySection } from "./bench/net_proxy.ts";
import { bundleTo } from "./bundle.ts";
import { launchV8Flags, releaseFlags } from "../lib/permissions.ts";
import { HmacKey, sha256Hex } from "../lib/crypto/hash.ts";
import { signRow, utcSeconds } from "../lib/ledger/row.ts";
import { headText } from "../lib/ledger/head.ts";
import { appendRow } from "../lib/ledger/append.ts";
import { issueDispatch, resolveDispatch } from "../lib/ledger/dispatch.ts";
import { dispatchTag } from "../lib/ledger/dispatch_acts.ts";
import { atomicWriteFileSync } from "../lib/fs/atomic_write.ts";
import { runProcess } from "../lib/process/spawn.ts";
import { prepareConfinement } from "../lib/sandbox/mounts_io.ts";
import { confineArgv } from "../lib/sandbox/wrapper_chain.ts";
import { sandboxHost } from "../lib/sandbox/host_probe.ts";
import { sessionSettingsFindings } from "../lib/policy/session_settings.ts";
import { operatorSettingsInput } from "../lib/runner/preflight.ts";
import { readJson } from "../lib/json/reader.ts";
import { parse as parseYaml } from "yaml";
import { auditTeam } from "../lib/audit/audit.ts";
import { auditEntries } from "../lib/audit/team.ts";
import { walkTeam } from "../lib/audit/walk.ts";
import { auditProcessSection } from "./bench/audit_process.ts";
import { formatCsv } from "../lib/authz/csv.ts";
import { verifyWaivers, WAIVER_COLUMNS, waiverPayload } from "../lib/authz/waivers.ts";
import { decisionPayload, NEW_DECISION_HEADER } from "../lib/authz/decisions.ts";
import { keepTriadIndexes } from "../lib/authz/triad_index.ts";
import { decideGate } from "../lib/authz/gate.ts";
import { GRANT_COLUMNS, grantMessage, grantPayload, verifyGrants } from "../lib/authz/grants.ts";
import {
  generatePem,
  importPrivatePem,
  importPublicPem,
  signHex,
  verifyHex,
} from "../lib/crypto/ed25519.ts";
import {
  makePrivateTmpdir,
  removeMaskPoints,
  removePrivateTmpdir,
} from "../lib/sandbox/run_dir.ts";
import { loadLedgerKey, readRunnerPublicText } from "../lib/crypto/keys.ts";
import { sealPublicFromPem } from "../lib/crypto/x25519.ts";
import { submitRequest, waitForResult } from "../lib/queue/client.ts";
import { liveRunner } from "../lib/queue/liveness.ts";
import { queuePaths } from "../lib/queue/queue_paths.ts";

const quick = Deno.args.includes("--quick");
const keep = Deno.args.includes("--keep");
const only = Deno.args.find((a) => a.startsWith("--only="))?.slice("--only=".length);
const want = (section: string): boolean => only === undefined || only === section;
const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const main = `${root}/main.ts`;
const deno = Deno.execPath();
const work = Deno.makeTempDirSync({ prefix: "agentteams-bench-" });
const KEY = "bench-ledger-key";
/**
 * The Python reference runs under the system interpreter, named by its path: whatever `python3` is
 * first on PATH may be a version manager's shim that adds its own start-up to every figure.
 */
const PYTHON = "/usr/bin/python3";
const enc = new TextEncoder();

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The nearest-rank percentile `q` (0..1) of `xs`. */
function percentile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(q * s.length) - 1)];
}

function fmt(ms: number): string {
  return ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`;
}

function row(label: string, value: string, note = ""): void {
  recordRow(label, value, note);
  console.log(`  ${label.padEnd(58)} ${value.padStart(14)}  ${note}`);
}

async function timeCmd(
  program: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; runs: number; expect?: number },
): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < opts.runs; i++) {
    const t = performance.now();
    const out = await new Deno.Command(program, {
      args,
      cwd: opts.cwd,
      env: opts.env,
      stdout: "null",
      stderr: "piped",
    }).output();
    times.push(performance.now() - t);
    if (out.code !== (opts.expect ?? 0)) {
      throw new Error(
        `${program} ${args.join(" ")} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`,
      );
    }
  }
  return median(times);
}

function git(cwd: string, ...args: string[]): void {
  const out = new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" }).outputSync();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** A git repo with `files` small files under src/ (committed) and a brief. */
function makeRepo(name: string, files: number, brief: unknown): string {
  const dir = `${work}/${name}`;
  Deno.mkdirSync(`${dir}/src`, { recursive: true });
  const perDir = 500;
  for (let i = 0; i < files; i++) {
    const d = `${dir}/src/d${Math.floor(i / perDir)}`;
    if (i % perDir === 0) Deno.mkdirSync(d, { recursive: true });
    Deno.writeTextFileSync(`${d}/f${i}.txt`, `file ${i}\n`);
  }
  Deno.writeTextFileSync(`${dir}/agentteams.json`, JSON.stringify(brief, null, 2));
  git(dir, "init", "-q", ".");
  git(dir, "-c", "user.email=b@e.invalid", "-c", "user.name=bench", "add", "-A");
  git(dir, "-c", "user.email=b@e.invalid", "-c", "user.name=bench", "commit", "-qm", "init");
  return dir;
}

/**
 * Writes a ledger of `n` rows (and its head) directly, in this project's format. With `tagged`,
 * each row names a dispatch (25 rows a dispatch, as acts spend uses), and a live dispatch store
 * follows with one dispatch and the uses of the five acts appended after the `n` rows: the state
 * of a project that has used dispatch, whose verify reconciles acts against the store's uses.
 */
async function makeLedger(dir: string, n: number, tagged = false): Promise<void> {
  Deno.mkdirSync(`${dir}/.agentteams`, { recursive: true });
  const hmac = new HmacKey(enc.encode(KEY));
  const t = utcSeconds(new Date());
  let prev = "";
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const line = signRow(
      {
        action: "apply-proposal",
        agent: "worker",
        base: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
        gates: [],
        new: "f4651ea773205a2143b2e546243bd6842ff0c9c024b180fb1c344306c93b88fb",
        path: `src/file${i}.txt`,
        rationale: `bench row ${i}`,
        bytes: 120,
        ...(tagged ? { dispatch: sha256Hex(`dispatch ${Math.floor(i / 25)}`).slice(0, 12) } : {}),
      },
      hmac,
      { time: t, prev },
    );
    lines.push(line);
    prev = sha256Hex(line);
  }
  Deno.writeTextFileSync(`${dir}/.agentteams/proposal-ledger.jsonl`, lines.join("\n") + "\n");
  Deno.writeTextFileSync(`${dir}/.agentteams/proposal-ledger.head`, headText(n, prev, hmac));
  if (!tagged) return;
  const { nonce } = await issueDispatch(dir, hmac, "worker");
  for (let i = 0; i < 5; i++) {
    const rec = await resolveDispatch(dir, hmac, nonce, { count: "use" });
    await appendRow(dir, hmac, {
      action: "apply-proposal",
      agent: "worker",
      dispatch: dispatchTag(rec.id),
    });
  }
}

/** An empty module: `deno run` of it is a bare Deno start. */
const emptyTs = `${work}/empty.ts`;
Deno.writeTextFileSync(emptyTs, "");

const envBase: Record<string, string> = {
  HOME: `${work}/home`,
  PATH: "/usr/local/bin:/usr/bin:/bin",
  AGENTTEAMS_KEY_DIR: `${work}/home/keys`,
};
Deno.mkdirSync(`${work}/home`, { recursive: true });
/**
 * The bench key, which signs `makeLedger`'s ledgers, given in the environment (no key file in
 * that key dir, so the environment key is the one in use).
 */
const envBenchKey: Record<string, string> = {
  ...envBase,
  AGENTTEAMS_KEY_DIR: `${work}/nokeys`,
  AGENTTEAMS_PROPOSAL_LEDGER_KEY: KEY,
};

/**
 * `deno run` of the tool's `entry` (the source tree's main.ts unless given), with `v8` (the
 * installed launcher's per-command V8 options, `launchV8Flags`, for its stand-in on the bundle).
 */
function cli(args: string[], entry = main, v8: readonly string[] = []): string[] {
  return ["run", "--allow-all", "--no-check", ...v8, entry, ...args];
}

async function ledgerSection(): Promise<void> {
  console.log("\n1. Ledger");
  const hmac = new HmacKey(enc.encode(KEY));
  const n = quick ? 50 : 200;
  const fresh = `${work}/ledger-fresh`;
  Deno.mkdirSync(fresh);
  let t = performance.now();
  for (let i = 0; i < n; i++) await appendRow(fresh, hmac, { action: "bench", i });
  const at0 = n / ((performance.now() - t) / 1000);
  const big = `${work}/ledger-100k`;
  await makeLedger(big, 100_000);
  // A ledger made without the anchors file every append keeps (an earlier version's, or one
  // whose file was removed): its first append reads every row once (lib/ledger/anchor_state.ts).
  t = performance.now();
  await appendRow(big, hmac, { action: "bench-first" });
  const first = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < n; i++) await appendRow(big, hmac, { action: "bench", i });
  const at100k = n / ((performance.now() - t) / 1000);
  row("append (fsync) at 0 rows", `${at0.toFixed(0)} rows/s`);
  row(
    "append (fsync) at 100k rows",
    `${at100k.toFixed(0)} rows/s`,
    `ratio ${(at100k / at0).toFixed(2)} of the 0-row rate`,
  );
  row(
    "first append at 100k rows without the anchors file",
    `${first.toFixed(0)} ms`,
    "once: every row read to rebuild it",
  );

  // Whole-process appends: `dispatch` (a ledger row and a store row) beside a 100k-row ledger and
  // beside an empty one, rounds interleaved.
  {
    const emptyDir = makeRepo("dispatch-empty", 10, brief());
    const bigDir = makeRepo("dispatch-100k", 10, brief());
    await makeLedger(bigDir, 100_000);
    const rounds = quick ? 3 : 9;
    const a: number[] = [];
    const b: number[] = [];
    const start: number[] = [];
    const args = (dir: string) => cli(["dispatch", "--agent", "worker", "--project", dir]);
    await timeCmd(deno, args(emptyDir), { env: envBenchKey, runs: 1 });
    await timeCmd(deno, args(bigDir), { env: envBenchKey, runs: 1 });
    for (let i = 0; i < rounds; i++) {
      start.push(await timeCmd(deno, ["run", "--no-check", emptyTs], { runs: 1 }));
      // The order alternates: whichever runs second finds the files the first just read cached.
      for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
        const ms = await timeCmd(deno, args(k === 0 ? emptyDir : bigDir), {
          env: envBenchKey,
          runs: 1,
        });
        (k === 0 ? a : b).push(ms);
      }
    }
    row("dispatch, whole process, beside an empty ledger", fmt(median(a)));
    row(
      "dispatch, whole process, beside a 100k-row ledger",
      fmt(median(b)),
      `${(median(b) / median(a)).toFixed(2)}x beside an empty one (target <= 1.15)`,
    );
    row("  (a bare deno start in the same rounds)", fmt(median(start)));
  }

  const keyFile = `${work}/bench.key`;
  Deno.writeTextFileSync(keyFile, KEY);
  // The release form too (the code-split bundle the installed launcher runs): its start loads
  // one chunk per command, where the source tree loads the CLI's modules one file at a time.
  const bundleDir = `${work}/bundle-ledger`;
  await bundleTo(root, bundleDir);
  for (const [rows, tagged] of [[10_000, false], [100_000, false], [100_000, true]] as const) {
    const dir = `${work}/verify-${rows}${tagged ? "-tagged" : ""}`;
    await makeLedger(dir, rows, tagged);
    const what = `${rows / 1000}k${tagged ? " tagged" : ""}`;
    const ledger = `${dir}/.agentteams/proposal-ledger.jsonl`;
    const rounds = quick ? 3 : 7;
    const env = envBenchKey;
    const verify = cli(["ledger", "verify", "--project", dir]);
    const verifyBundled = cli(["ledger", "verify", "--project", dir], `${bundleDir}/main.js`);
    const py = [`${root}/scripts/bench/verify_ref.py`, dir, keyFile];
    await timeCmd(deno, verify, { env, runs: 1 });
    await timeCmd(deno, verifyBundled, { env, runs: 1 });
    await timeCmd(PYTHON, py, { runs: 1 });
    // Floor and subjects interleaved, round by round: a bare Deno start plus two OpenSSL SHA-256
    // passes over the file (the format needs every byte hashed twice: the chain's SHA-256 of each
    // line, and the HMAC of each line without its mac).
    const t = {
      start: [] as number[],
      sha: [] as number[],
      ours: [] as number[],
      bundled: [] as number[],
      py: [] as number[],
    };
    for (let i = 0; i < rounds; i++) {
      t.start.push(await timeCmd(deno, ["run", "--no-check", emptyTs], { runs: 1 }));
      t.sha.push(await timeCmd("openssl", ["dgst", "-sha256", ledger], { runs: 1 }));
      t.sha.push(await timeCmd("openssl", ["dgst", "-sha256", ledger], { runs: 1 }));
      t.ours.push(await timeCmd(deno, verify, { env, runs: 1 }));
      t.bundled.push(await timeCmd(deno, verifyBundled, { env, runs: 1 }));
      t.py.push(await timeCmd(PYTHON, py, { runs: 1 }));
    }
    const floor = median(t.start) + 2 * median(t.sha);
    const ours = median(t.ours);
    row(
      `floor ${what}: deno start ${fmt(median(t.start))} + 2 x openssl sha256 ${
        fmt(median(t.sha))
      }`,
      fmt(floor),
    );
    row(
      `verify ${what} rows, whole process: agentteams`,
      fmt(ours),
      `${(ours / floor).toFixed(2)}x the floor (target <= 2.5); ${
        (rows / (ours / 1000)).toFixed(0)
      } rows/s`,
    );
    const bundled = median(t.bundled);
    row(
      `verify ${what} rows, whole process: agentteams, release bundle`,
      fmt(bundled),
      `${(bundled / floor).toFixed(2)}x the floor (target <= 2.5)`,
    );
    row(
      `verify ${what} rows, whole process: Python reference`,
      fmt(median(t.py)),
      `${(rows / (median(t.py) / 1000)).toFixed(0)} rows/s; ratio ${
        (ours / median(t.py)).toFixed(2)
      } (target <= 0.5)`,
    );
  }
}

function brief(extra: Record<string, unknown> = {}) {
  return {
    project_goal: "bench",
    allow_unconfined_runs: true,
    agent_policies: {
      worker: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] },
    },
    ...extra,
  };
}

async function initKeys(): Promise<void> {
  await timeCmd(deno, cli(["keys", "init"]), { env: envBase, runs: 1 });
}

async function dispatch(project: string, env = envBase): Promise<string> {
  const out = await new Deno.Command(deno, {
    args: cli(["dispatch", "--agent", "worker", "--project", project]),
    env,
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

/** Writes a command request for `true` under `nonce`. */
function writeTrueRequest(file: string, nonce: string): void {
  Deno.writeTextFileSync(
    file,
    JSON.stringify({ kind: "command-request", dispatch: nonce, argv: ["true"], purpose: "bench" }),
  );
}

async function applySection(): Promise<void> {
  console.log("\n2. Proposals");
  for (const files of quick ? [1000] : [1000, 20_000]) {
    const dir = makeRepo(`apply-${files}`, files, brief());
    const runs = quick ? 3 : 7;
    const target = `${dir}/src/d0/f0.txt`;
    const contents = ["alpha\n", "beta\n"];
    const floor: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      atomicWriteFileSync(`${work}/floor.txt`, contents[i % 2]);
      floor.push(performance.now() - t);
    }
    const fl = median(floor);
    const dry: number[] = [];
    const wet: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const nonce = await dispatch(dir);
      const base = sha256Hex(Deno.readFileSync(target));
      const file = `${work}/p.json`;
      Deno.writeTextFileSync(
        file,
        JSON.stringify({
          kind: "change-proposal",
          dispatch: nonce,
          path: "src/d0/f0.txt",
          base_sha256: base,
          content: contents[i % 2] === Deno.readTextFileSync(target)
            ? contents[(i + 1) % 2]
            : contents[i % 2],
          rationale: "bench",
        }),
      );
      const d = await timeCmd(deno, cli(["apply", file, "--dry-run", "--project", dir]), {
        env: envBase,
        runs: 1,
      });
      const w = await timeCmd(deno, cli(["apply", file, "--project", dir]), {
        env: envBase,
        runs: 1,
      });
      if (i > 0) {
        dry.push(d);
        wet.push(w);
      }
    }
    row(`floor: one atomic write of the same bytes`, fmt(fl));
    row(
      `apply --dry-run, ${files / 1000}k-file repo, whole process`,
      fmt(median(dry)),
      `${(median(dry) / fl).toFixed(0)}x the floor`,
    );
    row(
      `apply, ${files / 1000}k-file repo, whole process`,
      fmt(median(wet)),
      `${(median(wet) / fl).toFixed(0)}x the floor`,
    );
  }
}

async function runSection(): Promise<void> {
  console.log("\n3. Command requests (floor and subject interleaved, round by round)");
  const empty = emptyTs;
  // Rounds per repo size: one dispatch allows 25 uses, two runs per round plus two warm-ups.
  const rounds = quick ? 3 : 11;
  // The release form: the code-split bundle scripts/build.ts ships (dist/agentteams/main.js).
  const bundleDir = `${work}/bundle`;
  await bundleTo(root, bundleDir);
  const statusArgs = ["status", "--porcelain=v1", "-z", "--untracked-files=all"];

  async function measure(
    label: string,
    dir: string,
    env: Record<string, string>,
    target = "(target <= 2.0)",
  ): Promise<void> {
    const file = `${work}/r.json`;
    writeTrueRequest(file, await dispatch(dir, env));
    const runArgs = ["run", file, "--unconfined", "--project", dir];
    const args = cli(runArgs);
    // As the installed launcher runs it: the bundle, with `run`'s V8 options.
    const bundled = cli(runArgs, `${bundleDir}/main.js`, launchV8Flags("run"));
    await timeCmd(deno, args, { env, runs: 1 });
    await timeCmd(deno, bundled, { env, runs: 1 });
    // The machine drifts: each round measures every part of the floor and both subjects, so a
    // slow stretch weighs on both sides of the ratio alike.
    const t = { start: [] as number[], status: [] as number[], truth: [] as number[] };
    const ours: number[] = [];
    const viaBundle: number[] = [];
    for (let i = 0; i < rounds; i++) {
      t.start.push(await timeCmd(deno, ["run", "--no-check", empty], { runs: 1 }));
      t.status.push(await timeCmd("git", statusArgs, { cwd: dir, runs: 1 }));
      t.status.push(await timeCmd("git", statusArgs, { cwd: dir, runs: 1 }));
      t.truth.push(await timeCmd("/usr/bin/true", [], { runs: 1 }));
      ours.push(await timeCmd(deno, args, { env, runs: 1 }));
      viaBundle.push(await timeCmd(deno, bundled, { env, runs: 1 }));
    }
    const [start, status, truth] = [median(t.start), median(t.status), median(t.truth)];
    const floor = start + 2 * status + truth;
    row(
      `floor ${label}: deno start ${fmt(start)} + 2 x git status ${fmt(status)} + true`,
      fmt(floor),
    );
    row(
      `run true (unconfined), ${label}, whole process`,
      fmt(median(ours)),
      `${(median(ours) / floor).toFixed(2)}x the floor ${target}`,
    );
    row(
      "  the same from the release bundle (main.js, the launcher's V8 options)",
      fmt(median(viaBundle)),
      `${(median(viaBundle) / floor).toFixed(2)}x the floor`,
    );
  }

  for (const files of quick ? [1000] : [1000, 20_000, 100_000]) {
    await measure(`${files / 1000}k`, makeRepo(`run-${files}`, files, brief()), envBase);
  }
  // "1k+ledger", a long-lived project: a 1k-file repo beside a 100k-row ledger (47 MB), against
  // the same repo beside an empty ledger, both signed with the bench key, rounds interleaved (the
  // order alternating): an act's cost must not grow with the history.
  if (!quick) {
    const fresh = makeRepo("run-1000-ledger-0", 1000, brief());
    const long = makeRepo("run-1000-ledger-100k", 1000, brief());
    await makeLedger(long, 100_000);
    const env = envBenchKey;
    const subjects: { src: string[]; bundled: string[] }[] = [];
    for (const dir of [fresh, long]) {
      const file = `${work}/r-${subjects.length}.json`;
      writeTrueRequest(file, await dispatch(dir, env));
      const runArgs = ["run", file, "--unconfined", "--project", dir];
      subjects.push({
        src: cli(runArgs),
        bundled: cli(runArgs, `${bundleDir}/main.js`, launchV8Flags("run")),
      });
    }
    for (const x of subjects) {
      await timeCmd(deno, x.src, { env, runs: 1 });
      await timeCmd(deno, x.bundled, { env, runs: 1 });
    }
    const t = [[[], []], [[], []]] as number[][][]; // [repo][src, bundle]
    for (let i = 0; i < rounds; i++) {
      for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
        t[k][0].push(await timeCmd(deno, subjects[k].src, { env, runs: 1 }));
        t[k][1].push(await timeCmd(deno, subjects[k].bundled, { env, runs: 1 }));
      }
    }
    row("run true (unconfined), 1k, beside an empty ledger", fmt(median(t[0][0])));
    row(
      "run true (unconfined), 1k, beside a 100k-row ledger",
      fmt(median(t[1][0])),
      `${(median(t[1][0]) / median(t[0][0])).toFixed(2)}x beside an empty one (target <= 1.15)`,
    );
    row(
      "  the same from the release bundle",
      `${fmt(median(t[1][1]))}`,
      `${(median(t[1][1]) / median(t[0][1])).toFixed(2)}x its ${fmt(median(t[0][1]))} beside an ` +
        "empty one",
    );
  }
}

async function startSection(): Promise<void> {
  console.log("\n0. Start-up (floor and subjects interleaved, round by round)");
  const bundleDir = `${work}/bundle-start`;
  await bundleTo(root, bundleDir);
  const rounds = quick ? 7 : 21;
  const empty: number[] = [];
  const viaBundle: number[] = [];
  const src: number[] = [];
  const bundled = ["run", "--no-config", ...releaseFlags(), `${bundleDir}/main.js`, "--version"];
  // `--version` is answered before the CLI loads (main.ts): a command's start is measured too,
  // a read-only gate in a project with no triad files (the CLI, the command table, the key).
  const bare = `${work}/start-bare`;
  Deno.mkdirSync(bare);
  const command = cli(["gate", "delete:x", "--project", bare], `${bundleDir}/main.js`);
  const commandStart: number[] = [];
  await timeCmd(deno, bundled, { env: envBase, runs: 1 });
  await timeCmd(deno, cli(["--version"]), { env: envBase, runs: 1 });
  await timeCmd(deno, command, { env: envBase, runs: 1, expect: 1 });
  for (let i = 0; i < rounds; i++) {
    empty.push(await timeCmd(deno, ["run", "--no-config", emptyTs], { runs: 1 }));
    viaBundle.push(await timeCmd(deno, bundled, { env: envBase, runs: 1 }));
    src.push(await timeCmd(deno, cli(["--version"]), { env: envBase, runs: 1 }));
    commandStart.push(await timeCmd(deno, command, { env: envBase, runs: 1, expect: 1 }));
  }
  const fl = median(empty);
  row("floor: an empty `deno run`", fmt(fl));
  row(
    "--version from the release bundle, whole process",
    fmt(median(viaBundle)),
    `${(median(viaBundle) / fl).toFixed(2)}x the floor (target <= 1.6)`,
  );
  row(
    "--version from the source tree, whole process",
    fmt(median(src)),
    `${(median(src) / fl).toFixed(2)}x the floor`,
  );
  row(
    "a command's start: gate, nothing to read, release bundle",
    fmt(median(commandStart)),
    `${(median(commandStart) / fl).toFixed(2)}x the floor`,
  );
}

/**
 * One confined `true` in `dir` as a run gets it: plan (roots, guards, the write roots' scan),
 * private TMPDIR, bwrap with the plan's argv, clean-up. Returns the bwrap process's time and the
 * whole; `host` stands for the machine's answers (bwrap's features, Landlock) when given.
 */
async function confinedTrue(
  dir: string,
  env: Record<string, string>,
  exec: string[],
  host?: ReturnType<typeof sandboxHost>,
): Promise<{ proc: number; whole: number }> {
  const t0 = performance.now();
  const tmpdir = makePrivateTmpdir();
  const plan = prepareConfinement({
    project: dir,
    home: envBase.HOME,
    tmpdir,
    agent: { exec, write: ["src"] },
    cwd: ".",
    argv: ["/usr/bin/true"],
    env,
    network: false,
    protectedPaths: [],
    hiddenDirs: [envBase.AGENTTEAMS_KEY_DIR],
    controlPlane: { git: [] },
    ...(host === undefined ? {} : { host }),
  });
  const cmd = confineArgv(plan, "bwrap");
  const t1 = performance.now();
  const r = await runProcess({
    program: cmd.program,
    args: cmd.args,
    cwd: cmd.cwd,
    env: cmd.env,
    timeoutMs: 10_000,
  });
  const proc = performance.now() - t1;
  removeMaskPoints(plan);
  removePrivateTmpdir(tmpdir);
  if (r.exit !== 0) throw new Error(`confined true failed: ${new TextDecoder().decode(r.stderr)}`);
  return { proc, whole: performance.now() - t0 };
}

async function confineSection(): Promise<void> {
  console.log("\n4. Confinement");
  const dir = makeRepo("confine", 100, brief());
  const runs = quick ? 10 : 40;
  const plain: number[] = [];
  const bare: number[] = [];
  const sandbox: number[] = [];
  const whole: number[] = [];
  const env = { PATH: "/usr/bin:/bin", HOME: envBase.HOME };
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    await runProcess({ program: "/usr/bin/true", args: [], cwd: dir, env, timeoutMs: 10_000 });
    plain.push(performance.now() - t);
    t = performance.now();
    await runProcess({
      program: "/usr/bin/bwrap",
      args: ["--ro-bind", "/", "/", "/usr/bin/true"],
      cwd: dir,
      env,
      timeoutMs: 10_000,
    });
    bare.push(performance.now() - t);
    // The whole confinement (planning, private TMPDIR, bwrap, clean-up); and, timed apart, the
    // bwrap process alone.
    const c = await confinedTrue(dir, env, ["/usr/bin"]);
    sandbox.push(c.proc);
    whole.push(c.whole);
  }
  const b = median(bare);
  row("plain true", fmt(median(plain)));
  row("bare bwrap --ro-bind / / true", fmt(b), `${(b / median(plain)).toFixed(2)}x plain`);
  row(
    "true in the project's sandbox (bwrap with the plan's argv)",
    fmt(median(sandbox)),
    `${(median(sandbox) / b).toFixed(2)}x bare bwrap (target <= 1.3)`,
  );
  row(
    "  the same with planning, private TMPDIR and clean-up",
    fmt(median(whole)),
    `${(median(whole) / b).toFixed(2)}x bare bwrap`,
  );
  // The same, whole process: what the plan's scan of the write roots costs at scale.
  for (const files of quick ? [1000] : [1000, 20_000]) await confinedVsUnconfined(files);
}

/**
 * Whole-process `run` of `true` confined against the same run `--unconfined`, on a repo of
 * `files` files all inside the agent's write root (what the confinement scans), rounds
 * interleaved with the order alternating.
 */
async function confinedVsUnconfined(files: number): Promise<void> {
  const dir = makeRepo(
    `confine-${files}`,
    files,
    brief({ confined_programs: { worker: { exec: ["/usr/bin", "/bin"], write: ["src"] } } }),
  );
  const rounds = quick ? 3 : 11;
  const file = `${work}/confine-r.json`;
  let uses = 25;
  const confined = cli(["run", file, "--project", dir]);
  const unconfined = cli(["run", file, "--unconfined", "--project", dir]);
  const t = { confined: [] as number[], unconfined: [] as number[] };
  for (let i = 0; i < rounds + 1; i++) {
    if (uses + 2 > 25) {
      writeTrueRequest(file, await dispatch(dir));
      uses = 0;
    }
    const order = i % 2 === 0
      ? [["confined", confined], ["unconfined", unconfined]] as const
      : [["unconfined", unconfined], ["confined", confined]] as const;
    for (const [k, args] of order) {
      const ms = await timeCmd(deno, [...args], { env: envBase, runs: 1 });
      if (i > 0) t[k].push(ms); // the first round warms up
    }
    uses += 2;
  }
  const u = median(t.unconfined);
  // Each round's pair ran back to back: on a shared machine the median of the pairs' own ratios
  // (and differences) is steadier than the ratio of the two medians.
  const ratios = t.confined.map((c, k) => c / t.unconfined[k]);
  const extra = t.confined.map((c, k) => c - t.unconfined[k]);
  row(`run true --unconfined, ${files / 1000}k files in the write root, whole process`, fmt(u));
  row(
    `run true confined (bwrap), ${files / 1000}k files in the write root, whole process`,
    fmt(median(t.confined)),
    `${(median(t.confined) / u).toFixed(2)}x unconfined (target <= 1.25); per round ` +
      `${median(ratios).toFixed(2)}x, +${fmt(median(extra))}`,
  );
}

/**
 * Confined `true` with the exec allowlist (Landlock, through the inner guard) against the same
 * plan without it (the kernel's answer taken as "no Landlock"), rounds interleaved with the order
 * alternating: the bwrap process alone, and with planning (which stats each exec path) too.
 */
async function execAllowlistSection(): Promise<void> {
  console.log("\n4b. Exec allowlist (Landlock)");
  const real = sandboxHost();
  if (real.landlock.abi < 1) {
    row("exec allowlist", "not measured", `no Landlock here: ${real.landlock.reason}`);
    return;
  }
  const dir = makeRepo("execallow", 100, brief());
  const runs = quick ? 10 : 40;
  const env = { PATH: "/usr/bin:/bin", HOME: envBase.HOME };
  const hosts = {
    with: real,
    without: { ...real, landlock: { abi: 0, reason: "bench: left out" } },
  } as const;
  const t = {
    with: { proc: [] as number[], whole: [] as number[] },
    without: { proc: [] as number[], whole: [] as number[] },
  };
  for (let i = 0; i < runs + 1; i++) {
    const order = i % 2 === 0 ? ["with", "without"] as const : ["without", "with"] as const;
    for (const k of order) {
      const c = await confinedTrue(dir, env, ["/usr/bin/true"], hosts[k]);
      if (i > 0) { // the first round warms up
        t[k].proc.push(c.proc);
        t[k].whole.push(c.whole);
      }
    }
  }
  const floor = median(t.without.proc);
  row(`floor: confined true without the exec allowlist (bwrap process)`, fmt(floor));
  row(
    `confined true with the exec allowlist (Landlock ABI ${real.landlock.abi}, inner guard)`,
    fmt(median(t.with.proc)),
    `${(median(t.with.proc) / floor).toFixed(2)}x the floor`,
  );
  row(
    "  the same with planning, private TMPDIR and clean-up",
    fmt(median(t.with.whole)),
    `${(median(t.with.whole) / median(t.without.whole)).toFixed(2)}x without (${
      fmt(median(t.without.whole))
    })`,
  );
}

/**
 * The session settings' deny rules doctor asks for in the bench project `dir` (its brief
 * `agentteams.json`), taken from the check itself (`operatorSettingsInput`, the input doctor and
 * serve give it), so the bench never falls behind a rule it adds.
 */
function sessionDeny(dir: string): string[] {
  const root = Deno.realPathSync(dir);
  const findings = sessionSettingsFindings(operatorSettingsInput({
    root,
    env: envBase,
    settings: [],
    usesClaude: true,
    brief: `${root}/agentteams.json`,
  }));
  return findings.filter((f) => f.code === "SETTINGS_RULE_MISSING" && f.add !== null)
    .map((f) => JSON.parse(f.add as string) as string);
}

/**
 * Writes the project's `.claude/settings.json`: {@link sessionDeny}, and `allow` if given, with
 * Claude's sandbox on (doctor and serve require it: without it the rules do not bind Bash).
 */
function writeSessionSettings(dir: string, allow: string[] = []): string {
  const text = JSON.stringify(
    {
      permissions: { deny: sessionDeny(dir), allow },
      sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false },
    },
    null,
    2,
  );
  Deno.mkdirSync(`${dir}/.claude`, { recursive: true });
  Deno.writeTextFileSync(`${dir}/.claude/settings.json`, text);
  return text;
}

async function doctorSection(): Promise<void> {
  console.log("\n5. Doctor");
  const dir = makeRepo("doctor", 10, brief());
  const rules = sessionDeny(dir);
  const text = writeSessionSettings(dir, ["Read(./src/**)"]);
  const runs = quick ? 3 : 7;
  const args = cli(["doctor", "--project", dir]);
  await timeCmd(deno, args, { env: envBase, runs: 1 });
  const ours = await timeCmd(deno, args, { env: envBase, runs });
  const start = await timeCmd(deno, ["eval", "--no-check", "0"], { env: envBase, runs });
  const bwrap = await timeCmd("/usr/bin/bwrap", ["--ro-bind", "/", "/", "/usr/bin/true"], { runs });
  row("doctor, whole process", fmt(ours));
  row(
    "  floor: bare deno start + bare bwrap",
    fmt(start + bwrap),
    `ratio ${(ours / (start + bwrap)).toFixed(2)}`,
  );
  const n = quick ? 2000 : 10_000;
  const input = {
    root: dir,
    settings: [{ path: `${dir}/.claude/settings.json`, text }],
    keyDir: envBase.AGENTTEAMS_KEY_DIR,
    secretFiles: [`${envBase.AGENTTEAMS_KEY_DIR}/proposal-ledger.key`],
    homeDir: envBase.HOME,
    usesClaude: true,
    brief: `${dir}/agentteams.json`,
    trustRoots: true,
  };
  const check: number[] = [];
  const parse: number[] = [];
  for (let r = 0; r < runs; r++) {
    let t = performance.now();
    for (let i = 0; i < n; i++) sessionSettingsFindings(input);
    check.push((performance.now() - t) * 1000 / n);
    t = performance.now();
    for (let i = 0; i < n; i++) readJson(text, { dialect: "json" });
    parse.push((performance.now() - t) * 1000 / n);
  }
  row(`session settings check (${rules.length} rules), per call`, `${median(check).toFixed(1)} us`);
  row(
    "  floor: readJson of the same file (positions kept)",
    `${median(parse).toFixed(1)} us`,
    `ratio ${(median(check) / median(parse)).toFixed(1)}`,
  );
}

/**
 * A runner (`agentteams serve`) in the background, launched with the flags `permissions serve`
 * prints.
 */
async function startRunner(dir: string): Promise<{ stop: () => Promise<void> }> {
  const perm = await new Deno.Command(deno, {
    args: cli(["permissions", "serve", "--project", dir]),
    env: envBase,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const line = new TextDecoder().decode(perm.stdout).trim();
  if (perm.code !== 0 || line === "") {
    throw new Error(`permissions serve: ${new TextDecoder().decode(perm.stderr)}`);
  }
  // bash only parses the printed (shell-quoted) line; exec makes the child the runner itself.
  const child = new Deno.Command("bash", {
    args: ["-c", `exec ${line}`],
    env: envBase,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let log = "";
  const drained = (async () => {
    for await (const c of child.stderr.pipeThrough(new TextDecoderStream())) log += c;
  })();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const statusDir = queuePaths(dir).status;
  const deadline = Date.now() + 60_000;
  while (!(await liveRunner(statusDir, new Date()))) {
    if (exited || Date.now() > deadline) {
      if (!exited) child.kill("SIGTERM");
      await status;
      await drained;
      throw new Error(`the runner did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    stop: async () => {
      if (!exited) child.kill("SIGTERM");
      const s = await status;
      await drained;
      if (s.code !== 0) throw new Error(`the runner exited ${s.code}:\n${log}`);
    },
  };
}

async function runnerSection(): Promise<void> {
  console.log("\n6. Runner (queue mode and direct mode interleaved, round by round)");
  const dir = makeRepo("runner", 100, {
    project_goal: "bench",
    write_policy: "orchestrator-only",
    privilege_profile: "confined",
    agent_policies: {
      worker: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] },
    },
    confined_programs: { worker: { exec: ["/usr/bin", "/bin"], write: ["src"] } },
  });
  writeSessionSettings(dir);
  const runner = await startRunner(dir);
  try {
    // (a) One round: `run` through the queue and `run --direct`, the order alternating. A
    // dispatch allows 25 uses; a new one (itself queued) is issued before they run out.
    const rounds = quick ? 5 : 21;
    const file = `${work}/runner-r.json`;
    let uses = 25;
    const queued: number[] = [];
    const direct: number[] = [];
    const q = cli(["run", file, "--project", dir]);
    const d = cli(["run", file, "--direct", "--project", dir]);
    for (let i = 0; i < rounds + 1; i++) {
      if (uses + 2 > 25) {
        const nonce = await dispatch(dir);
        if (!/^[0-9a-f]{32}$/.test(nonce)) throw new Error(`dispatch printed ${nonce}`);
        writeTrueRequest(file, nonce);
        uses = 0;
      }
      const first = i % 2 === 0 ? q : d;
      const second = i % 2 === 0 ? d : q;
      const a = await timeCmd(deno, first, { env: envBase, runs: 1 });
      const b = await timeCmd(deno, second, { env: envBase, runs: 1 });
      uses += 2;
      if (i === 0) continue; // the warm-up round
      queued.push(first === q ? a : b);
      direct.push(first === q ? b : a);
    }
    const fl = median(direct);
    row("run true --direct (confined), same project and key", fmt(fl));
    row(
      "run true through the queue (live runner), whole process",
      fmt(median(queued)),
      `${(median(queued) / fl).toFixed(2)}x direct (target <= 1.5)`,
    );

    // (b) Pickup: verify-ledger requests written in-process one at a time (the queue never backs
    // up); the runner reports each claim's delay after the request file's mtime.
    const runnerPublic = await sealPublicFromPem(readRunnerPublicText(envBase));
    const n = quick ? 50 : 200;
    const waits: number[] = [];
    const trips: number[] = [];
    const submits: number[] = [];
    for (let i = 0; i < n + 1; i++) {
      const t = performance.now();
      const s = await submitRequest(dir, { kind: "verify-ledger" }, "orchestrator", {
        runnerPublic: () => Promise.resolve(runnerPublic),
      });
      const submitted = performance.now() - t;
      const r = await waitForResult(dir, s, { timeoutMs: 30_000, runnerPublic });
      const trip = performance.now() - t;
      if (!r.body.ok || r.body.queue_wait_ms === null) {
        throw new Error(`verify-ledger through the queue: ${JSON.stringify(r.body)}`);
      }
      if (i === 0) continue; // the warm-up request
      waits.push(r.body.queue_wait_ms);
      trips.push(trip);
      submits.push(submitted);
    }
    row(
      `runner pickup (claim - request mtime), ${n} requests`,
      fmt(median(waits)),
      `p95 ${fmt(percentile(waits, 0.95))} (target p95 < 50 ms); max ${fmt(Math.max(...waits))}`,
    );
    // The mtime is the request's last write, before its fsync and rename: the pickup figure
    // holds the requester's fsync too (at most the whole submit).
    row(
      "  of which at most the submit (seal, write, fsync, rename)",
      fmt(median(submits)),
      `p95 ${fmt(percentile(submits, 0.95))}`,
    );
    row(
      "  in-process submit to opened result (verify-ledger)",
      fmt(median(trips)),
      `p95 ${fmt(percentile(trips, 0.95))}`,
    );
  } finally {
    await runner.stop();
  }
}

/** A generated team of `n` agent files (Claude mostly, some Goose recipes and Codex TOML). */
function makeTeam(n: number): { dir: string; fronts: string[] } {
  const dir = `${work}/team-${n}`;
  const fronts: string[] = [];
  const section = "\n## Write Policy: Return Proposals, Never Write\n\nReturn proposals.\n";
  for (const sub of [".claude/agents/team", ".goose/recipes", ".codex/agents"]) {
    Deno.mkdirSync(`${dir}/${sub}`, { recursive: true });
  }
  for (let i = 0; i < n; i++) {
    const kind = i % 10;
    if (kind < 8) {
      const fm =
        `name: agent-${i}\ndescription: "Use this agent when: the user asks for review ${i}. ` +
        `<example>user: 'check it'</example>"\ntools: Read, Grep, Glob\nmodel: sonnet\ncolor: blue\n`;
      fronts.push(fm);
      Deno.writeTextFileSync(
        `${dir}/.claude/agents/team/agent-${i}.md`,
        `---\n${fm}---\nBody ${i}.\n${section}`,
      );
    } else if (kind === 8) {
      const y =
        `version: 1.0.0\ntitle: agent ${i}\ndescription: reviews\ninstructions: |\n  Review.\n` +
        `  ## Write Policy: Return Proposals, Never Write\nextensions:\n  - type: stdio\n` +
        `    name: agentteams_readfs\n    cmd: agentteams\n` +
        `    args: [mcp, readfs, --root, .]\n` +
        `    available_tools: [read_file, list_dir, grep]\n`;
      fronts.push(y);
      Deno.writeTextFileSync(`${dir}/.goose/recipes/agent-${i}.yaml`, y);
    } else {
      Deno.writeTextFileSync(
        `${dir}/.codex/agents/agent-${i}.toml`,
        `name = "agent-${i}"\nsandbox_mode = "read-only"\ndeveloper_instructions = """\n` +
          `## Write Policy: Return Proposals, Never Write\n"""\n`,
      );
    }
  }
  return { dir, fronts };
}

async function auditSection(): Promise<void> {
  console.log(
    "\n7. Audit (in process, then whole process; rounds interleave the floor and the subjects)",
  );
  const n = quick ? 2_000 : 10_000;
  const { dir, fronts } = makeTeam(n);
  const opts = { switchOn: true, frameworks: ["claude", "goose", "codex"] };
  const entries = await walkTeam(dir, { followLinks: false });
  const rounds = quick ? 3 : 7;
  const floor: number[] = [];
  const pure: number[] = [];
  const disk: number[] = [];
  let errors = -1;
  for (let r = 0; r < rounds; r++) {
    let t = performance.now();
    for (const f of fronts) parseYaml(f);
    floor.push(performance.now() - t);
    t = performance.now();
    const found = auditEntries(entries, opts);
    pure.push(performance.now() - t);
    errors = found.filter((f) => f.severity === "error").length;
    t = performance.now();
    await auditTeam(dir, ["."], opts);
    disk.push(performance.now() - t);
  }
  if (errors !== 0) throw new Error(`the bench team should be compliant: ${errors} error(s)`);
  const fl = median(floor);
  row(`floor: bare yaml parse of the ${fronts.length} front matters/recipes`, fmt(fl));
  row(
    `audit checks of the ${entries.length}-file team (files in memory)`,
    fmt(median(pure)),
    `${(median(pure) / fl).toFixed(2)}x the floor (target <= 2)`,
  );
  row(
    `whole audit of the ${entries.length}-file team (walk, read, check)`,
    fmt(median(disk)),
    `${(median(disk) / fl).toFixed(2)}x the floor`,
  );
  // Whole process: `agentteams audit DIR` (text, and --format json) against a whole-process floor
  // that walks, reads and parses the same front matters with the same `yaml` (audit_floor.ts).
  const floorArgs = [
    "run",
    "--allow-read",
    "--allow-env=LOG_STREAM,LOG_TOKENS",
    "--no-check",
    `${root}/scripts/bench/audit_floor.ts`,
    dir,
  ];
  const text = cli(["audit", dir]);
  const json = cli(["audit", dir, "--format", "json"]);
  const w = { floor: [] as number[], text: [] as number[], json: [] as number[] };
  await timeCmd(deno, floorArgs, { runs: 1 });
  await timeCmd(deno, text, { env: envBase, runs: 1 });
  for (let r = 0; r < rounds; r++) {
    w.floor.push(await timeCmd(deno, floorArgs, { runs: 1 }));
    w.text.push(await timeCmd(deno, text, { env: envBase, runs: 1 }));
    w.json.push(await timeCmd(deno, json, { env: envBase, runs: 1 }));
  }
  const wf = median(w.floor);
  row("floor, whole process: walk, read, yaml-parse the front matters", fmt(wf));
  row(
    `agentteams audit of the ${entries.length}-file team, whole process (text)`,
    fmt(median(w.text)),
    `${(median(w.text) / wf).toFixed(2)}x the whole-process floor`,
  );
  row(
    "  the same with --format json",
    fmt(median(w.json)),
    `${(median(w.json) / wf).toFixed(2)}x the whole-process floor`,
  );
}

/**
 * A CLI command's whole process against a bare Deno start plus `inProcessFloor` (the in-process
 * floor measured just before), rounds interleaved.
 */
async function wholeProcess(
  label: string,
  args: string[],
  env: Record<string, string>,
  inProcessFloor: number,
): Promise<void> {
  const rounds = quick ? 3 : 7;
  const start: number[] = [];
  const ours: number[] = [];
  await timeCmd(deno, args, { env, runs: 1 });
  for (let i = 0; i < rounds; i++) {
    start.push(await timeCmd(deno, ["run", "--no-check", emptyTs], { runs: 1 }));
    ours.push(await timeCmd(deno, args, { env, runs: 1 }));
  }
  const floor = median(start) + inProcessFloor;
  row(
    `  ${label}, whole process (the CLI)`,
    fmt(median(ours)),
    `${(median(ours) / floor).toFixed(2)}x deno start + that floor (${fmt(floor)})`,
  );
}

/** A project with `n` signed, chained decision rows (a HALT and its retraction every 50) and `n`
 * HMAC waiver rows; the action `gate` asks about is allowed by the last waiver. */
async function makeGateProject(
  n: number,
  decisionKey: string,
  waiverKey: string,
): Promise<string> {
  const dir = `${work}/gate-${n}`;
  Deno.mkdirSync(`${dir}/references`, { recursive: true });
  Deno.writeTextFileSync(`${dir}/references/security-approvers.txt`, "security\n");
  const dk = new HmacKey(enc.encode(decisionKey));
  const recs: Record<string, string>[] = [];
  let prev = "";
  for (let i = 0; i < n; i++) {
    const verdict = i % 50 === 7 ? "HALT" : i % 50 === 8 ? "HALT-RETRACTED" : "PASS";
    const r: Record<string, string> = {
      date: "2026-11-29",
      plan_slug: "bench",
      step: String(i),
      decision: `delete:build/d${verdict === "HALT-RETRACTED" ? i - 1 : i}.bin`,
      status: verdict,
      conditions: "",
      conditions_verified: verdict === "PASS" ? "verified" : "",
      evidence: verdict === "HALT-RETRACTED" ? "fixed" : "",
      owner: "@security",
      prev_digest: prev,
    };
    r.signature = dk.hex(decisionPayload(r));
    prev = sha256Hex(decisionPayload(r));
    recs.push(r);
  }
  Deno.writeTextFileSync(
    `${dir}/references/security-decisions.log.csv`,
    formatCsv(NEW_DECISION_HEADER, recs.map((r) => NEW_DECISION_HEADER.map((c) => r[c] ?? "")), {
      eol: "\n",
      firstRowEol: "\r\n",
    }),
  );
  const wk = new HmacKey(enc.encode(waiverKey));
  const wrecs: string[][] = [];
  for (let i = 0; i < n; i++) {
    const r: Record<string, string> = {
      timestamp: "2026-11-29T10:00:00Z",
      waiver_id: `W-${i}`,
      action_reviewed: `delete:build/w${i}.bin`,
      expires_at: "2099-01-01T00:00:00Z",
      max_uses: "3",
      uses: "0",
      approver: "security",
      ticket_id: `OPS-${i}`,
      reason_code: "bench",
      conditions_verified: "verified",
    };
    r.signature = wk.hex(waiverPayload(r));
    wrecs.push(WAIVER_COLUMNS.map((c) => r[c] ?? ""));
  }
  Deno.writeTextFileSync(
    `${dir}/references/security-waivers.log.csv`,
    formatCsv(WAIVER_COLUMNS, wrecs, { eol: "\n" }),
  );
  // The indexes `decision sign` and `waiver issue` keep after their write, with the CLI's key,
  // and the anchors they record in the proposal ledger (what the gate holds the files to).
  const key = loadLedgerKey({ env: envBase, mode: "direct" }).hmac;
  await keepTriadIndexes(dir, key, "decisions");
  await keepTriadIndexes(dir, key, "waivers");
  return dir;
}

async function gateSection(): Promise<void> {
  console.log("\n9. The gate (floor and subjects interleaved, round by round)");
  const bundleDir = `${work}/bundle-gate`;
  await bundleTo(root, bundleDir);
  const decisionKey = "bench-decision-key";
  const waiverKey = "bench-waiver-key";
  const env = {
    ...envBase,
    AGENTTEAMS_DECISION_SIGNING_KEY: decisionKey,
    AGENTTEAMS_WAIVER_SIGNING_KEY: waiverKey,
  };
  // A gate is ~60 ms against a ~30 ms floor: 21 rounds, so one slow stretch moves the medians less.
  const rounds = quick ? 3 : 21;
  for (const n of [1_000, 10_000]) {
    const dir = await makeGateProject(n, decisionKey, waiverKey);
    const action = `delete:build/w${n - 1}.bin`;
    const args = ["gate", action, "--project", dir];
    const floorArgs = [
      "run",
      "--no-check",
      "--allow-read",
      `${root}/scripts/bench/gate_floor.ts`,
      dir,
      waiverKey,
    ];
    const src = cli(args);
    const bundled = cli(args, `${bundleDir}/main.js`);
    const t = { floor: [] as number[], src: [] as number[], bundled: [] as number[] };
    await timeCmd(deno, bundled, { env, runs: 1 });
    for (let i = 0; i < rounds; i++) {
      t.floor.push(await timeCmd(deno, floorArgs, { runs: 1 }));
      t.bundled.push(await timeCmd(deno, bundled, { env, runs: 1 }));
      t.src.push(await timeCmd(deno, src, { env, runs: 1 }));
    }
    const fl = median(t.floor);
    row(`floor ${n / 1000}k: deno start, read both files, HMAC each`, fmt(fl));
    row(
      `gate beside ${n / 1000}k decision and waiver rows, release bundle`,
      fmt(median(t.bundled)),
      `${(median(t.bundled) / fl).toFixed(2)}x the floor${n === 10_000 ? " (target <= 2)" : ""}`,
    );
    row(
      "  the same from the source tree",
      fmt(median(t.src)),
      `${(median(t.src) / fl).toFixed(2)}x the floor`,
    );
    // In process: the library's decision against reading both files and HMAC-ing their bytes.
    const files = ["security-decisions.log.csv", "security-waivers.log.csv"].map((f) =>
      `${dir}/references/${f}`
    );
    const inFloor: number[] = [];
    const inOurs: number[] = [];
    const now = new Date("2026-11-30T12:00:00Z");
    // The key the CLI reads its indexes with (the bench's key dir): the same reads as the process.
    const indexKey = loadLedgerKey({ env, mode: "direct" }).hmac;
    for (let i = 0; i < rounds; i++) {
      let s = performance.now();
      const k = new HmacKey(enc.encode(waiverKey));
      for (const f of files) k.hex(Deno.readFileSync(f));
      inFloor.push(performance.now() - s);
      s = performance.now();
      const d = await decideGate(dir, action, { env, now, indexKey });
      if (!d.allowed) throw new Error(`gate: ${d.problem?.reason}`);
      inOurs.push(performance.now() - s);
    }
    row(`  in process: read both files, HMAC their bytes`, fmt(median(inFloor)));
    row(
      `  in process: decideGate`,
      fmt(median(inOurs)),
      `${(median(inOurs) / median(inFloor)).toFixed(2)}x that floor`,
    );
  }
}

/**
 * 10. The SHA-256 decision (issue 25 item 4): the ledger's two per-row hashes over a 100k-row
 * ledger by each candidate (scripts/bench/sha256_paths.ts: the WebAssembly batch, node:crypto per
 * row with its HMAC pads hashed once, @noble/hashes), whole processes, against the verify floor
 * (a bare Deno start plus two OpenSSL SHA-256 passes); and one append's hashing in a fresh
 * process (load the primitive, hash and MAC one row) against a bare Deno start.
 */
async function sha256Section(): Promise<void> {
  console.log("\n10. SHA-256 on the verify and append paths (whole processes, rounds interleaved)");
  const dir = `${work}/sha256-100k`;
  await makeLedger(dir, 100_000);
  const ledger = `${dir}/.agentteams/proposal-ledger.jsonl`;
  const script = `${root}/scripts/bench/sha256_paths.ts`;
  const impls = ["wasm", "node", "noble"];
  // @noble/hashes is a bench-only package: pinned in the tests' lockfile, not the tool's.
  const args = (impl: string, mode: string) => [
    "run",
    "--allow-read",
    "--no-check",
    `--lock=${root}/tests/deno.lock`,
    script,
    impl,
    mode,
    ledger,
    KEY,
  ];
  const rounds = quick ? 3 : 7;
  const t: Record<string, number[]> = { start: [], sha: [] };
  for (const i of impls) {
    t[`${i} verify`] = [];
    t[`${i} append`] = [];
    for (const m of ["verify", "append"]) await timeCmd(deno, args(i, m), { runs: 1 });
  }
  for (let r = 0; r < rounds; r++) {
    t.start.push(await timeCmd(deno, ["run", "--no-check", emptyTs], { runs: 1 }));
    t.sha.push(await timeCmd("openssl", ["dgst", "-sha256", ledger], { runs: 1 }));
    for (const i of impls) {
      for (const m of ["verify", "append"]) {
        t[`${i} ${m}`].push(await timeCmd(deno, args(i, m), { runs: 1 }));
      }
    }
  }
  const start = median(t.start);
  const floor = start + 2 * median(t.sha);
  row("floor: deno start + 2 x openssl sha256 over the ledger", fmt(floor));
  for (const i of impls) {
    const v = median(t[`${i} verify`]);
    row(`  ${i}: both hashes of 100k rows`, fmt(v), `${(v / floor).toFixed(2)}x the floor`);
  }
  row("a bare deno start", fmt(start));
  for (const i of impls) {
    const a = median(t[`${i} append`]);
    row(`  ${i}: load, hash and MAC one row`, fmt(a), `${(a / start).toFixed(2)}x a bare start`);
  }
}

async function authzSection(): Promise<void> {
  console.log(
    "\n8. Authorization ledgers (in process and whole process; floor and subject interleaved)",
  );
  const n = 10_000;
  const rounds = quick ? 3 : 7;
  const now = new Date("2026-11-30T12:00:00Z");
  // Waivers: 10,000 HMAC rows.
  const wroot = `${work}/authz-waivers`;
  Deno.mkdirSync(`${wroot}/references`, { recursive: true });
  const wkey = new HmacKey(enc.encode("bench-waiver-key"));
  const wrecs: Record<string, string>[] = [];
  for (let i = 0; i < n; i++) {
    const r: Record<string, string> = {
      timestamp: "2026-11-29T10:00:00Z",
      waiver_id: `W-${i}`,
      action_reviewed: `delete:build/f${i}.bin`,
      expires_at: "2099-01-01T00:00:00Z",
      max_uses: "3",
      uses: "0",
      approver: "security",
      ticket_id: `OPS-${i}`,
      reason_code: "bench",
      conditions_verified: "verified",
    };
    r.signature = wkey.hex(waiverPayload(r));
    wrecs.push(r);
  }
  Deno.writeTextFileSync(
    `${wroot}/references/security-waivers.log.csv`,
    formatCsv(WAIVER_COLUMNS, wrecs.map((r) => WAIVER_COLUMNS.map((c) => r[c] ?? "")), {
      eol: "\n",
    }),
  );
  const payloads = wrecs.map((r) => waiverPayload(r));
  const wFloor: number[] = [];
  const wOurs: number[] = [];
  for (let k = 0; k < rounds; k++) {
    let t = performance.now();
    const fk = new HmacKey(enc.encode("bench-waiver-key"));
    for (let i = 0; i < n; i++) {
      if (!fk.verify(payloads[i], wrecs[i].signature)) throw new Error("floor");
    }
    wFloor.push(performance.now() - t);
    t = performance.now();
    const env = { AGENTTEAMS_WAIVER_SIGNING_KEY: "bench-waiver-key" };
    const rows = await verifyWaivers(wroot, { env, now });
    if (rows.length !== n || !rows.every((r) => r.valid)) throw new Error("waiver verify failed");
    wOurs.push(performance.now() - t);
  }
  row(`floor: ${n} HMAC-SHA256 verifies`, fmt(median(wFloor)));
  row(
    `waiver verify of ${n} rows`,
    fmt(median(wOurs)),
    `${(median(wOurs) / median(wFloor)).toFixed(2)}x the floor (target <= 2)`,
  );
  await wholeProcess(
    `waiver verify of ${n} rows`,
    cli(["waiver", "verify", "--project", wroot]),
    { ...envBase, AGENTTEAMS_WAIVER_SIGNING_KEY: "bench-waiver-key" },
    median(wFloor),
  );
  // Grants: 10,000 Ed25519 write grants, chained.
  const groot = `${work}/authz-grants`;
  const team = `${groot}/.agentteams/team`;
  Deno.mkdirSync(`${groot}/references`, { recursive: true });
  Deno.mkdirSync(`${team}/references/authorized-verify-keys`, { recursive: true });
  Deno.writeTextFileSync(`${team}/references/security-approvers.txt`, "alice\n");
  const pair = await generatePem();
  Deno.writeTextFileSync(`${team}/references/authorized-verify-keys/op1.pub.pem`, pair.publicPem);
  const priv = await importPrivatePem(pair.privatePem);
  const grecs: Record<string, string>[] = [];
  let prev = "";
  for (let i = 0; i < n; i++) {
    const r: Record<string, string> = {
      timestamp: "2026-11-29T10:00:00+00:00",
      grant_id: `G-${i}`,
      issuer_team: "team-a",
      holder_team: "team-b",
      target_path: `docs/d${i}`,
      permitted_ops: "write",
      expires_at: "2099-01-01T00:00:00Z",
      max_uses: "1",
      uses: "0",
      approver: "alice",
      ticket_id: `T-${i}`,
      reason_code: "bench",
      issuer_root: "/srv/team-a",
      prev_digest: prev,
      sig_scheme: "ed25519",
      key_id: "op1",
    };
    r.signature = await signHex(priv, grantMessage(r));
    prev = sha256Hex(grantPayload(r));
    grecs.push(r);
  }
  Deno.writeTextFileSync(
    `${groot}/references/capability-grants.log.csv`,
    formatCsv(GRANT_COLUMNS, grecs.map((r) => GRANT_COLUMNS.map((c) => r[c] ?? "")), { eol: "\n" }),
  );
  const messages = grecs.map((r) => grantMessage(r));
  const gFloor: number[] = [];
  const gOurs: number[] = [];
  for (let k = 0; k < rounds; k++) {
    let t = performance.now();
    const pub = await importPublicPem(pair.publicPem);
    for (let i = 0; i < n; i++) {
      if (!(await verifyHex(pub, grecs[i].signature, messages[i]))) throw new Error("floor");
    }
    gFloor.push(performance.now() - t);
    t = performance.now();
    const rep = await verifyGrants(groot, team, { env: {}, now });
    if (rep.findings.length !== n || !rep.findings.every((f) => f.valid)) {
      throw new Error(`grant verify failed: ${JSON.stringify(rep.findings.find((f) => !f.valid))}`);
    }
    gOurs.push(performance.now() - t);
  }
  row(`floor: ${n} Ed25519 verifies`, fmt(median(gFloor)));
  row(
    `grant verify of ${n} rows (chain included)`,
    fmt(median(gOurs)),
    `${(median(gOurs) / median(gFloor)).toFixed(2)}x the floor (target <= 2)`,
  );
  await wholeProcess(
    `grant verify of ${n} rows`,
    cli(["grant", "verify", "--project", groot]),
    envBase,
    median(gFloor),
  );
}

/** The MCP readfs section: its own process, on the tests' lockfile (the SDK is test-only). */
async function mcpSection(): Promise<void> {
  const out = await new Deno.Command(deno, {
    args: [
      "run",
      "--allow-all",
      `--lock=${root}/tests/deno.lock`,
      `${root}/scripts/bench/mcp_readfs.ts`,
      ...(quick ? ["--quick"] : []),
    ],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error("the mcp section failed");
}

tapSections();
const startedAt = new Date().toISOString();
console.log(`agentteams bench (${quick ? "quick" : "full"}); medians; ${startedAt}`);
try {
  await initKeys();
  if (want("start")) await startSection();
  if (want("ledger")) await ledgerSection();
  if (want("apply")) await applySection();
  if (want("run")) await runSection();
  if (want("confine")) await confineSection();
  if (want("execallow")) await execAllowlistSection();
  if (want("doctor")) await doctorSection();
  if (want("runner")) await runnerSection();
  if (want("audit")) await auditSection();
  if (want("audit")) await auditProcessSection({ root, work, quick });
  if (want("authz")) await authzSection();
  if (want("gate")) await gateSection();
  if (want("mcp")) await mcpSection();
  if (want("sha256")) await sha256Section();
  if (want("netproxy")) await netProxySection({ work, quick, row });
  await writeBenchReport(`${root}/dist`, { mode: quick ? "quick" : "full", time: startedAt });
} finally {
  if (keep) console.log(`scratch kept: ${work}`);
  else Deno.removeSync(work, { recursive: true });
}
