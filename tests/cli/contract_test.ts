/**
 * The CLI contract (DESIGN §5). Parsing and help never reach the permission narrowing, so those
 * are checked in process over the whole command table (a guard asserts this process kept its
 * permissions); everything that runs a command is checked as a real `deno run` process.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli as runCliInProcess } from "../../lib/cli/main.ts";
import { COMMANDS } from "../../lib/cli/commands.ts";
import { initKeys, loadLedgerKey, SIGNING_KEY_FILE } from "../../lib/crypto/keys.ts";
import { appendRow } from "../../lib/ledger/append.ts";
import { verifyLedgerAt } from "../../lib/ledger/verify.ts";
import {
  headFor,
  joinLines,
  refusals,
  runCli,
  type RunResult,
  type Sandbox,
  sandbox,
  snapshotTree,
  stateFiles,
  writeBrief,
} from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";

/** Runs the CLI in this process, collecting output; asserts the process kept its permissions. */
async function inProcess(argv: string[]): Promise<RunResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCliInProcess(argv, {
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
  });
  for (const name of ["read", "write", "env", "run", "sys"] as const) {
    assert.equal(
      Deno.permissions.querySync({ name }).state,
      "granted",
      `${argv.join(" ")} narrowed the test process's permissions (${name})`,
    );
  }
  const join = (ls: string[]) => ls.map((l) => l + "\n").join("");
  return { code, signal: null, stdout: join(out), stderr: join(err) };
}

Deno.test("--help on every command: exit 0, its usage on stdout, the common options listed", async () => {
  assert.ok(COMMANDS.length >= 20);
  for (const c of COMMANDS) {
    for (const argv of [[...c.words, "--help"], [...c.words, "--project", "/x", "--help"]]) {
      const r = await inProcess(argv);
      assert.equal(r.code, 0, `${argv.join(" ")}: ${r.stderr}`);
      assert.match(
        r.stdout,
        new RegExp(`^usage: agentteams ${c.words.join(" ")}\\b`),
        c.words.join(" "),
      );
      for (const f of ["--project DIR", "--brief FILE", "--json", "--help"]) {
        assert.ok(r.stdout.includes(f), `${c.words.join(" ")} help lacks ${f}`);
      }
      for (const f of c.flags) {
        assert.ok(r.stdout.includes(`--${f.name}`), `${c.words} --${f.name}`);
      }
      assert.equal(r.stderr, "");
    }
  }
  for (const argv of [["--help"], ["-h"], ["help"]]) {
    const r = await inProcess(argv);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^usage: agentteams <command> \[options\]$/m);
    for (const c of COMMANDS) assert.ok(r.stdout.includes(c.words.join(" ")), c.words.join(" "));
  }
  const v = await inProcess(["--version"]);
  assert.equal(v.code, 0);
  assert.match(v.stdout, /^agentteams \d+\.\d+\.\d+\n$/);
  // No command: the help, on stdout, exit 0 (a newcomer's first call).
  const none = await inProcess([]);
  assert.equal(none.code, 0);
  assert.match(none.stdout, /usage: agentteams/);
});

Deno.test("unknown flags: exit 2 UNKNOWN_FLAG on every built command", async () => {
  for (const c of COMMANDS) {
    for (const bad of ["--no-such-flag", "--no-such=1", "-x", "--jsn"]) {
      const r = await inProcess([...c.words, bad]);
      const name = c.words.join(" ");
      assertCliRefused(r, name, "UNKNOWN_FLAG", 2);
      assert.equal(r.stdout, "");
    }
  }
  // A flag of another command is unknown here.
  assertCliRefused(
    await inProcess(["ledger", "show", "--agent", "w"]),
    "ledger show",
    "UNKNOWN_FLAG",
    2,
  );
  // Other usage errors are USAGE, exit 2.
  assertCliRefused(await inProcess(["ledger", "show", "--tail"]), "ledger show", "USAGE", 2);
  assertCliRefused(await inProcess(["ledger", "verify", "--json=1"]), "ledger verify", "USAGE", 2);
  assertCliRefused(await inProcess(["ledger", "verify", "extra"]), "ledger verify", "USAGE", 2);
  assertCliRefused(
    await inProcess(["ledger", "verify", "--project", "a", "--project", "b"]),
    "ledger verify",
    "USAGE",
    2,
  );
});

