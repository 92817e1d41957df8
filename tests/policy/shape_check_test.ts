/**
 * `checkPolicyFields` (the zod-free hot path) against `PolicyFieldsSchema.safeParse` (the zod
 * reference): on generated inputs around the schema — valid values, every field wrong-typed,
 * missing, extra keys at every depth, boundary lengths and numbers, exotic objects — both give the
 * same verdict, the same parsed data (keys in the same order) and the same issues in the same
 * order, field for field. Plus examples with the exact messages.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { KNOWN_FRAMEWORKS, MCP_RUNNER_TOOLS } from "../../lib/policy/brief_fields.ts";
import { PolicyFieldsSchema } from "../../lib/policy/brief_schema.ts";
import { checkPolicyFields, type ShapeIssue } from "../../lib/policy/shape_check.ts";
import { parsePolicy } from "../../lib/policy/parse.ts";
import { expectPolicyError, OPTS } from "./_helpers.ts";
import {
  type Arb,
  assertAgrees,
  assertSeen,
  build,
  exoticValues,
  objectKit,
  opt,
  ReplayStats,
  req,
  sweep,
} from "./_zod_replay.ts";

/** Messages recorded with numbers as N and quoted values as Q. */
const newStats = () => new ReplayStats((m) => m.replace(/[0-9]+/g, "N").replace(/"[^"]*"/g, "Q"));

/** Asserts that the checker and zod agree on `value`, entirely. */
function agree(value: unknown, stats: ReplayStats): void {
  assertAgrees(PolicyFieldsSchema, checkPolicyFields, value, stats);
}

// ---- generators --------------------------------------------------------------------------------

const nullProto = (entries: [string, unknown][]) => build(entries, true);

/** Values that fit nowhere, or only by accident. */
const junk: Arb = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    undefined,
    true,
    false,
    0,
    -0,
    1,
    1.5,
    -1,
    NaN,
    Infinity,
    -Infinity,
    2 ** 53,
    -(2 ** 53),
    1e300,
    "",
    "a",
    "\ud800",
    "😀",
    [],
    [""],
    [1],
    {},
    { length: 0 },
    { length: 2 },
    { length: "x" },
    { length: null },
    [{}],
    nullProto([["constructor", { name: "Foo" }]]),
    nullProto([["constructor", "x"]]),
    nullProto([["length", 0]]),
    JSON.parse('{"__proto__": 1}'),
    new Date(0),
    new Map([["a", 1]]),
    Symbol("s"),
  ),
  fc.string({ maxLength: 4 }),
  fc.double(),
  fc.integer(),
  fc.jsonValue({ maxDepth: 2 }),
);

const EXTRA_KEYS = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "toString", "length", "0", "x", "Prefix", "comands"),
  fc.string({ maxLength: 5 }),
);

const { mix, anObject } = objectKit({
  junk,
  extraKeys: EXTRA_KEYS,
  maxExtras: (bad) => bad > 1 ? 2 : 1,
});

/** A string of `min`..`max` code points; wrong: one out on either side, lone surrogates, junk. */
function aString(min: number, max: number | null, bad: number): Arb {
  const cap = max ?? 40;
  const good: Arb = fc.oneof(
    fc.string({ minLength: min, maxLength: Math.min(cap, 8) }),
    fc.string({ unit: "grapheme", minLength: min, maxLength: Math.min(cap, 4) }),
    fc.constantFrom("x".repeat(Math.max(min, 1)), "😀".repeat(Math.max(min, 1)), "é/ü *"),
  ).filter((s) => [...(s as string)].length <= cap);
  const wrong: Arb = fc.constantFrom<unknown>(
    "",
    "\ud800",
    "\udc00\ud800",
    ...(max === null ? [] : ["x".repeat(max + 1), "😀".repeat(max + 1), "x".repeat(max)]),
    ["x"],
    [],
    { length: 0 },
  );
  return mix(good, wrong, bad);
}

/** An integer in `min`..`max`; wrong: the neighbours, fractions, NaN, infinities, unsafe. */
function anInt(min: number, max: number, bad: number): Arb {
  return mix(
    fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max)),
    fc.constantFrom<unknown>(
      min - 1,
      max + 1,
      0,
      -0,
      1.5,
      max + 0.5,
      NaN,
      Infinity,
      -Infinity,
      2 ** 53,
      2 ** 53 + 2,
      -(2 ** 53),
      Number.MAX_SAFE_INTEGER,
      1e300,
      -1e300,
      String(max),
    ),
    bad,
  );
}

const aBool = (bad: number): Arb => mix(fc.boolean(), fc.constantFrom<unknown>("true", 0, 1), bad);

