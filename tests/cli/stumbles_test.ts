/**
 * Issue 23 item 9, the smaller stumbles of the CLI, through the real CLI: a brief whose confined
 * write directories do not exist is refused up front by `brief check` and `doctor` (as the first
 * confined run would refuse it), docs/policy.md's example brief among them until its directory is
 * made; `brief check` reports every problem of one agent's command entries; common options before
 * the command are accepted.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";

/** docs/policy.md's complete example brief, as the docs show it. */
function exampleBrief(): string {
  const doc = Deno.readTextFileSync(join(REPO_ROOT, "docs/policy.md"));
  const at = doc.indexOf("<!-- example-brief -->");
  assert.ok(at >= 0, "docs/policy.md has no example brief");
  const start = doc.indexOf("```jsonc\n", at) + "```jsonc\n".length;
  return doc.slice(start, doc.indexOf("```", start));
}

Deno.test("brief check and doctor: a confined write directory that does not exist is CONFINED_INVALID up front, naming it and what to run; docs/policy.md's example passes once it is made", async () => {
  const sb = await sandbox("stumble-confined-dirs");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    await Deno.writeTextFile(join(sb.project, "agentteams.jsonc"), exampleBrief());
    for (const d of ["src", "tests", "reports", "docs/reviews"]) {
      await Deno.mkdir(join(sb.project, d), { recursive: true });
    }
    const missing = join(sb.project, "src", "__pycache__");
    const before = await snapshotTree(sb.dir);
    const bad = await runCli(["brief", "check", "--project", sb.project], { env });
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(
      bad.stdout,
      new RegExp(
        '^CONFINED_INVALID: confined_programs\\.worker\\.write\\[0\\] \\("src/__pycache__"\\): ' +
          `write root src/__pycache__ is not an existing directory .*: create the directory ` +
          `\\(mkdir -p ${missing.replaceAll("/", "\\/")}\\) before the first run$`,
        "m",
      ),
    );
    assert.match(bad.stderr, /brief check: refused: CONFINED_INVALID: 1 problem\(s\) in /);
    const doc = await runCli(["doctor", "--project", sb.project], { env });
    assert.equal(doc.code, 1, doc.stdout + doc.stderr);
    assert.match(
      doc.stdout,
      /^error: confined-write-dirs: CONFINED_INVALID: confined_programs\.worker\.write\[0\] .*mkdir -p /m,
    );
    assertSameTree(before, await snapshotTree(sb.dir), "brief check and doctor wrote something");
    await Deno.mkdir(missing);
    const ok = await runCli(["brief", "check", "--project", sb.project], { env });
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^ok: .* passes \(2 agent\(s\): worker, reviewer; 1 gate\(s\)\)$/m);
    const again = await runCli(["doctor", "--project", sb.project], { env });
    assert.doesNotMatch(again.stdout, /confined-write-dirs/);
    // A symlink on the way is the sandbox's refusal too.
    await Deno.remove(missing);
    await Deno.symlink(sb.dir, missing);
    const link = await runCli(["brief", "check", "--project", sb.project], { env });
    assert.equal(link.code, 1);
    assert.match(
      link.stdout,
      /^CONFINED_PATH_UNSAFE: confined_programs\.worker\.write\[0\] .*symlink/m,
    );
  } finally {
    await sb.dispose();
  }
});

Deno.test("brief check: every problem of one agent's command entries at once, in order", async () => {
  const sb = await sandbox("stumble-every-problem");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    await Deno.writeTextFile(
      join(sb.project, "agentteams.json"),
      JSON.stringify({
        agent_policies: {
          w: {
            commands: [
              { prefix: ["./make"], args: [".*", "[a-z]+", "-.*"], cwd: "/abs" },
              { prefix: ["true"], variadic: true, writes: ["agentteams.json"] },
            ],
          },
        },
      }),
    );
    const r = await runCli(["brief", "check", "--project", sb.project], { env });
    assert.equal(r.code, 1, r.stderr);
    const paths = r.stdout.trimEnd().split("\n").map((l) =>
      l.match(/: (agent_policies\S+): /)?.[1]
    );
    assert.deepEqual(paths, [
      "agent_policies.w.commands[0].prefix[0]",
      "agent_policies.w.commands[0].args[0]",
      "agent_policies.w.commands[0].args[2]",
      "agent_policies.w.commands[0].cwd",
      "agent_policies.w.commands[1].variadic",
      "agent_policies.w.commands[1].writes[0]",
    ]);
    assert.match(r.stderr, /refused: POLICY_LINT: 6 problem\(s\) in /);
  } finally {
    await sb.dispose();
  }
});