Deno.test("unknown commands: exit 2 UNKNOWN_COMMAND", async () => {
  for (
    const argv of [
      ["frobnicate"],
      ["ledger"],
      ["ledger", "frobnicate"],
      ["keys"],
      ["Dispatch"],
      // Names every object inherits are not aliases of earlier spellings.
      ["constructor"],
      ["__proto__"],
      ["toString"],
    ]
  ) {
    const r = await inProcess(argv);
    assert.equal(r.code, 2, argv.join(" "));
    const found = refusals(r.stderr);
    assert.equal(found.length, 1, r.stderr);
    assert.equal(found[0].code, "UNKNOWN_COMMAND");
  }
  // With --json: one JSON object on stdout, too.
  const r = await inProcess(["frobnicate", "--json"]);
  assert.equal(r.code, 2);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, false);
  assert.equal(out.error.code, "UNKNOWN_COMMAND");
});

Deno.test("the earlier spellings are rewritten to the commands they name", async () => {
  // Checked in process where they fail before running; as real processes below where they run.
  assertCliRefused(
    await inProcess(["--verify-proposal-ledger", "--nope"]),
    "ledger verify",
    "UNKNOWN_FLAG",
    2,
  );
  assertCliRefused(await inProcess(["--issue-dispatch", "--nope"]), "dispatch", "UNKNOWN_FLAG", 2);
  assertCliRefused(await inProcess(["--serve-requests", "--nope"]), "serve", "UNKNOWN_FLAG", 2);
  assertCliRefused(
    await inProcess(["--verify-waivers", "--nope"]),
    "waiver verify",
    "UNKNOWN_FLAG",
    2,
  );
  // Built (issue 16): it fails here before it runs; tests/audit/ runs it.
  assertCliRefused(await inProcess(["--post-audit", "--nope"]), "audit", "UNKNOWN_FLAG", 2);
  assertCliRefused(
    await inProcess(["--issue-dispatch", "--verify-proposal-ledger"]),
    "--issue-dispatch",
    "USAGE",
    2,
  );
});

// ---------------------------------------------------------------------------------------------
// Real processes, sharing one project with keys, a few rows and a dispatch.

interface World {
  sb: Sandbox;
  run: (args: string[], extraEnv?: Record<string, string>) => Promise<RunResult>;
}

async function withWorld(name: string, fn: (w: World) => Promise<void>): Promise<void> {
  const sb = await sandbox(name);
  try {
    await initKeys({ env: sb.env });
    writeBrief(sb.project, ["w"]); // dispatch issues nonces only to the brief's agents
    const key = loadLedgerKey({ env: sb.env, mode: "direct" });
    for (let i = 1; i <= 4; i++) {
      await appendRow(sb.project, key.hmac, { action: "note", agent: "w", n: i });
    }
    await fn({
      sb,
      run: (args, extraEnv = {}) =>
        runCli([...args, "--project", sb.project], { env: { ...sb.env, ...extraEnv } }),
    });
  } finally {
    await sb.dispose();
  }
}

