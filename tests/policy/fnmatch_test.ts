import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { fnmatch, fnmatchCase, hasWildcard } from "../../lib/pycompat/fnmatch.ts";
import { protectedMatch } from "../../lib/policy/protected_match.ts";
import { compileArgPattern } from "../../lib/pycompat/pyre.ts";

interface Vectors {
  python: string;
  names: string[];
  cases: { pattern: string; verdicts: string }[];
}

const vectors: Vectors = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/fnmatch_vectors.json", import.meta.url)),
);

/** Python's re.escape for one character. */
function reEscape(c: string): string {
  return /^[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e \t\n\r\v\f]$/.test(c) ? "\\" + c : c;
}

/**
 * Reference: CPython 3.11's fnmatch.translate, re-stated here independently of the library's
 * direct matcher, producing a Python regular expression (compiled with the library's Python-regex
 * translator, itself checked against CPython).
 */
function referenceTranslate(pat: string): string {
  const p = Array.from(pat);
  const n = p.length;
  let i = 0;
  const res: string[] = [];
  while (i < n) {
    const c = p[i++];
    if (c === "*") {
      if (res[res.length - 1] !== ".*") res.push(".*");
    } else if (c === "?") {
      res.push(".");
    } else if (c === "[") {
      let j = i;
      if (j < n && p[j] === "!") j++;
      if (j < n && p[j] === "]") j++;
      while (j < n && p[j] !== "]") j++;
      if (j >= n) {
        res.push("\\[");
        continue;
      }
      let stuff: string;
      const inner = p.slice(i, j);
      if (!inner.includes("-")) {
        stuff = inner.join("").replaceAll("\\", "\\\\");
      } else {
        const chunks: string[][] = [];
        let k = p[i] === "!" ? i + 2 : i + 1;
        for (;;) {
          k = p.indexOf("-", k);
          if (k < 0 || k >= j) break;
          chunks.push(p.slice(i, k));
          i = k + 1;
          k = k + 3;
        }
        const chunk = p.slice(i, j);
        if (chunk.length > 0) chunks.push(chunk);
        else chunks[chunks.length - 1].push("-");
        for (let m = chunks.length - 1; m > 0; m--) {
          const a = chunks[m - 1];
          const b = chunks[m];
          if (a[a.length - 1].codePointAt(0)! > b[0].codePointAt(0)!) {
            chunks[m - 1] = [...a.slice(0, -1), ...b.slice(1)];
            chunks.splice(m, 1);
          }
        }
        stuff = chunks.map((s) => s.join("").replaceAll("\\", "\\\\").replaceAll("-", "\\-"))
          .join("-");
      }
      stuff = stuff.replace(/([&~|])/g, "\\$1");
      i = j + 1;
      if (stuff === "") res.push("(?!)");
      else if (stuff === "!") res.push(".");
      else {
        if (stuff[0] === "!") stuff = "^" + stuff.slice(1);
        else if (stuff[0] === "^" || stuff[0] === "[") stuff = "\\" + stuff;
        res.push(`[${stuff}]`);
      }
    } else {
      res.push(reEscape(c));
    }
  }
  return `(?s:${res.join("")})\\Z`;
}

function referenceMatch(name: string, pattern: string): boolean {
  return compileArgPattern(referenceTranslate(pattern.toLowerCase())).test(name.toLowerCase());
}

Deno.test("fnmatch: agrees with CPython's fnmatch on every recorded verdict", () => {
  let positives = 0;
  for (const c of vectors.cases) {
    const got = vectors.names.map((n) => (fnmatch(n, c.pattern) ? "1" : "0")).join("");
    assert.equal(got, c.verdicts, `pattern ${JSON.stringify(c.pattern)}`);
    positives += [...got].filter((v) => v === "1").length;
  }
  assert.ok(vectors.cases.length > 800);
  assert.ok(positives > 900, `only ${positives} positive verdicts`);
});

Deno.test("fnmatch: the reference translation agrees with CPython too", () => {
  for (const c of vectors.cases.slice(0, 300)) {
    const got = vectors.names.map((n) => (referenceMatch(n, c.pattern) ? "1" : "0")).join("");
    assert.equal(got, c.verdicts, `reference, pattern ${JSON.stringify(c.pattern)}`);
  }
});

