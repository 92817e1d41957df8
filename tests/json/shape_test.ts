/**
 * The declarative shapes of lib/json/shape.ts: what they accept and return, every refusal with its
 * message for people, and the JSON Schema they emit; the artifact and brief shapes built from them
 * emit the committed schemas byte for byte (the artifacts': tests/artifacts/artifact_schema_test.ts;
 * the brief's: the pinned tests/testdata/schemas/brief.schema.json, zod 4.6.7's output before the
 * shapes replaced it).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  array,
  boolean,
  checkShape,
  int,
  jsonSchema,
  literal,
  object,
  oneOf,
  optional,
  record,
  type ShapeIssue,
  string,
  union,
} from "../../lib/json/shape.ts";
import { checkArtifactShape } from "../../lib/artifacts/artifact_schema.ts";
import { briefJsonSchema, checkPolicyFields } from "../../lib/policy/brief_schema.ts";
import { REPO_ROOT } from "../_helpers/mod.ts";

const NONCE = "0123456789abcdef0123456789abcdef";
const DELETE = {
  kind: "delete-proposal",
  dispatch: NONCE,
  path: "a.txt",
  base_sha256: "ab".repeat(32),
  rationale: "why",
};

function issues(r: { ok: true } | { ok: false; issues: ShapeIssue[] }): ShapeIssue[] {
  assert.equal(r.ok, false, "accepted");
  return r.ok ? [] : r.issues;
}

function messages(r: { ok: true } | { ok: false; issues: ShapeIssue[] }): string[] {
  return issues(r).map((i) => `${i.path.join(".")}: ${i.message}`);
}

Deno.test("shape: a missing field is named with what it is and what it is for", () => {
  const { rationale: _, ...noRationale } = DELETE;
  assert.deepEqual(messages(checkArtifactShape("delete-proposal", noRationale)), [
    ': missing required field "rationale" (a string: why the deletion)',
  ]);
  const { argv: _a, ...noArgv } = { kind: "command-request", dispatch: NONCE, argv: ["x"] };
  assert.deepEqual(messages(checkArtifactShape("command-request", { ...noArgv, purpose: "p" })), [
    ': missing required field "argv" (a list of strings: the command and its arguments; must ' +
    "start with one of the agent's allowed prefixes)",
  ]);
  const stdin = { ...noArgv, argv: ["x"], purpose: "p", stdin_from_content: { path: "a" } };
  assert.deepEqual(messages(checkArtifactShape("command-request", stdin)), [
    'stdin_from_content: missing required field "content" (a string: the text)',
  ]);
});

Deno.test("shape: an unknown field is named, with the field it was probably meant to be", () => {
  const { dispatch: _, ...noDispatch } = DELETE;
  // Not a near spelling, but the one required field missing: the likely mix-up.
  const r = checkArtifactShape("delete-proposal", { ...noDispatch, nonce: NONCE });
  const [unknown, missing] = issues(r);
  assert.equal(unknown.message, 'unknown field "nonce" (did you mean "dispatch"?)');
  assert.deepEqual([unknown.code, unknown.field, unknown.suggestion], [
    "unknown",
    "nonce",
    "dispatch",
  ]);
  assert.equal(missing.code, "missing");
  // A near spelling wins over the missing field.
  const { base_sha256: _b, ...noBase } = DELETE;
  assert.equal(
    issues(checkArtifactShape("delete-proposal", { ...noBase, base_sha: "x" }))[0].message,
    'unknown field "base_sha" (did you mean "base_sha256"?)',
  );
  // Nothing near and nothing missing: no guess.
  const plain = issues(checkArtifactShape("delete-proposal", { ...DELETE, mode: "0755" }));
  assert.deepEqual(plain.map((i) => i.message), ['unknown field "mode"']);
  assert.deepEqual(plain[0].known, [
    "kind",
    "dispatch",
    "agent",
    "path",
    "base_sha256",
    "rationale",
  ]);
  // An own __proto__ (as JSON.parse makes it) is an unknown field like any other.
  const proto = JSON.parse(JSON.stringify(DELETE).slice(0, -1) + ', "__proto__": {"x": 1}}');
  assert.deepEqual(messages(checkArtifactShape("delete-proposal", proto)), [
    ': unknown field "__proto__"',
  ]);
});

Deno.test("shape: wrong values read as what was expected and what was given", () => {
  const cases: [unknown, string[]][] = [
    [{ ...DELETE, dispatch: 7 }, [
      "dispatch: must be a string matching /^[0-9a-f]{32}$/, not an integer",
    ]],
    [{ ...DELETE, dispatch: NONCE.toUpperCase() }, [
      "dispatch: must match /^[0-9a-f]{32}$/ (the dispatch nonce the orchestrator gave the agent " +
      "(32 lower-case hex))",
    ]],
    [{ ...DELETE, path: "" }, ["path: must not be empty"]],
    [{ ...DELETE, path: "x".repeat(4097) }, ["path: must have at most 4096 characters"]],
    [{ ...DELETE, path: ["a"] }, ["path: must be a string, not a list"]],
    [{ ...DELETE, rationale: null }, ["rationale: must be a string, not null"]],
  ];
  for (const [v, want] of cases) {
    assert.deepEqual(messages(checkArtifactShape("delete-proposal", v)), want, JSON.stringify(v));
  }
  const change = { ...DELETE, kind: "change-proposal", content: "x" };
  assert.deepEqual(
    messages(checkArtifactShape("change-proposal", { ...change, base_sha256: "A" })),
    [
      'base_sha256: must be a string matching /^[0-9a-f]{64}$/ or "absent", not "A" (SHA-256 hex ' +
      "of the file the agent read, or 'absent' when it creates the file)",
    ],
  );
  assert.deepEqual(
    messages(checkArtifactShape("change-proposal", { ...change, gates: ["", "ok", 3] })),
    ["gates.0: must not be empty", "gates.2: must be a string, not an integer"],
  );
  // A list past its maximum is refused as a whole; its items are not looked into.
  assert.deepEqual(
    messages(checkArtifactShape("change-proposal", { ...change, gates: Array(65).fill(1) })),
    ["gates: must have at most 64 items"],
  );
  const cmd = { kind: "command-request", dispatch: NONCE, purpose: "p" };
  assert.deepEqual(messages(checkArtifactShape("command-request", { ...cmd, argv: [] })), [
    "argv: must not be empty",
  ]);
});

Deno.test("shape: lengths count code points, as JSON Schema does", () => {
  const s = string({ min: 2, max: 2 });
  assert.equal(checkShape(s, "😀😀").ok, true, "two code points in four units");
  assert.equal(checkShape(s, "😀").ok, false, "one code point in two units");
  assert.equal(checkShape(s, "\ud800\ud800").ok, true, "two lone surrogates are two");
  assert.deepEqual(messages(checkShape(s, "abc")), [": must have at most 2 characters"]);
  assert.deepEqual(messages(checkShape(s, "a")), [": must have at least 2 characters"]);
});

Deno.test("shape: integers, booleans, enums, literals, maps and unions", () => {
  const n = int({ min: 1, max: 10 });
  assert.deepEqual(checkShape(n, 3), { ok: true, data: 3 });
  assert.deepEqual(messages(checkShape(n, 0)), [": must be at least 1"]);
  assert.deepEqual(messages(checkShape(n, 11)), [": must be at most 10"]);
  assert.deepEqual(messages(checkShape(n, 1.5)), [": must be an integer, not a number"]);
  assert.deepEqual(messages(checkShape(n, 2 ** 60)), [": must be at most 10"]);
  assert.deepEqual(messages(checkShape(int(), -(2 ** 60))), [
    `: must be at least ${Number.MIN_SAFE_INTEGER}`,
  ]);
  assert.deepEqual(messages(checkShape(n, "3")), [": must be an integer, not a string"]);
  assert.deepEqual(messages(checkShape(boolean(), 1)), [": must be true or false, not an integer"]);
  assert.deepEqual(messages(checkShape(oneOf(["a", "b"]), 1)), [
    ': must be one of "a", "b", not an integer',
  ]);
  assert.deepEqual(messages(checkShape(literal("x"), "y")), [': must be "x", not "y"']);
  const m = record(object({ n: int() }));
  assert.deepEqual(checkShape(m, { a: { n: 1 } }), { ok: true, data: { a: { n: 1 } } });
  assert.deepEqual(messages(checkShape(m, { a: { n: "1" } })), [
    "a.n: must be an integer, not a string",
  ]);
  const proto = JSON.parse('{"__proto__": {"n": 1}}');
  const reserved = issues(checkShape(m, proto));
  assert.deepEqual(reserved.map((i) => [i.code, i.field]), [["reserved", "__proto__"]]);
  assert.deepEqual(messages(checkShape(m, [])), [": must be an object, not a list"]);
  const u = union([int(), literal("none")]);
  assert.deepEqual(checkShape(u, "none"), { ok: true, data: "none" });
  assert.deepEqual(messages(checkShape(u, "x")), [': must be an integer or "none", not "x"']);
});

Deno.test("shape: the parsed value is new, in shape order, without absent optional fields", () => {
  const s = object({ a: string(), b: optional(array(string())), c: optional(boolean()) });
  const input = { c: true, a: "x" };
  const r = checkShape(s, input);
  assert.ok(r.ok);
  assert.deepEqual(Object.keys(r.data), ["a", "c"]);
  assert.notEqual(r.data, input);
  // An object without a prototype (as the JSONC reader builds them) is an object.
  const bare = Object.assign(Object.create(null), { a: "x" });
  assert.deepEqual(checkShape(s, bare), { ok: true, data: { a: "x" } });
});

Deno.test("shape: the emitter writes JSON Schema keywords in a fixed order", () => {
  const s = object({
    a: string({ min: 1, max: 2, pattern: /^x+$/, description: "A" }),
    b: optional(array(int({ min: 0 }), { min: 1, max: 3 }), { description: "B" }),
    c: optional(record(oneOf(["p", "q"]))),
    d: union([literal("z"), boolean()]),
  }, { description: "S" });
  assert.equal(
    JSON.stringify(jsonSchema(s, "https://x.invalid/s.json", "s")),
    JSON.stringify({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "https://x.invalid/s.json",
      title: "s",
      type: "object",
      properties: {
        a: { type: "string", minLength: 1, maxLength: 2, pattern: "^x+$", description: "A" },
        b: {
          description: "B",
          minItems: 1,
          maxItems: 3,
          type: "array",
          items: { type: "integer", minimum: 0 },
        },
        c: {
          type: "object",
          propertyNames: { type: "string" },
          additionalProperties: { type: "string", enum: ["p", "q"] },
        },
        d: { anyOf: [{ type: "string", const: "z" }, { type: "boolean" }] },
      },
      required: ["a", "d"],
      additionalProperties: false,
      description: "S",
    }),
  );
});

Deno.test("shape: the brief's JSON Schema is the pinned one, byte for byte", async () => {
  const pinned = await Deno.readTextFile(
    join(REPO_ROOT, "tests", "testdata", "schemas", "brief.schema.json"),
  );
  assert.equal(JSON.stringify(briefJsonSchema(), null, 2) + "\n", pinned);
});

Deno.test("shape: the brief's policy fields: every problem at once, unknown keys first in each object", () => {
  const r = checkPolicyFields({
    write_policy: "none",
    agent_policies: { w: { comands: [], write_scopes: "src/" } },
    proposal_gates: { g: { glob: "*.ts" } },
  });
  assert.deepEqual(messages(r), [
    'write_policy: must be one of "default", "orchestrator-only", not "none"',
    'agent_policies.w: unknown field "comands" (did you mean "commands"?)',
    "agent_policies.w.write_scopes: must be a list of strings, not a string",
    'proposal_gates.g: missing required field "argv" (a list of strings)',
  ]);
});
