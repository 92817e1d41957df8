import assert from "node:assert/strict";
import { parsePolicy } from "../../lib/policy/parse.ts";
import {
  PROBE_FORMS,
  PROBE_STEMS,
  probeArgPattern,
  probeStrings,
} from "../../lib/policy/probes.ts";
import { programProblem } from "../../lib/policy/program_rules.ts";
import { compileArgPattern } from "../../lib/pycompat/pyre.ts";
import { expectPolicyError, OPTS, parseObject, withCommand } from "./_helpers.ts";

const scopes = (list: string[]) => ({ agent_policies: { worker: { write_scopes: list } } });

Deno.test("lint: broad argument patterns are refused with the sample they admit", () => {
  const cases: [string, string][] = [
    [".*", "an option"],
    ["[a-z].*", "a parent path"],
    [String.raw`.+\.lean`, "an option"],
    ["-.*", "an option"],
    [".+", "an option"],
    [String.raw`\S+`, "an option"],
    ["[^/]+", "an option"],
    [String.raw`[\w./-]+`, "an option"],
    [String.raw`[@\w.]+`, "a response file"],
    ["[a-z./]+", "a parent path"],
    [String.raw`/[\w/]+`, "an absolute path"],
    [String.raw`~/[\w/]+`, "a home path"],
    [String.raw`(?s).*`, "an option"],
  ];
  for (const [pattern, kind] of cases) {
    expectPolicyError(
      () => parseObject(withCommand({ prefix: ["lake"], args: [pattern] })),
      "POLICY_LINT",
      "agent_policies.worker.commands[0].args[0]",
      `admits ${kind}`,
    );
  }
});

Deno.test("lint: narrow argument patterns pass", () => {
  for (
    const pattern of [
      "[A-Z][A-Za-z0-9]*",
      String.raw`[A-Za-z0-9_]+\.lean`,
      String.raw`lean/[A-Z][A-Za-z0-9]*\.lean`,
      String.raw`\d{1,4}`,
      "build|test|check",
      String.raw`CX-\d+`,
    ]
  ) {
    const p = parseObject(withCommand({ prefix: ["lake"], args: [pattern] }));
    assert.equal(p.agents.worker.commands[0].args[0], pattern);
  }
});

Deno.test("lint: the probe table is the documented sample", () => {
  assert.equal(PROBE_FORMS.length, 19);
  assert.deepEqual(PROBE_FORMS.slice(0, 3).map((f) => f.form), ["-{}", "--{}", "--plugin={}"]);
  assert.ok(PROBE_STEMS.includes("MathAgents") && PROBE_STEMS.includes("CX-1"));
  const samples = probeStrings().map((h) => h.sample);
  for (const s of ["-x", "--x.lean", "../x.py", "a/../../1", "/etc/CX-1", "~/a-b", "@x", ".."]) {
    assert.ok(samples.includes(s), s);
  }
  assert.equal(new Set(samples).size, samples.length, "no duplicates");
  // Every sample is refused by the catch-all pattern, none by a narrow one.
  assert.ok(samples.every((s) => compileArgPattern(".*").test(s)));
  assert.equal(probeArgPattern(compileArgPattern("[A-Z][a-z]+")), null);
});

Deno.test("lint: bad argument pattern syntax is POLICY_LINT at the pattern's path", () => {
  for (const pattern of ["(", "[a-", "a**", "(?i)abc", String.raw`(a)\1`, "(?<=x)y"]) {
    expectPolicyError(
      () => parseObject(withCommand({ prefix: ["lake"], args: ["[A-Z]+", pattern] })),
      "POLICY_LINT",
      "agent_policies.worker.commands[0].args[1]",
      "argument pattern",
    );
  }
});

