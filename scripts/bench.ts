/**
 * `deno task bench`: speed, always as a ratio to a floor measured in the same run (the machines
 * are noisy; every figure is a median of several runs).
 *
 * 1. Ledger: appends per second (each with fsync) at 0 and at 100k existing rows; whole-process
 *    `ledger verify` of 10k and 100k rows against a plain-Python verifier of the same format
 *    (scripts/bench/verify_ref.py: C json + OpenSSL HMAC, the earlier tool's cost model).
 * 2. Proposals: `apply --dry-run` and `apply` on 1k- and 20k-file repos, against one atomic write
 *    of the same bytes.
 * 3. Command requests: whole-process `run` of `true` (unconfined) on clean 1k-, 20k- and
 *    100k-file repos, against a floor of one bare Deno start + two `git status` + `true`; from
 *    the source tree and from the release bundle (scripts/bundle.ts). Also the 1k repo with a
 *    100k-row ledger, which the ledger guard reads before and after the command.
 * 4. Confinement: `true` under the project's bwrap plan vs bare `bwrap --ro-bind / / true` vs
 *    plain `true`.
 *
 * 5. Authorization: `waiver verify` of 10,000 HMAC waiver rows and `grant verify` of 10,000
 *    Ed25519 grant rows (in process, the library), against a floor of one HMAC / one Ed25519
 *    verify per row in the same run (target <= 2x).
 *
 * Usage: deno task bench [--quick] [--only=ledger|apply|run|confine|authz] [--keep]
 * (`--keep` leaves the scratch directory in place and prints its path, for profiling.)
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { bundleTo } from "./bundle.ts";
import { HmacKey, sha256Hex } from "../lib/crypto/hash.ts";
import { signRow, utcSeconds } from "../lib/ledger/row.ts";
import { headText } from "../lib/ledger/head.ts";
import { appendRow } from "../lib/ledger/append.ts";
import { atomicWriteFileSync } from "../lib/fs/atomic_write.ts";
import { runProcess } from "../lib/process/spawn.ts";
import { prepareConfinement } from "../lib/sandbox/prepare.ts";
import { confineArgv } from "../lib/sandbox/launch.ts";
import { formatCsv } from "../lib/authz/csv.ts";
import { verifyWaivers, WAIVER_COLUMNS, waiverPayload } from "../lib/authz/waivers.ts";
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

const quick = Deno.args.includes("--quick");
const keep = Deno.args.includes("--keep");
const only = Deno.args.find((a) => a.startsWith("--only="))?.slice("--only=".length);
const want = (section: string): boolean => only === undefined || only === section;
const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const main = `${root}/main.ts`;
const deno = Deno.execPath();
const work = Deno.makeTempDirSync({ prefix: "agentteams-bench-" });
const KEY = "bench-ledger-key";
const enc = new TextEncoder();

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function fmt(ms: number): string {
  return ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`;
}

function row(label: string, value: string, note = ""): void {
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

/** Writes a ledger of `n` rows (and its head) directly, in this project's format. */
function makeLedger(dir: string, n: number): void {
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
      },
      hmac,
      { time: t, prev },
    );
    lines.push(line);
    prev = sha256Hex(line);
  }
  Deno.writeTextFileSync(`${dir}/.agentteams/proposal-ledger.jsonl`, lines.join("\n") + "\n");
  Deno.writeTextFileSync(`${dir}/.agentteams/proposal-ledger.head`, headText(n, prev, hmac));
}

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

