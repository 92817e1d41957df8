/**
 * Deno's permission layer around the tool. For `dispatch`, `ledger verify` and `ledger show`:
 * `agentteams permissions <cmd>` prints a `deno run` line; that exact line (run by a shell)
 * succeeds without the broad-permission warning; with any one of its --allow-* flags removed it
 * fails with NOT_CAPABLE and writes nothing. Launching with -A warns.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initKeys, loadLedgerKey } from "../../lib/crypto/keys.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import { PermissionLayerError } from "../../lib/errors.ts";
import { launchFlags, mergeNeeds, type Needs, NO_NEEDS } from "../../lib/permissions.ts";
import { confinedFilePath } from "../../lib/sandbox/operator_file.ts";
import { within } from "../../lib/fs/within.ts";
import { GIT, gitEnv, sh as setup, workerProject } from "../_helpers/git.ts";
import {
  baseChildEnv,
  refusals,
  runCli,
  runDeno,
  type RunResult,
  type Sandbox,
  sandbox,
  snapshotTree,
  stateFiles,
  writeBrief,
} from "../_helpers/mod.ts";
import { assertCliRefused, assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { decisionSignArgs, waiverIssueArgs } from "../authz/_fixtures.ts";

/** Whether a grant of `grant` (a path and everything below it) covers `path`. */
function covers(grant: string, path: string): boolean {
  return within(path, grant);
}

/** A sandbox with operator keys (a key file: custody needs `sys`) and an issued dispatch. */
async function withProject(name: string, fn: (sb: Sandbox) => Promise<void>): Promise<void> {
  const sb = await sandbox(name);
  try {
    await keysAndNonce(sb);
    await fn(sb);
  } finally {
    await sb.dispose();
  }
}

/** Issues a `worker` dispatch with the sandbox's ledger key (already there); returns its nonce. */
async function dispatchNonce(sb: Sandbox): Promise<string> {
  const key = loadLedgerKey({ env: sb.env, mode: "direct" });
  return (await issueDispatch(sb.project, key.hmac, "worker")).nonce;
}

/** Makes the sandbox's operator keys, then {@link dispatchNonce}. */
async function keysAndNonce(sb: Sandbox): Promise<string> {
  await initKeys({ env: sb.env });
  return await dispatchNonce(sb);
}

/**
 * A private TMPDIR in the sandbox dir (so no granted read of the temporary directory covers the
 * sandbox dir), set in its environment.
 */
async function privateTmp(sb: Sandbox): Promise<void> {
  const tmp = join(sb.dir, "tmp");
  await Deno.mkdir(tmp);
  Object.assign(sb.env, { TMPDIR: tmp });
}

/** The list `line` gives `--allow-<flag>=` (the flag must be there). */
function allowList(line: string, flag: string): string[] {
  const m = line.match(new RegExp(`--allow-${flag}=(\\S+)`));
  assert.ok(m !== null, `--allow-${flag} missing from ${line}`);
  return m[1].split(",");
}

/** Runs a command line through a shell, exactly as printed, with the sandbox's environment. */
async function sh(sb: Sandbox, line: string): Promise<RunResult> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", line],
    cwd: sb.dir,
    clearEnv: true,
    env: { ...baseChildEnv(), ...sb.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    signal: out.signal,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

async function permissionsLine(sb: Sandbox, words: string[], extra: string[]): Promise<string> {
  const r = await runCli(
    ["permissions", ...words, "--project", sb.project, ...(extra.length ? ["--", ...extra] : [])],
    { env: sb.env },
  );
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 1, r.stdout);
  return lines[0];
}

const CASES: { words: string[]; extra: string[]; writes: boolean; flags: string[] }[] = [
  {
    words: ["dispatch"],
    extra: ["--agent", "worker"],
    writes: true,
    flags: ["--allow-read", "--allow-write", "--allow-env", "--allow-sys"],
  },
  {
    words: ["ledger", "verify"],
    extra: [],
    writes: false,
    flags: ["--allow-read", "--allow-env", "--allow-sys"],
  },
  { words: ["ledger", "show"], extra: [], writes: false, flags: ["--allow-read"] },
];

Deno.test("the printed narrow line runs the command; removing any one flag gives NOT_CAPABLE and writes nothing", async (t) => {
  for (const c of CASES) {
    const name = c.words.join(" ");
    await t.step(name, () =>
      withProject("perm", async (sb) => {
        writeBrief(sb.project); // dispatch names an agent of the brief
        const line = await permissionsLine(sb, c.words, c.extra);
        // The shape: deno run --no-prompt <narrow flags> <main.ts> <command> ... --project P
        assert.match(line, /^\S*deno run --no-prompt /);
        assert.ok(!line.includes("'"), `no quoting expected in ${line}`);
        const words = line.split(" ");
        for (const bad of ["-A", "--allow-all", "--allow-net", "--allow-ffi", "--allow-run"]) {
          assert.ok(!words.some((w) => w === bad || w.startsWith(bad + "=")), `${bad} in ${line}`);
        }
        for (const f of c.flags) {
          const w = words.find((x) => x.startsWith(f + "="));
          assert.ok(w !== undefined, `${f} missing from ${line}`);
          assert.ok(w.length > f.length + 1, `${f} has an empty list`);
        }
        // Every flag present is a narrow list (never a bare --allow-x).
        for (const w of words.filter((x) => x.startsWith("--allow-"))) assert.match(w, /=/);
        assert.ok(words.includes("--project") && words.includes(sb.project));
        for (const e of c.extra) assert.ok(words.includes(e));

        const st = stateFiles(sb.project);
        const ledgerBefore = await Deno.readFile(st.ledger);
        const ok = await sh(sb, line);
        assert.equal(ok.code, 0, `${line}\n${ok.stderr}`);
        assert.doesNotMatch(ok.stderr, /warning/);
        assert.equal(refusals(ok.stderr).length, 0, ok.stderr);
        const ledgerAfter = await Deno.readFile(st.ledger);
        if (c.writes) {
          assert.ok(ledgerAfter.length > ledgerBefore.length, "dispatch wrote no row");
          assert.match(ok.stdout, /^[0-9a-f]{32}\n$/);
        } else {
          assert.deepEqual(ledgerAfter, ledgerBefore);
        }

        for (const f of c.flags) {
          const without = words.filter((w) => !w.startsWith(f + "=")).join(" ");
          assert.notEqual(without, line);
          const before = await snapshotTree(sb.dir);
          const r = await sh(sb, without);
          assert.equal(r.code, 1, `without ${f}: ${r.stderr}`);
          const found = refusals(r.stderr);
          assert.equal(found.length, 1, `without ${f}: ${r.stderr}`);
          assert.equal(found[0].code, "NOT_CAPABLE", `without ${f}: ${r.stderr}`);
          assert.equal(found[0].command, name);
          assert.equal(r.stdout, "");
          assertSameTree(before, await snapshotTree(sb.dir), `without ${f}`);
        }
      }));
  }
});