function anEnum(values: readonly string[], bad: number): Arb {
  return mix(
    fc.constantFrom(...values),
    fc.oneof(fc.constantFrom(...values.map((v) => v.toUpperCase()), "", `${values[0]} `)),
    bad,
  );
}

/** An array of `min`..; wrong: too short, and the non-arrays a length check still sees. */
function anArray(element: Arb, min: number, bad: number, sample: unknown): Arb {
  const good: Arb = fc.oneof(
    fc.array(element, { minLength: min, maxLength: 4 }),
    fc.constant(Array(Math.max(min, 1)).fill(sample)),
  );
  const wrong: Arb = fc.constantFrom<unknown>(
    min > 0 ? [] : [undefined],
    "",
    "abc",
    { length: 0 },
    { length: min },
    {},
    nullProto([["0", sample]]),
  );
  return mix(good, wrong, bad);
}

/** A record: keys from plain strings and the awkward ones, values from `value`. */
function aRecord(value: Arb, bad: number): Arb {
  const key = fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.constantFrom("w", "__proto__", "constructor", "0", "10", "hasOwnProperty", "é"),
  );
  const good = fc.tuple(
    fc.uniqueArray(fc.tuple(key, value), {
      maxLength: 3,
      selector: (e) => e[0],
    }),
    fc.boolean(),
  ).map(([es, np]) => build(es, np));
  const sym = Symbol("k");
  const withSymbol = fc.constant({ [sym]: {} });
  return mix(good, fc.oneof(fc.constantFrom<unknown>([], [{}], new Date(0)), withSymbol), bad);
}

/** The brief's policy fields, with `bad` the weight of wrong values at every node. */
function policyFields(bad: number): Arb {
  const nonEmpty = aString(1, null, bad);
  const anyString = aString(0, null, bad);
  const command = anObject({
    prefix: req(anArray(nonEmpty, 1, bad, "lake")),
    args: opt(anArray(anyString, 0, bad, "[a-z]+")),
    variadic: opt(aBool(bad)),
    cwd: opt(nonEmpty),
    writes: opt(anArray(nonEmpty, 0, bad, "out/")),
    stdin_gates: opt(anArray(nonEmpty, 0, bad, "g")),
    timeout: opt(anInt(1, 7200, bad)),
    network: opt(aBool(bad)),
  }, bad);
  const agent = anObject({
    write_scopes: opt(anArray(anyString, 0, bad, "src/")),
    commands: opt(anArray(command, 0, bad, { prefix: ["x"] })),
  }, bad);
  const gate = anObject({
    glob: opt(nonEmpty),
    argv: req(anArray(anyString, 1, bad, "{file}")),
    exec: opt(anArray(nonEmpty, 1, bad, "/usr/bin")),
  }, bad);
  const confined = anObject({
    exec: req(anArray(nonEmpty, 1, bad, "/usr/bin")),
    write: req(anArray(nonEmpty, 0, bad, "out")),
  }, bad);
  const grant = anObject({
    tools: req(anArray(anEnum(MCP_RUNNER_TOOLS, bad), 1, bad, "write_file")),
    approval: opt(anEnum(["staged", "direct"], bad)),
  }, bad);
  return anObject({
    write_policy: opt(anEnum(["default", "orchestrator-only"], bad)),
    privilege_profile: opt(anEnum(["cooperative", "confined", "exclusive"], bad)),
    write_policy_frameworks: opt(anArray(anEnum(KNOWN_FRAMEWORKS, bad), 0, bad, "claude")),
    agent_policies: opt(aRecord(agent, bad)),
    proposal_gates: opt(aRecord(gate, bad)),
    confined_programs: opt(aRecord(confined, bad)),
    protected_paths: opt(anArray(nonEmpty, 0, bad, "*.pem")),
    allow_unconfined_runs: opt(aBool(bad)),
    mcp_grants: opt(aRecord(grant, bad)),
  }, bad);
}

// ---- properties --------------------------------------------------------------------------------

Deno.test("shape check property: valid policy fields parse to zod's data, key order included", () => {
  const stats = newStats();
  fc.assert(fc.property(policyFields(0), (v) => agree(v, stats)), { numRuns: 2000 });
  assert.ok(stats.ok > 1900, `only ${stats.ok} of 2000 valid inputs passed`);
});