Deno.test("lint: possessive quantifiers and atomic groups are refused, naming the pattern and the fix (issue 13)", () => {
  // `(?:[a-z0-9]*|-rf)*+` admitted `-rf` when emulated in JavaScript; CPython's fullmatch does
  // not. Refused now, whatever the probes say, at the pattern's own path.
  const cases: [string, string[]][] = [
    ["(?:[a-z0-9]*|-rf)*+", ['possessive quantifier "*+"', 'plain quantifier "*"']],
    ["(?:[a-z0-9]*|-rf)++", ['possessive quantifier "++"', 'plain quantifier "+"']],
    ["[a-z]?+", ['possessive quantifier "?+"']],
    ["[a-z]{1,8}+", ['possessive quantifier "{1,8}+"', 'plain quantifier "{1,8}"']],
    ["(?>[a-z0-9]*|-rf)", ['atomic group "(?>...)"', 'plain group "(?:...)"']],
    ["(?>(?:[a-z0-9]*|-rf)*)", ['atomic group "(?>...)"']],
  ];
  for (const [pattern, parts] of cases) {
    expectPolicyError(
      () => parseObject(withCommand({ prefix: ["lake"], args: ["[A-Z]+", pattern] })),
      "POLICY_LINT",
      "agent_policies.worker.commands[0].args[1]",
      `argument pattern ${JSON.stringify(pattern)}`,
      "is not supported",
      ...parts,
    );
  }
  // The other refusals found by the differential test also surface at the pattern's path.
  for (
    const [pattern, part] of [
      [String.raw`[a-z]+\z`, String.raw`write \Z`],
      ["[[a-z]+", String.raw`escape it as "\["`],
      ["[a-z&&b]+", '"&&" in a set'],
      ["(?P<é>[a-z]+)", "ASCII letters"],
      ["(?u)(?a)[a-z]+", "incompatible"],
      ["(?s-s:[a-z]+)", "turned both on and off"],
    ]
  ) {
    expectPolicyError(
      () => parseObject(withCommand({ prefix: ["lake"], args: [pattern] })),
      "POLICY_LINT",
      "agent_policies.worker.commands[0].args[0]",
      `argument pattern ${JSON.stringify(pattern)}`,
      part,
    );
  }
});

Deno.test("lint: shells and launchers are refused as a command or a gate, by basename", () => {
  for (
    const program of [
      "bash",
      "/bin/bash",
      "/usr/bin/zsh",
      "sh",
      "/bin/dash",
      "fish",
      "BASH",
      "bash5",
    ]
  ) {
    expectPolicyError(
      () => parseObject(withCommand({ prefix: [program, "-c"] })),
      "POLICY_LINT",
      "agent_policies.worker.commands[0].prefix[0]",
      "is a shell",
    );
    expectPolicyError(
      () => parseObject({ proposal_gates: { g: { argv: [program, "{file}"] } } }),
      "POLICY_LINT",
      "proposal_gates.g.argv[0]",
      "is a shell",
    );
  }
  for (const program of ["env", "/usr/bin/env", "xargs", "busybox", "sudo", "nice", "timeout"]) {
    expectPolicyError(
      () => parseObject(withCommand({ prefix: [program, "make"] })),
      "POLICY_LINT",
      "prefix[0]",
      "launcher",
    );
  }
  for (const program of ["./tools/check", "bin/x", "~/bin/x", "/usr/../bin/x"]) {
    assert.notEqual(programProblem(program), null, program);
    expectPolicyError(
      () => parseObject(withCommand({ prefix: [program] })),
      "POLICY_LINT",
      "prefix[0]",
    );
  }
  for (const program of ["lake", "/usr/bin/python3", "git", "sha256sum", "shellcheck"]) {
    assert.equal(programProblem(program), null, program);
  }
});

Deno.test("lint: {file} and {path} must be whole gate arguments, and never the program", () => {
  for (const arg of ["{file}.bak", "--input={file}", "x{path}", "{file}{path}"]) {
    expectPolicyError(
      () => parseObject({ proposal_gates: { g: { argv: ["ruff", "check", arg] } } }),
      "POLICY_LINT",
      "proposal_gates.g.argv[2]",
      "whole arguments",
    );
  }
  expectPolicyError(
    () => parseObject({ proposal_gates: { g: { argv: ["{file}"] } } }),
    "POLICY_LINT",
    "proposal_gates.g.argv[0]",
  );
  const ok = parseObject({ proposal_gates: { g: { argv: ["ruff", "{file}", "{path}"] } } });
  assert.deepEqual(ok.gates.g.argv, ["ruff", "{file}", "{path}"]);
});

