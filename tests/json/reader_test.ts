/**
 * The one JSON reader (`lib/json/reader.ts`), in both dialects: JSON's values exactly (strict JSON
 * accepts what `JSON.parse` accepts, no more), comments and trailing commas in JSONC only,
 * positions, and the refusals both briefs and artifacts rely on: repeated keys, depth, a byte
 * order mark in strict JSON, lone surrogates, `__proto__` as an ordinary key.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import {
  type JsonDialect,
  JsonReadError,
  MAX_JSON_DEPTH,
  positionAt,
  readJson,
  type ReadJsonOptions,
} from "../../lib/json/reader.ts";

function codeOf(text: string, options: ReadJsonOptions = { dialect: "jsonc", maxDepth: 16 }) {
  try {
    readJson(text, options);
  } catch (e) {
    assert.ok(e instanceof JsonReadError);
    assert.deepEqual(e.position, positionAt(text, e.offset));
    return `${e.code}@${e.offset}`;
  }
  return "ok";
}

const strict = (text: string) => codeOf(text, { dialect: "json", maxDepth: 16 });

Deno.test("reader: any JSON text reads to what JSON.parse gives, in both dialects", () => {
  fc.assert(
    fc.property(
      fc.jsonValue({ maxDepth: 6 }),
      fc.constantFrom<JsonDialect>("json", "jsonc"),
      (v, d) => {
        const text = JSON.stringify(v, null, 1);
        assert.equal(
          JSON.stringify(readJson(text, { dialect: d }).value),
          JSON.stringify(JSON.parse(text)),
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("reader: strict JSON accepts exactly what JSON.parse accepts (texts near JSON)", () => {
  // Texts built from JSON's own characters, so most are close to valid and many are valid.
  const piece = fc.constantFrom(
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\n",
    '"a"',
    '"b"',
    '"\\u0061"',
    '"\\ud83d\\ude00"',
    '"\\x"',
    '"\\\\"',
    '"a\\"b"',
    '"\\',
    '"',
    "1",
    "-0",
    "1.5e3",
    "01",
    "1.",
    "true",
    "nul",
    "//",
    "/*c*/",
    "\ufeff",
    "\u00a0",
    '"\t"',
  );
  let valid = 0;
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const text = pieces.join("");
      let expected: unknown = undefined;
      let parses = true;
      try {
        expected = JSON.parse(text);
      } catch {
        parses = false;
      }
      let got: unknown = undefined;
      let reads = true;
      let code = "";
      try {
        got = readJson(text, { dialect: "json" }).value;
      } catch (e) {
        assert.ok(e instanceof JsonReadError, String(e));
        reads = false;
        code = e.code;
      }
      if (parses && !reads) {
        // The only valid JSON refused: a key repeated in one object.
        assert.equal(code, "DuplicateKey", text);
      } else {
        assert.equal(reads, parses, text);
        if (reads) {
          valid++;
          assert.equal(JSON.stringify(got), JSON.stringify(expected), text);
        }
      }
    }),
    { numRuns: 5000 },
  );
  assert.ok(valid > 100, `only ${valid} valid texts`);
});

Deno.test("reader: JSONC comments and trailing commas; positions of values and keys", () => {
  const text = '{\n  // a\n  "a": [1, /* two */ 2,],\n  "b": {"c": "\\u00e9\\n",},\n}';
  const doc = readJson(text, { dialect: "jsonc" });
  assert.equal(JSON.stringify(doc.value), JSON.stringify({ a: [1, 2], b: { c: "\u00e9\n" } }));
  assert.deepEqual(doc.locate(["a", 1]), positionAt(text, text.indexOf("2,]")));
  assert.deepEqual(doc.locate(["a", 1], true), doc.locate(["a", 1]), "an array item has no key");
  assert.deepEqual(doc.locate(["b", "c"], true), positionAt(text, text.indexOf('"c"')));
  assert.deepEqual(doc.locate(["b", "c"]), positionAt(text, text.indexOf('"\\u00e9')));
  // A missing leaf falls back to the nearest ancestor that exists (and then to its value).
  assert.deepEqual(doc.locate(["zz"]), { line: 1, column: 1 });
  assert.deepEqual(doc.locate(["a", "x"]), doc.locate(["a"]));
  assert.deepEqual(doc.locate(["b", "zz"], true), doc.locate(["b"]));
  assert.equal(doc.rawText(["b", "c"]), '"\\u00e9\\n"');
  assert.equal(doc.rawText(["a"]), "[1, /* two */ 2,]");
  assert.equal(doc.rawText(["nope"]), null);
  // The same text is not strict JSON.
  assert.equal(strict(text), "PropertyNameExpected@4");
});

