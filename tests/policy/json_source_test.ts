import assert from "node:assert/strict";
import { formatJsonPath, parseJsonSource, positionAt } from "../../lib/policy/json_source.ts";
import { expectPolicyError } from "./_helpers.ts";

Deno.test("json_source: paths print as dotted names with indices, odd keys quoted", () => {
  assert.equal(
    formatJsonPath(["agent_policies", "worker", "commands", 0, "timeout"]),
    "agent_policies.worker.commands[0].timeout",
  );
  assert.equal(formatJsonPath(["proposal_gates", "a.b", "argv"]), 'proposal_gates["a.b"].argv');
  assert.equal(formatJsonPath([]), "(top level)");
});

Deno.test("json_source: positions count LF, CRLF and CR line ends", () => {
  assert.deepEqual(positionAt("ab\ncd", 4), { line: 2, column: 2 });
  assert.deepEqual(positionAt("ab\r\ncd", 5), { line: 2, column: 2 });
  assert.deepEqual(positionAt("ab\rcd", 4), { line: 2, column: 2 });
  const src = parseJsonSource('{\r\n  "a": {\r\n    "b": [1, 2]\r\n  }\r\n}', "x.json");
  assert.deepEqual(src.locate(["a", "b", 1]), { line: 3, column: 14 });
  assert.deepEqual(src.locate(["a", "b"], true), { line: 3, column: 5 });
  // A missing leaf falls back to the nearest ancestor that exists.
  assert.deepEqual(src.locate(["a", "missing", "deeper"]), { line: 2, column: 8 });
  assert.equal(src.rawText(["a", "b", 0]), "1");
  assert.equal(src.rawText(["nope"]), null);
});

Deno.test("json_source: parsed objects have no prototype, so __proto__ is just a key", () => {
  const src = parseJsonSource('{"__proto__": {"polluted": true}}', "x.json");
  assert.equal(Object.getPrototypeOf(src.value), null);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(Object.keys(src.value as object), ["__proto__"]);
});

Deno.test("json_source: syntax errors are BRIEF_SYNTAX with file, line and column", () => {
  const err = expectPolicyError(
    () => parseJsonSource('{\n  "a": 1,\n  "b": tru\n}', "brief.json"),
    "BRIEF_SYNTAX",
    "brief.json:3:8:",
  );
  assert.equal(err.details.line, 3);
});
