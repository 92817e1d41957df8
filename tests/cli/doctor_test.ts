/**
 * `agentteams doctor` through the real CLI (issue 15, item 5): each check on its own line, the
 * lines to add for missing settings rules, exit 0 with warnings and 1 on an error (a key variable
 * set, a key file with group or other bits, a trust root's write-deny rule missing: issue 22),
 * `--json`, and not a byte written anywhere. And the preflight's pure decision: what is an error,
 * what a warning.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, runDeno, type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import {
  preflightChecks,
  preflightExit,
  type PreflightFacts,
  teamUsesClaude,
} from "../../lib/runner/preflight.ts";
import { OPERATOR_SANDBOX, SANDBOX_CASES, writeSandboxCase } from "../runner/_runner_helpers.ts";

/** Runs `fn` in a project with keys and a brief (no settings yet); disposes of it after. */
async function withProject(
  prefix: string,
  fn: (sb: Sandbox, env: Record<string, string>) => Promise<void>,
): Promise<void> {
  const sb = await sandbox(prefix);
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const init = await runCli(["keys", "init"], { env });
    assert.equal(init.code, 0, init.stderr);
    await Deno.writeTextFile(
      join(sb.project, "agentteams.json"),
      JSON.stringify({ agent_policies: { worker: { write_scopes: ["src/"] } } }),
    );
    await fn(sb, env);
  } finally {
    await sb.dispose();
  }
}

/** The brief's name in {@link withProject}'s project. */
const BRIEF = "agentteams.json";

/** The trust roots' rules: without one, doctor fails and serve refuses to start. */
const TRUST_RULES = [
  "Edit(./.agentteams-status/**)",
  "Edit(./references/**)",
  "Edit(./.claude/**)",
  "Edit(./.git/config)",
  "Edit(./.mcp.json)",
  "Edit(./agentteams.json)",
  // The other name the brief is found under: a session must not plant a second brief.
  "Edit(./agentteams.jsonc)",
];

/** The trust roots' rules with the key dir's (an error too, with them: probe 22c "Noticed"). */
function trustRules(sb: Sandbox): string[] {
  return [`Read(/${sb.keyDir}/**)`, ...TRUST_RULES];
}

/**
 * The rules doctor asks for in a sandbox whose key dir lies outside HOME: the last seven keep
 * sessions from writing the trust roots (the status folder with the runner's published key,
 * references/, the settings themselves, git's config, .mcp.json, the brief and the other name it
 * is found under).
 */
function allRules(sb: Sandbox): string[] {
  return [
    `Read(/${sb.keyDir}/**)`,
    "Read(./.agentteams/**)",
    "Edit(./.agentteams/**)",
    "Edit(./.agentteams-status/**)",
    "Edit(./references/**)",
    "Edit(./.claude/**)",
    "Edit(./.git/config)",
    "Edit(./.mcp.json)",
    "Edit(./agentteams.json)",
    "Edit(./agentteams.jsonc)",
  ];
}

/** The shared settings file with `deny` and (unless told otherwise) the sandbox doctor asks for. */
async function writeSettings(
  sb: Sandbox,
  deny: readonly string[],
  sandbox: Record<string, unknown> | null = OPERATOR_SANDBOX,
): Promise<void> {
  await Deno.mkdir(join(sb.project, ".claude"), { recursive: true });
  await Deno.writeTextFile(
    join(sb.project, ".claude", "settings.json"),
    JSON.stringify({ permissions: { deny }, ...(sandbox === null ? {} : { sandbox }) }, null, 2) +
      "\n",
  );
}

function doctor(sb: Sandbox, env: Record<string, string>, ...extra: string[]) {
  return runCli(["doctor", "--project", sb.project, ...extra], { env });
}

