/**
 * Canonical JSON: byte for byte what CPython's `json.dumps(obj, sort_keys=True)` prints. The
 * expected strings below were written by hand and checked once against CPython 3 while writing
 * (the tests never call Python).
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import {
  canonical,
  canonicalBytes,
  CanonicalError,
  canonicalString,
  compareCodePoints,
} from "../../lib/pycompat/canonical.ts";
import { pyDumps } from "../_helpers/mod.ts";

Deno.test("keys sort by code point: astral keys after every BMP key, U+E000..U+FFFF included", () => {
  const obj = {
    "\uff61": 1,
    "\u{1f600}": 2,
    a: 3,
    "\ue000": 4,
    "\u00e9": 5,
    B: 6,
    ab: 7,
    "\uffff": 8,
    "\u{10000}": 9,
  };
  assert.equal(
    canonical(obj),
    String
      .raw`{"B": 6, "a": 3, "ab": 7, "\u00e9": 5, "\ue000": 4, "\uff61": 1, "\uffff": 8, "\ud800\udc00": 9, "\ud83d\ude00": 2}`,
  );
  // UTF-16 unit order would put the surrogate pair (0xd83d) before U+FF61; code points do not.
  assert.ok(compareCodePoints("\uff61", "\u{1f600}") < 0);
  assert.ok(compareCodePoints("\u{1f600}", "\uff61") > 0);
  assert.ok(compareCodePoints("\uffff", "\u{10000}") < 0);
  assert.ok(compareCodePoints("\ud7ff", "\u{10000}") < 0);
  assert.ok(compareCodePoints("\u{10000}", "\u{10001}") < 0);
  assert.equal(compareCodePoints("ab", "ab"), 0);
  assert.ok(compareCodePoints("a", "ab") < 0);
  assert.ok(compareCodePoints("ab", "a") > 0);
});

Deno.test("every escape: short forms, controls as lower-case \\u00XX, DEL, non-ASCII, astral", () => {
  const s = '"\\\n\r\t\b\f\x00\x01\x1f\x7f\u00e9\u2603\u{1f600}/\uABCD ~';
  const want = String
    .raw`"\"\\\n\r\t\b\f\u0000\u0001\u001f\u007f\u00e9\u2603\ud83d\ude00/\uabcd ~"`;
  assert.equal(canonicalString(s), want);
  assert.equal(canonical(s), want);
  // Each control character on its own, as Python prints it.
  const shortForms: Record<number, string> = {
    0x08: "\\b",
    0x09: "\\t",
    0x0a: "\\n",
    0x0c: "\\f",
    0x0d: "\\r",
  };
  for (let c = 0; c < 0x20; c++) {
    const want1 = shortForms[c] ?? "\\u00" + c.toString(16).padStart(2, "0");
    assert.equal(canonical(String.fromCharCode(c)), `"${want1}"`, `U+${c.toString(16)}`);
  }
  // Printable ASCII is verbatim except quote and backslash; "/" is not escaped.
  let printable = "";
  for (let c = 0x20; c <= 0x7e; c++) printable += String.fromCharCode(c);
  assert.equal(
    canonical(printable),
    '"' + printable.replace("\\", "\\\\").replace('"', '\\"') + '"',
  );
  assert.equal(
    canonical("\u0080\u00a0\u0085\u07ff\u0800\ufeff"),
    String.raw`"\u0080\u00a0\u0085\u07ff\u0800\ufeff"`,
  );
  assert.equal(
    canonical({ "\n": "\u0085", "\x7f": "\u00a0" }),
    String.raw`{"\n": "\u0085", "\u007f": "\u00a0"}`,
  );
  assert.equal(canonical(""), '""');
});

Deno.test("nested objects and arrays, empty containers, literals, separators", () => {
  assert.equal(
    canonical({ b: [1, { d: [], c: {} }], a: null, t: true, f: false }),
    '{"a": null, "b": [1, {"c": {}, "d": []}], "f": false, "t": true}',
  );
  assert.equal(canonical({}), "{}");
  assert.equal(canonical([]), "[]");
  assert.equal(canonical([[]]), "[[]]");
  assert.equal(canonical([{}]), "[{}]");
  assert.equal(canonical({ a: {} }), '{"a": {}}');
  assert.equal(canonical({ a: { b: { c: [1, [2, [3]]] } } }), '{"a": {"b": {"c": [1, [2, [3]]]}}}');
  assert.equal(canonical(null), "null");
  assert.equal(canonical(true), "true");
  assert.equal(canonical(false), "false");
  // A prototype-less object is a plain object too.
  const bare = Object.create(null) as Record<string, number>;
  bare.z = 1;
  bare.y = 2;
  assert.equal(canonical(bare), '{"y": 2, "z": 1}');
  assert.deepEqual(canonicalBytes({ k: "\u00e9" }), new TextEncoder().encode('{"k": "\\u00e9"}'));
  // An own "__proto__" key (as JSON.parse makes it) is an ordinary key.
  assert.equal(
    canonical(JSON.parse('{"b": 1, "__proto__": {"x": 2}}')),
    '{"__proto__": {"x": 2}, "b": 1}',
  );
});

Deno.test("integers: zero, negative, and the safe extremes", () => {
  assert.equal(
    canonical([9007199254740991, -9007199254740991, 0, -1, 1, 42, -0]),
    "[9007199254740991, -9007199254740991, 0, -1, 1, 42, 0]",
  );
  assert.equal(canonical(Number.MAX_SAFE_INTEGER), "9007199254740991");
  assert.equal(canonical(Number.MIN_SAFE_INTEGER), "-9007199254740991");
  assert.equal(canonical(-0), "0");
});

Deno.test("refusals: floats, NaN, infinities, unsafe integers", () => {
  for (
    const v of [1.5, -0.25, 1e-7, NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 53), 1e21, 2 ** 60]
  ) {
    assert.throws(() => canonical(v), CanonicalError, String(v));
    assert.throws(() => canonical({ a: [v] }), CanonicalError, `nested ${v}`);
  }
  const e = (() => {
    try {
      canonical({ x: [1, 0.5] });
    } catch (err) {
      return err as CanonicalError;
    }
    throw new Error("no refusal");
  })();
  assert.equal(e.code, "NOT_CANONICAL");
  assert.match(e.message, /\$\.x\[1\]/);
});

Deno.test("refusals: lone surrogates, high and low, in values and in keys", () => {
  const lone = [
    "\ud800",
    "\udbff",
    "\udc00",
    "\udfff",
    "a\ud800b",
    "a\udc00b",
    "\ud800\ud800",
    "\udc00\ud800", // reversed pair
    "x\ud83d", // high surrogate at the end
  ];
  for (const s of lone) {
    assert.throws(() => canonicalString(s), CanonicalError, JSON.stringify(s));
    assert.throws(() => canonical(s), CanonicalError);
    assert.throws(() => canonical([s]), CanonicalError);
    assert.throws(() => canonical({ [s]: 1 }), CanonicalError, `key ${JSON.stringify(s)}`);
  }
  assert.throws(() => canonical("\ud800"), /high surrogate/);
  assert.throws(() => canonical("\udc00"), /low surrogate/);
});

Deno.test("refusals: undefined, functions, symbols, bigint, Date, Map, Set, class instances, holes", () => {
  class Thing {
    a = 1;
  }
  const holey: unknown[] = [1];
  holey[2] = 3;
  const bad: unknown[] = [
    undefined,
    { a: undefined },
    [undefined],
    () => 1,
    { f() {} },
    Symbol("s"),
    1n,
    { n: 2n },
    new Date(0),
    new Map([["a", 1]]),
    new Set([1]),
    new Thing(),
    new Uint8Array(2),
    /re/,
    new String("boxed"),
    holey,
  ];
  for (const v of bad) {
    assert.throws(() => canonical(v), CanonicalError, String(v));
  }
});

// ---------------------------------------------------------------------------------------------
// Properties

/** Strings whose code units form valid UTF-16 (any code point, astral ones included). */
const goodString = fc.string({ unit: "grapheme-composite", maxLength: 12 });
const anyCodePoints = fc.string({ unit: "binary", maxLength: 12 });
const key = fc.oneof(
  goodString,
  anyCodePoints,
  fc.constantFrom("mac", "prev", "constructor", "toString", "\u{1f600}", "\uff61"),
);
const safeInt = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.maxSafeInteger(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 0),
  fc.integer().map((n) => (n === 0 ? 0 : -n)),
);