const globChar = fc.constantFrom(
  "a",
  "b",
  "z",
  "A",
  "-",
  "!",
  "]",
  "[",
  "*",
  "?",
  "/",
  "\\",
  ".",
  "^",
  "é",
  "😀",
);
const nameChar = fc.constantFrom("a", "b", "z", "B", "-", "!", "]", "[", "/", ".", "é", "😀", "\n");

Deno.test("fnmatch: agrees with the reference regex translation (property)", () => {
  fc.assert(
    fc.property(
      fc.array(globChar, { maxLength: 10 }).map((a) => a.join("")),
      fc.array(nameChar, { maxLength: 10 }).map((a) => a.join("")),
      (pattern, name) => {
        assert.equal(
          fnmatch(name, pattern),
          referenceMatch(name, pattern),
          `${pattern} vs ${name}`,
        );
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("fnmatch: `*` crosses `/`, `?` and sets match one character", () => {
  assert.ok(fnmatch("lean/MathAgents/X/CX.lean", "lean/*.lean"));
  assert.ok(fnmatch("a/b", "a?b"));
  assert.ok(fnmatch("x.c", "*.[ch]"));
  assert.equal(fnmatch("x.o", "*.[ch]"), false);
  assert.ok(fnmatch("x1", "x[!a-z]"));
  assert.equal(fnmatch("xq", "x[!a-z]"), false);
  assert.ok(fnmatch("[", "["), "an unclosed [ is literal");
  assert.ok(fnmatch("a\\b", "a\\b"), "backslash is an ordinary character");
  assert.equal(fnmatch("a", "[z-a]"), false, "a reversed range matches nothing");
});

Deno.test("fnmatch: matching is case-insensitive (property)", () => {
  const flip = (s: string, mask: number) =>
    Array.from(s, (c, i) => ((mask >> (i % 30)) & 1 ? c.toUpperCase() : c.toLowerCase())).join("");
  fc.assert(
    fc.property(
      fc.stringMatching(/^[a-zA-Z*?\/.\[\]!-]{0,10}$/),
      fc.stringMatching(/^[a-zA-Z\/.-]{0,10}$/),
      fc.integer({ min: 0, max: 2 ** 30 - 1 }),
      fc.integer({ min: 0, max: 2 ** 30 - 1 }),
      (pattern, name, m1, m2) => {
        assert.equal(fnmatch(flip(name, m1), flip(pattern, m2)), fnmatch(name, pattern));
      },
    ),
  );
});

Deno.test("fnmatch: a pattern without wildcards matches only itself, case-folded (property)", () => {
  fc.assert(
    fc.property(
      fc.stringMatching(/^[a-z0-9\/._-]{1,12}$/),
      fc.stringMatching(/^[a-z0-9\/._-]{0,12}$/),
      (pattern, name) => {
        assert.equal(hasWildcard(pattern), false);
        assert.equal(fnmatchCase(name, pattern), name === pattern);
        assert.ok(fnmatch(pattern.toUpperCase(), pattern));
      },
    ),
  );
});

Deno.test("protectedMatch: a literal covers itself and all descendants (property)", () => {
  const seg = fc.stringMatching(/^[a-zA-Z0-9_.-]{1,6}$/).filter((s) => s !== "." && s !== "..");
  fc.assert(
    fc.property(
      fc.array(seg, { minLength: 1, maxLength: 3 }),
      fc.array(seg, { maxLength: 3 }),
      fc.boolean(),
      (base, below, trailingSlash) => {
        const literal = base.join("/") + (trailingSlash ? "/" : "");
        const path = [...base, ...below].join("/");
        assert.ok(protectedMatch(path, [literal]), `${literal} should cover ${path}`);
        assert.ok(protectedMatch(path.toUpperCase(), [literal.toLowerCase()]));
        // A sibling that only shares a prefix is not covered.
        assert.equal(protectedMatch(base.join("/") + "x", [base.join("/")]), false);
      },
    ),
  );
});

Deno.test("protectedMatch: wildcard patterns match paths and, failing safe, what is below them", () => {
  assert.ok(protectedMatch("keys/prod.pem", ["*.pem"]));
  assert.ok(protectedMatch("build1/out/x", ["build?"]));
  assert.equal(protectedMatch("src/app.ts", ["*.pem", "secrets"]), false);
  assert.equal(protectedMatch("secretsx/a", ["secrets"]), false);
  assert.equal(protectedMatch("anything", [""]), false, "an empty pattern protects nothing");
});
