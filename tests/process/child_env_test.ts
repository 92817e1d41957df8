/** The child environment: allowlist, sanitized PATH, never a key, token or DENO_* variable. */

import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import {
  childEnv,
  FALLBACK_PATH,
  isSecretName,
  PASSED_ENV_NAMES,
  sanitizePath,
} from "../../lib/process/child_env.ts";
import { runProcess } from "../../lib/process/spawn.ts";

const HOSTILE_PARENT: Record<string, string> = {
  HOME: "/home/op",
  LANG: "C.UTF-8",
  LC_ALL: "C",
  LC_CTYPE: "en_US.UTF-8",
  TMPDIR: "/tmp",
  USER: "op",
  LOGNAME: "op",
  TERM: "xterm",
  PATH: "bin:.::/usr/local/bin:relative/x:/usr/bin:/bin:/usr/bin",
  AGENTTEAMS_PROPOSAL_LEDGER_KEY: "k1",
  AGENTTEAMS_DECISION_SIGNING_KEY: "k2",
  AGENTTEAMS_KEY_DIR: "/home/op/.config/agentteams/keys",
  GITHUB_TOKEN: "ghp_x",
  NPM_TOKEN: "npm_x",
  AWS_SECRET_ACCESS_KEY: "aws",
  AWS_ACCESS_KEY_ID: "id",
  OPENAI_API_KEY: "sk",
  DB_PASSWORD: "pw",
  SSH_AUTH_SOCK: "/tmp/ssh",
  DENO_DIR: "/cache",
  DENO_AUTH_TOKENS: "tok@host",
  LD_PRELOAD: "/evil.so",
  GIT_DIR: "/elsewhere",
  LC_SECRET_TOKEN: "sneaky",
  SHELL: "/bin/bash",
  EDITOR: "vim",
};

Deno.test("only the allowlist and a sanitized PATH are passed", () => {
  const env = childEnv(HOSTILE_PARENT);
  assert.deepEqual(Object.keys(env).sort(), [
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LOGNAME",
    "PATH",
    "TERM",
    "TMPDIR",
    "USER",
  ]);
  assert.equal(env.PATH, "/usr/local/bin:/usr/bin:/bin");
});

Deno.test("secret-shaped names are refused even when added to the allowlist or set", () => {
  const env = childEnv(HOSTILE_PARENT, {
    extraNames: ["GITHUB_TOKEN", "AGENTTEAMS_PROPOSAL_LEDGER_KEY", "DENO_DIR", "EDITOR"],
    set: {
      OPENAI_API_KEY: "x",
      DENO_V8_FLAGS: "--x",
      TMPDIR: "/tmp/run-1",
      GIT_OPTIONAL_LOCKS: "0",
    },
  });
  for (const name of ["GITHUB_TOKEN", "AGENTTEAMS_PROPOSAL_LEDGER_KEY", "DENO_DIR"]) {
    assert.equal(env[name], undefined, name);
  }
  assert.equal(env.OPENAI_API_KEY, undefined);
  assert.equal(env.DENO_V8_FLAGS, undefined);
  assert.equal(env.EDITOR, "vim", "a harmless extra name is passed");
  assert.equal(env.TMPDIR, "/tmp/run-1", "set overrides the parent");
  assert.equal(env.GIT_OPTIONAL_LOCKS, "0");
});

Deno.test("isSecretName covers keys, tokens, secrets and Deno settings", () => {
  for (
    const name of [
      "AGENTTEAMS_PROPOSAL_LEDGER_KEY",
      "AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE",
      "AGENTTEAMS_DECISION_SIGNING_KEY",
      "MY_TOKEN",
      "token",
      "CLIENT_SECRET",
      "API_KEY",
      "DENO_DIR",
      "deno_cert",
      "DB_PASSWORD",
      "AZURE_CREDENTIALS",
      "LD_LIBRARY_PATH",
      "DYLD_INSERT_LIBRARIES",
      "GIT_DIR",
    ]
  ) assert.equal(isSecretName(name), true, name);
  for (const name of [...PASSED_ENV_NAMES, "LC_ALL", "PATH"]) {
    assert.equal(isSecretName(name), false, name);
  }
});

Deno.test("sanitizePath keeps absolute entries in order, once", () => {
  assert.equal(sanitizePath("::.:bin:/a:/b:/a:./c:~/d"), "/a:/b");
  assert.equal(sanitizePath(undefined), "");
  assert.equal(childEnv({ PATH: "bin:." }).PATH, FALLBACK_PATH);
  assert.equal(childEnv({}).PATH, FALLBACK_PATH);
});

Deno.test("property: no child env ever holds a secret-shaped name or a relative PATH entry", () => {
  const name = fc.oneof(
    fc.constantFrom(...PASSED_ENV_NAMES, "PATH", "LC_X", "DENO_X", "X_TOKEN", "AGENTTEAMS_KEY"),
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/),
  );
  fc.assert(
    fc.property(
      fc.dictionary(name, fc.string({ maxLength: 20 })),
      fc.array(name, { maxLength: 5 }),
      (parent, extra) => {
        const env = childEnv(parent, { extraNames: extra });
        for (const key of Object.keys(env)) {
          if (key !== "PATH") assert.equal(isSecretName(key), false, key);
        }
        for (const entry of env.PATH.split(":")) assert.ok(entry.startsWith("/"), entry);
      },
    ),
  );
});

Deno.test("a real child sees exactly the sanitized environment", async () => {
  if (!Deno.statSync("/usr/bin/env").isFile) throw new Error("/usr/bin/env is required");
  const env = childEnv(HOSTILE_PARENT);
  const r = await runProcess({
    program: "/usr/bin/env",
    args: [],
    cwd: "/",
    env,
    timeoutMs: 10_000,
  });
  assert.equal(r.exit, 0);
  const seen = Object.fromEntries(
    new TextDecoder().decode(r.stdout).trimEnd().split("\n").map((line) => {
      const at = line.indexOf("=");
      return [line.slice(0, at), line.slice(at + 1)];
    }),
  );
  assert.deepEqual(seen, env);
  for (const key of Object.keys(seen)) {
    assert.ok(!/KEY|TOKEN|SECRET|PASSWORD|^DENO_|^AGENTTEAMS|^GIT_|^LD_/i.test(key), key);
  }
});