Deno.test("real process: exit codes and the refusal line `agentteams <command>: refused: <CODE>: <reason>`", async () => {
  await withWorld("cli-exit", async ({ sb, run }) => {
    const before = await snapshotTree(sb.dir);
    const help = await run(["ledger", "verify", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: agentteams ledger verify/);
    assertCliRefused(
      await run(["ledger", "verify", "--bogus"]),
      "ledger verify",
      "UNKNOWN_FLAG",
      2,
    );
    const unknown = await run(["frobnicate"]);
    assert.equal(unknown.code, 2);
    assert.equal(refusals(unknown.stderr)[0].code, "UNKNOWN_COMMAND");
    const bad = await run(["dispatch", "--agent", "Bad Slug"]);
    // A usage error: exit 2, worded as one.
    const refusal = assertCliRefused(bad, "dispatch", "BAD_SLUG", 2);
    assert.match(bad.stderr, /^agentteams dispatch: usage error: BAD_SLUG: /m);
    assert.match(refusal.reason, /must match/);
    assert.equal(bad.stdout, "");
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("real process: --json prints exactly one JSON object on stdout, for success and refusal", async () => {
  await withWorld("cli-json", async ({ sb, run }) => {
    const one = (r: RunResult) => {
      const lines = r.stdout.split("\n").filter((l) => l !== "");
      assert.equal(lines.length, 1, `one line of JSON expected:\n${r.stdout}`);
      const v = JSON.parse(lines[0]);
      assert.equal(typeof v, "object");
      assert.ok(v !== null && !Array.isArray(v));
      return v as Record<string, unknown>;
    };
    const d = one(await run(["dispatch", "--agent", "w", "--json"]));
    assert.equal(d.ok, true);
    assert.match(d.nonce as string, /^[0-9a-f]{32}$/);
    assert.equal(d.agent, "w");
    const v = one(await run(["ledger", "verify", "--json"]));
    assert.deepEqual(v, { ok: true, rows: 5, problems: [], notes: [] });
    const s = one(await run(["ledger", "show", "--json"]));
    assert.equal((s.rows as unknown[]).length, 5);
    const p = one(await run(["permissions", "ledger", "show", "--json"]));
    assert.equal(p.ok, true);
    assert.equal(p.command, "ledger show");

    const refused = await run(["dispatch", "--agent", "-x", "--json"]);
    assert.equal(refused.code, 2); // a malformed slug is a usage error
    const e = one(refused);
    assert.equal(e.ok, false);
    assert.equal((e.error as { code: string }).code, "BAD_SLUG");
    assert.equal(refusals(refused.stderr).length, 1);
    const usage = await run(["ledger", "show", "--tail", "x", "--json"]);
    assert.equal(usage.code, 2);
    assert.equal((one(usage).error as { code: string }).code, "USAGE");
    // A verification failure: one object, with every problem.
    const st = stateFiles(sb.project);
    const lines = (await Deno.readTextFile(st.ledger)).split("\n");
    await Deno.writeTextFile(st.ledger, lines.slice(1).join("\n"));
    const failed = await run(["ledger", "verify", "--json"]);
    assert.equal(failed.code, 1);
    const f = one(failed);
    assert.equal(f.ok, false);
    assert.equal((f.error as { code: string }).code, "FIRST_ROWS_REMOVED");
  });
});

Deno.test("real process: the earlier spellings work (--issue-dispatch, --verify-proposal-ledger, --description)", async () => {
  await withWorld("cli-alias", async ({ sb, run }) => {
    const d = await run(["--issue-dispatch", "--agent", "w"]);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^[0-9a-f]{32}\n$/);
    const v = await run(["--verify-proposal-ledger"]);
    assert.equal(v.code, 0, v.stderr);
    // Spelled the earlier way, printed the earlier way (tests/cli/earlier_output_test.ts).
    assert.equal(v.stdout, "Proposal ledger: OK\n");
    // The command flag may come after other flags, and --description is --brief.
    const brief = join(sb.project, "agentteams.json");
    await Deno.writeTextFile(brief, "{}\n");
    const v2 = await runCli([
      "--project",
      sb.project,
      "--description",
      brief,
      "--verify-proposal-ledger",
    ], {
      env: sb.env,
    });
    assert.equal(v2.code, 0, v2.stderr);
    assert.equal(v2.stdout, "Proposal ledger: OK\n");
    const v3 = await run(["ledger", "verify", `--description=${brief}`]);
    assert.equal(v3.code, 0, v3.stderr);
    assert.match(v3.stdout, /^ok: 5 rows verify$/m);
  });
});

Deno.test("real process: a key file wins over key variables", async () => {
  await withWorld("cli-keyfile", async ({ run }) => {
    const r = await run(["ledger", "verify"], { AGENTTEAMS_PROPOSAL_LEDGER_KEY: "not-the-key" });
    assert.equal(r.code, 0, r.stderr);
  });
});

Deno.test("real process: ledger checkpoint --out, verify --checkpoint; a rewrite re-signed with the HMAC key is still caught", async () => {
  await withWorld("cli-checkpoint", async ({ sb, run }) => {
    const cp = join(sb.dir, "cp.json");
    const made = await run(["ledger", "checkpoint", "--out", cp]);
    assert.equal(made.code, 0, made.stderr);
    const body = JSON.parse(await Deno.readTextFile(cp));
    assert.equal(body.count, 4);
    assert.match(body.signature, /^[0-9a-f]{128}$/);
    assert.match(body.key_id, /^[0-9a-f]{16}$/);
    const ok = await run(["ledger", "verify", "--checkpoint", cp]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /extends the checkpoint of 4 rows/);

    // The ledger grows: still extends the checkpoint.
    const key = loadLedgerKey({ env: sb.env, mode: "direct" });
    await appendRow(sb.project, key.hmac, { action: "note", n: 5 });
    assert.equal((await run(["ledger", "verify", "--checkpoint", cp])).code, 0);

    // Rows removed and the head re-signed with the same HMAC key: plain verify is satisfied...
    const st = stateFiles(sb.project);
    const lines = (await Deno.readTextFile(st.ledger)).split("\n").slice(0, -1);
    await Deno.writeTextFile(st.ledger, joinLines(lines.slice(0, 3)));
    await Deno.writeTextFile(st.head, headFor(lines.slice(0, 3), key.hmac));
    assert.equal(verifyLedgerAt(sb.project, key).ok, true);
    const plain = await run(["ledger", "verify"]);
    assert.equal(plain.code, 0, plain.stderr);
    // ... but the checkpoint is not.
    const caught = await run(["ledger", "verify", "--checkpoint", cp]);
    assertCliRefused(caught, "ledger verify", "CHECKPOINT_MISMATCH");

    // Rewritten to the same length with different rows, all re-signed: caught too.
    for (let n = 4; n <= 6; n++) await appendRow(sb.project, key.hmac, { action: "forged", n });
    assert.equal(verifyLedgerAt(sb.project, key).ok, true);
    assertCliRefused(
      await run(["ledger", "verify", "--checkpoint", cp]),
      "ledger verify",
      "CHECKPOINT_MISMATCH",
    );

    // A checkpoint whose fields were edited fails its signature.
    const edited = join(sb.dir, "edited.json");
    await Deno.writeTextFile(edited, JSON.stringify({ ...body, count: 3 }));
    assertCliRefused(
      await run(["ledger", "verify", "--checkpoint", edited]),
      "ledger verify",
      "CHECKPOINT_MISMATCH",
    );
    // And not a checkpoint at all.
    const junk = join(sb.dir, "junk.json");
    await Deno.writeTextFile(junk, "{}");
    assertCliRefused(
      await run(["ledger", "verify", "--checkpoint", junk]),
      "ledger verify",
      "CHECKPOINT_MISMATCH",
    );
  });
});

Deno.test("real process: ledger checkpoint refuses a ledger that does not verify, writing no checkpoint", async () => {
  await withWorld("cli-checkpoint-bad", async ({ sb, run }) => {
    const st = stateFiles(sb.project);
    await Deno.remove(st.head);
    const cp = join(sb.dir, "cp.json");
    const before = await snapshotTree(sb.dir);
    assertCliRefused(
      await run(["ledger", "checkpoint", "--out", cp]),
      "ledger checkpoint",
      "LEDGER_TAMPERED",
    );
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("real process: ledger show --tail 2 prints the last two rows (text and --json)", async () => {
  await withWorld("cli-show", async ({ run }) => {
    const r = await run(["ledger", "show", "--tail", "2"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 2, r.stdout);
    assert.match(lines[0], /^3\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00\tnote\tw\tn=3$/);
    assert.match(lines[1], /^4\t.*\tnote\tw\tn=4$/);
    const j = JSON.parse((await run(["ledger", "show", "--tail", "2", "--json"])).stdout);
    assert.deepEqual(j.rows.map((x: { row: number; n: number }) => [x.row, x.n]), [[3, 3], [4, 4]]);
    const all = await run(["ledger", "show"]);
    assert.equal(all.stdout.trimEnd().split("\n").length, 4);
    const many = await run(["ledger", "show", "--tail", "99"]);
    assert.equal(many.stdout.trimEnd().split("\n").length, 4);
    const zero = JSON.parse((await run(["ledger", "show", "--tail", "0", "--json"])).stdout);
    assert.deepEqual(zero.rows, []);
    assertCliRefused(
      await run(["ledger", "show", "--tail", "-1"]),
      "ledger show",
      "USAGE",
      2,
    );
    assertCliRefused(await run(["ledger", "show", "--tail", "two"]), "ledger show", "USAGE", 2);
  });
  const sb = await sandbox("cli-show-empty");
  try {
    const r = await runCli(["ledger", "show", "--project", sb.project], { env: sb.env });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /no ledger yet/);
  } finally {
    await sb.dispose();
  }
});

Deno.test("real process: CLI-layer refusals write nothing (a --project that is not a directory, dispatch without --agent, checkpoint without a signing key, permissions for a path with a comma)", async () => {
  await withWorld("cli-refusals", async ({ sb, run }) => {
    const st = stateFiles(sb.project);
    const ledger = await Deno.readTextFile(st.ledger);
    const file = join(sb.dir, "not-a-dir");
    await Deno.writeTextFile(file, "x\n");
    const before = await snapshotTree(sb.dir);
    const same = async (what: string) => {
      assertSameTree(before, await snapshotTree(sb.dir), what);
      assert.equal(await Deno.readTextFile(st.ledger), ledger, `${what}: the ledger changed`);
    };

    // A project that is a file, or does not exist: USAGE, no state dir made anywhere.
    for (const project of [file, join(sb.dir, "missing")]) {
      const r = await runCli(["dispatch", "--agent", "w", "--project", project], { env: sb.env });
      const refusal = assertCliRefused(r, "dispatch", "USAGE", 2);
      assert.match(refusal.reason, /is not a directory/);
      assert.equal(r.stdout, "");
      await same(`dispatch --project ${project}`);
    }

    // dispatch without --agent: USAGE, no nonce issued.
    const noAgent = await run(["dispatch"]);
    assert.match(assertCliRefused(noAgent, "dispatch", "USAGE", 2).reason, /--agent SLUG/);
    assert.equal(noAgent.stdout, "");
    await same("dispatch without --agent");

    // permissions for an unknown command, or a path no --allow flag can carry.
    assertCliRefused(await run(["permissions", "frobnicate"]), "permissions", "UNKNOWN_COMMAND", 2);
    const comma = await run([
      "permissions",
      "ledger",
      "checkpoint",
      "--",
      "--out",
      join(sb.dir, "a,b", "cp.json"),
    ]);
    assert.match(
      assertCliRefused(comma, "permissions", "PERMISSION_MISSING").reason,
      /comma/,
    );
    assert.equal(comma.stdout, "");
    await same("permissions with a comma");

    // ledger checkpoint with the signing key gone: NO_KEY, no checkpoint file.
    await Deno.remove(join(sb.keyDir, SIGNING_KEY_FILE));
    const noSigning = await snapshotTree(sb.dir);
    const cp = join(sb.dir, "cp.json");
    const r = await run(["ledger", "checkpoint", "--out", cp]);
    assert.match(assertCliRefused(r, "ledger checkpoint", "NO_KEY").reason, /no signing key/);
    assertSameTree(noSigning, await snapshotTree(sb.dir), "checkpoint without a signing key");
    assert.equal(await Deno.readTextFile(st.ledger), ledger);
  });
});

Deno.test("first contact: bare agentteams is help (exit 0); groups list their commands; typos get a suggestion and a usage error (exit 2)", async () => {
  const bare = await inProcess([]);
  assert.equal(bare.code, 0);
  assert.match(bare.stdout, /^usage: agentteams <command> \[options\]$/m);
  assert.match(bare.stdout, /--version/);
  for (const group of ["ledger", "keys"]) {
    const help = await inProcess([group, "--help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, new RegExp(`^usage: agentteams ${group} <command>`, "m"));
    assert.match(help.stdout, group === "ledger" ? /^ {2}ledger verify /m : /^ {2}keys init /m);
    const alone = assertCliRefused(await inProcess([group]), group, "UNKNOWN_COMMAND", 2);
    assert.match(alone.reason, new RegExp(`"${group}" needs a command: ${group} `));
  }
  const typo = await inProcess(["ledger", "verfy"]);
  const t = assertCliRefused(typo, "ledger", "UNKNOWN_COMMAND", 2);
  assert.match(t.reason, /did you mean "ledger verify"\?/);
  assert.match(typo.stderr, /^agentteams ledger: usage error: UNKNOWN_COMMAND: /m);
  const top = assertCliRefused(await inProcess(["aply", "x"]), "aply", "UNKNOWN_COMMAND", 2);
  assert.match(top.reason, /did you mean "apply"\?/);
  const flag = assertCliRefused(
    await inProcess(["apply", "p.json", "--dryrun"]),
    "apply",
    "UNKNOWN_FLAG",
    2,
  );
  assert.match(flag.reason, /did you mean --dry-run\?/);
});

Deno.test("first contact: ledger verify where there is no ledger at all is NO_LEDGER (exit 1), not success; --allow-empty accepts it; nothing is created", async () => {
  const sb = await sandbox("cli-no-ledger");
  try {
    await initKeys({ env: sb.env });
    const before = await snapshotTree(sb.project);
    const r = await runCli(["ledger", "verify", "--project", sb.project], { env: sb.env });
    const refusal = assertCliRefused(r, "ledger verify", "NO_LEDGER", 1);
    assert.match(refusal.reason, /no ledger here: .* \(is --project right\?/);
    const ok = await runCli(["ledger", "verify", "--allow-empty", "--project", sb.project], {
      env: sb.env,
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^ok: 0 rows verify$/m);
    assertSameTree(before, await snapshotTree(sb.project), "verify created state");
  } finally {
    await sb.dispose();
  }
});

Deno.test("first contact: another key is recognised first, in one line; NO_KEY on a project with a ledger says a new key cannot verify it", async () => {
  const sb = await sandbox("cli-foreign-key");
  try {
    await initKeys({ env: sb.env });
    writeBrief(sb.project, ["w"]);
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await runCli(["dispatch", "--agent", "w", "--project", sb.project], { env: sb.env })).code,
        0,
      );
    }
    const other = { ...sb.env, AGENTTEAMS_KEY_DIR: `${sb.dir}/other-keys` };
    await initKeys({ env: other });
    const before = await snapshotTree(sb.project);
    const d = await runCli(["dispatch", "--agent", "w", "--project", sb.project], { env: other });
    const refusal = assertCliRefused(d, "dispatch", "FOREIGN_KEY", 1);
    assert.match(refusal.reason, /signed with another one\. Is AGENTTEAMS_KEY_DIR/);
    assert.doesNotMatch(refusal.reason, /remove them by hand/);
    const v = await runCli(["ledger", "verify", "--project", sb.project, "--json"], { env: other });
    assert.equal(v.code, 1);
    const problems = (JSON.parse(v.stdout) as { problems: { code: string }[] }).problems;
    assert.equal(problems[0].code, "FOREIGN_KEY");
    assert.equal(problems.filter((p) => p.code === "DISPATCH_ROW_INVALID").length, 1, v.stdout);
    assertSameTree(before, await snapshotTree(sb.project), "a foreign key changed the state");
    const none = { ...sb.env, AGENTTEAMS_KEY_DIR: `${sb.dir}/no-keys` };
    const n = await runCli(["ledger", "verify", "--project", sb.project], { env: none });
    const noKey = assertCliRefused(n, "ledger verify", "NO_KEY", 1);
    assert.match(noKey.reason, /a new key cannot verify its rows/);
  } finally {
    await sb.dispose();
  }
});