Deno.test("the triad's commands run under their printed lines (they read the brief for the switch, not the project around it): verify, check, the gate, and an Ed25519 waiver's spend", async (t) => {
  await withProject("perm-triad", async (sb) => {
    writeBrief(sb.project);
    const broad = { env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" } };
    const issued = await runCli([
      ...waiverIssueArgs(sb.project, {
        id: "W-1",
        action: "delete:src/a",
        maxUses: 1,
        ticket: "T-1",
        reason: "r",
      }),
      "--ed25519",
    ], broad);
    assert.equal(issued.code, 0, issued.stderr);
    const signed = await runCli(
      [...decisionSignArgs(sb.project, "delete:src/b", "PASS"), "--ed25519"],
      broad,
    );
    assert.equal(signed.code, 0, signed.stderr);
    const cases: [string[], string[], number][] = [
      [["waiver", "verify"], [], 0],
      [["decision", "verify"], [], 0],
      [["waiver", "check"], ["delete:src/a"], 0],
      [["clearance", "check"], ["delete:src/b"], 0],
      [["gate"], ["delete:src/none"], 1],
      [["gate"], ["delete:src/a", "--consume"], 0],
      [["gate"], ["delete:src/b", "--consume"], 0],
    ];
    for (const [words, extra, code] of cases) {
      await t.step([...words, ...extra].join(" "), async () => {
        const line = await permissionsLine(sb, words, extra);
        const r = await sh(sb, line);
        assert.equal(r.code, code, `${line}\n${r.stdout}${r.stderr}`);
        assert.doesNotMatch(r.stderr, /NOT_CAPABLE/, r.stderr);
      });
    }
    // Both spends were made: the waiver's one use and the PASS are gone.
    const again = await runCli(["gate", "delete:src/a", "--project", sb.project], broad);
    assertCliRefused(again, "gate", "USES_EXHAUSTED");
  });
});

Deno.test("launched with -A, a command warns on stderr that its permissions are broad", async () => {
  await withProject("perm-broad", async (sb) => {
    const r = await runCli(["ledger", "show", "--project", sb.project], { env: sb.env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /^agentteams ledger show: warning: launched with broad .*read.*; `agentteams permissions ledger show --project \S+` prints the narrow flags \(AGENTTEAMS_BROAD_OK=1 says it is on purpose\)$/m,
    );
    // A bare category flag is broad too.
    const r2 = await runCli(["ledger", "show", "--project", sb.project], {
      env: sb.env,
      denoFlags: ["--no-prompt", "--allow-read"],
    });
    assert.equal(r2.code, 0, r2.stderr);
    assert.match(r2.stderr, /warning: launched with broad read/);
  });
});

Deno.test("permissions for commands with file arguments outside the project still run", async (t) => {
  // `ledger checkpoint --out F` and `ledger verify --checkpoint F` with F an absolute path.
  await withProject("perm-files", async (sb) => {
    const cp = join(sb.dir, "cp.json");
    await t.step("ledger checkpoint --out /abs/cp.json", async () => {
      const line = await permissionsLine(sb, ["ledger", "checkpoint"], ["--out", cp]);
      const r = await sh(sb, line);
      assert.equal(r.code, 0, `${line}\n${r.stderr}`);
      assert.equal(JSON.parse(await Deno.readTextFile(cp)).count, 1);
    });
    await t.step("ledger verify --checkpoint /abs/cp.json", async () => {
      // The checkpoint is made with -A when the narrow line could not make it.
      try {
        await Deno.stat(cp);
      } catch {
        const made = await runCli(["ledger", "checkpoint", "--out", cp, "--project", sb.project], {
          env: sb.env,
        });
        assert.equal(made.code, 0, made.stderr);
      }
      const line = await permissionsLine(sb, ["ledger", "verify"], ["--checkpoint", cp]);
      const r = await sh(sb, line);
      assert.equal(r.code, 0, `${line}\n${r.stderr}`);
      assert.match(r.stdout, /extends the checkpoint/);
    });
  });
});

Deno.test("launchFlags: sorted unique lists, never net/ffi, run only absolute, commas refused", () => {
  assert.deepEqual(launchFlags(NO_NEEDS), ["--no-prompt"]);
  assert.deepEqual(
    launchFlags({
      read: ["/b", "/a", "/b"],
      write: ["/w"],
      run: ["/usr/bin/git"],
      env: ["HOME"],
      sys: ["uid"],
    }),
    [
      "--no-prompt",
      "--allow-read=/a,/b",
      "--allow-write=/w",
      "--allow-run=/usr/bin/git",
      "--allow-env=HOME",
      "--allow-sys=uid",
    ],
  );
  const missing = (needs: Needs, re: RegExp) =>
    assert.match(
      assertRefusal(() => launchFlags(needs), "PERMISSION_MISSING", PermissionLayerError).message,
      re,
    );
  missing({ ...NO_NEEDS, run: ["git"] }, /absolute/);
  missing({ ...NO_NEEDS, read: ["/a,b"] }, /comma/);
  // No write access to a program the line runs, or to a directory holding one (TMPDIR=/usr).
  for (const write of ["/usr", "/usr/bin", "/usr/bin/bwrap", "/"]) {
    const e = assertRefusal(
      () => launchFlags({ ...NO_NEEDS, write: [write], run: ["/usr/bin/bwrap"] }),
      "PERMISSION_TOO_BROAD",
      PermissionLayerError,
      write,
    );
    assert.match(e.message, /\/usr\/bin\/bwrap/, write);
  }
  assert.deepEqual(
    launchFlags({ ...NO_NEEDS, write: ["/usr/b"], run: ["/usr/bin/bwrap"] }),
    ["--no-prompt", "--allow-write=/usr/b", "--allow-run=/usr/bin/bwrap"],
  );
  assert.deepEqual(
    mergeNeeds({ ...NO_NEEDS, read: ["/b"] }, { ...NO_NEEDS, read: ["/a", "/b"], env: ["X"] }),
    { read: ["/a", "/b"], write: [], run: [], env: ["X"], sys: [] },
  );
});

Deno.test("narrowPermissions with refuseNetFfi: net granted is PERMISSION_TOO_BROAD, and nothing is revoked first", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "at-perm-net-" });
  try {
    const probe = join(dir, "probe.ts");
    const lib = new URL("../../lib/permissions.ts", import.meta.url).href;
    await Deno.writeTextFile(
      probe,
      `import { narrowPermissions } from "${lib}";\n` +
        "try {\n" +
        "  const n = narrowPermissions([], { refuseNetFfi: true });\n" +
        "  console.log(`ok ${n.revoked.join(',')}`);\n" +
        "} catch (e) {\n" +
        "  const read = Deno.permissions.querySync({ name: 'read' }).state;\n" +
        "  console.log(`${(e as { code?: string }).code} read=${read}`);\n" +
        "}\n",
    );
    await t.step("-A (net and ffi granted) is refused, with read still granted", async () => {
      const r = await runDeno(["run", "-A", probe]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), "PERMISSION_TOO_BROAD read=granted");
    });
    await t.step("--allow-read alone passes; every unneeded category is revoked", async () => {
      const r = await runDeno(["run", "--no-prompt", "--allow-read", probe]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), "ok read,write,run,env,sys,net,ffi");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A brief in the project whose `worker` may run each of `programs` (its permission needs look up
 * only programs a command entry names).
 */
async function writeWorkerBrief(sb: Sandbox, programs: string[]): Promise<void> {
  await Deno.writeTextFile(
    join(sb.project, "agentteams.json"),
    JSON.stringify({
      allow_unconfined_runs: true,
      agent_policies: {
        worker: { write_scopes: ["src/"], commands: programs.map((p) => ({ prefix: [p] })) },
      },
    }),
  );
}

/**
 * A command request for `argv` outside the project (in the sandbox dir), under a made-up nonce
 * unless `fields` gives one; returns its path.
 */
async function writeRequest(
  sb: Sandbox,
  argv: string[],
  fields: { dispatch?: string; cwd?: string } = {},
): Promise<string> {
  const file = join(sb.dir, "request.json");
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      kind: "command-request",
      dispatch: "0".repeat(32),
      argv,
      purpose: "permissions test",
      ...fields,
    }),
  );
  return file;
}