Deno.test("shape check property: wrong values at every depth give zod's issues, in order", () => {
  const stats = newStats();
  for (const bad of [1, 3]) {
    fc.assert(fc.property(policyFields(bad), (v) => agree(v, stats)), { numRuns: 2500 });
  }
  assert.ok(stats.failed > 3000, `only ${stats.failed} of 5000 inputs failed`);
  assert.ok(stats.ok > 200, `only ${stats.ok} of 5000 inputs passed`);
  assert.ok(stats.codes.has("unrecognized_keys") && stats.codes.has("invalid_type"));
});

Deno.test("shape check property: arbitrary values (exotic objects included) agree with zod", () => {
  const names = [
    ...Object.keys(PolicyFieldsSchema.shape),
    "w",
    "write_scopes",
    "commands",
    "prefix",
    "args",
    "timeout",
    "argv",
    "exec",
    "write",
    "tools",
    "approval",
  ];
  const value = exoticValues(names, { maxDepth: 5, withObjectString: true });
  const stats = newStats();
  fc.assert(
    fc.property(value, (v) => {
      agree(v, stats);
      if (typeof v === "object" && v !== null && !Array.isArray(v)) {
        agree({ agent_policies: v }, stats);
      }
    }),
    { numRuns: 2000 },
  );
  assert.ok(stats.failed > 1000 && stats.ok > 0, `${stats.ok} passed, ${stats.failed} failed`);
});

// ---- a deterministic sweep ---------------------------------------------------------------------

/** Every policy field present once. */
const FULL = {
  write_policy: "orchestrator-only",
  privilege_profile: "confined",
  write_policy_frameworks: ["claude"],
  agent_policies: {
    w: {
      write_scopes: ["src/"],
      commands: [{
        prefix: ["lake", "build"],
        args: ["[A-Z]+"],
        variadic: true,
        cwd: "lean",
        writes: ["out/"],
        stdin_gates: ["g"],
        timeout: 600,
        network: false,
      }],
    },
  },
  proposal_gates: { g: { glob: "*.lean", argv: ["lean", "{file}"], exec: ["/usr/bin"] } },
  confined_programs: { w: { exec: ["/usr/bin"], write: ["out"] } },
  protected_paths: ["*.pem"],
  allow_unconfined_runs: false,
  mcp_grants: { h: { tools: ["write_file", "run_command"], approval: "staged" } },
};

/** Values to put anywhere: every JSON type, the numeric and length edges, exotic objects. */
const EDGES: unknown[] = [
  undefined,
  null,
  true,
  0,
  -0,
  1,
  7200,
  7201,
  -1,
  1.5,
  NaN,
  Infinity,
  -Infinity,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  1e300,
  "",
  "x",
  "\ud800",
  "😀",
  "default",
  "write_file",
  [],
  [""],
  ["x"],
  [1],
  [null],
  [{}],
  {},
  { length: 0 },
  { length: 1 },
  { length: "x" },
  { length: null },
  { prefix: ["x"] },
  nullProto([["constructor", { name: "Foo" }]]),
  nullProto([["constructor", "x"]]),
  JSON.parse('{"__proto__": {"x": 1}}'),
  new Date(0),
  new Map(),
  new Uint8Array(2),
  Object("ab"),
  Symbol("s"),
  { [Symbol("k")]: {} },
];

Deno.test("shape check sweep: every node replaced by every edge value, removed, or extended", () => {
  const stats = newStats();
  const nodes = sweep(
    FULL,
    EDGES,
    ["x", "__proto__", "constructor", "comands"],
    (v) => agree(v, stats),
  );
  assert.equal(nodes, 47, "every node of FULL");
  assert.equal(stats.ok + stats.failed, 2302, "cases");
  assert.ok(stats.ok > 300 && stats.failed > 1900, `${stats.ok} passed, ${stats.failed} failed`);
  // The sweep reaches every kind of issue the schema can raise, and zod's surprising ones.
  assertSeen(stats, {
    codes: ["invalid_type", "too_small", "too_big", "invalid_value", "invalid_key"],
    messages: [
      "Invalid input: expected int, received number",
      "Invalid input: expected number, received NaN",
      "Invalid input: expected number, received Infinity",
      "Too big: expected int to be <=N",
      "Too small: expected int to be >=-N",
      "Too big: expected number to be <=N",
      "Too small: expected number to be >=N",
      "Too small: expected unknown to be >=N",
      "Too small: expected string to have >=N characters",
      "Too small: expected array to have >=N items",
      "Invalid input: expected record, received Date",
      "Invalid input: expected array, received Foo",
      "Invalid input: expected array, received undefined",
      "Invalid option: expected one of Q|Q|Q|Q|Q",
      "Unrecognized key: Q",
    ],
  });
});

// ---- examples ----------------------------------------------------------------------------------