Deno.test("lint: unsafe write scopes are refused", () => {
  for (
    const [scope, reason] of [
      ["/abs", "absolute"],
      ["~/x", "home"],
      ["a/../b", "'..'"],
      ["**/x", "'**'"],
      ["*/x", "literal project directory"],
      [".git/", "control plane"],
      [".GitHub/agents/", "control plane"],
      ["sandbox/", "control plane"],
      ["", "empty"],
    ]
  ) {
    expectPolicyError(
      () => parseObject(scopes(["docs/", scope])),
      "POLICY_LINT",
      "agent_policies.worker.write_scopes[1]",
      reason,
    );
  }
});

Deno.test("lint: a scope or writes glob covering the brief is refused, in any letter case", () => {
  for (const scope of ["agentteams.jsonc", "AgentTeams.JSONC", "AGENTTEAMS.jsonc"]) {
    expectPolicyError(() => parseObject(scopes([scope])), "POLICY_LINT", "covers the brief");
  }
  const nested = { ...OPTS, briefPath: "/proj/config/team.jsonc" };
  for (
    const scope of [
      "config/",
      "Config/",
      "config/team.jsonc",
      "config/*.jsonc",
      "CONFIG/T?am.jsonc",
    ]
  ) {
    expectPolicyError(
      () => parsePolicy(JSON.stringify(scopes([scope])), nested),
      "POLICY_LINT",
      "covers the brief path config/team.jsonc",
    );
  }
  // The default brief names are kept out of reach even when another brief is in use.
  expectPolicyError(
    () => parsePolicy(JSON.stringify(scopes(["agentteams.json"])), nested),
    "POLICY_LINT",
    "covers the brief path agentteams.json",
  );
  for (const glob of ["config/*", "Config/*.jsonc", "config"]) {
    expectPolicyError(
      () => parsePolicy(JSON.stringify(withCommand({ prefix: ["make"], writes: [glob] })), nested),
      "POLICY_LINT",
      "agent_policies.worker.commands[0].writes[0]",
      "covers the brief",
    );
  }
  // A brief outside the project constrains nothing inside it, beyond the default names.
  const outside = { ...OPTS, briefPath: "/etc/team.jsonc" };
  assert.ok(parsePolicy(JSON.stringify(scopes(["config/"])), outside).agents.worker);
});

Deno.test("lint: writes globs must start with a literal project directory off the control plane", () => {
  for (
    const [glob, reason] of [
      ["*.o", "literal project directory"],
      ["/tmp/*", "literal project directory"],
      ["~/x", "literal project directory"],
      ["../x/*", "'..'"],
      ["build/../x", "'..'"],
      [".git/hooks/*", "control plane"],
      ["build/.agentteams/*", "control plane"],
      ["sandbox/*", "control plane"],
      ["build/", "ends with '/'"],
    ]
  ) {
    expectPolicyError(
      () => parseObject(withCommand({ prefix: ["make"], writes: ["build/*", glob] })),
      "POLICY_LINT",
      "agent_policies.worker.commands[0].writes[1]",
      reason,
    );
  }
  const ok = parseObject(withCommand({ prefix: ["make"], writes: ["build/*", "lean/*.olean"] }));
  assert.deepEqual(ok.agents.worker.commands[0].writes, ["build/*", "lean/*.olean"]);
});

Deno.test("lint: stdin_gates must be non-empty and name known gates", () => {
  expectPolicyError(
    () => parseObject(withCommand({ prefix: ["make"], stdin_gates: [] })),
    "POLICY_LINT",
    "commands[0].stdin_gates",
    "empty",
  );
  expectPolicyError(
    () =>
      parseObject(withCommand({ prefix: ["make"], stdin_gates: ["lint"] }, {
        proposal_gates: { lnt: { argv: ["ruff", "{file}"] } },
      })),
    "POLICY_LINT",
    "commands[0].stdin_gates[0]",
    '"lint"',
  );
  expectPolicyError(
    () => parseObject(withCommand({ prefix: ["make"], stdin_gates: ["constructor"] })),
    "POLICY_LINT",
    "stdin_gates[0]",
  );
});