/**
 * A change proposal creating `src/new.txt` (`gated\n`) under `nonce`, written at `file` (default:
 * in the sandbox dir); returns its path.
 */
async function writeProposal(
  sb: Sandbox,
  nonce: string,
  file = join(sb.dir, "proposal.json"),
): Promise<string> {
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      kind: "change-proposal",
      dispatch: nonce,
      path: "src/new.txt",
      base_sha256: "absent",
      content: "gated\n",
      rationale: "t",
    }),
  );
  return file;
}

/** The parts of the project's `agentteams.json` (a {@link workerProject} brief) tests change. */
interface WorkerBriefEdits {
  agent_policies: { worker: { commands: { prefix: string[] }[] } };
  proposal_gates?: Record<string, { glob?: string; argv: string[]; exec?: string[] }>;
}

/** Rewrites the project's `agentteams.json` with `edit` applied. */
async function editBrief(sb: Sandbox, edit: (brief: WorkerBriefEdits) => void): Promise<void> {
  const path = join(sb.project, "agentteams.json");
  const brief = JSON.parse(await Deno.readTextFile(path));
  edit(brief);
  await Deno.writeTextFile(path, JSON.stringify(brief));
}

/**
 * The narrow line for `permissions` itself, asked about `asked`, computed from the project (so its
 * own project is not the sandbox dir), with a private TMPDIR (so no read of the temporary
 * directory covers the sandbox dir).
 */
async function narrowPermissionsLine(sb: Sandbox, asked: string[]): Promise<string> {
  await privateTmp(sb);
  return await narrowPermissionsLineIn(sb, asked);
}

/** {@link narrowPermissionsLine} with the sandbox's environment as it is. */
async function narrowPermissionsLineIn(sb: Sandbox, asked: string[]): Promise<string> {
  const outer = await runCli(["permissions", "permissions", "--", ...asked], {
    env: sb.env,
    cwd: sb.project,
  });
  assert.equal(outer.code, 0, outer.stderr);
  return outer.stdout.trim();
}

/**
 * Runs `line` with `path` taken out of its read list: refused NOT_CAPABLE, naming `path`, no line
 * printed, and nothing in the sandbox dir written.
 */
async function assertRefusedWithoutRead(sb: Sandbox, line: string, path: string): Promise<void> {
  const reads = allowList(line, "read");
  const without = line.replace(
    `--allow-read=${reads.join(",")}`,
    `--allow-read=${reads.filter((p) => p !== path).join(",")}`,
  );
  assert.notEqual(without, line, `${path} was not among the reads`);
  const before = await snapshotTree(sb.dir);
  const refused = await sh(sb, without);
  assert.equal(refused.code, 1, `${without}\n${refused.stdout}\n${refused.stderr}`);
  assert.deepEqual(refusals(refused.stderr).map((r) => r.code), ["NOT_CAPABLE"]);
  assert.ok(refused.stderr.includes(path), refused.stderr);
  assert.equal(refused.stdout, "");
  assertSameTree(before, await snapshotTree(sb.dir), `after the refusal without ${path}`);
}

Deno.test("permissions, launched narrow, about `run -- FILE --unconfined` with FILE outside the project: the line names git and the request's program; without FILE it refuses", async () => {
  await withProject("perm-narrow-perm", async (sb) => {
    await writeWorkerBrief(sb, ["true"]);
    const file = await writeRequest(sb, ["true"]);
    const narrow = await narrowPermissionsLine(sb, [
      "run",
      "--",
      file,
      "--unconfined",
      "--project",
      sb.project,
    ]);
    assert.match(narrow, /^\S*deno run /);
    assert.doesNotMatch(narrow, / -A | --allow-all /);
    // Run as printed: `permissions` answers, and its answer names every program run spawns.
    const inner = await sh(sb, narrow);
    assert.equal(inner.code, 0, `${narrow}\n${inner.stderr}`);
    assert.doesNotMatch(inner.stderr, /warning: launched with broad/);
    const run = allowList(inner.stdout, "run");
    for (const program of ["/usr/bin/bwrap", "/usr/bin/git", "/usr/bin/setsid"]) {
      assert.ok(run.includes(program), `${program} missing from ${inner.stdout}`);
    }
    assert.ok(run.some((p) => p.endsWith("/true")), `the request's program missing: ${run}`);
    // The same line without read access to FILE: refused, naming it, and no line printed.
    await assertRefusedWithoutRead(sb, narrow, file);
  });
});

