/**
 * `agentteams init` (issue 27 item 4): its bad input, each refused with its code and nothing
 * written (a symlinked `.claude/`, a settings file with comments, an agent file that cannot be
 * read); a brief already present, never overwritten without `--force`, then backed up; the
 * user's own settings rules kept; `--dry-run` writes nothing; a second run changes nothing. And
 * the pure parts: the template passes the brief's own lint, the merge keeps every rule.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initProject, type InitReport } from "../../lib/init/init.ts";
import { writePolicyReference } from "../../lib/init/reference.ts";
import { briefTemplate } from "../../lib/policy/brief_template.ts";
import { briefFindings } from "../../lib/policy/parse.ts";
import { mergeDenyRules, mergeSessionSettings } from "../../lib/policy/session_settings_merge.ts";
import { sessionSettingsFindings } from "../../lib/policy/session_settings.ts";
import { operatorSettingsInput } from "../../lib/runner/preflight.ts";
import { InitError } from "../../lib/errors.ts";
import { assertCliRefused, assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { runCli, runDeno, type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { ADOPTED, layTeam, operatorEnv } from "./_team.ts";

/** Runs `fn` in a sandbox whose project holds the corpus team. */
async function withTeam(prefix: string, fn: (sb: Sandbox) => Promise<void>): Promise<void> {
  const sb = await sandbox(prefix);
  try {
    await layTeam(sb.project);
    await fn(sb);
  } finally {
    await sb.dispose();
  }
}

function run(sb: Sandbox, o: { dryRun?: boolean; force?: boolean } = {}): Promise<InitReport> {
  return initProject({
    root: sb.project,
    env: operatorEnv(sb),
    dryRun: o.dryRun ?? false,
    force: o.force ?? false,
    show: () => {},
  });
}

const read = (sb: Sandbox, rel: string) => Deno.readTextFileSync(join(sb.project, rel));

Deno.test("init: the brief template names every agent found, passes the brief's own checks, and a slug the brief would refuse is left out and named", () => {
  const text = briefTemplate([
    { slug: "reviewer", files: [".claude/agents/reviewer.md"] },
    { slug: "Bad_Name", files: [".claude/agents/Bad_Name.md"] },
    { slug: "tester", files: [".codex/agents/tester.toml", ".claude/agents/tester.md"] },
  ]);
  const found = briefFindings(
    text,
    { briefPath: "/p/agentteams.jsonc", projectRoot: "/p", briefSha256: "0".repeat(64) },
    () => false,
  );
  assert.deepEqual(found.findings.map((f) => f.message), []);
  assert.deepEqual(found.agents, ["reviewer", "tester"]);
  assert.match(text, /\/\/ \.codex\/agents\/tester\.toml, \.claude\/agents\/tester\.md\n/);
  assert.match(text, /Not listed[^\n]*\n {2}\/\/ \.claude\/agents\/Bad_Name\.md\n/);
  assert.match(text, /"write_policy": "orchestrator-only"/);
});

Deno.test("init: mergeDenyRules keeps every key and rule of the user's, in order, adds only what is missing, and refuses what is not a strict JSON object", () => {
  const user = JSON.stringify({
    model: "x",
    permissions: { allow: ["Bash(ls)"], deny: ["Read(./.env)", "Edit(./.agentteams/**)"] },
    env: { A: "1" },
  });
  const out = JSON.parse(
    mergeDenyRules(user, ["Edit(./.agentteams/**)", "Read(./.agentteams/**)"]),
  );
  assert.deepEqual(out, {
    model: "x",
    permissions: {
      allow: ["Bash(ls)"],
      deny: ["Read(./.env)", "Edit(./.agentteams/**)", "Read(./.agentteams/**)"],
    },
    env: { A: "1" },
  });
  assert.equal(mergeDenyRules(user, ["Read(./.env)"]), user, "nothing to add: the same text");
  assert.throws(() => mergeDenyRules('{\n  // c\n  "a": 1\n}', ["Read(x)"]));
  assert.throws(() => mergeDenyRules('{"a": 1, "a": 2}', ["Read(x)"]));
  assert.throws(() => mergeDenyRules('{"permissions": {"deny": "Read(x)"}}', ["Read(y)"]));
  assert.throws(() => mergeDenyRules("[]", ["Read(y)"]));
});

