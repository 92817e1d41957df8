import assert from "node:assert/strict";
import { briefRelative, parsePolicy } from "../../lib/policy/parse.ts";
import { IGNORED_BRIEF_FIELDS } from "../../lib/policy/brief_fields.ts";
import { expectPolicyError, OPTS, parseObject, withCommand } from "./_helpers.ts";

const JSONC = `{
  // The project-description part, ignored by the policy.
  "project_goal": "Prove things about numbers, carefully.",
  "components": [{ "slug": "ch01", "name": "One" },],
  /* policy */
  "write_policy": "orchestrator-only",
  "privilege_profile": "confined",
  "write_policy_frameworks": ["claude", "goose",],
  "agent_policies": {
    "worker": {
      "write_scopes": ["lean/", "reports/*/summary.md",],
      "commands": [
        {
          "prefix": ["lake", "build"],
          "args": ["[A-Z][A-Za-z0-9]*"],
          "variadic": true,
          "cwd": "./lean/",
          "writes": ["lean/build/*"],
          "stdin_gates": ["lean-check"],
          "timeout": 1200,
          "network": false,
        },
      ],
    },
  },
  "proposal_gates": {
    "lean-check": { "glob": "*.lean", "argv": ["lean", "--check", "{file}"], },
  },
  "confined_programs": { "worker": { "exec": ["/usr/bin"], "write": ["lean/build"] } },
  "protected_paths": ["secrets", "*.pem"],
  "allow_unconfined_runs": false,
  "mcp_grants": { "helper": { "tools": ["write_file", "run_command"] } },
}
`;

Deno.test("parse: JSONC with comments and trailing commas compiles to a full Policy", () => {
  const p = parsePolicy(JSONC, OPTS);
  assert.equal(p.briefPath, "/proj/agentteams.jsonc");
  assert.equal(p.briefRel, "agentteams.jsonc");
  assert.equal(p.briefSha256, OPTS.briefSha256);
  assert.equal(p.writePolicy, "orchestrator-only");
  assert.equal(p.privilegeProfile, "confined");
  assert.deepEqual(p.writePolicyFrameworks, ["claude", "goose"]);
  const worker = p.agents.worker;
  assert.deepEqual(worker.writeScopes, ["lean/", "reports/*/summary.md"]);
  const cmd = worker.commands[0];
  assert.deepEqual(cmd.prefix, ["lake", "build"]);
  assert.equal(cmd.cwd, "lean", "cwd is normalized");
  assert.equal(cmd.variadic, true);
  assert.deepEqual(cmd.writes, ["lean/build/*"]);
  assert.deepEqual(cmd.stdinGates, ["lean-check"]);
  assert.equal(cmd.timeout, 1200);
  assert.equal(cmd.network, false);
  assert.equal(cmd.argPatterns.length, 1);
  assert.ok(cmd.argPatterns[0].test("Main"));
  assert.equal(cmd.argPatterns[0].test("Main\n"), false);
  assert.deepEqual(p.gates["lean-check"], {
    name: "lean-check",
    glob: "*.lean",
    argv: ["lean", "--check", "{file}"],
    exec: null,
  });
  assert.ok(p.confinedPrograms !== null);
  assert.deepEqual({ ...p.confinedPrograms, agents: { ...p.confinedPrograms.agents } }, {
    agents: { worker: { exec: ["/usr/bin"], write: ["lean/build"] } },
    source: "brief",
    fileSha256: null,
  });
  assert.deepEqual(p.protectedPaths, ["secrets", "*.pem"]);
  assert.equal(p.allowUnconfinedRuns, false);
  assert.deepEqual(p.mcpGrants?.helper, {
    tools: ["write_file", "run_command"],
    approval: "staged",
  });
  assert.equal(p.sizeCap, 256 * 1024);
});