Deno.test("permissions, launched narrow without read of the project (so the brief cannot be loaded): refused NOT_CAPABLE, not a line without the brief's confined programs", async () => {
  await withProject("perm-narrow-brief", async (sb) => {
    // A brief whose confined programs name a directory nothing else puts in the line.
    const tools = join(sb.dir, "tools");
    await Deno.mkdir(tools);
    await Deno.writeTextFile(
      join(sb.project, "agentteams.jsonc"),
      JSON.stringify({
        agent_policies: {
          worker: { write_scopes: ["src/"], commands: [{ prefix: ["/usr/bin/touch"] }] },
        },
        confined_programs: { worker: { exec: ["/usr/bin", "/bin", tools], write: ["src"] } },
      }),
    );
    const file = await writeRequest(sb, ["/usr/bin/touch", "src/x"]);
    const narrow = await narrowPermissionsLine(sb, ["run", "--", file, "--project", sb.project]);
    // As printed, `permissions` reads the brief: its answer grants the confined programs.
    const inner = await sh(sb, narrow);
    assert.equal(inner.code, 0, `${narrow}\n${inner.stderr}`);
    const innerReads = allowList(inner.stdout, "read");
    assert.ok(innerReads.includes(tools), `${tools} missing from ${inner.stdout}`);
    // Without read of the project the brief cannot be loaded: refused, naming it; no line.
    await assertRefusedWithoutRead(sb, narrow, sb.project);
  });
});

Deno.test("run --brief LINK under its printed flags, LINK a symlink outside the project: BRIEF_UNREADABLE (the brief's directory unreadable does not let a symlink through), nothing written", async () => {
  await withProject("perm-brief-link", async (sb) => {
    const briefs = join(sb.dir, "briefs");
    await Deno.mkdir(briefs);
    const real = join(briefs, "real.jsonc");
    await Deno.writeTextFile(
      real,
      JSON.stringify({
        agent_policies: {
          worker: { write_scopes: ["src/"], commands: [{ prefix: ["/usr/bin/touch"] }] },
        },
      }),
    );
    const link = join(briefs, "link.jsonc");
    await Deno.symlink(real, link);
    const file = await writeRequest(sb, ["/usr/bin/touch", "src/x"]);
    // A private TMPDIR, so the line grants the link but not the directory it lies in.
    await privateTmp(sb);
    const line = await permissionsLine(sb, ["run"], [file, "--dry-run", "--brief", link]);
    const reads = allowList(line, "read");
    assert.ok(reads.includes(link), line);
    assert.ok(!reads.some((r) => covers(r, briefs)), line);
    const before = await snapshotTree(sb.dir);
    const r = await sh(sb, line);
    assert.equal(r.code, 1, `${line}\n${r.stderr}`);
    assert.deepEqual(refusals(r.stderr).map((x) => x.code), ["BRIEF_UNREADABLE"], r.stderr);
    assert.match(r.stderr, /symlink/);
    assert.equal(r.stdout, "");
    assertSameTree(before, await snapshotTree(sb.dir), "after the refused run");
  });
});

Deno.test("run under its printed flags with one PATH directory taken out of the reads: NOT_CAPABLE naming it, never a lookup that skips it to another program; nothing written", async () => {
  await withProject("perm-path-dir", async (sb) => {
    // An empty directory first on PATH; a private TMPDIR, so no granted read covers it.
    const first = join(sb.dir, "bin-first");
    await Deno.mkdir(first);
    await privateTmp(sb);
    Object.assign(sb.env, { PATH: `${first}:${baseChildEnv().PATH}` });
    const file = await writeRequest(sb, ["true"]);
    const line = await permissionsLine(sb, ["run"], [file]);
    const reads = allowList(line, "read");
    assert.ok(reads.includes(first), line);
    assert.ok(!reads.some((r) => r !== first && covers(r, first)), line);
    // Skipping it would find git and `true` further down PATH and go on to act (here: record the
    // unknown dispatch's refusal). The lookup refuses instead, before the key is loaded.
    await assertRefusedWithoutRead(sb, line, first);
  });
});

Deno.test("permissions, launched narrow without read of the operator's confined-programs directory: refused NOT_CAPABLE naming it, not a line without the file's programs", async () => {
  await withProject("perm-narrow-opfile", async (sb) => {
    await Deno.writeTextFile(
      join(sb.project, "agentteams.jsonc"),
      JSON.stringify({
        agent_policies: {
          worker: { write_scopes: ["src/"], commands: [{ prefix: ["/usr/bin/touch"] }] },
        },
      }),
    );
    // The operator's file (custody: a 0700 directory, a 0600 file) names a directory nothing
    // else puts in the line.
    const tools = join(sb.dir, "optools");
    await Deno.mkdir(tools);
    const path = confinedFilePath(await Deno.realPath(sb.project), sb.home);
    const dir = path.slice(0, path.lastIndexOf("/"));
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(
      path,
      JSON.stringify({ worker: { exec: ["/usr/bin", "/bin", tools], write: ["src"] } }),
      { mode: 0o600 },
    );
    const file = await writeRequest(sb, ["/usr/bin/touch", "src/x"]);
    const narrow = await narrowPermissionsLine(sb, ["run", "--", file, "--project", sb.project]);
    // As printed, `permissions` reads the operator file: its answer grants the file's programs.
    const inner = await sh(sb, narrow);
    assert.equal(inner.code, 0, `${narrow}\n${inner.stderr}`);
    const innerReads = allowList(inner.stdout, "read");
    assert.ok(innerReads.includes(tools), `${tools} missing from ${inner.stdout}`);
    // Without read of the operator's directory: refused, naming it; no line; nothing written.
    await assertRefusedWithoutRead(sb, narrow, dir);
  });
});