Deno.test("init: on the corpus team it writes the brief, exactly the rules the settings check requires (none missing after), the runtime folders' .gitignore lines and the reference file; a second run changes nothing", async () => {
  await withTeam("init-lib", async (sb) => {
    const r = await run(sb);
    assert.deepEqual(r.changes.map((c) => [c.action, c.file]), [
      ["create", "agentteams.jsonc"],
      ["create", ".claude/settings.json"],
      ["create", ".gitignore"],
      ["create", "references/write-policy.reference.md"],
    ]);
    assert.ok(
      r.agents.includes("docs-writer") && r.agents.includes("clean-readfs"),
      r.agents.join(),
    );
    const settings = {
      path: join(Deno.realPathSync(sb.project), ".claude", "settings.json"),
      text: read(sb, ".claude/settings.json"),
    };
    const left = sessionSettingsFindings(operatorSettingsInput({
      root: Deno.realPathSync(sb.project),
      env: operatorEnv(sb),
      settings: [settings],
      usesClaude: true,
      brief: join(Deno.realPathSync(sb.project), "agentteams.jsonc"),
    }));
    assert.deepEqual(left.map((f) => f.message), []);
    assert.equal(
      read(sb, ".gitignore"),
      "# agentteams runner\n/.agentteams-queue/\n/.agentteams-status/\n",
    );
    assert.equal(read(sb, "references/write-policy.reference.md"), writePolicyReference());
    // What --fix would change: the adopted agent, named in the command that fixes it.
    assert.deepEqual(r.fixes.map((f) => [f.file, f.outcome]), [[ADOPTED.rel, "skipped-adopted"]]);
    assert.equal(r.fixCommand, `agentteams audit --fix ${ADOPTED.rel}`);
    const before = await snapshotTree(sb.dir);
    const again = await run(sb);
    assert.deepEqual(again.changes, []);
    assertSameTree(before, await snapshotTree(sb.dir), "a second init");
  });
});

Deno.test("init --dry-run shows every change and writes nothing", async () => {
  await withTeam("init-dry", async (sb) => {
    const before = await snapshotTree(sb.dir);
    const shown: string[] = [];
    const r = await initProject({
      root: sb.project,
      env: operatorEnv(sb),
      dryRun: true,
      force: false,
      show: (c) => shown.push(c.file),
    });
    assert.deepEqual(shown, r.changes.map((c) => c.file));
    assert.equal(shown.length, 4);
    assertSameTree(before, await snapshotTree(sb.dir), "init --dry-run");
  });
});

Deno.test("init keeps the user's settings rules and keys, adding the required rules after them", async () => {
  await withTeam("init-merge", async (sb) => {
    await Deno.mkdir(join(sb.project, ".claude"), { recursive: true });
    const mine = { permissions: { deny: ["Read(./secrets/**)"], allow: ["Bash(git status)"] } };
    await Deno.writeTextFile(join(sb.project, ".claude", "settings.json"), JSON.stringify(mine));
    const r = await run(sb);
    assert.deepEqual(r.changes.find((c) => c.file === ".claude/settings.json")?.action, "update");
    const now = JSON.parse(read(sb, ".claude/settings.json"));
    assert.deepEqual(now.permissions.allow, ["Bash(git status)"]);
    assert.equal(now.permissions.deny[0], "Read(./secrets/**)");
    assert.ok(now.permissions.deny.includes("Edit(./references/**)"));
    assert.ok(now.permissions.deny.includes("Read(~/.config/agentteams/keys/**)"));
    // Both names the brief is found under, the one init wrote and the other (no second brief).
    assert.ok(now.permissions.deny.includes("Edit(./agentteams.jsonc)"));
    assert.ok(now.permissions.deny.includes("Edit(./agentteams.json)"));
  });
});

Deno.test("init: mergeSessionSettings sets each sandbox value, keeping the block's other keys and the file's, and leaves a file that holds them as it was", () => {
  const user = JSON.stringify({
    sandbox: { enabled: false, filesystem: { denyRead: ["~/.ssh"] } },
    model: "opus",
  });
  const merged = mergeSessionSettings(user, {
    sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false },
  });
  assert.deepEqual(JSON.parse(merged), {
    sandbox: {
      enabled: true,
      filesystem: { denyRead: ["~/.ssh"] },
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
    },
    model: "opus",
  });
  assert.equal(mergeSessionSettings(merged, { sandbox: { enabled: true } }), merged);
  // Deny rules and the sandbox together, into a new file.
  assert.deepEqual(
    JSON.parse(mergeSessionSettings(null, { deny: ["Read(x)"], sandbox: { enabled: true } })),
    { permissions: { deny: ["Read(x)"] }, sandbox: { enabled: true } },
  );
  assert.throws(() => mergeSessionSettings('{"sandbox": true}', { sandbox: { enabled: true } }));
});

