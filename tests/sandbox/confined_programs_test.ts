/** Lint tests for the confined-programs block: every refused shape, and the accepted ones. */

import { SandboxError } from "../../lib/errors.ts";
import type { GateDef } from "../../lib/policy/types.ts";
import {
  gateArgvDigest,
  selectConfinedPrograms,
  validateConfinedPrograms,
} from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

const NO_GATES: Record<string, GateDef> = {};
const ctx = { gates: NO_GATES, protectedPaths: [] as string[] };
const SCAN: GateDef = {
  name: "scan",
  glob: "lean/*.lean",
  argv: ["python3", "scripts/scan.py", "{file}"],
  exec: null,
};
const GATES: Record<string, GateDef> = { scan: SCAN };
const fileCtx = { gates: GATES, protectedPaths: [], source: "operator-file" as const };

Deno.test("confined: a well-formed block is accepted and normalized", () => {
  const v = validateConfinedPrograms(
    {
      prover: { exec: ["~/.elan/", "/usr/bin", "/usr/bin"], write: ["lean/.lake/", "build"] },
      reader: { exec: ["/usr/bin/cat"] },
      nulls: { exec: ["/usr/bin"], write: null },
    },
    ctx,
  );
  assert.deepEqual(v.programs.agents.prover, {
    exec: ["~/.elan", "/usr/bin"],
    write: ["lean/.lake", "build"],
  });
  assert.deepEqual(v.programs.agents.reader.write, []);
  assert.deepEqual(v.programs.agents.nulls.write, []);
  assert.deepEqual(v.programs.source, "brief");
  assert.deepEqual(v.programs.fileSha256, null);
  assert.ok(v.gates === NO_GATES, "gates untouched without an operator file");
});

Deno.test("confined: an agent named __proto__ stays an ordinary key", () => {
  const raw = JSON.parse('{"__proto__": {"exec": ["/usr/bin"], "write": ["build"]}}');
  const v = validateConfinedPrograms(raw, ctx);
  assert.ok(Object.hasOwn(v.programs.agents, "__proto__"), "own key");
  assert.deepEqual(Object.getPrototypeOf(v.programs.agents), Object.prototype);
});

const REFUSED_BLOCKS: [string, unknown][] = [
  ["null block", null],
  ["array block", [{ exec: ["/usr/bin"] }]],
  ["string block", "worker"],
  ["number block", 7],
  ["array entry", { w: [["/usr/bin"]] }],
  ["string entry", { w: "/usr/bin" }],
  ["null entry", { w: null }],
  ["unknown key", { w: { exec: ["/usr/bin"], network: true } }],
  ["empty agent name", { "": { exec: ["/usr/bin"] } }],
  ["exec missing", { w: { write: ["build"] } }],
  ["exec empty", { w: { exec: [] } }],
  ["exec a string", { w: { exec: "/usr/bin" } }],
  ["write a string", { w: { exec: ["/usr/bin"], write: "build" } }],
];

for (const [what, raw] of REFUSED_BLOCKS) {
  Deno.test(`confined: refuses ${what}`, () => {
    assertRefusal(() => validateConfinedPrograms(raw, ctx), "CONFINED_INVALID", SandboxError, what);
  });
}

