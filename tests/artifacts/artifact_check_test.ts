/**
 * `checkArtifactShape` (the zod-free hot path) against the zod schemas of `schema.ts` (the
 * reference): on generated artifacts — valid ones, every field wrong-typed or missing, extra keys
 * at every depth, strings and lists at and just past their limits (code points, not UTF-16
 * units), patterns just missed, union misses, exotic objects — both give the same verdict, the
 * same parsed data (same key order) and the same issues in the same order; in particular the first
 * issue's path, message and keys, which is what `validateArtifact` reports. Plus examples with
 * the exact messages.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { ProposalError } from "../../lib/errors.ts";
import { validateArtifact } from "../../lib/artifacts/artifact.ts";
import { type ArtifactKind, checkArtifactShape } from "../../lib/artifacts/artifact_check.ts";
import { ARTIFACT_SCHEMAS } from "../../lib/artifacts/artifact_schema.ts";
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
} from "../policy/_zod_replay.ts";
import { assertRefusal } from "../_helpers/assert.ts";

const KINDS: ArtifactKind[] = ["change-proposal", "delete-proposal", "command-request"];
const NONCE = "0123456789abcdef0123456789abcdef";
const HEX64 = "ab".repeat(32);

/** `validateArtifact`'s message for an issue (its path, message and unknown keys). */
function reported(issue: { path: PropertyKey[]; message: string; keys?: string[] }): string {
  const where = issue.path.length === 0 ? "artifact" : issue.path.map(String).join(".");
  return `${where}: ${issue.message}${issue.keys ? ` (${issue.keys.join(", ")})` : ""}`;
}

/** Asserts that the checker and zod agree on `value` for `kind`, entirely. */
function agree(kind: ArtifactKind, value: unknown, stats: ReplayStats): void {
  const z = assertAgrees(ARTIFACT_SCHEMAS[kind], (v) => checkArtifactShape(kind, v), value, stats);
  // Through validateArtifact, when the kind routes the value to this schema.
  if (
    typeof value === "object" && value !== null && !Array.isArray(value) &&
    (value as Record<string, unknown>).kind === kind
  ) {
    let caught: unknown = null;
    let data: unknown = null;
    try {
      data = validateArtifact(value);
    } catch (e) {
      caught = e;
    }
    if (z === null) {
      assert.ok(caught instanceof ProposalError, `zod threw; validateArtifact gave ${caught}`);
    } else if (z.success) {
      assert.equal(caught, null);
      assert.deepStrictEqual(data, z.data);
    } else {
      assert.ok(caught instanceof ProposalError);
      const first = z.error.issues[0];
      assert.equal(
        caught.message,
        reported({ ...first, keys: "keys" in first ? first.keys as string[] : undefined }),
      );
    }
  }
}

// ---- generators --------------------------------------------------------------------------------

const junk: Arb = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    undefined,
    true,
    0,
    -0,
    1.5,
    NaN,
    Infinity,
    2 ** 53,
    "",
    "\ud800",
    "😀",
    [],
    [""],
    {},
    { length: 0 },
    { length: 200 },
    { length: "x" },
    build([["constructor", { name: "Foo" }]], true),
    JSON.parse('{"__proto__": 1}'),
    new Date(0),
    Symbol("s"),
  ),
  fc.string({ maxLength: 4 }),
  fc.double(),
  fc.jsonValue({ maxDepth: 2 }),
);

const EXTRA_KEYS = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "toString", "length", "x", "Path", "gate"),
  fc.string({ maxLength: 5 }),
);

const { mix, anObject } = objectKit({ junk, extraKeys: EXTRA_KEYS, maxExtras: () => 2 });

const codePoints = (s: string) => [...s].length;

/**
 * A string of `min`..`max` code points; wrong: the lengths just outside, counted in code points
 * and in UTF-16 units (astral characters, lone surrogates).
 */
