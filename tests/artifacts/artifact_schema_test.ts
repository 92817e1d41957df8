/**
 * The artifact schemas: `validateArtifact` / `parseArtifact` accept the three shapes and refuse
 * every deviation as ARTIFACT_INVALID naming the field; the committed `schemas/*.schema.json`
 * equal `schemaFileText(name)` (the drift test); the JSON Schemas are closed
 * (`additionalProperties: false`, nested objects included) and carry the dispatch and base
 * patterns; and `agentteams schema [NAME]` prints them through the real CLI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ProposalError } from "../../lib/errors.ts";
import {
  escapeLoneSurrogates,
  lonelySurrogateAt,
  parseArtifact,
  validateArtifact,
} from "../../lib/artifacts/artifact.ts";
import {
  ARTIFACT_SCHEMAS,
  jsonSchemaOf,
  schemaFileText,
  type SchemaName,
} from "../../lib/artifacts/artifact_schema.ts";
import { REPO_ROOT, runCli } from "../_helpers/mod.ts";
import { assertCliRefused, assertRefusal } from "../_helpers/assert.ts";

const NAMES: SchemaName[] = ["change-proposal", "delete-proposal", "command-request"];
const NONCE = "0123456789abcdef0123456789abcdef";
const HEX64 = "ab".repeat(32);

type Obj = Record<string, unknown>;

const CHANGE: Obj = {
  kind: "change-proposal",
  dispatch: NONCE,
  path: "src/a.ts",
  base_sha256: HEX64,
  content: "x\n",
  rationale: "why",
};
const DELETE: Obj = {
  kind: "delete-proposal",
  dispatch: NONCE,
  path: "src/a.ts",
  base_sha256: HEX64,
  rationale: "why",
};
const COMMAND: Obj = {
  kind: "command-request",
  dispatch: NONCE,
  argv: ["make", "test"],
  purpose: "tests",
};

/** Asserts `v` is refused (ARTIFACT_INVALID) with every `parts` string in the message. */
function invalid(v: unknown, ...parts: string[]): void {
  const e = assertRefusal(
    () => validateArtifact(v),
    "ARTIFACT_INVALID",
    ProposalError,
    JSON.stringify(v),
  );
  for (const p of parts) assert.ok(e.message.includes(p), `${p} not in: ${e.message}`);
}

const without = (o: Obj, k: string): Obj =>
  Object.fromEntries(Object.entries(o).filter(([x]) => x !== k));

Deno.test("validateArtifact accepts the three shapes with their optional fields", () => {
  assert.deepEqual(validateArtifact(CHANGE), CHANGE);
  const full = { ...CHANGE, base_sha256: "absent", agent: "worker-2", gates: ["lint", "a.b"] };
  assert.deepEqual(validateArtifact(full), full);
  assert.deepEqual(validateArtifact(DELETE), DELETE);
  assert.deepEqual(validateArtifact({ ...DELETE, agent: "w" }), { ...DELETE, agent: "w" });
  const cmd = {
    ...COMMAND,
    agent: "builder",
    cwd: "lean",
    expected_writes: ["build/", "out/x.txt"],
    stdin_from_content: { path: "in.txt", content: "data" },
  };
  assert.deepEqual(validateArtifact(cmd), cmd);
  assert.deepEqual(validateArtifact({ ...CHANGE, content: "", rationale: "" }), {
    ...CHANGE,
    content: "",
    rationale: "",
  });
});