Deno.test("permissions about `permissions`: the asked command's --project goes before its `--`, never taken from what it passes on", async () => {
  await withProject("perm-of-perm", async (sb) => {
    const file = await writeRequest(sb, ["true"]);
    const other = join(sb.dir, "elsewhere");
    await Deno.mkdir(other);
    // Asked from the project as cwd, about `permissions run -- FILE --project OTHER`: the run's
    // --project (after the inner `--`) is not the asked command's own.
    const r = await runCli(
      ["permissions", "permissions", "--", "run", "--", file, "--project", other],
      { env: sb.env, cwd: sb.project },
    );
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.trim();
    assert.ok(
      // permissions' own --project before the words it asks about; what follows is the run's.
      line.endsWith(` permissions --project ${sb.project} run -- ${file} --project ${other}`),
      line,
    );
    // Without a `--`, the line is as before: --project added at the end.
    const plain = await permissionsLine(sb, ["ledger", "verify"], []);
    assert.ok(plain.endsWith(` ledger verify --project ${sb.project}`), plain);
  });
});

/**
 * With a private TMPDIR (so no granted read covers the repository), issues a dispatch and a request
 * for `true`; the printed `run` line, confined and unconfined, names each of `granted` and no
 * ancestor of `notCovered` (when given), and runs. Returns the request's path.
 */