Deno.test("parse: defaults for an empty brief and for a bare command", () => {
  const empty = parsePolicy("{}", OPTS);
  assert.equal(empty.writePolicy, "default");
  assert.equal(empty.privilegeProfile, null);
  assert.deepEqual(empty.writePolicyFrameworks, []);
  assert.deepEqual(Object.keys(empty.agents), []);
  assert.equal(empty.confinedPrograms, null);
  assert.equal(empty.allowUnconfinedRuns, false);
  const cmd = parseObject(withCommand({ prefix: ["make"] })).agents.worker.commands[0];
  assert.deepEqual(
    { ...cmd, argPatterns: cmd.argPatterns.length },
    {
      prefix: ["make"],
      args: [],
      argPatterns: 0,
      variadic: false,
      cwd: ".",
      writes: [],
      stdinGates: null,
      timeout: 600,
      network: false,
      networkAllow: null,
    },
  );
});

Deno.test("parse: the Policy is frozen and its maps have no prototype", () => {
  const p = parseObject({ agent_policies: { worker: { write_scopes: ["docs/"] } } });
  assert.ok(Object.isFrozen(p) && Object.isFrozen(p.agents) && Object.isFrozen(p.agents.worker));
  assert.ok(Object.isFrozen(p.agents.worker.writeScopes));
  assert.equal((p.agents as Record<string, unknown>)["constructor"], undefined);
  assert.equal((p.gates as Record<string, unknown>)["toString"], undefined);
  assert.throws(() => (p.agents.worker.writeScopes as string[]).push("x"));
});

Deno.test("parse: every ignored project-description field is accepted and has no effect", () => {
  const brief: Record<string, unknown> = {};
  for (const f of IGNORED_BRIEF_FIELDS) brief[f] = { anything: ["goes", 1, null] };
  const p = parseObject(brief);
  assert.deepEqual(Object.keys(p.agents), []);
  assert.ok(IGNORED_BRIEF_FIELDS.includes("project_goal"));
  assert.ok(IGNORED_BRIEF_FIELDS.includes("conversion_pipeline"));
});

Deno.test("parse: unknown keys at the top level and nested are refused with path and line", () => {
  expectPolicyError(
    () => parsePolicy('{\n  "project_goal": "x",\n  "agent_polices": {}\n}', OPTS),
    "BRIEF_UNKNOWN_KEY",
    "agentteams.jsonc:3:3:",
    "agent_polices",
    'did you mean "agent_policies"',
  );
  const nested = '{\n  "agent_policies": {\n    "worker": {\n      "comands": []\n    }\n  }\n}';
  expectPolicyError(
    () => parsePolicy(nested, OPTS),
    "BRIEF_UNKNOWN_KEY",
    ":4:7:",
    "agent_policies.worker.comands",
    'did you mean "commands"',
  );
  expectPolicyError(
    () => parseObject(withCommand({ prefix: ["make"], timout: 5 })),
    "BRIEF_UNKNOWN_KEY",
    "agent_policies.worker.commands[0].timout",
  );
  expectPolicyError(
    () => parseObject({ proposal_gates: { g: { argv: ["x"], globs: "*.md" } } }),
    "BRIEF_UNKNOWN_KEY",
    "proposal_gates.g.globs",
  );
  expectPolicyError(
    () =>
      parseObject({ confined_programs: { worker: { exec: ["/usr/bin"], write: [], read: [] } } }),
    "BRIEF_UNKNOWN_KEY",
    "confined_programs.worker.read",
  );
  expectPolicyError(
    () => parseObject({ mcp_grants: { helper: { tools: ["write_file"], scope: "x" } } }),
    "BRIEF_UNKNOWN_KEY",
    "mcp_grants.helper.scope",
  );
});

Deno.test("parse: an unknown key is reported before a type error elsewhere", () => {
  expectPolicyError(
    () =>
      parseObject({
        write_policy: 3,
        agent_policies: { worker: { write_scopes: "docs/", comands: [] } },
      }),
    "BRIEF_UNKNOWN_KEY",
    "agent_policies.worker.comands",
  );
});