Deno.test("init writes Claude's sandbox block with the deny rules (shown before it is written), sets a weakened value where it wins (the local file's included), changes nothing the second time, and refuses excluded commands (INIT_SANDBOX_EXCLUDED) writing nothing", async () => {
  await withTeam("init-sandbox", async (sb) => {
    await Deno.mkdir(join(sb.project, ".claude"), { recursive: true });
    const mine = {
      permissions: { deny: ["Read(./secrets/**)"] },
      sandbox: { enabled: false, network: { allowLocalBinding: true } },
    };
    await Deno.writeTextFile(join(sb.project, ".claude", "settings.json"), JSON.stringify(mine));
    await Deno.writeTextFile(
      join(sb.project, ".claude", "settings.local.json"),
      JSON.stringify({ sandbox: { allowUnsandboxedCommands: true } }),
    );
    const shown: string[] = [];
    const dry = await initProject({
      root: sb.project,
      env: operatorEnv(sb),
      dryRun: true,
      force: false,
      show: (c) => shown.push(`${c.file}: ${c.what}`),
    });
    assert.equal(dry.changes.length, shown.length);
    const sharedShown = shown.find((l) => l.startsWith(".claude/settings.json: ")) ?? "";
    assert.match(sharedShown, /sandbox\.enabled: true, sandbox\.failIfUnavailable: true/);
    assert.doesNotMatch(sharedShown, /allowUnsandboxedCommands/);
    assert.match(
      shown.find((l) => l.startsWith(".claude/settings.local.json: ")) ?? "",
      /sandbox\.allowUnsandboxedCommands: false/,
    );
    await run(sb);
    const shared = JSON.parse(read(sb, ".claude/settings.json"));
    assert.deepEqual(shared.sandbox, {
      enabled: true,
      network: { allowLocalBinding: true },
      failIfUnavailable: true,
    });
    assert.equal(shared.permissions.deny[0], "Read(./secrets/**)");
    assert.deepEqual(JSON.parse(read(sb, ".claude/settings.local.json")).sandbox, {
      allowUnsandboxedCommands: false,
    });
    const left = sessionSettingsFindings(operatorSettingsInput({
      root: Deno.realPathSync(sb.project),
      env: operatorEnv(sb),
      settings: [".claude/settings.json", ".claude/settings.local.json"].map((rel) => ({
        path: join(Deno.realPathSync(sb.project), rel),
        text: read(sb, rel),
      })),
      usesClaude: true,
      brief: join(Deno.realPathSync(sb.project), "agentteams.jsonc"),
    }));
    assert.deepEqual(left.map((f) => f.message), []);
    const before = await snapshotTree(sb.dir);
    assert.deepEqual((await run(sb)).changes, []);
    assertSameTree(before, await snapshotTree(sb.dir), "a second init");
    // A command excluded from the sandbox: init removes nothing the user wrote, so it refuses.
    const local = JSON.stringify({
      sandbox: { allowUnsandboxedCommands: false, excludedCommands: ["git"] },
    });
    await Deno.writeTextFile(join(sb.project, ".claude", "settings.local.json"), local);
    const snap = await snapshotTree(sb.dir);
    await assertRefusal(() => run(sb), "INIT_SANDBOX_EXCLUDED", InitError);
    await assert.rejects(
      () => run(sb),
      /remove "excludedCommands" from \.claude\/settings\.local\.json/,
    );
    assertSameTree(snap, await snapshotTree(sb.dir), "a refused init");
  });
});

Deno.test("init refuses a symlinked .claude/ (INIT_LINK) and writes nothing, not even the brief", async () => {
  await withTeam("init-link", async (sb) => {
    const elsewhere = join(sb.dir, "elsewhere");
    await Deno.mkdir(elsewhere);
    await Deno.rename(join(sb.project, ".claude"), join(elsewhere, ".claude"));
    await Deno.symlink(join(elsewhere, ".claude"), join(sb.project, ".claude"));
    const before = await snapshotTree(sb.dir);
    await assertRefusal(() => run(sb), "INIT_LINK", InitError);
    assertSameTree(before, await snapshotTree(sb.dir), "refused init");
  });
});

