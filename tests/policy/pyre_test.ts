import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { compileArgPattern, translatePythonRegex } from "../../lib/pycompat/pyre.ts";
import { expectPolicyError } from "./_helpers.ts";

interface Vectors {
  python: string;
  unicode: string;
  strings: string[];
  cases: { pattern: string; refused: boolean; verdicts: string | null }[];
}

const vectors: Vectors = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/pyre_vectors.json", import.meta.url)),
);

Deno.test("pyre: agrees with CPython's re.fullmatch on every recorded verdict", () => {
  let compared = 0;
  let positives = 0;
  for (const c of vectors.cases) {
    if (c.refused || c.verdicts === null) continue;
    const re = compileArgPattern(c.pattern);
    const got = vectors.strings.map((s) => (re.test(s) ? "1" : "0")).join("");
    assert.equal(got, c.verdicts, `pattern ${JSON.stringify(c.pattern)} -> ${re.source}`);
    compared++;
    positives += [...got].filter((v) => v === "1").length;
  }
  // The vectors must actually exercise the translator.
  assert.ok(compared > 250, `only ${compared} patterns compared`);
  assert.ok(positives > 1000, `only ${positives} positive verdicts`);
});

Deno.test("pyre: refuses every pattern CPython rejects, and every deliberately refused one", () => {
  let refused = 0;
  for (const c of vectors.cases) {
    if (!c.refused && c.verdicts !== null) continue;
    expectPolicyError(() => compileArgPattern(c.pattern), "POLICY_LINT");
    refused++;
  }
  assert.ok(refused > 100, `only ${refused} refusals checked`);
});

Deno.test("pyre: deliberately refused constructs name the reason", () => {
  const cases: [string, string][] = [
    [String.raw`(a)\1`, "back-references"],
    ["(?P<n>a)(?P=n)", "back-references"],
    ["(?i)abc", "'i'"],
    ["(?x) a b", "'x'"],
    ["(?<=a)b", "lookbehind"],
    ["(?<!a)b", "lookbehind"],
    ["(a)?(?(1)b|c)", "conditional"],
    [String.raw`\Bx`, String.raw`\B`],
    [String.raw`\N{DIGIT ONE}`, String.raw`\N`],
    ["(?=a)*a", "quantified lookahead"],
    ["a{70000}", "repeat count"],
    ["a(?s)b", "global flags not at the start"],
    ["x".repeat(4097), "longer than"],
    ["(".repeat(70) + ")".repeat(70), "nested deeper"],
    // No-backtracking constructs: CPython's first-match semantics are not reproduced.
    ["(?:[a-z0-9]*|-rf)*+", 'possessive quantifier "*+"'],
    ["a++", 'possessive quantifier "++"'],
    ["a?+", 'possessive quantifier "?+"'],
    ["a{1,2}+", 'possessive quantifier "{1,2}+"'],
    ["(?>[a-z0-9]*|-rf)", 'atomic group "(?>...)"'],
    ["(?>a|ab)c", 'write a plain group "(?:...)"'],
    // CPython 3.11 rejects these, so they are refused too.
    [String.raw`a\z`, String.raw`write \Z`],
    ["(?s-s:a)", "turned both on and off"],
    ["(?u)(?a)a", "'a' and 'u' are incompatible"],
    ["(?P<a²>x)", "group name"],
    // CPython accepts these with a FutureWarning (their meaning may change) or beyond ASCII.
    ["[[a]", String.raw`escape it as "\["`],
    ["[a&&b]", '"&&" in a set'],
    ["[a--b]", '"--" in a set'],
    ["[+--]", '"--" in a set'],
    ["[a||b]", '"||" in a set'],
    ["[a~~b]", '"~~" in a set'],
    ["(?P<é>a)", "ASCII letters"],
    // Each Unicode \w is a set of about 730 ranges; a hundred of them is over the limit.
    [String.raw`\w`.repeat(100), "translates to more than"],
  ];
  for (const [pattern, reason] of cases) {
    expectPolicyError(() => compileArgPattern(pattern), "POLICY_LINT", reason);
  }
});

Deno.test("pyre: Python-only syntax is translated, not passed through", () => {
  assert.equal(translatePythonRegex("a{,2}"), "(?:a){0,2}");
  assert.ok(compileArgPattern("(?P<stem>[a-z]+)\\.py").test("main.py"));
  assert.ok(compileArgPattern(String.raw`\Aab\Z`).test("ab"));
  assert.equal(compileArgPattern(String.raw`\Aab\Z`).test("ab\n"), false);
  // Python's `$` matches before a final newline; fullmatch still needs the newline consumed.
  assert.ok(compileArgPattern("a$\n").test("a\n"));
  assert.equal(compileArgPattern("a$").test("a\n"), false);
  // Python's dot matches \r (JavaScript's would not).
  assert.ok(compileArgPattern("a.b").test("a\rb"));
  assert.equal(compileArgPattern("a.b").test("a\nb"), false);
  // Unicode digits and word characters, as in Python 3 str patterns.
  assert.ok(compileArgPattern(String.raw`\d+`).test("٣٤"));
  assert.equal(compileArgPattern(String.raw`(?a)\d+`).test("٣٤"), false);
  assert.ok(compileArgPattern(String.raw`\w+`).test("héllo_1"));
  // The ASCII forms are small, so the same pattern under (?a) compiles.
  assert.ok(compileArgPattern("(?a)" + String.raw`\w`.repeat(100)).test("a".repeat(100)));
  // Unicode classes are CPython 3.11's (Unicode 14), not the engine's newer Unicode.
  assert.equal(compileArgPattern(String.raw`\w`).test("\u{31350}"), false);
  assert.equal(compileArgPattern(String.raw`\W`).test("\u{31350}"), true);
  assert.equal(compileArgPattern(String.raw`\d`).test("\u{11F50}"), false);
  assert.equal(compileArgPattern(String.raw`\d`).test("\u{1D7CE}"), true);
  // Scoped flags: `a` and `u` replace each other; `-s` turns dotall off again.
  assert.equal(compileArgPattern(String.raw`(?a)(?u:\d)`).test("٣"), true);
  assert.equal(compileArgPattern(String.raw`(?u)(?a:\d)`).test("٣"), false);
  assert.equal(compileArgPattern("(?s)(?-s:.)").test("\n"), false);
});

Deno.test("pyre: a compiled pattern is a whole-string match (property)", () => {
  fc.assert(
    fc.property(
      fc.stringMatching(/^[a-z]{1,6}$/),
      fc.string({ maxLength: 4 }),
      fc.string({ minLength: 1, maxLength: 4 }),
      (word, before, after) => {
        const re = compileArgPattern("[a-z]+");
        assert.equal(re.test(word), true);
        // Anything added around a match that is not a lower-case letter breaks the fullmatch.
        const extra = (before + after).replace(/[a-z]/g, "");
        if (extra.length > 0) {
          assert.equal(re.test(before.replace(/[a-z]/g, "") + word + extra), false);
        }
      },
    ),
  );
});

Deno.test("pyre: an escaped literal matches exactly itself (property)", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }), (s) => {
      // re.escape-style: backslash every non-alphanumeric ASCII character.
      const escaped = Array.from(
        s,
        (c) => (/^[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e ]$/.test(c) ? "\\" + c : c),
      )
        .join("");
      const re = compileArgPattern(escaped);
      assert.equal(re.test(s), true);
      assert.equal(re.test(s + "x"), false);
    }),
  );
});