Deno.test("parse: wrong types are refused with the path and the expected type", () => {
  const cases: [unknown, string, string][] = [
    [
      { proposal_gates: { lint: "ruff" } },
      "proposal_gates.lint",
      "must be an object, not a string",
    ],
    [{ proposal_gates: { lint: { argv: "ruff {file}" } } }, "proposal_gates.lint.argv", "a list"],
    [{ proposal_gates: { lint: { argv: [] } } }, "proposal_gates.lint.argv", "must not be empty"],
    [
      { agent_policies: { w: { write_scopes: "docs/" } } },
      "agent_policies.w.write_scopes",
      "a list",
    ],
    [
      { agent_policies: { w: { commands: { prefix: ["x"] } } } },
      "agent_policies.w.commands",
      "a list",
    ],
    [
      { agent_policies: { w: { commands: [{ prefix: [] }] } } },
      "commands[0].prefix",
      "not be empty",
    ],
    [{ agent_policies: { w: { commands: [{ prefix: [""] }] } } }, "prefix[0]", "not be empty"],
    [
      { agent_policies: { w: { commands: [{}] } } },
      "commands[0]",
      'missing required field "prefix" (a list of strings)',
    ],
    [withCommand({ prefix: ["x"], variadic: "yes" }), "commands[0].variadic", "true or false"],
    [withCommand({ prefix: ["x"], network: 1 }), "commands[0].network", "true or false"],
    [{ write_policy: "orchestrator_only" }, "write_policy", "must be one of"],
    [{ privilege_profile: "confind" }, "privilege_profile", "must be one of"],
    [{ write_policy_frameworks: ["claud"] }, "write_policy_frameworks[0]", "must be one of"],
    [{ protected_paths: "secrets" }, "protected_paths", "a list"],
    [{ allow_unconfined_runs: "true" }, "allow_unconfined_runs", "true or false"],
    [{ confined_programs: { w: { exec: [], write: [] } } }, "confined_programs.w.exec", "empty"],
    [{ mcp_grants: { h: { tools: ["rm_rf"] } } }, "mcp_grants.h.tools[0]", "must be one of"],
    [{ mcp_grants: { h: { tools: [] } } }, "mcp_grants.h.tools", "must not be empty"],
    [{ mcp_grants: { h: { tools: ["write_file"], approval: "auto" } } }, "approval", "one of"],
    [{ agent_policies: null }, "agent_policies", "not null"],
  ];
  for (const [brief, path, reason] of cases) {
    expectPolicyError(() => parseObject(brief), "BRIEF_INVALID", path, reason);
  }
});

Deno.test("parse: timeout must be an integer 1..7200 written as one", () => {
  for (
    const [value, reason] of [
      ["0", "at least 1"],
      ["7201", "at most 7200"],
      ["1.5", "integer"],
      ["true", "integer"],
      ['"600"', "integer"],
      ["600.0", "without a fraction"],
      ["6e2", "without a fraction"],
      ["-1", "at least 1"],
      ["1e400", "integer"],
    ]
  ) {
    const text =
      `{"agent_policies": {"worker": {"commands": [\n  {"prefix": ["make"], "timeout": ${value}}\n]}}}`;
    const err = expectPolicyError(
      () => parsePolicy(text, OPTS),
      "BRIEF_INVALID",
      "agent_policies.worker.commands[0].timeout",
      reason,
      ":2:",
    );
    assert.equal(err.details.line, 2);
    assert.equal(err.details.path, "agent_policies.worker.commands[0].timeout");
  }
  for (const ok of [1, 600, 7200]) {
    assert.equal(
      parseObject(withCommand({ prefix: ["make"], timeout: ok })).agents.worker.commands[0].timeout,
      ok,
    );
  }
});

Deno.test("parse: syntax errors name the line and column", () => {
  expectPolicyError(
    () => parsePolicy('{\n  "write_policy": "default"\n  "privilege_profile": "confined"\n}', OPTS),
    "BRIEF_SYNTAX",
    "agentteams.jsonc:3:3:",
    "CommaExpected",
  );
  expectPolicyError(() => parsePolicy("", OPTS), "BRIEF_SYNTAX", ":1:1:");
  expectPolicyError(() => parsePolicy("{ /* open", OPTS), "BRIEF_SYNTAX");
  expectPolicyError(() => parsePolicy("{'a': 1}", OPTS), "BRIEF_SYNTAX", ":1:2:");
  expectPolicyError(() => parsePolicy("{} {}", OPTS), "BRIEF_SYNTAX");
  expectPolicyError(
    () =>
      parsePolicy('{\n "write_policy": "default",\n "write_policy": "orchestrator-only"}', OPTS),
    "BRIEF_SYNTAX",
    "duplicate key",
    ":3:2:",
  );
  expectPolicyError(
    () => parsePolicy('{"agent_policies": {"w": {}, "w": {"write_scopes": ["x/"]}}}', OPTS),
    "BRIEF_SYNTAX",
    "agent_policies.w",
  );
  expectPolicyError(
    () => parsePolicy("[".repeat(200_000) + "]".repeat(200_000), OPTS),
    "BRIEF_SYNTAX",
    "nested deeper",
  );
  expectPolicyError(() => parsePolicy('["not", "an", "object"]', OPTS), "BRIEF_INVALID", "a list");
});