function aString(min: number, max: number | null, bad: number): Arb {
  const cap = max ?? 1 << 20;
  const edges = max === null ? [] : [
    "x".repeat(max),
    "😀".repeat(max),
    "😀".repeat(max - 1) + "\ud800",
    "\ud800".repeat(max),
  ];
  const good: Arb = fc.oneof(
    fc.string({ minLength: min, maxLength: Math.min(cap, 8) }),
    fc.string({ unit: "grapheme", minLength: min, maxLength: Math.min(cap, 4) }),
    fc.constantFrom("x".repeat(Math.max(min, 1)), "😀", "a\ud83d", ...edges),
  ).filter((s) => codePoints(s as string) >= min && codePoints(s as string) <= cap);
  const wrong: Arb = fc.constantFrom<unknown>(
    "",
    ...(max === null ? [] : [
      "x".repeat(max + 1),
      "😀".repeat(max + 1),
      "😀".repeat(max) + "x",
      "\ud800".repeat(max + 1),
      Array(max + 1).fill("x"),
    ]),
    ["x"],
    [],
    { length: 0 },
  );
  return mix(good, wrong, bad);
}

/** A string matching `re` (at most `max` code points); wrong: near misses and junk. */
function aMatch(re: RegExp, max: number | null, near: string[], bad: number): Arb {
  const good = fc.stringMatching(re).filter((s) => max === null || s.length <= max);
  const wrong: Arb = fc.oneof(
    fc.constantFrom<unknown>("", ...near, ...(max === null ? [] : [Array(max + 1).fill("a")])),
    fc.stringMatching(re).map((s) => s.toUpperCase()),
    fc.stringMatching(re).map((s) => `${s}\n`),
  );
  return mix(good, wrong, bad);
}

function anArray(element: Arb, min: number, max: number, bad: number, sample: unknown): Arb {
  const good: Arb = fc.oneof(
    fc.array(element, { minLength: min, maxLength: Math.min(max, 4) }),
    fc.constantFrom(Array(max).fill(sample), Array(Math.max(min, 1)).fill(sample)),
  );
  const wrong: Arb = fc.constantFrom<unknown>(
    min > 0 ? [] : [undefined],
    Array(max + 1).fill(sample),
    Array(max + 1).fill(""),
    "",
    "abc",
    "x".repeat(max + 1),
    { length: 0 },
    { length: max + 1 },
    {},
  );
  return mix(good, wrong, bad);
}

function artifacts(kind: ArtifactKind, bad: number): Arb {
  const kindArb = mix(
    fc.constant(kind),
    fc.constantFrom<unknown>(...KINDS.filter((k) => k !== kind), kind.toUpperCase()),
    bad,
  );
  const dispatch = aMatch(/^[0-9a-f]{32}$/, null, [NONCE.slice(1), NONCE + "0", HEX64], bad);
  const agent = aMatch(/^[a-z0-9][a-z0-9-]*$/, 128, [
    "-a",
    "A",
    "a_b",
    "a".repeat(129),
    "😀".repeat(128),
    "😀".repeat(129),
  ], bad);
  const hex64 = aMatch(/^[0-9a-f]{64}$/, null, ["absent", HEX64.slice(1), NONCE], bad);
  const path = aString(1, 4096, bad);
  const text = aString(0, 16384, bad);
  const common = { kind: req(kindArb), dispatch: req(dispatch), agent: opt(agent) };
  if (kind === "change-proposal") {
    return anObject({
      ...common,
      path: req(path),
      base_sha256: req(
        mix(fc.oneof(hex64, fc.constant("absent")), fc.constantFrom("Absent", "absent "), bad),
      ),
      content: req(aString(0, null, bad)),
      rationale: req(text),
      gates: opt(anArray(aString(1, 128, bad), 0, 64, bad, "lint")),
    }, bad);
  }
  if (kind === "delete-proposal") {
    return anObject({
      ...common,
      path: req(path),
      base_sha256: req(hex64),
      rationale: req(text),
    }, bad);
  }
  return anObject({
    ...common,
    argv: req(anArray(aString(0, 16384, bad), 1, 1024, bad, "make")),
    purpose: req(text),
    cwd: opt(aString(0, 4096, bad)),
    expected_writes: opt(anArray(path, 0, 1024, bad, "out/")),
    stdin_from_content: opt(anObject({
      path: req(path),
      content: req(aString(0, null, bad)),
    }, bad)),
  }, bad);
}

// ---- properties --------------------------------------------------------------------------------