const REFUSED_EXEC: [unknown, string][] = [
  ["bin", "CONFINED_INVALID"],
  ["usr/bin", "CONFINED_INVALID"],
  ["~user/bin", "CONFINED_INVALID"],
  ["~", "CONFINED_INVALID"],
  ["/", "CONFINED_INVALID"],
  ["//", "CONFINED_INVALID"],
  ["~/", "CONFINED_INVALID"],
  ["~//", "CONFINED_INVALID"],
  ["/opt/../etc", "CONFINED_INVALID"],
  // A '.' segment would make `/.` the whole file system and `~/.` the home directory.
  ["/.", "CONFINED_INVALID"],
  ["~/.", "CONFINED_INVALID"],
  ["/usr/./bin", "CONFINED_INVALID"],
  ["", "CONFINED_INVALID"],
  [5, "CONFINED_INVALID"],
  [null, "CONFINED_INVALID"],
  ['/opt/a"b', "CONFINED_PATH_UNSAFE"],
  ["/opt/a'b", "CONFINED_PATH_UNSAFE"],
  ["/opt/a\\b", "CONFINED_PATH_UNSAFE"],
  ["/opt/a\nb", "CONFINED_PATH_UNSAFE"],
  ["/opt/a\rb", "CONFINED_PATH_UNSAFE"],
  ["/opt/a\0b", "CONFINED_PATH_UNSAFE"],
  ["/opt/a\tb", "CONFINED_PATH_UNSAFE"],
  ["/opt/a\x1bb", "CONFINED_PATH_UNSAFE"],
  ["/opt/a\x7fb", "CONFINED_PATH_UNSAFE"],
  ["/opt/a\u0085b", "CONFINED_PATH_UNSAFE"],
];

for (const [path, code] of REFUSED_EXEC) {
  Deno.test(`confined: refuses exec entry ${JSON.stringify(path)} (${code})`, () => {
    const e = assertRefusal(
      () => validateConfinedPrograms({ worker: { exec: ["/usr/bin", path] } }, ctx),
      code,
      SandboxError,
    );
    assert.deepEqual(e.details.agent, "worker", "names the agent");
    assert.deepEqual(e.details.path, path, "names the path");
    assert.ok(e.message.includes("worker"), e.message);
  });
}

const REFUSED_WRITE: [unknown, string, string[]?][] = [
  ["", "CONFINED_INVALID"],
  [5, "CONFINED_INVALID"],
  ["/abs/build", "CONFINED_INVALID"],
  ["~/build", "CONFINED_INVALID"],
  ["~", "CONFINED_INVALID"],
  ["/", "CONFINED_INVALID"],
  [".", "CONFINED_INVALID"],
  ["./", "CONFINED_INVALID"],
  ["./build", "CONFINED_INVALID"],
  ["build/.", "CONFINED_INVALID"],
  ["a//b", "CONFINED_INVALID"],
  ["../x", "CONFINED_INVALID"],
  ["a/../b", "CONFINED_INVALID"],
  ["a/*", "CONFINED_INVALID"],
  ["a?", "CONFINED_INVALID"],
  ["cfg[1]", "CONFINED_INVALID"],
  [".git", "CONFINED_INVALID"],
  [".GIT/objects", "CONFINED_INVALID"],
  [".github/workflows", "CONFINED_INVALID"],
  [".github/agents", "CONFINED_INVALID"],
  [".claude", "CONFINED_INVALID"],
  [".goose/x", "CONFINED_INVALID"],
  [".codex", "CONFINED_INVALID"],
  ["sandbox", "CONFINED_INVALID"],
  ["Sandbox/out", "CONFINED_INVALID"],
  [".agentteams", "CONFINED_INVALID"],
  [".agentteams-queue", "CONFINED_INVALID"],
  [".AgentTeams-Status", "CONFINED_INVALID"],
  ["vendor/.git", "CONFINED_INVALID"],
  ["build/.Claude/cache", "CONFINED_INVALID"],
  ["secrets/out", "CONFINED_INVALID", ["secrets"]],
  ["Secrets", "CONFINED_INVALID", ["secrets/"]],
  ["keys/a.key", "CONFINED_INVALID", ["*.key"]],
  ["reports/p2/locked", "CONFINED_INVALID", ["reports/*/locked"]],
  ['a"b', "CONFINED_PATH_UNSAFE"],
  ["a\\b", "CONFINED_PATH_UNSAFE"],
  ["a\nb", "CONFINED_PATH_UNSAFE"],
  ["a\0b", "CONFINED_PATH_UNSAFE"],
];