/** `deno run` of the tool's `entry` (the source tree's main.ts unless given). */
function cli(args: string[], entry = main): string[] {
  return ["run", "--allow-all", "--no-check", entry, ...args];
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
  makeLedger(big, 100_000);
  t = performance.now();
  for (let i = 0; i < n; i++) await appendRow(big, hmac, { action: "bench", i });
  const at100k = n / ((performance.now() - t) / 1000);
  row("append (fsync) at 0 rows", `${at0.toFixed(0)} rows/s`);
  row(
    "append (fsync) at 100k rows",
    `${at100k.toFixed(0)} rows/s`,
    `ratio ${(at100k / at0).toFixed(2)} of the 0-row rate`,
  );

  const keyFile = `${work}/bench.key`;
  Deno.writeTextFileSync(keyFile, KEY);
  for (const rows of [10_000, 100_000]) {
    const dir = `${work}/verify-${rows}`;
    makeLedger(dir, rows);
    const runs = quick ? 3 : 7;
    const env = envBenchKey;
    await timeCmd(deno, cli(["ledger", "verify", "--project", dir]), { env, runs: 1 });
    const ours = await timeCmd(deno, cli(["ledger", "verify", "--project", dir]), { env, runs });
    const py = await timeCmd("python3", [`${root}/scripts/bench/verify_ref.py`, dir, keyFile], {
      runs,
    });
    row(
      `verify ${rows / 1000}k rows, whole process: agentteams`,
      fmt(ours),
      `${(rows / (ours / 1000)).toFixed(0)} rows/s`,
    );
    row(
      `verify ${rows / 1000}k rows, whole process: Python reference`,
      fmt(py),
      `${(rows / (py / 1000)).toFixed(0)} rows/s; ratio ${(ours / py).toFixed(2)} (target <= 0.5)`,
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
  const empty = `${work}/empty.ts`;
  Deno.writeTextFileSync(empty, "");
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
    target = "(target <= 1.5)",
  ): Promise<void> {
    const nonce = await dispatch(dir, env);
    const file = `${work}/r.json`;
    Deno.writeTextFileSync(
      file,
      JSON.stringify({
        kind: "command-request",
        dispatch: nonce,
        argv: ["true"],
        purpose: "bench",
      }),
    );
    const runArgs = ["run", file, "--unconfined", "--project", dir];
    const args = cli(runArgs);
    const bundled = cli(runArgs, `${bundleDir}/main.js`);
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
      "  the same from the release bundle (dist/agentteams/main.js)",
      fmt(median(viaBundle)),
      `${(median(viaBundle) / floor).toFixed(2)}x the floor`,
    );
  }

  for (const files of quick ? [1000] : [1000, 20_000, 100_000]) {
    await measure(`${files / 1000}k`, makeRepo(`run-${files}`, files, brief()), envBase);
  }
  // "1k+ledger", a long-lived project: the same 1k-file repo with a 100k-row ledger (47 MB),
  // which the ledger guard reads before and after the command (signed with the bench key).
  if (!quick) {
    const dir = makeRepo("run-1000-ledger-100k", 1000, brief());
    makeLedger(dir, 100_000);
    await measure("1k+ledger", dir, envBenchKey, "(no target: the guard's cost)");
  }
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
    // The whole confinement: plan (roots, guards, scan of the write roots), private TMPDIR,
    // bwrap with the plan's argv, clean-up; and, timed apart, the bwrap process alone.
    const t0 = performance.now();
    const tmpdir = makePrivateTmpdir();
    const plan = prepareConfinement({
      project: dir,
      home: envBase.HOME,
      tmpdir,
      agent: { exec: ["/usr/bin"], write: ["src"] },
      cwd: ".",
      argv: ["/usr/bin/true"],
      env,
      network: false,
      protectedPaths: [],
      hiddenDirs: [envBase.AGENTTEAMS_KEY_DIR],
      controlPlane: { git: [] },
    });
    const cmd = confineArgv(plan, "bwrap");
    t = performance.now();
    await runProcess({
      program: cmd.program,
      args: cmd.args,
      cwd: cmd.cwd,
      env: cmd.env,
      timeoutMs: 10_000,
    });
    sandbox.push(performance.now() - t);
    removeMaskPoints(plan);
    removePrivateTmpdir(tmpdir);
    whole.push(performance.now() - t0);
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
}

async function authzSection(): Promise<void> {
  console.log("\n5. Authorization ledgers (in process; floor and subject interleaved)");
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
}

console.log(`agentteams bench (${quick ? "quick" : "full"}); medians; ${new Date().toISOString()}`);
try {
  await initKeys();
  if (want("ledger")) await ledgerSection();
  if (want("apply")) await applySection();
  if (want("run")) await runSection();
  if (want("confine")) await confineSection();
  if (want("authz")) await authzSection();
} finally {
  if (keep) console.log(`scratch kept: ${work}`);
  else Deno.removeSync(work, { recursive: true });
}