Deno.test("validateArtifact refuses every deviation (ARTIFACT_INVALID, naming the field)", () => {
  invalid(null, "not a JSON object");
  invalid([CHANGE], "not a JSON object");
  invalid("change-proposal", "not a JSON object");
  invalid({ ...CHANGE, kind: "change" }, "change");
  invalid(without(CHANGE, "kind"));
  invalid({ ...CHANGE, kind: "Change-Proposal" });
  invalid({ ...CHANGE, gates: "lint" }, "gates");
  invalid({ ...CHANGE, gates: [""] }, "gates");
  invalid({ ...CHANGE, gates: ["x".repeat(129)] }, "gates");
  invalid({ ...CHANGE, gates: Array(65).fill("g") }, "gates");
  invalid({ ...CHANGE, mode: "0755" }, "mode");
  invalid({ ...CHANGE, __proto__x: 1 }, "__proto__x");
  // An own "__proto__" key (as JSON.parse makes it) is an unknown field like any other.
  invalid(JSON.parse(JSON.stringify(CHANGE).slice(0, -1) + `, "__proto__": {"gates": ["x"]}}`));
  invalid(JSON.parse(JSON.stringify(CHANGE).slice(0, -1) + `, "constructor": 1}`), "constructor");
  invalid({ ...DELETE, content: "x" }, "content");
  invalid({ ...COMMAND, path: "x" }, "path");
  invalid({ ...CHANGE, dispatch: NONCE.toUpperCase() }, "dispatch");
  invalid({ ...CHANGE, dispatch: NONCE + "0" }, "dispatch");
  invalid({ ...CHANGE, dispatch: NONCE.slice(1) }, "dispatch");
  invalid({ ...CHANGE, dispatch: 123 }, "dispatch");
  invalid({ ...CHANGE, base_sha256: HEX64.toUpperCase() }, "base_sha256");
  invalid({ ...CHANGE, base_sha256: "ABSENT" }, "base_sha256");
  invalid({ ...CHANGE, base_sha256: HEX64 + "a" }, "base_sha256");
  invalid({ ...DELETE, base_sha256: "absent" }, "base_sha256");
  invalid({ ...CHANGE, path: "" }, "path");
  invalid({ ...CHANGE, path: "x".repeat(4097) }, "path");
  invalid({ ...CHANGE, path: ["src", "a.ts"] }, "path");
  invalid({ ...CHANGE, content: 42 }, "content");
  invalid({ ...CHANGE, content: null }, "content");
  invalid(without(CHANGE, "content"), "content");
  invalid(without(CHANGE, "rationale"), "rationale");
  invalid({ ...CHANGE, rationale: "x".repeat(16385) }, "rationale");
  invalid({ ...CHANGE, agent: "Worker" }, "agent");
  invalid({ ...CHANGE, agent: "-w" }, "agent");
  invalid({ ...CHANGE, agent: "" }, "agent");
  invalid({ ...COMMAND, argv: [] }, "argv");
  invalid({ ...COMMAND, argv: "make test" }, "argv");
  invalid({ ...COMMAND, stdin_from_content: { path: "a", content: "b", extra: 1 } }, "extra");
  // A message that quotes the artifact stays UTF-8 text: lone surrogates are written escaped.
  invalid({ ...COMMAND, "x\ud800": 1 }, 'unknown field "x\\ud800"');
});

Deno.test("escapeLoneSurrogates escapes lone surrogates only", () => {
  assert.equal(escapeLoneSurrogates("a\ud800b\udc00"), "a\\ud800b\\udc00");
  assert.equal(escapeLoneSurrogates("\udc00\ud800"), "\\udc00\\ud800", "a reversed pair");
  assert.equal(escapeLoneSurrogates("x\ud83d\ude00y"), "x\ud83d\ude00y");
  assert.equal(escapeLoneSurrogates("\ud83d"), "\\ud83d");
});

Deno.test("lonelySurrogateAt names the first string or key that is not UTF-8 text", () => {
  assert.equal(lonelySurrogateAt(COMMAND, ""), null);
  assert.equal(lonelySurrogateAt({ ...COMMAND, argv: ["make", "\ud800"] }, ""), "argv[1]");
  assert.equal(lonelySurrogateAt({ ...COMMAND, purpose: "a\udc00" }, ""), "purpose");
  const stdin = { path: "in.txt", content: "\ud83d" };
  assert.equal(
    lonelySurrogateAt({ ...COMMAND, stdin_from_content: stdin }, ""),
    "stdin_from_content.content",
  );
  // A key is reported at the object that holds it; at the top, as "artifact".
  assert.equal(lonelySurrogateAt({ ...COMMAND, "x\ud800": 1 }, ""), "artifact");
  assert.equal(
    lonelySurrogateAt({ ...COMMAND, stdin_from_content: { "\udc00": "" } }, ""),
    "stdin_from_content",
  );
  assert.equal(lonelySurrogateAt(["\ud800"], "req"), "req[0]");
  assert.equal(lonelySurrogateAt("\ud800", "req"), "req");
  assert.equal(lonelySurrogateAt("\ud83d\ude00", "req"), null, "a surrogate pair is fine");
});

Deno.test("parseArtifact refuses text that is not a JSON object", () => {
  for (const t of ["", "{", "null", "[]", "42", '"x"', "{kind: 'change-proposal'}"]) {
    let code: string | null = null;
    try {
      parseArtifact(t);
    } catch (e) {
      code = e instanceof ProposalError ? e.code : "OTHER";
    }
    assert.equal(code, "ARTIFACT_INVALID", JSON.stringify(t));
  }
  assert.deepEqual(parseArtifact(JSON.stringify(DELETE)), DELETE);
});

Deno.test("parseArtifact reads strict JSON: refusals name the line and column", () => {
  const refused = (t: string): ProposalError => {
    try {
      parseArtifact(t);
    } catch (e) {
      assert.ok(e instanceof ProposalError, String(e));
      assert.equal(e.code, "ARTIFACT_INVALID", t);
      return e;
    }
    throw new Error(`accepted ${JSON.stringify(t)}`);
  };
  const text = JSON.stringify(DELETE, null, 1);
  let e = refused(text.replace('"path"', '// a comment\n "path"'));
  assert.match(e.message, /^the artifact is not JSON: line 4, column 2: /);
  assert.deepEqual([e.details.line, e.details.column], [4, 2]);
  e = refused(text.replace(/\n}$/, ",\n}"));
  assert.match(e.message, /not JSON: line 7, column 1: a property name/);
  e = refused("\ufeff" + text);
  assert.match(e.message, /byte order mark/);
  e = refused(text.replace('"rationale"', '"path": "b",\n "rationale"'));
  assert.equal(
    e.message,
    'the artifact repeats the key "path" in one object: it would mean different things to ' +
      "different readers",
  );
  assert.deepEqual([e.details.line, e.details.column], [6, 2]);
  e = refused(JSON.stringify({ ...DELETE, x: JSON.parse("[".repeat(200) + "]".repeat(200)) }));
  assert.match(e.message, /nests deeper than 128 levels/);
  // Well-formed otherwise: the schema speaks, not the reader.
  assert.equal(
    refused('{"kind": "change-proposal", "__proto__": 1}').message,
    'unknown field "__proto__"',
  );
});