Deno.test("lint: cwd may not be absolute or climb", () => {
  for (const cwd of ["/abs", "~/x", "..", "a/../..", "lean/.."]) {
    expectPolicyError(
      () => parseObject(withCommand({ prefix: ["make"], cwd })),
      "POLICY_LINT",
      "commands[0].cwd",
    );
  }
  assert.equal(
    parseObject(withCommand({ prefix: ["make"], cwd: "./a//b/" })).agents.worker.commands[0].cwd,
    "a/b",
  );
});

Deno.test("lint: variadic needs a pattern", () => {
  expectPolicyError(
    () => parseObject(withCommand({ prefix: ["make"], variadic: true })),
    "POLICY_LINT",
    "commands[0].variadic",
  );
});

Deno.test("lint: gate globs and protected paths that could never match are refused", () => {
  for (const glob of ["/abs/*.md", "./src/*.ts", "~/x", "src/", "a//b"]) {
    expectPolicyError(
      () => parseObject({ proposal_gates: { g: { glob, argv: ["ruff", "{file}"] } } }),
      "POLICY_LINT",
      "proposal_gates.g.glob",
    );
  }
  for (const p of ["/etc/passwd", "./secrets", "~/x", "a/../b"]) {
    expectPolicyError(
      () => parseObject({ protected_paths: ["ok", p] }),
      "POLICY_LINT",
      "protected_paths[1]",
    );
  }
  assert.deepEqual(parseObject({ protected_paths: ["secrets/", "*.pem"] }).protectedPaths, [
    "secrets/",
    "*.pem",
  ]);
});

Deno.test("lint: names, reserved keys and grants", () => {
  for (const name of ["Worker", "_x", "-x", "a_b", "gate_exec"]) {
    const err = expectPolicyError(
      () => parseObject({ agent_policies: { [name]: {} } }),
      "BRIEF_INVALID",
      "agent slug",
    );
    assert.equal(err.details.line, 3);
  }
  expectPolicyError(
    () => parseObject({ confined_programs: { gate_exec: { exec: ["/usr/bin"], write: [] } } }),
    "POLICY_LINT",
    "confined_programs.gate_exec",
    "reserved",
  );
  expectPolicyError(
    () => parseObject({ proposal_gates: { "bad name": { argv: ["ruff"] } } }),
    "BRIEF_INVALID",
    "gate name",
  );
  expectPolicyError(
    () => parseObject({ mcp_grants: { orchestrator: { tools: ["write_file"] } } }),
    "POLICY_LINT",
    "mcp_grants.orchestrator",
  );
  expectPolicyError(
    () => parseObject({ mcp_grants: { helper: { tools: ["write_file", "write_file"] } } }),
    "BRIEF_INVALID",
    "mcp_grants.helper.tools[1]",
  );
  const ok = parseObject({ mcp_grants: { helper: { tools: ["write_file"], approval: "direct" } } });
  assert.equal(ok.mcpGrants?.helper.approval, "direct");
});

Deno.test("lint: the switch needs an explicit confined or exclusive profile", () => {
  expectPolicyError(
    () => parseObject({ write_policy: "orchestrator-only" }),
    "POLICY_LINT",
    "write_policy:",
  );
  expectPolicyError(
    () => parseObject({ write_policy: "orchestrator-only", privilege_profile: "cooperative" }),
    "POLICY_LINT",
    "privilege_profile:",
    '"cooperative"',
  );
  for (const profile of ["confined", "exclusive"]) {
    assert.equal(
      parseObject({ write_policy: "orchestrator-only", privilege_profile: profile })
        .privilegeProfile,
      profile,
    );
  }
  assert.equal(parseObject({ privilege_profile: "cooperative" }).writePolicy, "default");
});

Deno.test("lint: errors carry file, path, line and column in details", () => {
  const text =
    '{\n  "agent_policies": {\n    "worker": {\n      "write_scopes": ["docs/", ".git/"]\n    }\n  }\n}';
  const err = expectPolicyError(() => parsePolicy(text, OPTS), "POLICY_LINT");
  assert.deepEqual(
    { ...err.details, reason: undefined },
    {
      file: "agentteams.jsonc",
      path: "agent_policies.worker.write_scopes[1]",
      line: 4,
      column: 33,
      reason: undefined,
    },
  );
  assert.ok(
    err.message.startsWith("agentteams.jsonc:4:33: agent_policies.worker.write_scopes[1]: "),
  );
});