for (const kind of KINDS) {
  Deno.test(`artifact check property: valid ${kind}s parse to zod's data, key order included`, () => {
    const stats = new ReplayStats();
    fc.assert(fc.property(artifacts(kind, 0), (v) => agree(kind, v, stats)), { numRuns: 1500 });
    assert.ok(stats.ok > 1450, `only ${stats.ok} of 1500 valid inputs passed`);
  });

  Deno.test(`artifact check property: wrong ${kind}s give zod's issues, first one included`, () => {
    const stats = new ReplayStats();
    for (const bad of [1, 4]) {
      fc.assert(fc.property(artifacts(kind, bad), (v) => agree(kind, v, stats)), {
        numRuns: 2000,
      });
    }
    assert.ok(stats.failed > 2000, `only ${stats.failed} of 4000 inputs failed`);
    assert.ok(stats.ok > 100, `only ${stats.ok} of 4000 inputs passed`);
  });
}

Deno.test("artifact check property: arbitrary values (exotic objects included) agree with zod", () => {
  const names = [...new Set(KINDS.flatMap((k) => Object.keys(ARTIFACT_SCHEMAS[k].shape)))];
  const value = exoticValues(names, { maxDepth: 3 });
  const stats = new ReplayStats();
  fc.assert(
    fc.property(value, fc.constantFrom(...KINDS), (v, kind) => agree(kind, v, stats)),
    { numRuns: 3000 },
  );
  assert.ok(stats.failed > 2500, `only ${stats.failed} of 3000 inputs failed`);
});

// ---- a deterministic sweep ---------------------------------------------------------------------

const FULL: Record<ArtifactKind, Record<string, unknown>> = {
  "change-proposal": {
    kind: "change-proposal",
    dispatch: NONCE,
    agent: "worker-1",
    path: "src/a.ts",
    base_sha256: HEX64,
    content: "x\n",
    rationale: "why",
    gates: ["lint"],
  },
  "delete-proposal": {
    kind: "delete-proposal",
    dispatch: NONCE,
    agent: "worker-1",
    path: "src/a.ts",
    base_sha256: HEX64,
    rationale: "why",
  },
  "command-request": {
    kind: "command-request",
    dispatch: NONCE,
    agent: "worker-1",
    argv: ["make", "test"],
    purpose: "tests",
    cwd: "lean",
    expected_writes: ["out/"],
    stdin_from_content: { path: "a.lean", content: "x" },
  },
};

/** Strings of `n` code points written four ways (ASCII, astral, lone surrogates, mixed). */
const lengths = (n: number) => [
  "x".repeat(n),
  "😀".repeat(n),
  "\ud800".repeat(n),
  "😀".repeat(n - 1) + "\ud83d",
];

/** Values to put anywhere: every JSON type, the length and pattern edges, exotic objects. */
const EDGES: unknown[] = [
  undefined,
  null,
  true,
  0,
  1.5,
  NaN,
  Infinity,
  "",
  "x",
  "absent",
  "Absent",
  NONCE,
  NONCE.toUpperCase(),
  HEX64,
  `${HEX64}\n`,
  "a".repeat(128),
  "a".repeat(129),
  "-a",
  ...[128, 129, 4096, 4097, 16384, 16385].flatMap(lengths),
  [],
  [""],
  ["x"],
  [1],
  Array(64).fill("a"),
  Array(65).fill("a"),
  Array(65).fill(""),
  Array(129).fill("a"),
  Array(1024).fill("a"),
  Array(1025).fill("a"),
  Array(1025).fill(1),
  {},
  { length: 0 },
  { length: 200 },
  { length: "x" },
  { path: "a", content: "" },
  build([["constructor", { name: "Foo" }]], true),
  JSON.parse('{"__proto__": {"x": 1}}'),
  new Date(0),
  new Uint8Array(129),
  Object("ab"),
  Symbol("s"),
];

Deno.test("artifact check sweep: every node replaced by every edge value, removed, or extended", () => {
  const stats = new ReplayStats();
  let nodes = 0;
  for (const kind of KINDS) {
    const full = FULL[kind];
    agree(kind, full, stats);
    nodes += sweep(full, EDGES, ["x", "__proto__", "constructor"], (v) => agree(kind, v, stats));
  }
  assert.equal(nodes, 31, "every node of the three artifacts");
  assert.equal(stats.ok + stats.failed, 2108, "cases");
  assert.ok(stats.ok > 400 && stats.failed > 1500, `${stats.ok} passed, ${stats.failed} failed`);
  // The sweep reaches every kind of issue the schemas can raise first, and zod's surprising ones.
  assertSeen(stats, {
    firstCodes: [
      "invalid_type",
      "too_small",
      "too_big",
      "invalid_value",
      "invalid_format",
      "invalid_union",
      "unrecognized_keys",
    ],
    messages: [
      "Too big: expected string to have <=N characters",
      "Too big: expected array to have <=N items",
      "Too big: expected unknown to be <=N",
      "Too small: expected array to have >=N items",
      "Too small: expected string to have >=N characters",
      "Invalid string: must match pattern /^[N-Na-f]{N}$/",
      'Invalid input: expected "change-proposal"',
      "Invalid input: expected string, received Foo",
      "Invalid input: expected string, received UintNArray",
      "Invalid input",
    ],
  });
});