Deno.test("schemas/*.schema.json equal schemaFileText(name) (no drift)", async () => {
  assert.deepEqual(Object.keys(ARTIFACT_SCHEMAS).sort(), [...NAMES].sort());
  const files: string[] = [];
  for await (const e of Deno.readDir(join(REPO_ROOT, "schemas"))) {
    if (e.name !== "audit-findings.schema.json") files.push(e.name); // tests/audit/ checks it
  }
  // Beside the artifacts', the runner's queue request (tests/queue/request_mode_test.ts checks it).
  assert.deepEqual(
    files.sort(),
    [...NAMES, "queue-request"].map((n) => `${n}.schema.json`).sort(),
  );
  for (const name of NAMES) {
    const committed = await Deno.readTextFile(join(REPO_ROOT, "schemas", `${name}.schema.json`));
    assert.equal(committed, schemaFileText(name), `schemas/${name}.schema.json drifted`);
    assert.deepEqual(JSON.parse(committed), jsonSchemaOf(name));
  }
});

Deno.test("the JSON Schemas are closed and carry the dispatch and base patterns", () => {
  const props = (s: Obj) => s.properties as Record<string, Obj>;
  const requiredOf: Record<SchemaName, string[]> = {
    "change-proposal": ["base_sha256", "content", "dispatch", "kind", "path", "rationale"],
    "delete-proposal": ["base_sha256", "dispatch", "kind", "path", "rationale"],
    "command-request": ["argv", "dispatch", "kind", "purpose"],
  };
  for (const name of NAMES) {
    const s = jsonSchemaOf(name);
    assert.equal(s.$schema, "https://json-schema.org/draft/2020-12/schema");
    assert.equal(s.$id, `https://agentteams.invalid/schemas/${name}.schema.json`);
    assert.equal(s.title, name);
    assert.equal(s.type, "object");
    assert.equal(s.additionalProperties, false, name);
    assert.deepEqual([...(s.required as string[])].sort(), requiredOf[name], name);
    assert.equal(props(s).kind.const, name);
    const dispatch = props(s).dispatch;
    assert.equal(dispatch.pattern, "^[0-9a-f]{32}$", name);
    const re = new RegExp(dispatch.pattern as string);
    assert.ok(re.test(NONCE) && !re.test(NONCE.toUpperCase()) && !re.test(NONCE + "0"));
    assert.equal(props(s).agent.pattern, "^[a-z0-9][a-z0-9-]*$", name);
    // Every nested object is closed too.
    const visit = (v: unknown, at: string): void => {
      if (typeof v !== "object" || v === null) return;
      const o = v as Obj;
      if (o.type === "object") assert.equal(o.additionalProperties, false, `${name} ${at}`);
      for (const [k, x] of Object.entries(o)) visit(x, `${at}.${k}`);
    };
    visit(s, "$");
  }
  const changeBase = props(jsonSchemaOf("change-proposal")).base_sha256.anyOf as Obj[];
  assert.deepEqual(changeBase, [
    { type: "string", pattern: "^[0-9a-f]{64}$" },
    { type: "string", const: "absent" },
  ]);
  const deleteBase = props(jsonSchemaOf("delete-proposal")).base_sha256;
  assert.equal(deleteBase.pattern, "^[0-9a-f]{64}$");
  assert.equal(deleteBase.anyOf, undefined);
  const stdin = props(jsonSchemaOf("command-request")).stdin_from_content;
  assert.equal(stdin.additionalProperties, false);
});

Deno.test("agentteams schema NAME prints each schema; no NAME lists them; a bad NAME is usage", async () => {
  for (const name of NAMES) {
    const r = await runCli(["schema", name]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, schemaFileText(name), `agentteams schema ${name}`);
  }
  const list = await runCli(["schema", "--json"]);
  assert.equal(list.code, 0, list.stderr);
  // The artifacts, then the brief's (tests/cli/brief_check_test.ts), the runner's queue request
  // and the audit report's (tests/audit/schema_test.ts).
  assert.deepEqual(JSON.parse(list.stdout), {
    ok: true,
    schemas: [...NAMES, "brief", "queue-request", "audit-findings"],
  });
  const bad = await runCli(["schema", "change"]);
  assertCliRefused(bad, "schema", "USAGE", 2);
  assert.equal(bad.stdout, "");
});