for (const [rel, code, prot] of REFUSED_WRITE) {
  Deno.test(`confined: refuses write root ${JSON.stringify(rel)}${prot ? ` under ${prot}` : ""}`, () => {
    const e = assertRefusal(
      () =>
        validateConfinedPrograms({ worker: { exec: ["/usr/bin"], write: ["build", rel] } }, {
          gates: NO_GATES,
          protectedPaths: prot ?? [],
        }),
      code,
      SandboxError,
    );
    assert.deepEqual(e.details.agent, "worker");
    assert.deepEqual(e.details.path, rel);
  });
}

Deno.test("confined: nested names that only look like the control plane are fine", () => {
  const v = validateConfinedPrograms(
    { w: { exec: ["/usr/bin"], write: ["tests/sandbox", "build/gitlike", "out/.gitkeep-dir"] } },
    { gates: NO_GATES, protectedPaths: ["secrets", "*.key"] },
  );
  assert.deepEqual(v.programs.agents.w.write, [
    "tests/sandbox",
    "build/gitlike",
    "out/.gitkeep-dir",
  ]);
});

Deno.test("confined: the reserved keys are refused in the brief's block", () => {
  for (const key of ["gate_exec", "gate_argv_sha256"]) {
    const e = assertRefusal(
      () =>
        validateConfinedPrograms({ [key]: { scan: ["/opt/x"] } }, {
          gates: GATES,
          protectedPaths: [],
        }),
      "CONFINED_INVALID",
      SandboxError,
      key,
    );
    assert.ok(e.message.includes("reserved"), e.message);
  }
});

function bound(gateExec: Record<string, unknown>, gates = GATES): Record<string, unknown> {
  const digests: Record<string, string> = {};
  for (const name of Object.keys(gateExec)) {
    if (gates[name]) digests[name] = gateArgvDigest(gates[name].argv);
  }
  return { gate_exec: gateExec, gate_argv_sha256: digests };
}

Deno.test("confined: operator gate_exec reaches the gate and never becomes an agent", () => {
  const v = validateConfinedPrograms(
    { w: { exec: ["/usr/bin"] }, ...bound({ scan: ["/opt/anaconda3/"] }) },
    { ...fileCtx, fileSha256: "ab".repeat(32) },
  );
  assert.deepEqual(v.gates.scan.exec, ["/opt/anaconda3"]);
  assert.deepEqual(SCAN.exec, null, "the brief's gate is not mutated");
  assert.deepEqual(Object.keys(v.programs.agents), ["w"]);
  assert.deepEqual(v.programs.source, "operator-file");
  assert.deepEqual(v.programs.fileSha256, "ab".repeat(32));
});

const REFUSED_GATE_EXEC: [string, Record<string, unknown>][] = [
  ["gate_exec not an object", { gate_exec: ["scan"], gate_argv_sha256: {} }],
  ["digests not an object", { gate_exec: {}, gate_argv_sha256: "x" }],
  ["unknown gate", bound({ nope: ["/opt/x"] })],
  ["empty list", bound({ scan: [] })],
  ["a string, not a list", bound({ scan: "/opt/x" })],
  ["relative path", bound({ scan: ["relative/bin"] })],
  ["too broad", bound({ scan: ["/"] })],
  ["without its digest", { gate_exec: { scan: ["/opt/x"] } }],
  ["a digest without gate_exec", { gate_argv_sha256: { scan: gateArgvDigest(SCAN.argv) } }],
  ["digest not a string", { gate_exec: { scan: ["/opt/x"] }, gate_argv_sha256: { scan: 1 } }],
  ["argv changed since install", {
    gate_exec: { scan: ["/opt/x"] },
    gate_argv_sha256: { scan: gateArgvDigest(["python3", "scripts/other.py", "{file}"]) },
  }],
];

for (const [what, raw] of REFUSED_GATE_EXEC) {
  Deno.test(`confined: operator gate_exec refused: ${what}`, () => {
    assertRefusal(
      () => validateConfinedPrograms(raw, fileCtx),
      "CONFINED_INVALID",
      SandboxError,
      what,
    );
  });
}