Deno.test("doctor: every rule present, every check ok, exit 0; each rule left out is the one finding (a trust root's an error, exit 1; the others warnings), with its line to add; nothing written", async () => {
  await withProject("doctor-rules", async (sb, env) => {
    const rules = allRules(sb);
    await writeSettings(sb, rules);
    const before = await snapshotTree(sb.dir);
    const ok = await doctor(sb, env);
    assert.equal(ok.code, 0, ok.stderr);
    const lines = ok.stdout.trimEnd().split("\n");
    assert.deepEqual(lines.map((l) => l.split(":").slice(0, 2).join(":")), [
      "ok: key",
      "ok: sandbox",
      "ok: brief",
      "ok: session-settings",
      "ok: exec-allowlist",
    ]);
    assert.doesNotMatch(ok.stdout, /warning|error/);
    assert.equal(ok.stderr, "");
    for (const rule of rules) {
      await writeSettings(sb, rules.filter((r) => r !== rule));
      const snap = await snapshotTree(sb.dir);
      const r = await doctor(sb, env);
      const trust = trustRules(sb).includes(rule);
      const level = trust ? "error" : "warning";
      if (trust) assertCliRefused(r, "doctor", "SETTINGS_RULE_MISSING");
      else assert.equal(r.code, 0, r.stderr);
      const found = r.stdout.split("\n").filter((l) => /^(warning|error):/.test(l));
      assert.equal(found.length, 1, r.stdout);
      assert.ok(found[0].includes(rule), found[0]);
      assert.ok(found[0].startsWith(`${level}: session-settings: SETTINGS_RULE_MISSING: `));
      // The line to add, under the file it goes in (an absolute rule: the local file).
      const file = rule.startsWith("Read(//") ? "settings.local.json" : "settings.json";
      assert.ok(
        r.stdout.includes(
          `add to .claude/${file}, in "permissions": {"deny": [...]}:\n` +
            `    ${JSON.stringify(rule)},`,
        ),
        r.stdout,
      );
      assertSameTree(snap, await snapshotTree(sb.dir), `after doctor without ${rule}`);
    }
    await writeSettings(sb, rules);
    assertSameTree(before, await snapshotTree(sb.dir), "after doctor");
  });
});

Deno.test("doctor: malformed settings JSON is an error with its line and column, never a crash; its rules count for nothing, so the trust roots' are errors", async () => {
  await withProject("doctor-malformed", async (sb, env) => {
    await Deno.mkdir(join(sb.project, ".claude"));
    await Deno.writeTextFile(
      join(sb.project, ".claude", "settings.json"),
      '{\n  "permissions": {\n    "deny": ["Read(./.agentteams/**)" "Edit(./.agentteams/**)"]\n  }\n}\n',
    );
    const before = await snapshotTree(sb.dir);
    const r = await doctor(sb, env);
    assertCliRefused(r, "doctor", "SETTINGS_NOT_JSON");
    for (const rule of TRUST_RULES) {
      assert.ok(r.stdout.includes(`error: session-settings: SETTINGS_RULE_MISSING: `), r.stdout);
      assert.ok(r.stdout.includes(`    ${JSON.stringify(rule)},`), r.stdout);
    }
    assert.match(
      r.stdout,
      /^error: session-settings: SETTINGS_NOT_JSON: \.claude\/settings\.json:3:39: not valid JSON/m,
    );
    // The file counts for nothing, so every rule is still missing.
    assert.equal(
      r.stdout.split("\n").filter((l) => l.includes("SETTINGS_RULE_MISSING")).length,
      10,
    );
    const j = await doctor(sb, env, "--json");
    const bad = JSON.parse(j.stdout).checks.find((c: { code?: string }) =>
      c.code === "SETTINGS_NOT_JSON"
    );
    assert.ok(bad);
    assertSameTree(before, await snapshotTree(sb.dir), "after doctor");
  });
});