function issuesOf(value: unknown): ShapeIssue[] {
  const r = checkPolicyFields(value);
  assert.ok(!r.ok, "accepted");
  return r.issues;
}

Deno.test("shape check: exact issues for a strict object with unknown keys and wrong fields", () => {
  const value = {
    agent_policies: { a: { commands: [{ prefix: [], timeout: 1.5, x: 1 }], y: 2 } },
    zz: 1,
  };
  const at = ["agent_policies", "a", "commands", 0];
  assert.deepStrictEqual(issuesOf(value), [
    {
      origin: "array",
      code: "too_small",
      minimum: 1,
      inclusive: true,
      path: [...at, "prefix"],
      message: "Too small: expected array to have >=1 items",
    },
    {
      expected: "int",
      format: "safeint",
      code: "invalid_type",
      path: [...at, "timeout"],
      message: "Invalid input: expected int, received number",
    },
    { code: "unrecognized_keys", keys: ["x"], path: at, message: 'Unrecognized key: "x"' },
    {
      code: "unrecognized_keys",
      keys: ["y"],
      path: ["agent_policies", "a"],
      message: 'Unrecognized key: "y"',
    },
    { code: "unrecognized_keys", keys: ["zz"], path: [], message: 'Unrecognized key: "zz"' },
  ]);
});

Deno.test("shape check: an unsafe integer is too big twice; a string where a list goes", () => {
  const at = ["agent_policies", "a", "commands", 0];
  assert.deepStrictEqual(
    issuesOf({ agent_policies: { a: { commands: [{ prefix: "", timeout: 2 ** 60 }] } } }).map((
      i,
    ) => [i.path.slice(4).join("."), i.message]),
    [
      ["prefix", "Invalid input: expected array, received string"],
      ["prefix", "Too small: expected string to have >=1 characters"],
      ["timeout", "Too big: expected int to be <=9007199254740991"],
      ["timeout", "Too big: expected number to be <=7200"],
    ],
  );
  assert.deepStrictEqual(
    issuesOf({ agent_policies: { a: { commands: [{ prefix: ["a"], timeout: NaN }] } } }),
    [{
      expected: "number",
      code: "invalid_type",
      received: "NaN",
      path: [...at, "timeout"],
      message: "Invalid input: expected number, received NaN",
    }],
  );
});

Deno.test("shape check: enums, records and a silently skipped __proto__ record key", () => {
  assert.deepStrictEqual(
    issuesOf({ write_policy: "x", agent_policies: [] }).map((i) => i.message),
    [
      'Invalid option: expected one of "default"|"orchestrator-only"',
      "Invalid input: expected record, received array",
    ],
  );
  const r = checkPolicyFields({ agent_policies: JSON.parse('{"__proto__": 5, "w": {}}') });
  assert.ok(r.ok);
  assert.deepStrictEqual(r.data, { agent_policies: { w: {} } });
  assert.equal(Object.getPrototypeOf(r.data.agent_policies), Object.prototype);
});

Deno.test("shape check: data keeps schema order and leaves absent optional keys out", () => {
  const input = {
    protected_paths: ["a"],
    write_policy: "default",
    agent_policies: { w: { commands: [{ network: true, prefix: ["x"] }] } },
  };
  const r = checkPolicyFields(input);
  assert.ok(r.ok);
  assert.deepStrictEqual(Object.keys(r.data), [
    "write_policy",
    "agent_policies",
    "protected_paths",
  ]);
  assert.deepStrictEqual(Object.keys(r.data.agent_policies!.w.commands![0]), ["prefix", "network"]);
  assert.notEqual(r.data.protected_paths, input.protected_paths, "a new array, as zod returns");
});

Deno.test("shape check: validateBrief's messages come from the checker's issues", () => {
  const brief = (o: unknown) => JSON.stringify({ project_goal: "g", ...(o as object) });
  expectPolicyError(
    () => parsePolicy(brief({ agent_policies: { w: { comands: [] } } }), OPTS),
    "BRIEF_UNKNOWN_KEY",
    'did you mean "commands"?',
  );
  expectPolicyError(
    () =>
      parsePolicy(
        brief({ agent_policies: { w: { commands: [{ prefix: ["a"], timeout: 0 }] } } }),
        OPTS,
      ),
    "BRIEF_INVALID",
    "agent_policies.w.commands[0].timeout",
    "must be at least 1",
  );
  expectPolicyError(
    () => parsePolicy(brief({ mcp_grants: { h: { tools: ["nope"] } } }), OPTS),
    "BRIEF_INVALID",
    'must be one of "write_file"',
  );
});