Deno.test("confined: a gate with brief-set exec plus file gate_exec is refused", () => {
  const gates = { scan: { ...SCAN, exec: ["/usr/bin"] } };
  const e = assertRefusal(
    () => validateConfinedPrograms(bound({ scan: ["/opt/x"] }, gates), { ...fileCtx, gates }),
    "CONFINED_INVALID",
    SandboxError,
  );
  assert.ok(e.message.includes("already sets"), e.message);
});

Deno.test("confined: a brief gate exec entry of the wrong shape is refused", () => {
  const gates = { scan: { ...SCAN, exec: ["bin/tool"] } };
  assertRefusal(
    () => validateConfinedPrograms({}, { gates, protectedPaths: [] }),
    "CONFINED_INVALID",
    SandboxError,
  );
  assertRefusal(
    () => selectConfinedPrograms({ brief: undefined, file: null, gates, protectedPaths: [] }),
    "CONFINED_INVALID",
    SandboxError,
    "checked even when no block is set",
  );
});

Deno.test("confined: the operator file wins; both present is refused", () => {
  const file = { data: { w: { exec: ["/usr/bin"] } }, sha256: "cd".repeat(32) };
  const picked = selectConfinedPrograms({
    brief: undefined,
    file,
    gates: GATES,
    protectedPaths: [],
  });
  assert.deepEqual(picked.programs?.source, "operator-file");
  assert.deepEqual(picked.programs?.fileSha256, "cd".repeat(32));
  const nullBrief = selectConfinedPrograms({ brief: null, file, gates: GATES, protectedPaths: [] });
  assert.deepEqual(nullBrief.programs?.source, "operator-file");
  for (const brief of [{ w: { exec: ["/usr/bin"] } }, {}]) {
    assertRefusal(
      () => selectConfinedPrograms({ brief, file, gates: GATES, protectedPaths: [] }),
      "CONFINED_INVALID",
      SandboxError,
    );
  }
  const fromBrief = selectConfinedPrograms({
    brief: { w: { exec: ["/usr/bin"] } },
    file: null,
    gates: GATES,
    protectedPaths: [],
  });
  assert.deepEqual(fromBrief.programs?.source, "brief");
  const none = selectConfinedPrograms({
    brief: undefined,
    file: null,
    gates: GATES,
    protectedPaths: [],
  });
  assert.deepEqual(none.programs, null);
  assert.ok(none.gates === GATES, "gates passed through");
});

Deno.test("confined: the file's block is validated like the brief's", () => {
  assertRefusal(
    () =>
      selectConfinedPrograms({
        brief: undefined,
        file: { data: { a: { exec: ["relative/bin"] } }, sha256: "00".repeat(32) },
        gates: NO_GATES,
        protectedPaths: [],
      }),
    "CONFINED_INVALID",
    SandboxError,
  );
});

Deno.test("confined: a write root containing the brief is refused (case-folded)", () => {
  for (
    const [root, brief] of [["config", "config/agentteams.jsonc"], ["Docs", "docs/brief.json"]]
  ) {
    const e = assertRefusal(
      () =>
        validateConfinedPrograms({ w: { exec: ["/usr/bin"], write: [root] } }, {
          gates: NO_GATES,
          protectedPaths: [],
          briefRel: brief,
        }),
      "CONFINED_INVALID",
      SandboxError,
      root,
    );
    assert.ok(e.message.includes("brief"), e.message);
  }
  const ok = selectConfinedPrograms({
    brief: { w: { exec: ["/usr/bin"], write: ["config2"] } },
    file: null,
    gates: NO_GATES,
    protectedPaths: [],
    briefRel: "config/agentteams.jsonc",
  });
  assert.deepEqual(ok.programs?.agents.w.write, ["config2"]);
  assertRefusal(
    () =>
      selectConfinedPrograms({
        brief: undefined,
        file: { data: { w: { exec: ["/usr/bin"], write: ["config"] } }, sha256: "00".repeat(32) },
        gates: NO_GATES,
        protectedPaths: [],
        briefRel: "config/agentteams.jsonc",
      }),
    "CONFINED_INVALID",
    SandboxError,
    "operator file too",
  );
});