Deno.test("doctor: Claude's sandbox not holding Bash to the rules is an error naming the file, its line and the JSON to set (absent, each value the wrong way, a local override, excluded commands); nothing written", async (t) => {
  await withProject("doctor-sandbox", async (sb, env) => {
    for (const c of SANDBOX_CASES) {
      await t.step(c.name, async () => {
        const place = writeSandboxCase(sb, c, BRIEF);
        const before = await snapshotTree(sb.dir);
        const r = await doctor(sb, env);
        assertCliRefused(r, "doctor", "SETTINGS_SANDBOX");
        const found = r.stdout.split("\n").filter((l) => /^(warning|error):/.test(l));
        // The case's value is the one finding, or (no block at all) the three values missing.
        assert.equal(found.length, c.at ? 1 : 3, r.stdout);
        const line = found.find((l) => l.includes(`"sandbox.${c.key}"`)) ?? "";
        assert.ok(
          line.startsWith(`error: session-settings: SETTINGS_SANDBOX: ${c.at ? `${place}: ` : ""}`),
          line,
        );
        if (c.key === "excludedCommands") {
          assert.ok(line.includes(`remove "excludedCommands" from ${c.file}`), line);
          assert.doesNotMatch(r.stdout, /set in /);
        } else {
          const want = OPERATOR_SANDBOX[c.key];
          assert.ok(line.includes(`"sandbox": {"${c.key}": ${want}}`), line);
          assert.ok(line.includes(c.file), line);
          assert.ok(
            r.stdout.includes(
              `set in ${c.file}, in "sandbox": {...}:\n    "${c.key}": ${want},`,
            ),
            r.stdout,
          );
        }
        if (c.local !== undefined && c.key !== "excludedCommands") {
          assert.ok(line.includes("overrides .claude/settings.json"), line);
        }
        assertSameTree(before, await snapshotTree(sb.dir), `after doctor with ${c.name}`);
      });
    }
    await t.step("the local file's right value wins over the shared file's wrong one", async () => {
      writeSandboxCase(sb, {
        name: "",
        shared: { ...OPERATOR_SANDBOX, enabled: false, allowUnsandboxedCommands: true },
        local: { enabled: true, allowUnsandboxedCommands: false },
        file: ".claude/settings.json",
        key: "enabled",
        at: false,
      }, BRIEF);
      const r = await doctor(sb, env);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^ok: session-settings: .*sandbox holds its Bash/m);
    });
    await t.step("a sandbox value of the wrong type: the file counts for nothing", async () => {
      writeSandboxCase(sb, {
        name: "",
        shared: { ...OPERATOR_SANDBOX, enabled: "true" },
        file: ".claude/settings.json",
        key: "enabled",
        at: false,
      }, BRIEF);
      const r = await doctor(sb, env);
      assert.equal(r.code, 1, r.stdout);
      assert.match(
        r.stdout,
        /^error: session-settings: SETTINGS_SHAPE: \.claude\/settings\.json:\d+:\d+: "sandbox\.enabled" is not true or false/m,
      );
    });
  });
});

Deno.test("doctor: a key variable set is an error (exit 1, KEY_ENV_IN_RUNNER), and the key is never printed", async () => {
  await withProject("doctor-envkey", async (sb, env) => {
    await writeSettings(sb, allRules(sb));
    const secret = "envkey-3f9a0c17d2";
    for (const name of ["AGENTTEAMS_PROPOSAL_LEDGER_KEY", "AGENTTEAMS_GRANT_SIGNING_KEY"]) {
      const before = await snapshotTree(sb.dir);
      const r = await doctor(sb, { ...env, [name]: secret });
      assertCliRefused(r, "doctor", "KEY_ENV_IN_RUNNER");
      assert.match(r.stdout, new RegExp(`^error: key: KEY_ENV_IN_RUNNER: .*${name} is set`, "m"));
      assert.match(r.stdout, /^ok: sandbox: /m);
      assert.ok(!(r.stdout + r.stderr).includes(secret));
      assertSameTree(before, await snapshotTree(sb.dir), `after doctor with ${name}`);
    }
    const keyText = (await Deno.readTextFile(join(sb.keyDir, "proposal-ledger.key"))).trim();
    const ok = await doctor(sb, env, "--json");
    assert.ok(!(ok.stdout + ok.stderr).includes(keyText), "the key file's bytes are printed");
  });
});

