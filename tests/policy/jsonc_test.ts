/** The JSONC parser: JSON's values exactly, comments and trailing commas, positions, refusals. */
import assert from "node:assert/strict";
import fc from "fast-check";
import { JsoncSyntaxError, nodeValue, parseJsonc, reach } from "../../lib/policy/jsonc.ts";

function codeOf(text: string): string {
  try {
    parseJsonc(text, 16);
  } catch (e) {
    assert.ok(e instanceof JsoncSyntaxError);
    return `${e.code}@${e.offset}`;
  }
  return "ok";
}

Deno.test("jsonc: any JSON text parses to what JSON.parse gives", () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
      const text = JSON.stringify(v, null, 1);
      assert.deepEqual(
        JSON.stringify(nodeValue(parseJsonc(text, 64))),
        JSON.stringify(JSON.parse(text)),
      );
    }),
    { numRuns: 300 },
  );
});

Deno.test("jsonc: comments and trailing commas; offsets of values", () => {
  const text = '{\n  // a\n  "a": [1, /* two */ 2,],\n  "b": {"c": "\\u00e9\\n",},\n}';
  const root = parseJsonc(text, 16);
  assert.equal(
    JSON.stringify(nodeValue(root)),
    JSON.stringify({ a: [1, 2], b: { c: "\u00e9\n" } }),
  );
  const a1 = reach(root, ["a", 1]);
  assert.equal(a1.depth, 2);
  assert.equal(a1.node.offset, text.indexOf("2,]"));
  assert.equal(a1.keyOffset, null, "an array item has no key");
  const bc = reach(root, ["b", "c"]);
  assert.equal(bc.depth, 2);
  assert.equal(bc.node.type, "string");
  assert.equal(bc.keyOffset, text.indexOf('"c"'));
  const zz = reach(root, ["zz"]);
  assert.equal(zz.depth, 0, "no node at zz");
  assert.equal(zz.node, root, "the deepest node along zz is the root");
  assert.equal(reach(root, ["a", "x"]).depth, 1, "a string part does not index an array");
});

Deno.test("jsonc: refusals carry a code and the offset where parsing stopped", () => {
  assert.equal(codeOf(""), "ValueExpected@0");
  assert.equal(codeOf("{} {}"), "EndOfFileExpected@3");
  assert.equal(codeOf("{'a': 1}"), "PropertyNameExpected@1");
  assert.equal(codeOf('{"a" 1}'), "ColonExpected@5");
  assert.equal(codeOf('{"a": 1 "b": 2}'), "CommaExpected@8");
  assert.equal(codeOf("[1 2]"), "CommaExpected@3");
  assert.equal(codeOf('{"a": tru}'), "InvalidSymbol@6");
  assert.equal(codeOf("[01]"), "InvalidNumberFormat@1");
  assert.equal(codeOf('["\\x"]'), "InvalidEscapeCharacter@2");
  assert.equal(codeOf('["\\u12"]'), "InvalidUnicode@2");
  assert.equal(codeOf('["a\nb"]'), "InvalidCharacter@3");
  assert.equal(codeOf('["abc'), "UnexpectedEndOfString@1");
  assert.equal(codeOf("[1, /* open"), "UnexpectedEndOfComment@4");
  assert.equal(codeOf('{"a": 1, "a": 2}'), "DuplicateKey@9");
  assert.equal(codeOf("[".repeat(17) + "]".repeat(17)), "NestedTooDeep@16");
  assert.equal(codeOf("[".repeat(16) + "]".repeat(16)), "ok");
  assert.equal(codeOf("{"), "CloseBraceExpected@1");
  assert.equal(codeOf("[1,"), "CloseBracketExpected@3");
});

Deno.test("jsonc: a duplicate key carries its path through objects and arrays", () => {
  const text = '{"a": [{"b": 1}, {"c": {"d": 1}, "c": 2}], "e": 3}';
  assert.throws(
    () => parseJsonc(text, 16),
    (e) =>
      e instanceof JsoncSyntaxError && e.code === "DuplicateKey" &&
      JSON.stringify(e.path) === '["a",1,"c"]' && e.offset === text.lastIndexOf('"c"'),
  );
});

Deno.test("jsonc: objects have no prototype; __proto__ is an ordinary key", () => {
  const v = nodeValue(parseJsonc('{"__proto__": {"x": 1}}', 8)) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(v), null);
  assert.deepEqual(Object.keys(v), ["__proto__"]);
});
