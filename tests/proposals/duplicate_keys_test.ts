import assert from "node:assert/strict";
import fc from "fast-check";
import { duplicateKey } from "../../lib/proposals/duplicate_keys.ts";

Deno.test("duplicateKey: a key repeated in one object, compared decoded; other objects, arrays and values don't count", () => {
  assert.equal(duplicateKey('{"path": "a", "path": "b"}'), "path");
  assert.equal(duplicateKey('{"a": 1, "\\u0061": 2}'), "a");
  assert.equal(duplicateKey('{"a\\"b": 1, "c": "\\"a\\\\\\"b\\"", "a\\"b": 2}'), 'a"b');
  assert.equal(duplicateKey('{"":1,"":2}'), "");
  assert.equal(duplicateKey('{"x": {"k": 1}, "y": {"k": 2}}'), null);
  assert.equal(duplicateKey('{"k": ["k", "k"], "v": "k"}'), null);
  assert.equal(duplicateKey('[{"a": 1}, {"a": 2}]'), null);
  assert.equal(duplicateKey('{"o": {"a": 1, "a": 2}}'), "a");
  assert.equal(duplicateKey('"just a string"'), null);
});

Deno.test("duplicateKey: agrees with a reference on generated JSON texts (property)", () => {
  const key = fc.constantFrom("a", "b", "path", 'q"', "\\", "é", "");
  type V = string | number | V[] | [string, V][];
  const { value } = fc.letrec<{ value: V }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom("a", "path", 'x"y', 1),
      fc.array(tie("value"), { maxLength: 3 }),
      fc.array(fc.tuple(key, tie("value")), { maxLength: 4 }).map((e) => ({ entries: e })),
    ) as fc.Arbitrary<V>,
  }));
  // Objects are generated as entry lists, so repeated keys survive into the text.
  const render = (v: unknown): string => {
    if (typeof v === "object" && v !== null && !Array.isArray(v) && "entries" in v) {
      const e = (v as { entries: [string, unknown][] }).entries;
      return `{${e.map(([k, x]) => `${JSON.stringify(k)}: ${render(x)}`).join(", ")}}`;
    }
    if (Array.isArray(v)) return `[${v.map(render).join(", ")}]`;
    return JSON.stringify(v);
  };
  const reference = (v: unknown): boolean => {
    if (typeof v === "object" && v !== null && !Array.isArray(v) && "entries" in v) {
      const e = (v as { entries: [string, unknown][] }).entries;
      const keys = e.map(([k]) => k);
      return new Set(keys).size !== keys.length || e.some(([, x]) => reference(x));
    }
    return Array.isArray(v) && v.some(reference);
  };
  fc.assert(
    fc.property(value, (v) => {
      const text = render(v);
      JSON.parse(text);
      assert.equal(duplicateKey(text) !== null, reference(v), text);
    }),
    { numRuns: 2000 },
  );
});