Deno.test("doctor: a key file 0644 is an error (KEY_CUSTODY), and so is no key at all (NO_KEY)", async () => {
  await withProject("doctor-custody", async (sb, env) => {
    await writeSettings(sb, allRules(sb));
    const keyFile = join(sb.keyDir, "proposal-ledger.key");
    await Deno.chmod(keyFile, 0o644);
    const before = await snapshotTree(sb.dir);
    const r = await doctor(sb, env);
    assertCliRefused(r, "doctor", "KEY_CUSTODY");
    assert.match(r.stdout, /^error: key: KEY_CUSTODY: .*proposal-ledger\.key/m);
    assertSameTree(before, await snapshotTree(sb.dir), "after doctor");
    await Deno.remove(keyFile);
    const none = await doctor(sb, env);
    assertCliRefused(none, "doctor", "NO_KEY");
  });
});

Deno.test("doctor --json: {ok, project, checks: [{name, ok, level, message, code?, add?}], warnings, errors}", async () => {
  await withProject("doctor-json", async (sb, env) => {
    const before = await snapshotTree(sb.dir);
    const r = await doctor(sb, env, "--json", "--brief", join(sb.project, "agentteams.json"));
    assert.equal(r.code, 1, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(j).sort(), ["checks", "errors", "ok", "project", "warnings"]);
    assert.equal(j.ok, false);
    // No .claude/ at all: the "nothing denied" warning and the rules, the trust roots' seven and
    // the key dir's errors (the status folder's: the runner's published key is one; git's config;
    // .mcp.json; both names the brief is found under), and the three sandbox values needed.
    assert.equal(j.errors, 11);
    assert.equal(j.warnings, 3);
    const errors = j.checks.filter((c: { level: string; ok: boolean }) =>
      !c.ok && c.level === "error"
    );
    assert.deepEqual(
      errors.filter((c: { code: string }) => c.code === "SETTINGS_RULE_MISSING")
        .map((c: { add: { line: string } }) => JSON.parse(c.add.line)),
      trustRules(sb),
    );
    assert.deepEqual(
      errors.filter((c: { code: string }) => c.code === "SETTINGS_SANDBOX").map((
        c: { add: unknown },
      ) => c.add),
      [
        { file: ".claude/settings.json", line: '"enabled": true', into: "sandbox" },
        { file: ".claude/settings.json", line: '"failIfUnavailable": true', into: "sandbox" },
        {
          file: ".claude/settings.json",
          line: '"allowUnsandboxedCommands": false',
          into: "sandbox",
        },
      ],
    );
    for (const c of j.checks) {
      assert.equal(typeof c.name, "string");
      assert.equal(typeof c.ok, "boolean");
      assert.ok(c.level === "error" || c.level === "warning");
      assert.equal(typeof c.message, "string");
    }
    assert.deepEqual(j.checks.slice(0, 3).map((c: { name: string; ok: boolean }) => c.ok), [
      true,
      true,
      true,
    ]);
    assert.equal(j.checks[3].code, "SETTINGS_NONE");
    const adds = j.checks.filter((c: { add?: { into?: string } }) =>
      c.add !== undefined && c.add.into === undefined
    ).map((c: { add: { file: string; line: string } }) => c.add);
    assert.deepEqual(adds.map((a: { line: string }) => JSON.parse(a.line)), allRules(sb));
    assertSameTree(before, await snapshotTree(sb.dir), "after doctor --json");
    // A broken brief is an error.
    await Deno.writeTextFile(join(sb.project, "agentteams.json"), "{");
    const bad = await doctor(sb, env, "--json");
    assert.equal(bad.code, 1);
    const jb = JSON.parse(bad.stdout);
    assert.equal(jb.ok, false);
    assert.equal(jb.checks.find((c: { name: string }) => c.name === "brief").level, "error");
    // A goose-only team without .claude/ has no Claude settings to check.
    await Deno.writeTextFile(
      join(sb.project, "agentteams.json"),
      JSON.stringify({
        write_policy_frameworks: ["goose"],
        agent_policies: { worker: { write_scopes: ["src/"] } },
      }),
    );
    const goose = await doctor(sb, env);
    assert.equal(goose.code, 0, goose.stderr);
    assert.match(goose.stdout, /^ok: session-settings: not checked: the team does not use Claude/m);
    assert.doesNotMatch(goose.stdout, /warning/);
  });
});