const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    safeInt,
    goodString,
    anyCodePoints,
    fc.array(tie("json"), { maxLength: 5 }),
    fc.dictionary(key, tie("json"), { maxKeys: 5, noNullPrototype: true }),
  ),
}));

Deno.test("property: JSON.parse(canonical(x)) deep-equals x", () => {
  fc.assert(
    fc.property(json, (x) => {
      assert.deepEqual(JSON.parse(canonical(x)), x);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("property: canonical(x) is printable ASCII and equals an independent json.dumps model", () => {
  fc.assert(
    fc.property(json, (x) => {
      const c = canonical(x);
      assert.match(c, /^[\x20-\x7e]*$/);
      assert.equal(c, pyDumps(x));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("property: key order is code-point order whatever the insertion order", () => {
  fc.assert(
    fc.property(fc.uniqueArray(anyCodePoints, { maxLength: 8 }), (keys) => {
      const fwd: Record<string, number> = {};
      const rev: Record<string, number> = {};
      keys.forEach((k, i) => (fwd[k] = i));
      [...keys].reverse().forEach((k) => (rev[k] = keys.indexOf(k)));
      assert.equal(canonical(fwd), canonical(rev));
      const order = Object.keys(JSON.parse(canonical(fwd)));
      const cps = order.map((k) => Array.from(k, (c) => c.codePointAt(0) as number));
      for (let i = 1; i < cps.length; i++) {
        const a = cps[i - 1];
        const b = cps[i];
        let cmp = 0;
        for (let j = 0; j < Math.min(a.length, b.length) && cmp === 0; j++) cmp = a[j] - b[j];
        if (cmp === 0) cmp = a.length - b.length;
        assert.ok(cmp < 0, `${JSON.stringify(order[i - 1])} before ${JSON.stringify(order[i])}`);
      }
    }),
    { numRuns: 1000 },
  );
});

Deno.test("property: any lone surrogate anywhere is refused", () => {
  fc.assert(
    fc.property(
      goodString,
      goodString,
      fc.integer({ min: 0xd800, max: 0xdfff }),
      (a, b, unit) => {
        // Prevent the neighbours from completing a pair.
        const s = a + "x" + String.fromCharCode(unit) + "x" + b;
        assert.throws(() => canonical(s), CanonicalError);
        assert.throws(() => canonical({ [s]: 0 }), CanonicalError);
      },
    ),
    { numRuns: 500 },
  );
});