Deno.test("init refuses, writing nothing, a settings file that is not strict JSON or not the shape Claude Code reads (INIT_SETTINGS_UNREADABLE), in either settings file, and a settings file or .claude that is a link or not what it should be (INIT_LINK)", async () => {
  const bad: [string, string][] = [
    [".claude/settings.json", '{"permissions": {"deny": ["Read(./.env)"],}}'],
    [".claude/settings.json", "{not json"],
    [".claude/settings.json", '{"a": 1, "a": 2}'],
    [".claude/settings.json", '{"permissions": {"deny": "Read(./.env)"}}'],
    [".claude/settings.json", "[]"],
    [".claude/settings.local.json", "{\n  /* mine */\n}"],
  ];
  for (const [rel, text] of bad) {
    await withTeam("init-badsettings", async (sb) => {
      await Deno.writeTextFile(join(sb.project, rel), text);
      const before = await snapshotTree(sb.dir);
      await assertRefusal(() => run(sb), "INIT_SETTINGS_UNREADABLE", InitError, text);
      assertSameTree(before, await snapshotTree(sb.dir), `refused init (${text})`);
    });
  }
  const links: [string, (sb: Sandbox) => Promise<void>][] = [
    ["a linked settings.json", async (sb) => {
      await Deno.writeTextFile(join(sb.dir, "real.json"), "{}");
      await Deno.symlink(join(sb.dir, "real.json"), join(sb.project, ".claude", "settings.json"));
    }],
    ["a settings.json directory", (sb) => Deno.mkdir(join(sb.project, ".claude", "settings.json"))],
    ["a linked references/", async (sb) => {
      await Deno.mkdir(join(sb.dir, "refs"));
      await Deno.symlink(join(sb.dir, "refs"), join(sb.project, "references"));
    }],
    ["a linked .gitignore", (sb) => Deno.symlink("/etc/hostname", join(sb.project, ".gitignore"))],
  ];
  for (const [what, make] of links) {
    await withTeam("init-links", async (sb) => {
      await make(sb);
      const before = await snapshotTree(sb.dir);
      await assertRefusal(() => run(sb), "INIT_LINK", InitError, what);
      assertSameTree(before, await snapshotTree(sb.dir), `refused init (${what})`);
    });
  }
});

Deno.test("init --dry-run --json through the CLI: one JSON object naming every change, nothing written", async () => {
  await withTeam("init-json", async (sb) => {
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["init", "--dry-run", "--json", "--project", sb.project], {
      env: operatorEnv(sb),
    });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.dry_run, true);
    assert.deepEqual(out.changes.map((c: { file: string }) => c.file), [
      "agentteams.jsonc",
      ".claude/settings.json",
      ".gitignore",
      "references/write-policy.reference.md",
    ]);
    assert.match(out.fix_command, /^agentteams audit --fix \S+docs-writer\.md$/);
    assertSameTree(before, await snapshotTree(sb.dir), "init --dry-run --json");
  });
});

Deno.test("init refuses a settings file with comments (JSONC) through the CLI (INIT_SETTINGS_UNREADABLE, exit 1) and never rewrites it", async () => {
  await withTeam("init-jsonc", async (sb) => {
    const text = '{\n  // mine\n  "permissions": {"deny": ["Read(./.env)"]}\n}\n';
    await Deno.writeTextFile(join(sb.project, ".claude", "settings.json"), text);
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["init", "--project", sb.project], { env: operatorEnv(sb) });
    const refusal = assertCliRefused(r, "init", "INIT_SETTINGS_UNREADABLE");
    assert.match(refusal.reason, /\.claude\/settings\.json:2:3/);
    assert.equal(r.stdout, "", "no change was shown: none is made");
    assertSameTree(before, await snapshotTree(sb.dir), "refused init");
  });
});

Deno.test("init refuses an agent file it cannot read (a FIFO, not UTF-8, a symlink) with INIT_AGENT_UNREADABLE, naming it, and writes nothing", async () => {
  const cases: [string, (abs: string) => Promise<void>][] = [
    ["fifo.md", async (abs) => {
      const out = await new Deno.Command("/usr/bin/mkfifo", { args: [abs] }).output();
      assert.ok(out.success, "mkfifo");
    }],
    ["latin1.md", (abs) => Deno.writeFile(abs, new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xe9]))],
    ["linked.md", (abs) => Deno.symlink("/etc/hostname", abs)],
  ];
  for (const [name, make] of cases) {
    await withTeam("init-unreadable", async (sb) => {
      await make(join(sb.project, ".claude", "agents", name));
      const before = await snapshotTree(sb.dir);
      const e = await assertRefusal(() => run(sb), "INIT_AGENT_UNREADABLE", InitError, name);
      assert.match(e.message, new RegExp(`\\.claude/agents/${name.replace(".", "\\.")}`));
      assertSameTree(before, await snapshotTree(sb.dir), `refused init (${name})`);
    });
  }
});