Deno.test("reader: positions count LF, CRLF and CR line ends", () => {
  assert.deepEqual(positionAt("ab\ncd", 4), { line: 2, column: 2 });
  assert.deepEqual(positionAt("ab\r\ncd", 5), { line: 2, column: 2 });
  assert.deepEqual(positionAt("ab\rcd", 4), { line: 2, column: 2 });
  const doc = readJson('{\r\n  "a": {\r\n    "b": [1, 2]\r\n  }\r\n}', { dialect: "json" });
  assert.deepEqual(doc.locate(["a", "b", 1]), { line: 3, column: 14 });
  assert.deepEqual(doc.locate(["a", "b"], true), { line: 3, column: 5 });
  assert.equal(doc.rawText(["a", "b", 0]), "1");
});

Deno.test("reader: refusals carry a code and the offset where reading stopped", () => {
  for (const read of [codeOf, strict]) {
    assert.equal(read(""), "ValueExpected@0");
    assert.equal(read("{} {}"), "EndOfFileExpected@3");
    assert.equal(read("{'a': 1}"), "PropertyNameExpected@1");
    assert.equal(read('{"a" 1}'), "ColonExpected@5");
    assert.equal(read('{"a": 1 "b": 2}'), "CommaExpected@8");
    assert.equal(read("[1 2]"), "CommaExpected@3");
    assert.equal(read('{"a": tru}'), "InvalidSymbol@6");
    assert.equal(read("[-]"), "InvalidSymbol@1");
    assert.equal(read("[01]"), "InvalidNumberFormat@1");
    assert.equal(read("[1.]"), "InvalidNumberFormat@1");
    assert.equal(read("[truex]"), "InvalidSymbol@1");
    assert.equal(read('["\\x"]'), "InvalidEscapeCharacter@2");
    assert.equal(read('["\\u12"]'), "InvalidUnicode@2");
    assert.equal(read('["a\nb"]'), "InvalidCharacter@3");
    assert.equal(read('["abc'), "UnexpectedEndOfString@1");
    assert.equal(read('{"a": 1, "a": 2}'), "DuplicateKey@9");
    assert.equal(read('{"a": 1, "\\u0061": 2}'), "DuplicateKey@9");
    assert.equal(read("[".repeat(17) + "]".repeat(17)), "NestedTooDeep@16");
    assert.equal(read("[".repeat(16) + "]".repeat(16)), "ok");
    assert.equal(read("{"), "CloseBraceExpected@1");
    assert.equal(read("[1,"), "CloseBracketExpected@3");
    assert.equal(read("[\u00a0]"), "InvalidSymbol@1");
  }
  // JSONC only: comments and trailing commas.
  assert.equal(codeOf("[1, /* open"), "UnexpectedEndOfComment@4");
  assert.equal(codeOf("[1, // to the end\n2,]"), "ok");
  assert.equal(codeOf('{"a": 1,}'), "ok");
  assert.equal(strict("[1, /* c */ 2]"), "InvalidSymbol@4");
  assert.equal(strict("[1 // c\n]"), "CommaExpected@3");
  assert.equal(strict("[1,]"), "ValueExpected@3");
  assert.equal(strict('{"a": 1,}'), "PropertyNameExpected@8");
});

Deno.test("reader: the default depth limit is MAX_JSON_DEPTH, in both dialects", () => {
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  for (const dialect of ["json", "jsonc"] as const) {
    assert.equal(codeOf(deep(MAX_JSON_DEPTH), { dialect }), "ok");
    assert.equal(codeOf(deep(MAX_JSON_DEPTH + 1), { dialect }), `NestedTooDeep@${MAX_JSON_DEPTH}`);
    // Far deeper than the stack would take: refused, not a RangeError.
    assert.equal(codeOf(deep(100_000), { dialect }), `NestedTooDeep@${MAX_JSON_DEPTH}`);
  }
});

Deno.test("reader: a leading byte order mark is skipped in JSONC (columns keep counting it), refused in strict JSON", () => {
  const doc = readJson('\ufeff{\n"a": 1}', { dialect: "jsonc" });
  assert.deepEqual(doc.value, Object.assign(Object.create(null), { a: 1 }));
  assert.deepEqual(doc.locate(["a"]), { line: 2, column: 6 });
  assert.equal(codeOf('\ufeff{"a": 1}', { dialect: "jsonc" }), "ok");
  assert.equal(strict('\ufeff{"a": 1}'), "ByteOrderMark@0");
  // Anywhere else it is no whitespace, in either dialect.
  assert.equal(codeOf(' \ufeff{"a": 1}'), "InvalidSymbol@1");
  assert.equal(strict('{"a": 1}\ufeff'), "EndOfFileExpected@8");
});

Deno.test("reader: a duplicate key carries its path through objects and arrays", () => {
  const text = '{"a": [{"b": 1}, {"c": {"d": 1}, "c": 2}], "e": 3}';
  assert.throws(
    () => readJson(text, { dialect: "json" }),
    (e) =>
      e instanceof JsonReadError && e.code === "DuplicateKey" && e.key &&
      JSON.stringify(e.path) === '["a",1,"c"]' && e.offset === text.lastIndexOf('"c"'),
  );
});