// ---- examples ----------------------------------------------------------------------------------

/** The message of `v`'s refusal (ARTIFACT_INVALID). */
function refusal(v: unknown): string {
  return assertRefusal(() => validateArtifact(v), "ARTIFACT_INVALID", ProposalError).message;
}

const COMMAND = { kind: "command-request", dispatch: NONCE, argv: ["make"], purpose: "tests" };

Deno.test("artifact check: the exact first issue validateArtifact reports", () => {
  assert.equal(
    refusal({ kind: "delete-proposal" }),
    "dispatch: Invalid input: expected string, received undefined",
  );
  assert.equal(
    refusal({ ...COMMAND, dispatch: "XYZ" }),
    "dispatch: Invalid string: must match pattern /^[0-9a-f]{32}$/",
  );
  assert.equal(
    refusal({ ...COMMAND, argv: [] }),
    "argv: Too small: expected array to have >=1 items",
  );
  assert.equal(
    refusal({ ...COMMAND, purpose: "x".repeat(16385) }),
    "purpose: Too big: expected string to have <=16384 characters",
  );
  assert.equal(
    refusal({ ...COMMAND, stdin_from_content: { path: "", content: "x", extra: 1 } }),
    "stdin_from_content.path: Too small: expected string to have >=1 characters",
  );
  assert.equal(
    refusal({ ...COMMAND, zz: 1, yy: 2 }),
    'artifact: Unrecognized keys: "zz", "yy" (zz, yy)',
  );
  const change = {
    kind: "change-proposal",
    dispatch: NONCE,
    path: "a",
    content: "",
    rationale: "",
  };
  assert.equal(refusal({ ...change, base_sha256: 5 }), "base_sha256: Invalid input");
  assert.equal(
    refusal({ ...change, base_sha256: "Absent" }),
    "base_sha256: Invalid string: must match pattern /^[0-9a-f]{64}$/",
  );
  assert.equal(
    refusal({ ...change, kind: "change-proposal", base_sha256: "absent", agent: "😀".repeat(129) }),
    "agent: Invalid string: must match pattern /^[a-z0-9][a-z0-9-]*$/",
  );
});

Deno.test("artifact check: limits count code points; a union miss lists every option", () => {
  // 4096 astral characters are 8192 UTF-16 units but within the 4096 limit, as in zod.
  const r = checkArtifactShape("delete-proposal", {
    kind: "delete-proposal",
    dispatch: NONCE,
    path: "😀".repeat(4096),
    base_sha256: HEX64,
    rationale: "",
  });
  assert.ok(r.ok);
  const u = checkArtifactShape("change-proposal", {
    kind: "change-proposal",
    dispatch: NONCE,
    path: "a",
    base_sha256: null,
    content: "",
    rationale: "",
  });
  assert.ok(!u.ok);
  assert.deepStrictEqual(u.issues, [{
    code: "invalid_union",
    errors: [
      [{
        expected: "string",
        code: "invalid_type",
        path: [],
        message: "Invalid input: expected string, received null",
      }],
      [{
        code: "invalid_value",
        values: ["absent"],
        path: [],
        message: 'Invalid input: expected "absent"',
      }],
    ],
    path: ["base_sha256"],
    message: "Invalid input",
  }]);
});

Deno.test("artifact check: data is a new object in schema order, absent optional keys left out", () => {
  const input = { purpose: "p", argv: ["make"], dispatch: NONCE, kind: "command-request" };
  const r = checkArtifactShape("command-request", input);
  assert.ok(r.ok);
  assert.deepStrictEqual(Object.keys(r.data), ["kind", "dispatch", "argv", "purpose"]);
  assert.notEqual(r.data.argv, input.argv);
  assert.deepStrictEqual(r.data.argv, ["make"]);
});
