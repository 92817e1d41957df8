/**
 * `agentteams run` end to end, the environment a command gets: a real child prints its whole
 * environment (`/usr/bin/printenv`, allowlisted; `env` itself is a launcher the policy lint
 * refuses) while the parent holds ledger keys, tokens, `DENO_*`, `LD_*`, `GIT_*` and other
 * variables. Only HOME, LANG, LC_*, TMPDIR (the run's private one), USER, LOGNAME, TERM and a
 * PATH of absolute entries reach it. A relative PATH entry in the parent is dropped: a program
 * named like the allowed one, first on PATH in a relative directory, does not run.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  DENO_BIN_DIR,
  exists,
  jsonOut,
  newRows,
  shScript,
  withWorld,
  workerBrief,
  type WorldPaths,
  writeFileAt,
} from "./_run_helpers.ts";

function brief(p: WorldPaths) {
  return workerBrief(p, [
    { prefix: ["/usr/bin/printenv"] },
    { prefix: ["touch"], args: ["src/[a-z]+\\.txt"], writes: ["src/*"] },
    // Reads the key dir (a literal prefix: the request has no say in the path).
    { prefix: ["/usr/bin/cat", join(p.keyDir, "proposal-ledger.key")] },
    { prefix: ["/usr/bin/ls", "-A", p.keyDir] },
  ]);
}

const SECRETS: Record<string, string> = {
  AGENTTEAMS_PROPOSAL_LEDGER_KEY: "secret-ledger-key-value",
  AGENTTEAMS_DECISION_SIGNING_KEY: "secret-decision-key-value",
  SOME_TOKEN: "secret-token-value",
  GITHUB_TOKEN: "secret-github-token",
  AWS_SECRET_ACCESS_KEY: "secret-aws-value",
  MY_PASSWORD: "secret-password-value",
  DENO_CERT: "/secret-deno-cert",
  DENO_AUTH_TOKENS: "secret-deno-auth@example.com",
  NODE_OPTIONS: "--require=/secret-node-options.js",
  LD_LIBRARY_PATH: "/secret-ld-library-path",
  GIT_DIR: "/secret-git-dir",
  GIT_CONFIG_GLOBAL: "/secret-git-config",
  FOO: "secret-foo-value",
  SHELL: "/secret-shell",
  TZ: "secret-tz",
};

const PASSED: Record<string, string> = {
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_MESSAGES: "C",
  TERM: "xterm-256color",
  USER: "operator-user",
  LOGNAME: "operator-logname",
};

function parseEnv(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const eq = line.indexOf("=");
    assert.ok(eq > 0, `not NAME=value: ${JSON.stringify(line)}`);
    out.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}

Deno.test("run env: only HOME, LANG, LC_*, TMPDIR, USER, LOGNAME, TERM, absolute PATH reach the command", async () => {
  await withWorld("env", { brief }, async (w) => {
    const r = await w.run({ argv: ["/usr/bin/printenv"] }, {
      flags: ["--json"],
      env: {
        ...SECRETS,
        ...PASSED,
        PWD: "/secret-parent-pwd",
        PATH: `relative/bin:${DENO_BIN_DIR}::/usr/bin:.:/bin:/usr/bin`,
      },
    });
    assert.equal(r.code, 0, r.stderr);
    const out = jsonOut(r);
    assert.equal(out.exit, 0);
    const env = parseEnv(out.stdout as string);

    // Every variable the child sees is one the runner passes (PWD is set by the sandbox to the
    // working directory, never copied from the parent).
    const allowed = new Set(["HOME", "LANG", "TMPDIR", "USER", "LOGNAME", "TERM", "PATH", "PWD"]);
    for (const name of env.keys()) {
      assert.ok(
        allowed.has(name) || name.startsWith("LC_"),
        `${name} reached the command: ${out.stdout}`,
      );
      assert.ok(!/^(DENO_|AGENTTEAMS|LD_|GIT_)/.test(name), `${name} reached the command`);
    }
    for (const [name, value] of Object.entries(SECRETS)) {
      assert.equal(env.has(name), false, `${name} reached the command`);
      assert.ok(
        !(out.stdout as string).includes(value),
        `the value of ${name} reached the command`,
      );
    }
    assert.equal(env.has("DENO_DIR"), false, "DENO_DIR reached the command");
    assert.equal(env.has("AGENTTEAMS_KEY_DIR"), false, "the key dir reached the command");
    assert.ok(!(out.stdout as string).includes(w.keyDir), "the key dir path reached the command");

    // What is passed, passes with its value.
    for (const [name, value] of Object.entries(PASSED)) assert.equal(env.get(name), value, name);
    assert.equal(env.get("HOME"), w.home);
    assert.equal(env.get("PATH"), `${DENO_BIN_DIR}:/usr/bin:/bin`);
    for (const entry of (env.get("PATH") ?? "").split(":")) {
      assert.ok(entry.startsWith("/"), `relative PATH entry ${JSON.stringify(entry)}`);
    }
    // TMPDIR is the run's private directory (under the parent's TMPDIR), not the parent's own.
    const tmpdir = env.get("TMPDIR") ?? "";
    assert.ok(tmpdir.startsWith(`${w.tmp}/agentteams-run-`), `TMPDIR ${tmpdir}`);
    assert.equal(exists(tmpdir), false, "the private TMPDIR is removed after the run");
    if (env.has("PWD")) assert.equal(env.get("PWD"), w.project);

    const rows = newRows(w, r);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    // No row carries a secret either.
    const ledger = await Deno.readTextFile(join(w.project, ".agentteams/proposal-ledger.jsonl"));
    for (const value of Object.values(SECRETS)) assert.ok(!ledger.includes(value), value);
    await w.verifyOk();
  });
});

Deno.test("run env: a relative PATH entry is dropped; the real program runs, not the one it names", async () => {
  await withWorld("relpath", {
    brief,
    scripts: {},
  }, async (w) => {
    // A fake `touch` in a relative PATH directory (relative to the CLI's cwd), listed first.
    const fake = join(w.scratch, "fakebin", "touch");
    await writeFileAt(
      fake,
      shScript(`echo FAKE-TOUCH-RAN\n: > ${join(w.project, "src/fake-ran.txt")}\nexit 42`),
      0o755,
    );
    const r = await w.run(
      { argv: ["touch", "src/real.txt"], expected_writes: ["src/real.txt"] },
      {
        flags: ["--json"],
        cwd: w.scratch,
        env: { PATH: `fakebin:./fakebin:${DENO_BIN_DIR}:/usr/bin:/bin` },
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const out = jsonOut(r);
    assert.equal(out.exit, 0);
    assert.doesNotMatch(out.stdout as string, /FAKE-TOUCH-RAN/);
    assert.ok(exists(join(w.project, "src/real.txt")), "the real touch ran");
    assert.equal(exists(join(w.project, "src/fake-ran.txt")), false, "the fake touch ran");
    const rows = newRows(w, r);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.deepEqual(rows[1].argv, ["touch", "src/real.txt"]);
    assert.equal(rows[1].exit, 0);
    assert.deepEqual(rows[1].undeclared_writes, []);
    await w.verifyOk();
  });
});

Deno.test("run: the operator's key dir is hidden from the command", async () => {
  await withWorld("keyhidden", { brief }, async (w) => {
    const key = (await Deno.readTextFile(join(w.keyDir, "proposal-ledger.key"))).trim();
    assert.match(key, /^[0-9a-f]{64}$/);
    const cat = await w.run({ argv: ["/usr/bin/cat", join(w.keyDir, "proposal-ledger.key")] }, {
      flags: ["--json"],
    });
    const out = jsonOut(cat);
    assert.equal(cat.code, 1, cat.stderr);
    assert.equal(out.exit, 1);
    assert.ok(!(out.stdout as string).includes(key), "the command read the ledger key");
    assert.match(out.stderr as string, /No such file or directory/);
    const ls = await w.run({ argv: ["/usr/bin/ls", "-A", w.keyDir] }, { flags: ["--json"] });
    assert.equal(ls.code, 0, ls.stderr);
    assert.equal(jsonOut(ls).stdout, "", "the key dir's entries are visible to the command");
    await w.verifyOk();
  });
});