Deno.test("reader: a repeated key is found in any object, compared decoded; other objects, arrays and values don't count", () => {
  const dup = (text: string) => {
    try {
      readJson(text, { dialect: "json" });
    } catch (e) {
      if (e instanceof JsonReadError && e.code === "DuplicateKey") return e.path[e.path.length - 1];
      throw e;
    }
    return null;
  };
  assert.equal(dup('{"path": "a", "path": "b"}'), "path");
  assert.equal(dup('{"a\\"b": 1, "c": "\\"a\\\\\\"b\\"", "a\\"b": 2}'), 'a"b');
  assert.equal(dup('{"":1,"":2}'), "");
  assert.equal(dup('{"x": {"k": 1}, "y": {"k": 2}}'), null);
  assert.equal(dup('{"k": ["k", "k"], "v": "k"}'), null);
  assert.equal(dup('[{"a": 1}, {"a": 2}]'), null);
  assert.equal(dup('{"o": {"a": 1, "a": 2}}'), "a");
  assert.equal(dup('"just a string"'), null);
});

Deno.test("reader: repeated keys agree with a reference on generated JSON texts (property)", () => {
  const key = fc.constantFrom("a", "b", "path", 'q"', "\\", "é", "");
  type V = string | number | V[] | { entries: [string, V][] };
  const { value } = fc.letrec<{ value: V }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom("a", "path", 'x"y', 1),
      fc.array(tie("value"), { maxLength: 3 }),
      fc.array(fc.tuple(key, tie("value")), { maxLength: 4 }).map((e) => ({ entries: e })),
    ) as fc.Arbitrary<V>,
  }));
  // Objects are generated as entry lists, so repeated keys survive into the text.
  const render = (v: V): string => {
    if (typeof v === "object" && !Array.isArray(v)) {
      return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}: ${render(x)}`).join(", ")}}`;
    }
    if (Array.isArray(v)) return `[${v.map(render).join(", ")}]`;
    return JSON.stringify(v);
  };
  const reference = (v: V): boolean => {
    if (typeof v === "object" && !Array.isArray(v)) {
      const keys = v.entries.map(([k]) => k);
      return new Set(keys).size !== keys.length || v.entries.some(([, x]) => reference(x));
    }
    return Array.isArray(v) && v.some(reference);
  };
  fc.assert(
    fc.property(value, (v) => {
      const text = render(v);
      JSON.parse(text);
      const code = strict(text);
      assert.equal(code.startsWith("DuplicateKey@"), reference(v), text);
      if (!reference(v)) assert.equal(code, "ok", text);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("reader: lone surrogates are refused at the first one once the text has parsed, or kept", () => {
  const text = '{"a": ["ok", "x\\ud800"], "b\\udc00": 1, "c": "\\ud83d\\ude00"}';
  assert.throws(
    () => readJson(text, { dialect: "jsonc" }),
    (e) =>
      e instanceof JsonReadError && e.code === "LoneSurrogate" && !e.key &&
      JSON.stringify(e.path) === '["a",1]' && e.offset === text.indexOf('"x'),
  );
  // A key: its path ends with the key, its position is the key's.
  assert.throws(
    () => readJson('{"a": {"w\\udc00": {}}}', { dialect: "json" }),
    (e) =>
      e instanceof JsonReadError && e.code === "LoneSurrogate" && e.key &&
      JSON.stringify(e.path) === '["a","w\\udc00"]' && e.offset === 7,
  );
  // A syntax error later in the text comes first.
  assert.equal(codeOf('["\\ud800", }'), "InvalidSymbol@11");
  const kept = readJson(text, { dialect: "json", loneSurrogates: "keep" }).value as {
    a: string[];
  };
  assert.equal(kept.a[1], "x\ud800");
  assert.equal(codeOf('["\\ud83d\\ude00", "\\ud800\\udc00"]'), "ok", "pairs are fine");
});

Deno.test("reader: objects have no prototype; __proto__ and constructor are ordinary keys", () => {
  for (const dialect of ["json", "jsonc"] as const) {
    const v = readJson('{"__proto__": {"x": 1}, "constructor": 2}', { dialect }).value as Record<
      string,
      unknown
    >;
    assert.equal(Object.getPrototypeOf(v), null);
    assert.deepEqual(Object.keys(v), ["__proto__", "constructor"]);
    assert.equal(Object.getPrototypeOf(v.__proto__), null);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  }
});

Deno.test("reader: numbers are JSON.parse's numbers; their literal stays readable", () => {
  const doc = readJson('{"a": 6e2, "b": 600.0, "c": -0, "d": 1e400, "e": 9007199254740993}', {
    dialect: "json",
  });
  assert.deepEqual(
    Object.values(doc.value as object),
    Object.values(JSON.parse('{"a": 6e2, "b": 600.0, "c": -0, "d": 1e400, "e": 9007199254740993}')),
  );
  assert.equal(doc.rawText(["a"]), "6e2");
  assert.equal(doc.rawText(["b"]), "600.0");
});