async function runsUnderPrintedLine(
  sb: Sandbox,
  notCovered: string | null,
  granted: string[],
): Promise<string> {
  await privateTmp(sb);
  const file = await writeRequest(sb, ["true"], { dispatch: await keysAndNonce(sb) });
  for (const extra of [[], ["--unconfined"]]) {
    const line = await permissionsLine(sb, ["run"], [file, ...extra]);
    const reads = allowList(line, "read");
    for (const p of granted) assert.ok(reads.includes(p), `${p} missing from ${line}`);
    if (notCovered !== null) {
      assert.ok(!reads.some((r) => covers(r, notCovered)), line);
    }
    const r = await sh(sb, line);
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    assert.match(r.stderr, extra.length ? /unconfined, by the brief's opt-out/ : /confined by/);
  }
  return file;
}

Deno.test("run in a linked worktree whose repository lies outside the project: the printed line names git's paths there and runs, confined and unconfined; without one of them it refuses NOT_CAPABLE and writes nothing", async () => {
  const sb = await sandbox("perm-linked");
  try {
    // The project is a linked worktree; its index, hooks, config and info live in `main`.
    const main = join(sb.dir, "main");
    await workerProject(main, sb.home);
    await Deno.remove(sb.project);
    await setup(main, GIT, ["worktree", "add", "-q", sb.project], gitEnv(sb.home));
    const gitDir = join(main, ".git");
    const file = await runsUnderPrintedLine(
      sb,
      main,
      ["hooks", "config", "info", "worktrees/project", "worktrees/project/index"].map((p) =>
        join(gitDir, p)
      ),
    );
    // Without read of the hooks directory: refused while the needs are worked out, nothing written.
    const line = await permissionsLine(sb, ["run"], [file]);
    await assertRefusedWithoutRead(sb, line, join(gitDir, "hooks"));
    // `permissions`, asked about that run and launched with its own narrow line, answers: it runs
    // git's rev-parse to find those paths, so its line grants git.
    const narrow = await narrowPermissionsLineIn(sb, ["run", "--", file, "--project", sb.project]);
    assert.match(narrow, /--allow-run=\S*\/git\b/);
    const inner = await sh(sb, narrow);
    assert.equal(inner.code, 0, `${narrow}\n${inner.stderr}`);
    assert.ok(inner.stdout.includes(join(gitDir, "hooks")), inner.stdout);
  } finally {
    await sb.dispose();
  }
});

Deno.test("run in a project below its worktree's top: the printed line names the git dir above it (not the top) and runs, confined and unconfined", async () => {
  const sb = await sandbox("perm-subdir");
  try {
    // The repository is `repo`; the project is `repo/project` (the sandbox's project, moved in).
    const repo = join(sb.dir, "repo");
    await Deno.mkdir(repo);
    const project = join(repo, "project");
    await workerProject(project, sb.home);
    const env = gitEnv(sb.home);
    await Deno.remove(join(project, ".git"), { recursive: true });
    await setup(repo, GIT, ["init", "-q", "."], env);
    await setup(repo, GIT, ["add", "-A"], env);
    await setup(repo, GIT, ["commit", "-qm", "init"], env);
    await Deno.remove(sb.project);
    Object.assign(sb, { project });
    const gitDir = join(repo, ".git");
    await runsUnderPrintedLine(
      sb,
      repo,
      ["index", "hooks", "config", "info"].map((p) => join(gitDir, p)),
    );
  } finally {
    await sb.dispose();
  }
});

Deno.test("run and dispatch in a project reached through a symlink: the printed lines grant its real path too, and work", async () => {
  const sb = await sandbox("perm-symlinked");
  try {
    // The project's name is a symlink to `real`; the tool reads `real` once it has resolved it.
    const real = join(sb.dir, "real");
    await workerProject(real, sb.home);
    await Deno.remove(sb.project);
    await Deno.symlink(real, sb.project);
    await runsUnderPrintedLine(sb, null, [sb.project, real, join(real, "agentteams.json")]);
    const line = await permissionsLine(sb, ["dispatch"], ["--agent", "worker"]);
    const r = await sh(sb, line);
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    assert.match(r.stdout, /^[0-9a-f]{32}\n$/);
  } finally {
    await sb.dispose();
  }
});

Deno.test("a symlink inside the project never widens a printed line: only the project root and TMPDIR are resolved", async () => {
  await withProject("perm-inner-link", async (sb) => {
    // What a hostile checkout could hold: the state dir and a brief name pointing out, and a
    // PATH entry that is a link to `/`.
    const victim = join(sb.dir, "victim");
    await Deno.mkdir(victim);
    const state = join(sb.project, ".agentteams");
    await Deno.rename(state, join(sb.dir, "state-moved"));
    await Deno.symlink(victim, state);
    await Deno.symlink("/", join(sb.project, "agentteams.jsonc"));
    const rootLink = join(sb.dir, "rootlink");
    await Deno.symlink("/", rootLink);
    Object.assign(sb.env, { PATH: `${rootLink}:${baseChildEnv().PATH}` });
    const file = await writeRequest(sb, ["true"]);
    for (const [words, extra] of [[["run"], [file]], [["dispatch"], ["--agent", "worker"]]]) {
      const line = await permissionsLine(sb, words, extra);
      for (const flag of ["read", "write"]) {
        const list = allowList(line, flag);
        assert.ok(!list.includes("/"), `${flag} grants / in ${line}`);
        assert.ok(!list.some((p) => covers(victim, p)), line);
      }
    }
  });
});

/** A committed worker project (tests/_helpers/git.ts) in the sandbox, a private TMPDIR and keys. */
async function gitProject(sb: Sandbox): Promise<{ nonce: string }> {
  await workerProject(sb.project, sb.home);
  await privateTmp(sb);
  return { nonce: await keysAndNonce(sb) };
}

Deno.test("a core.hooksPath naming a missing directory outside the project: the line grants that path, not a broad ancestor; it runs unconfined and confined", async () => {
  const sb = await sandbox("perm-hookspath");
  try {
    const { nonce } = await gitProject(sb);
    const hooks = join(sb.dir, "missing", "hooks");
    await setup(sb.project, GIT, ["config", "core.hooksPath", hooks], gitEnv(sb.home));
    const file = await writeRequest(sb, ["true"], { dispatch: nonce });
    const unconfined = await permissionsLine(sb, ["run"], [file, "--unconfined"]);
    const reads = allowList(unconfined, "read");
    assert.ok(reads.includes(hooks), unconfined);
    assert.ok(!reads.some((r) => covers(r, sb.dir)), unconfined);
    const r = await sh(sb, unconfined);
    assert.equal(r.code, 0, `${unconfined}\n${r.stderr}`);
    // Confined too: the sandbox keeps read-only only what lies inside the project (write roots
    // lie there), so a git path outside it is never resolved through its parents.
    const line = await permissionsLine(sb, ["run"], [file]);
    assert.ok(!allowList(line, "read").some((r) => covers(r, sb.dir)), line);
    const confined = await sh(sb, line);
    assert.equal(confined.code, 0, `${line}\n${confined.stderr}`);
  } finally {
    await sb.dispose();
  }
});

Deno.test("a confined run whose program lies in a PATH directory taken out of the reads: NOT_CAPABLE while the needs are worked out, nothing written", async () => {
  await withProject("perm-path-program", async (sb) => {
    const xbin = join(sb.dir, "xbin");
    await Deno.mkdir(xbin);
    await Deno.copyFile("/usr/bin/true", join(xbin, "hello-at"));
    await Deno.chmod(join(xbin, "hello-at"), 0o755);
    await privateTmp(sb);
    Object.assign(sb.env, { PATH: `/usr/bin:${xbin}:${baseChildEnv().PATH}` });
    // git is found in /usr/bin first; only the request's program is looked up in xbin.
    await writeWorkerBrief(sb, ["hello-at"]);
    const file = await writeRequest(sb, ["hello-at"]);
    const line = await permissionsLine(sb, ["run"], [file]);
    // The line grants the directory and the program found there; both taken out.
    assert.ok(line.includes(join(xbin, "hello-at")), line);
    await assertRefusedWithoutRead(sb, line.replace(`,${join(xbin, "hello-at")}`, ""), xbin);
  });
});

Deno.test("a pinned cwd that is a symlink out of the project, under the printed line: CWD_NOT_ALLOWED, not Deno's NOT_CAPABLE on the outside path", async () => {
  const sb = await sandbox("perm-cwd-out");
  try {
    const { nonce } = await gitProject(sb);
    const outside = join(sb.dir, "outside");
    await Deno.mkdir(outside);
    await Deno.symlink(outside, join(sb.project, "src", "out"));
    await Deno.writeTextFile(
      join(sb.project, "agentteams.json"),
      JSON.stringify({
        agent_policies: {
          worker: { write_scopes: ["src/"], commands: [{ prefix: ["true"], cwd: "src/out" }] },
        },
      }),
    );
    const file = await writeRequest(sb, ["true"], { dispatch: nonce, cwd: "src/out" });
    const r = await sh(sb, await permissionsLine(sb, ["run"], [file]));
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(refusals(r.stderr).map((x) => x.code), ["CWD_NOT_ALLOWED"]);
  } finally {
    await sb.dispose();
  }
});

Deno.test("a ledger key given in the environment, with no key dir on disk: the printed run line works confined (a missing key dir is not resolved to be hidden)", async () => {
  const sb = await sandbox("perm-envkey");
  try {
    await workerProject(sb.project, sb.home);
    await privateTmp(sb);
    Object.assign(sb.env, {
      AGENTTEAMS_KEY_DIR: join(sb.dir, "nokeys", "deep", "keys"),
      AGENTTEAMS_PROPOSAL_LEDGER_KEY: "0123456789abcdef0123456789abcdef",
    });
    const file = await writeRequest(sb, ["true"], { dispatch: await dispatchNonce(sb) });
    const line = await permissionsLine(sb, ["run"], [file]);
    const r = await sh(sb, line);
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    assert.match(r.stderr, /confined by/);
  } finally {
    await sb.dispose();
  }
});

Deno.test("apply with a gate whose program is a symlink on PATH to a script with its interpreter elsewhere: the printed line grants both real paths and the gate runs", async () => {
  const sb = await sandbox("perm-gate-exec");
  try {
    await workerProject(sb.project, sb.home);
    // bin/tool -> opt/tool, a script whose `#!` names interp/bin/mysh -> /bin/sh.
    const [bin, opt, interp] = ["bin", "opt", "interp/bin"].map((d) => join(sb.dir, d));
    for (const d of [bin, opt, interp]) await Deno.mkdir(d, { recursive: true });
    await Deno.symlink("/bin/sh", join(interp, "mysh"));
    await Deno.writeTextFile(join(opt, "tool"), `#!${join(interp, "mysh")}\nexit 0\n`);
    await Deno.chmod(join(opt, "tool"), 0o755);
    await Deno.symlink(join(opt, "tool"), join(bin, "tool"));
    await editBrief(sb, (brief) => {
      brief.proposal_gates = { t: { glob: "src/*.txt", argv: ["tool", "{file}"] } };
    });
    await privateTmp(sb);
    Object.assign(sb.env, { PATH: `${bin}:${baseChildEnv().PATH}` });
    const file = await writeProposal(sb, await keysAndNonce(sb));
    const line = await permissionsLine(sb, ["apply"], [file]);
    const reads = allowList(line, "read");
    for (const p of [join(opt, "tool"), join(interp, "mysh")]) {
      assert.ok(reads.includes(p), `${p} missing from ${line}`);
    }
    const r = await sh(sb, line);
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    assert.equal(await Deno.readTextFile(join(sb.project, "src/new.txt")), "gated\n");
  } finally {
    await sb.dispose();
  }
});

Deno.test("run of an absolute program outside the PATH directories: the printed line lets it be read (looked up and checked) and run, confined and unconfined", async () => {
  const sb = await sandbox("perm-abs-program");
  try {
    await workerProject(sb.project, sb.home);
    const xbin = join(sb.dir, "xbin");
    await Deno.mkdir(xbin);
    const program = join(xbin, "true");
    await Deno.symlink("/usr/bin/true", program);
    await editBrief(sb, (brief) => {
      brief.agent_policies.worker.commands = [{ prefix: [program] }];
    });
    await privateTmp(sb);
    const file = await writeRequest(sb, [program], { dispatch: await keysAndNonce(sb) });
    for (const extra of [[], ["--unconfined"]]) {
      const line = await permissionsLine(sb, ["run"], [file, ...extra]);
      const reads = allowList(line, "read");
      assert.ok(reads.includes(program), line);
      const r = await sh(sb, line);
      assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    }
  } finally {
    await sb.dispose();
  }
});

Deno.test("the printed line names only programs the brief names: a request's other argv[0] adds nothing; with --unconfined, gate programs are runnable", async () => {
  await withProject("perm-named-only", async (sb) => {
    await writeWorkerBrief(sb, ["true"]);
    await editBrief(sb, (brief) => {
      brief.proposal_gates = { g: { argv: ["/usr/bin/cat", "{file}"] } };
    });
    const secret = join(sb.dir, "secret");
    await Deno.mkdir(secret);
    await Deno.copyFile("/usr/bin/true", join(secret, "x"));
    await Deno.chmod(join(secret, "x"), 0o755);
    const file = await writeRequest(sb, [join(secret, "x")]);
    for (const extra of [[], ["--unconfined"]]) {
      const line = await permissionsLine(sb, ["run"], [file, ...extra]);
      assert.ok(!line.includes(secret), `a program no entry names is in ${line}`);
      const run = allowList(line, "run");
      assert.equal(run.includes("/usr/bin/cat"), extra.length > 0, line);
    }
  });
});

Deno.test("apply with a gate naming an absolute program outside PATH through a symlink, and a key dir reached through a symlink: the printed lines work", async () => {
  const sb = await sandbox("perm-gate-abs");
  try {
    await workerProject(sb.project, sb.home);
    const links = join(sb.dir, "links");
    await Deno.mkdir(links);
    const tool = join(links, "tool");
    await Deno.symlink("/usr/bin/true", tool);
    await editBrief(sb, (brief) => {
      brief.proposal_gates = { t: { glob: "src/*.txt", argv: [tool, "{file}"] } };
    });
    // The key dir is named through a symlinked directory.
    const realKeys = join(sb.dir, "realkeys");
    await Deno.mkdir(realKeys);
    await Deno.symlink(realKeys, join(sb.dir, "keylink"));
    await privateTmp(sb);
    Object.assign(sb.env, { AGENTTEAMS_KEY_DIR: join(sb.dir, "keylink", "keys") });
    const file = await writeProposal(sb, await keysAndNonce(sb));
    const line = await permissionsLine(sb, ["apply"], [file]);
    const r = await sh(sb, line);
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    assert.equal(await Deno.readTextFile(join(sb.project, "src/new.txt")), "gated\n");
  } finally {
    await sb.dispose();
  }
});

Deno.test("printed lines through symlinked directories: ledger show on a linked project, an artifact and a checkpoint in linked dirs, keys init under a linked HOME, a gate exec dir that is a link", async () => {
  const sb = await sandbox("perm-links-2");
  try {
    await workerProject(sb.project, sb.home);
    const link = (target: string, name: string) => {
      const p = join(sb.dir, name);
      Deno.symlinkSync(target, p);
      return p;
    };
    // A gate whose exec entry is a linked dir holding the program's real file.
    const realBin = join(sb.dir, "realbin");
    await Deno.mkdir(realBin);
    await Deno.writeTextFile(join(realBin, "tool"), "#!/bin/sh\nexit 0\n");
    await Deno.chmod(join(realBin, "tool"), 0o755);
    const binLink = link(realBin, "binlink");
    await editBrief(sb, (brief) => {
      brief.proposal_gates = {
        // Its #! interpreter too: Landlock holds every exec to the list.
        t: { glob: "src/*.txt", argv: ["tool", "{file}"], exec: [binLink, "/bin/sh"] },
      };
    });
    await privateTmp(sb);
    Object.assign(sb.env, { PATH: `${binLink}:${baseChildEnv().PATH}` });
    // keys init, its key dir below a linked HOME (nothing there yet).
    const realHome = join(sb.dir, "realhome");
    await Deno.mkdir(realHome);
    Object.assign(sb.env, { HOME: link(realHome, "homelink") });
    delete sb.env.AGENTTEAMS_KEY_DIR;
    const init = await sh(sb, await permissionsLine(sb, ["keys", "init"], []));
    assert.equal(init.code, 0, init.stderr);
    // The artifact in a linked directory; apply runs the gate.
    const arts = join(sb.dir, "arts");
    await Deno.mkdir(arts);
    const file = await writeProposal(
      sb,
      await dispatchNonce(sb),
      join(link(arts, "artlink"), "p.json"),
    );
    const applied = await sh(sb, await permissionsLine(sb, ["apply"], [file]));
    assert.equal(applied.code, 0, applied.stderr);
    // Read-only ledger commands on the project named through a link, and a checkpoint written
    // into a linked directory.
    const projectLink = link(sb.project, "projlink");
    const cps = join(sb.dir, "cps");
    await Deno.mkdir(cps);
    const out = join(link(cps, "cplink"), "cp.json");
    for (
      const [words, extra] of [
        [["ledger", "show"], []],
        [["ledger", "checkpoint"], ["--out", out]],
        [["ledger", "verify"], ["--checkpoint", out]],
      ]
    ) {
      const r = await runCli(
        [
          "permissions",
          ...words,
          "--project",
          projectLink,
          ...(extra.length ? ["--", ...extra] : []),
        ],
        { env: sb.env },
      );
      assert.equal(r.code, 0, r.stderr);
      const ran = await sh(sb, r.stdout.trim());
      assert.equal(ran.code, 0, `${words.join(" ")}: ${ran.stderr}`);
    }
  } finally {
    await sb.dispose();
  }
});

/** Moves the project's brief out of the project (to `<sandbox>/brief.json`); returns its path. */
async function moveBriefOut(sb: Sandbox): Promise<string> {
  const inProject = join(sb.project, "agentteams.json");
  const b = join(sb.dir, "brief.json");
  await Deno.writeTextFile(b, await Deno.readTextFile(inProject));
  await Deno.remove(inProject);
  return b;
}

Deno.test("permissions --brief B run -- FILE: the asked run uses B, and the printed line carries it", async () => {
  const sb = await sandbox("perm-brief-own");
  try {
    const { nonce } = await gitProject(sb);
    // The project's own brief is gone; B, outside it, lets worker run `true`.
    const b = await moveBriefOut(sb);
    const file = await writeRequest(sb, ["true"], { dispatch: nonce });
    const r = await runCli(
      ["permissions", "run", "--brief", b, "--project", sb.project, "--", file],
      { env: sb.env },
    );
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.trim();
    assert.ok(line.endsWith(` run --brief ${b} --project ${sb.project} ${file}`), line);
    const ran = await sh(sb, line);
    assert.equal(ran.code, 0, `${line}\n${ran.stderr}`);
  } finally {
    await sb.dispose();
  }
});

Deno.test("permissions -- with the earlier tool's spellings (--description, --run-request FILE): parsed as the command itself parses them, and the printed line runs", async () => {
  const sb = await sandbox("perm-legacy-spellings");
  try {
    const { nonce } = await gitProject(sb);
    const b = await moveBriefOut(sb);
    const file = await writeRequest(sb, ["true"], { dispatch: nonce });
    const r = await runCli(
      ["permissions", "--project", sb.project, "--", "--run-request", file, "--description", b],
      { env: sb.env },
    );
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.trim();
    // B is read by the asked command, so the line grants it and passes it on.
    assert.ok(line.includes(b), line);
    assert.ok(line.endsWith(` run --project ${sb.project} ${file} --brief ${b}`), line);
    const ran = await sh(sb, line);
    assert.equal(ran.code, 0, `${line}\n${ran.stderr}`);
  } finally {
    await sb.dispose();
  }
});

Deno.test("first contact: with TMPDIR unset the run line grants the per-user /tmp/agentteams-<uid>, never /tmp, and runs confined as printed", async () => {
  const sb = await sandbox("perm-tmp-unset");
  try {
    const { nonce } = await gitProject(sb);
    delete (sb.env as Record<string, string>).TMPDIR;
    const file = await writeRequest(sb, ["true"], { dispatch: nonce });
    const line = await permissionsLine(sb, ["run"], [file]);
    const own = `/tmp/agentteams-${Deno.uid()}`;
    const writes = allowList(line, "write");
    assert.ok(writes.includes(own), line);
    assert.ok(!writes.includes("/tmp") && !writes.includes("/private/tmp"), line);
    assert.ok(!allowList(line, "read").includes("/tmp"), line);
    const r = await sh(sb, line);
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    assert.match(r.stdout + r.stderr, /true exited 0/);
  } finally {
    await sb.dispose();
  }
});

Deno.test("permissions run and apply with TMPDIR=/usr: PERMISSION_TOO_BROAD (the write grant would cover bwrap), no line printed, nothing written", async () => {
  await withProject("perm-tmp-usr", async (sb) => {
    const request = await writeRequest(sb, ["true"]);
    const proposal = await writeProposal(sb, "0".repeat(32));
    Object.assign(sb.env, { TMPDIR: "/usr" });
    for (const [command, file] of [["run", request], ["apply", proposal]]) {
      const before = await snapshotTree(sb.dir);
      const r = await runCli(["permissions", command, "--project", sb.project, "--", file], {
        env: sb.env,
      });
      assertCliRefused(r, "permissions", "PERMISSION_TOO_BROAD");
      assert.match(r.stderr, /write access to \/usr would cover \/usr\/bin\/bwrap/);
      assert.equal(r.stdout, "");
      assertSameTree(before, await snapshotTree(sb.dir), `after permissions ${command}`);
    }
  });
});

Deno.test("first contact: the printed line works through $(...) and eval with no deno on PATH; permissions takes the command's own flags without --; the broad warning suggests a command that works, and AGENTTEAMS_BROAD_OK=1 silences it", async () => {
  await withProject("perm-first-contact", async (sb) => {
    await Deno.writeTextFile(
      join(sb.project, "agentteams.jsonc"),
      JSON.stringify({ agent_policies: { worker: { write_scopes: ["src/"] } } }),
    );
    // `--tail 1` is ledger show's own flag: no `--` needed (the earlier `--` still works).
    const plain = await runCli(["permissions", "ledger", "show", "--tail", "1"], {
      env: sb.env,
      cwd: sb.project,
    });
    assert.equal(plain.code, 0, plain.stderr);
    const line = plain.stdout.trim();
    const dashed = await runCli(["permissions", "ledger", "show", "--", "--tail", "1"], {
      env: sb.env,
      cwd: sb.project,
    });
    assert.equal(dashed.stdout.trim(), line);
    assert.match(line, / ledger show --project \S+ --tail 1$/);
    // An absolute deno, and no word a shell would glob or split: `$(...)` works as eval does.
    assert.ok(line.startsWith(`${Deno.execPath()} run `), line);
    assert.doesNotMatch(line, /['"*?]/);
    const noDeno = { ...sb.env, PATH: "/usr/bin:/bin" };
    for (const form of [`$(${"printf '%s' \"$LINE\""})`, `eval "$LINE"`]) {
      const r = await new Deno.Command("/bin/sh", {
        args: ["-c", form],
        cwd: sb.dir,
        clearEnv: true,
        env: { ...noDeno, LINE: line },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const err = new TextDecoder().decode(r.stderr);
      assert.equal(r.code, 0, `${form}: ${err}`);
      assert.doesNotMatch(err, /warning: launched with broad/);
    }
    // Launched broad: the warning names a permissions command that works, unless silenced.
    const broad = await runCli(["ledger", "show", "--tail", "1", "--project", sb.project], {
      env: sb.env,
      cwd: sb.dir,
    });
    const m = broad.stderr.match(/`agentteams (permissions [^`]+)`/);
    assert.ok(m !== null, broad.stderr);
    const suggested = await runCli(m[1].split(" "), { env: sb.env, cwd: sb.dir });
    assert.equal(suggested.code, 0, suggested.stderr);
    assert.match(suggested.stdout.trim(), / ledger show --tail 1 --project \S+$/);
    const quiet = await runCli(["ledger", "show", "--project", sb.project], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
      cwd: sb.dir,
    });
    assert.doesNotMatch(quiet.stderr, /warning: launched with broad/);
  });
});