Deno.test("common options before the command: --project, --brief, --json (and a flag given twice is still refused)", async () => {
  const sb = await sandbox("stumble-leading-options");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const brief = join(sb.dir, "team-brief.json");
    await Deno.writeTextFile(brief, JSON.stringify({ agent_policies: { w: {} } }));
    const a = await runCli(["--brief", brief, "--project", sb.project, "brief", "check"], { env });
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /^ok: .*team-brief\.json passes/m);
    const b = await runCli([
      "--json",
      `--project=${sb.project}`,
      "--brief",
      brief,
      "brief",
      "check",
    ], {
      env,
    });
    assert.equal(b.code, 0, b.stderr);
    assert.equal(JSON.parse(b.stdout).ok, true);
    const c = await runCli(["--project", sb.project, "ledger", "verify", "--json"], { env });
    // No key yet: the command ran (its own refusal), not UNKNOWN_COMMAND.
    assert.equal(c.code, 1, c.stderr);
    assert.equal(JSON.parse(c.stdout).error.code, "NO_KEY");
    const twice = await runCli(
      ["--project", sb.project, "brief", "check", "--project", sb.project],
      { env },
    );
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /usage error: USAGE: --project given twice/);
    const unknown = await runCli(["--frobnicate", "brief", "check"], { env });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /UNKNOWN_COMMAND/);
    // Common options and no command: said so, not "unknown command --project".
    const none = await runCli(["--project", sb.project], { env });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /UNKNOWN_COMMAND: no command after the common options \(--project /);
    assert.doesNotMatch(none.stderr, /unknown command "--project"/);
    const perm = await runCli(["--project", sb.project, "permissions", "ledger", "show"], { env });
    assert.equal(perm.code, 0, perm.stderr);
    assert.match(perm.stdout.trimEnd(), new RegExp(`ledger show --project ${sb.project}$`));
  } finally {
    await sb.dispose();
  }
});

Deno.test("ledger verify with the last row removed: LAST_ROW_REMOVED names no row past the end, and says where the ledger ends", async () => {
  const sb = await sandbox("stumble-last-row");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    await Deno.writeTextFile(
      join(sb.project, "agentteams.json"),
      JSON.stringify({ agent_policies: { w: {} } }),
    );
    assert.equal((await runCli(["keys", "init"], { env })).code, 0);
    for (let i = 0; i < 2; i++) {
      const d = await runCli(["dispatch", "--agent", "w", "--project", sb.project], { env });
      assert.equal(d.code, 0, d.stderr);
    }
    const ledger = join(sb.project, ".agentteams", "proposal-ledger.jsonl");
    const lines = (await Deno.readTextFile(ledger)).trimEnd().split("\n");
    assert.equal(lines.length, 2);
    await Deno.writeTextFile(ledger, lines[0] + "\n");
    const r = await runCli(["ledger", "verify", "--project", sb.project], { env });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const all = r.stdout + r.stderr;
    assert.match(
      all,
      /ledger: LAST_ROW_REMOVED: the last row was removed: the head records 2 rows, the ledger holds 1 \(ending at row 1\)/,
    );
    assert.doesNotMatch(all, /row 2: LAST_ROW_REMOVED/);
    const json = await runCli(["ledger", "verify", "--json", "--project", sb.project], { env });
    const problem = JSON.parse(json.stdout).error?.details?.problems?.[0] ??
      JSON.parse(json.stdout).problems?.[0];
    assert.equal(problem?.code, "LAST_ROW_REMOVED", json.stdout);
    assert.equal(problem.row, null);
  } finally {
    await sb.dispose();
  }
});