Deno.test("doctor: permissions doctor names no write path and only bwrap and perl (the Landlock probe) to run; doctor runs under exactly those flags", async () => {
  await withProject("doctor-perms", async (sb, env) => {
    await writeSettings(sb, allRules(sb));
    const r = await runCli(["permissions", "doctor", "--project", sb.project, "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    const exec: string[] = JSON.parse(r.stdout).exec;
    const line = exec.join(" ");
    assert.doesNotMatch(line, /--allow-write/);
    assert.match(line, /--allow-run=\/usr\/bin\/bwrap,\/usr\/bin\/perl(\s|$)/);
    assert.ok(line.includes(sb.keyDir), line);
    // The line as printed (its deno, its flags), with nothing broader.
    const before = await snapshotTree(sb.dir);
    const narrow = await runDeno(exec.slice(1), { env: sb.env });
    assert.equal(narrow.code, 0, narrow.stderr);
    assert.equal(narrow.stderr, "");
    assert.deepEqual(
      narrow.stdout.trimEnd().split("\n").map((l) => l.split(":")[0]),
      ["ok", "ok", "ok", "ok", "ok"],
    );
    assertSameTree(before, await snapshotTree(sb.dir), "after doctor under its own flags");
  });
});

const GOOD: PreflightFacts = {
  key: { ok: true, path: "/k/proposal-ledger.key" },
  sandbox: { ok: true, backend: "bwrap", program: "/usr/bin/bwrap" },
  brief: {
    ok: true,
    path: "/p/agentteams.jsonc",
    writePolicy: "orchestrator-only",
    frameworks: [],
  },
  settings: { ok: true, findings: [], usesClaude: true },
};

Deno.test("preflight decision: key, sandbox and brief failures are errors; settings findings are warnings but a trust root's, which is an error, as is settings that cannot be checked", () => {
  const good = preflightChecks(GOOD);
  assert.deepEqual(good.map((c) => [c.name, c.ok]), [
    ["key", true],
    ["sandbox", true],
    ["brief", true],
    ["session-settings", true],
  ]);
  assert.match(good[2].message, /write_policy is orchestrator-only \(the switch is on\)/);
  assert.equal(preflightExit(good), 0);
  const failures: [Partial<PreflightFacts>, string][] = [
    [{ key: { ok: false, code: "KEY_ENV_IN_RUNNER", message: "unset it" } }, "KEY_ENV_IN_RUNNER"],
    [{
      sandbox: { ok: false, backend: "bwrap", program: "/usr/bin/bwrap", reason: "no userns" },
    }, "SANDBOX_UNAVAILABLE"],
    [{ brief: { ok: false, code: "BRIEF_NOT_FOUND", message: "no brief" } }, "BRIEF_NOT_FOUND"],
  ];
  for (const [over, code] of failures) {
    const checks = preflightChecks({ ...GOOD, ...over });
    const bad = checks.filter((c) => !c.ok);
    assert.equal(bad.length, 1);
    assert.equal(bad[0].level, "error");
    assert.equal(bad[0].code, code);
    assert.equal(preflightExit(checks), 1);
  }
  const warned = preflightChecks({
    ...GOOD,
    settings: {
      ok: true,
      usesClaude: true,
      findings: [{
        code: "SETTINGS_RULE_MISSING",
        kind: "read-deny",
        rule: "Read(./.agentteams/**)",
        file: ".claude/settings.json",
        add: '"Read(./.agentteams/**)"',
        position: null,
        message: "add it",
      }],
    },
  });
  assert.equal(warned[3].level, "warning");
  assert.deepEqual(warned[3].add, {
    file: ".claude/settings.json",
    line: '"Read(./.agentteams/**)"',
  });
  assert.equal(preflightExit(warned), 0);
  const trust = preflightChecks({
    ...GOOD,
    settings: {
      ok: true,
      usesClaude: true,
      findings: [{
        code: "SETTINGS_RULE_MISSING",
        kind: "write-deny",
        rule: "Edit(./references/**)",
        file: ".claude/settings.json",
        add: '"Edit(./references/**)"',
        position: null,
        message: "add it",
        trustRoot: true,
      }],
    },
  });
  assert.equal(trust[3].level, "error");
  assert.equal(trust[3].code, "SETTINGS_RULE_MISSING");
  assert.deepEqual(trust[3].add, {
    file: ".claude/settings.json",
    line: '"Edit(./references/**)"',
  });
  assert.equal(preflightExit(trust), 1);
  const noClaude = preflightChecks({
    ...GOOD,
    settings: { ok: true, findings: [], usesClaude: false },
  });
  // Under the switch, sessions no check can reach fail closed (probe 22c C4).
  assert.equal(noClaude[3].ok, false);
  assert.equal(noClaude[3].level, "error");
  assert.equal(noClaude[3].code, "SETTINGS_UNCHECKED");
  assert.match(noClaude[3].message, /^the team does not use Claude Code/);
  assert.equal(preflightExit(noClaude), 1);
  // Off the switch they are only not checked.
  const off = preflightChecks({
    ...GOOD,
    brief: { ...GOOD.brief, writePolicy: "default" } as PreflightFacts["brief"],
    settings: { ok: true, findings: [], usesClaude: false },
  });
  assert.equal(off[3].ok, true);
  assert.match(off[3].message, /^not checked: the team does not use Claude Code/);
  assert.equal(preflightExit(off), 0);
  const unreadable = preflightChecks({
    ...GOOD,
    settings: { ok: false, code: "SETTINGS_UNREADABLE", message: "x" },
  });
  assert.equal(unreadable[3].level, "error");
  assert.equal(preflightExit(unreadable), 1);
});

Deno.test("preflight decision: the team uses Claude unless no .claude/ and the frameworks leave it out", () => {
  assert.equal(teamUsesClaude({ claudeDir: true, frameworks: ["goose"] }), true);
  assert.equal(teamUsesClaude({ claudeDir: false, frameworks: ["goose"] }), false);
  assert.equal(teamUsesClaude({ claudeDir: false, frameworks: ["claude", "goose"] }), true);
  assert.equal(teamUsesClaude({ claudeDir: false, frameworks: [] }), true);
  assert.equal(teamUsesClaude({ claudeDir: false, frameworks: null }), true);
});

Deno.test("doctor: Claude Code's user settings can weaken its sandbox, so they are read too: a user-level excludedCommands or enableWeakerNestedSandbox is an error naming that file; the project's later value wins a scalar; nothing written", async () => {
  await withProject("doctor-user-settings", async (sb, env) => {
    await writeSettings(sb, allRules(sb));
    const userFile = join(env.HOME, ".claude", "settings.json");
    await Deno.mkdir(join(env.HOME, ".claude"), { recursive: true });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ excludedCommands: ["git"] }, /"sandbox\.excludedCommands" lists 1 command/],
      [{ enableWeakerNestedSandbox: true }, /"sandbox\.enableWeakerNestedSandbox" is true/],
    ];
    for (const [sandbox, message] of cases) {
      await Deno.writeTextFile(userFile, JSON.stringify({ sandbox }, null, 2));
      const before = await snapshotTree(sb.dir);
      const r = await doctor(sb, env);
      assert.equal(r.code, 1, r.stdout);
      const line = r.stdout.split("\n").find((l) => message.test(l)) ?? "";
      assert.ok(
        line.startsWith(`error: session-settings: SETTINGS_SANDBOX: ${userFile}:`),
        r.stdout,
      );
      assertSameTree(before, await snapshotTree(sb.dir));
    }
    // A scalar the project's own file sets wins over the user's (Claude Code's merge order).
    await Deno.writeTextFile(userFile, JSON.stringify({ sandbox: { enabled: false } }));
    const ok = await doctor(sb, env);
    assert.equal(ok.code, 0, ok.stdout);
    // A user file that is a link (dotfiles) is read through it: it lies outside every session.
    const real = join(sb.dir, "dotfiles-settings.json");
    await Deno.writeTextFile(real, JSON.stringify({ sandbox: { excludedCommands: ["docker"] } }));
    await Deno.remove(userFile);
    await Deno.symlink(real, userFile);
    const linked = await doctor(sb, env);
    assert.equal(linked.code, 1, linked.stdout);
    assert.match(linked.stdout, /excludedCommands" lists 1 command/);
  });
});