Deno.test("parse: a leading BOM is accepted and keeps positions right", () => {
  const p = parsePolicy('\ufeff{"write_policy": "default"}', OPTS);
  assert.equal(p.writePolicy, "default");
  expectPolicyError(
    () => parsePolicy('\ufeff{\n"write_policy": 1}', OPTS),
    "BRIEF_INVALID",
    ":2:17:",
  );
});

Deno.test("parse: lone surrogates in policy strings are refused", () => {
  expectPolicyError(
    () => parsePolicy('{"protected_paths": ["a\\ud800b"]}', OPTS),
    "BRIEF_INVALID",
    "protected_paths[0]",
    "lone surrogate",
  );
  // A key: named by its path and its own position (the key's, not its value's).
  expectPolicyError(
    () => parsePolicy('{"agent_policies": {"w\\udc00": {}}}', OPTS),
    "BRIEF_INVALID",
    ":1:21:",
    "key contains a lone surrogate",
  );
  // The first one in the file is reported.
  expectPolicyError(
    () => parsePolicy('{"protected_paths": ["ok", "\\ud800"], "write_policy": "\\ud800"}', OPTS),
    "BRIEF_INVALID",
    "protected_paths[1]",
  );
});

Deno.test("parse: a lone surrogate anywhere in the brief is refused, in a field it otherwise ignores too", () => {
  expectPolicyError(
    () => parsePolicy('{\n  "project_goal": "g\\ud800",\n  "write_policy": "default"\n}', OPTS),
    "BRIEF_INVALID",
    ":2:19: project_goal: contains a lone surrogate",
  );
  // Refused once the text has parsed: a syntax error later in the file is reported first.
  expectPolicyError(
    () => parsePolicy('{"project_goal": "\\ud800", }}', OPTS),
    "BRIEF_SYNTAX",
  );
});

Deno.test("parse: briefRel is relative POSIX, or null outside the project", () => {
  assert.equal(briefRelative("/p/cfg/brief.json", "/p"), "cfg/brief.json");
  assert.equal(briefRelative("/p/brief.json", "/p/"), "brief.json");
  assert.equal(briefRelative("/q/brief.json", "/p"), null);
  assert.equal(briefRelative("/p/../q/brief.json", "/p"), null);
  assert.equal(briefRelative("/p", "/p"), null);
  assert.equal(briefRelative("/p..x/b.json", "/p"), null);
  const outside = parsePolicy("{}", { ...OPTS, briefPath: "/etc/team/brief.json" });
  assert.equal(outside.briefRel, null);
  assert.throws(() => briefRelative("rel/brief.json", "/p"), /absolute/);
});

Deno.test("parse: a `length` with no primitive value where a list or text belongs is BRIEF_INVALID, not a crash", () => {
  // The JSONC parser builds objects without a prototype: zod's length check throws a TypeError
  // comparing one with a number; the checker refuses the wrong type instead.
  for (
    const [text, where] of [
      ['{"agent_policies": {"w": {"commands": [{"prefix": {"length": {}}}]}}}', "prefix"],
      ['{"protected_paths": {"length": {"x": 1}}}', "protected_paths"],
      ['{"agent_policies": {"w": {"write_scopes": {"length": {}}}}}', "write_scopes"],
    ]
  ) {
    expectPolicyError(() => parsePolicy(text, OPTS), "BRIEF_INVALID", where);
  }
});