Deno.test("init never overwrites an existing brief without --force; with it, backs the old one up (never over an earlier backup) and writes the template", async () => {
  await withTeam("init-brief", async (sb) => {
    const mine =
      '{"write_policy": "default", "agent_policies": {"w": {"write_scopes": ["src/"]}}}\n';
    const brief = join(sb.project, "agentteams.jsonc");
    await Deno.writeTextFile(brief, mine);
    const kept = await run(sb);
    assert.deepEqual(kept.changes[0], {
      file: "agentteams.jsonc",
      action: "keep",
      what: kept.changes[0].what,
    });
    assert.equal(Deno.readTextFileSync(brief), mine, "not overwritten without --force");
    await Deno.writeTextFile(join(sb.project, "agentteams.jsonc.bak"), "an earlier backup\n");
    const forced = await run(sb, { force: true });
    assert.deepEqual(forced.changes.slice(0, 2).map((c) => [c.action, c.file]), [
      ["backup", "agentteams.jsonc.bak.1"],
      ["replace", "agentteams.jsonc"],
    ]);
    assert.equal(read(sb, "agentteams.jsonc.bak.1"), mine, "the backup holds the old brief");
    assert.equal(read(sb, "agentteams.jsonc.bak"), "an earlier backup\n", "never over a backup");
    assert.match(read(sb, "agentteams.jsonc"), /"write_policy": "orchestrator-only"/);
  });
});

Deno.test('init keeping a brief says whether that brief turns the switch on, never "switched on" for one that does not', async () => {
  await withTeam("init-kept-switch", async (sb) => {
    const brief = join(sb.project, "agentteams.jsonc");
    const P = ["--project", sb.project];
    const cases: [string, string, RegExp][] = [
      [
        '{"write_policy": "default", "agent_policies": {"w": {"write_scopes": ["src/"]}}}\n',
        "off",
        /is not switched on: the brief init kept, agentteams\.jsonc, does not say "write_policy": "orchestrator-only"; add it to agentteams\.jsonc, or run agentteams init --force/,
      ],
      [
        "{ not json\n",
        "unreadable",
        /is not switched on: .*cannot be read \(agentteams brief check/,
      ],
      [
        '{"write_policy": "orchestrator-only", "privilege_profile": "confined", "agent_policies": {}}\n',
        "on",
        /^switched on \S+: /m,
      ],
    ];
    for (const [text, state, said] of cases) {
      await Deno.writeTextFile(brief, text);
      const r = await runCli(["init", ...P], { env: operatorEnv(sb) });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, said, r.stdout);
      if (state !== "on") assert.doesNotMatch(r.stdout, /^switched on/m, r.stdout);
      const j = await runCli(["init", "--dry-run", "--json", ...P], { env: operatorEnv(sb) });
      assert.equal(JSON.parse(j.stdout).switch, state);
      assert.equal(Deno.readTextFileSync(brief), text, "the kept brief is not rewritten");
    }
  });
});

Deno.test("init runs under exactly the flags `permissions init` prints (the project writable, perl to run, no broader); with --dry-run, no write flag at all", async () => {
  await withTeam("init-perms", async (sb) => {
    const env = operatorEnv(sb);
    const lineOf = async (...extra: string[]) => {
      const r = await runCli(["permissions", "init", ...extra, "--project", sb.project, "--json"], {
        env,
      });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout).exec as string[];
    };
    const dry = await lineOf("--dry-run");
    assert.doesNotMatch(dry.join(" "), /--allow-write|--allow-run/);
    const before = await snapshotTree(sb.dir);
    const shown = await runDeno(dry.slice(1), { env: { HOME: sb.home } });
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.stderr, "", "no broad-launch warning, nothing refused");
    assert.match(shown.stdout, /^would create agentteams\.jsonc: /m);
    assertSameTree(before, await snapshotTree(sb.dir), "init --dry-run under its flags");
    const wet = await lineOf();
    assert.match(wet.join(" "), /--allow-run=\/usr\/bin\/perl(\s|$)/);
    const made = await runDeno(wet.slice(1), { env: { HOME: sb.home } });
    assert.equal(made.code, 0, made.stderr);
    assert.equal(made.stderr, "");
    assert.match(read(sb, "agentteams.jsonc"), /"write_policy": "orchestrator-only"/);
  });
});
