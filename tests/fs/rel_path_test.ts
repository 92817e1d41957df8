/** The one rule for project-relative paths (lib/fs/rel_path.ts), table and property. */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { isPlainRel, normalizeRel, relPathProblem, segmentProblem } from "../../lib/fs/rel_path.ts";

Deno.test("relPathProblem: each problem, in order", () => {
  const cases: [string, string | null][] = [
    ["", "empty"],
    ["a\ud800", "surrogate"],
    ["a\\b", "char"],
    ["a\0b", "char"],
    ["a\u200bb", "char"], // a zero-width space
    ["docs/\u202egnp.exe", "char"], // a right-to-left override
    ["/etc", "absolute"],
    ["~/x", "home"],
    ["~x", "home"],
    ["src/a.ts", null],
    ["./src", null], // a `.` segment is segmentProblem's business
  ];
  for (const [value, want] of cases) {
    assert.equal(relPathProblem(value), want, JSON.stringify(value));
  }
});

Deno.test("segmentProblem: a .. anywhere first, then . and empty", () => {
  assert.equal(segmentProblem(["a", ".", ".."]), "parent");
  assert.equal(segmentProblem(["a", "."]), "dot");
  assert.equal(segmentProblem(["a", ""]), "empty");
  assert.equal(segmentProblem(["a..", "..b", "..."]), null);
});

Deno.test("normalizeRel: the lenient form", () => {
  assert.deepEqual(normalizeRel("./a//b/"), { ok: true, rel: "a/b", dir: true });
  assert.deepEqual(normalizeRel(""), { ok: true, rel: ".", dir: false });
  assert.deepEqual(normalizeRel("./"), { ok: true, rel: ".", dir: false });
  assert.deepEqual(normalizeRel("a/../b"), { ok: false, problem: "parent" });
  assert.deepEqual(normalizeRel("/a"), { ok: false, problem: "absolute" });
  assert.deepEqual(normalizeRel("a\\b"), { ok: false, problem: "char" });
});

Deno.test("property: a normalized path is plain, never leaves the project, and normalizes to itself", () => {
  const seg = fc.constantFrom("a", "b.txt", ".", "", "..", ".git", "x y", "~", "\\", "\u0085");
  fc.assert(
    fc.property(fc.array(seg, { minLength: 1, maxLength: 6 }), fc.boolean(), (segs, slash) => {
      const value = segs.join("/") + (slash ? "/" : "");
      const n = normalizeRel(value);
      if (!n.ok) return;
      assert.ok(!n.rel.split("/").includes(".."), value);
      if (n.rel !== ".") {
        assert.ok(isPlainRel(n.rel), `${JSON.stringify(value)} -> ${n.rel}`);
        assert.deepEqual(normalizeRel(n.rel), { ok: true, rel: n.rel, dir: false });
      }
      // Whatever was refused for a character or a parent segment was in the input.
      assert.ok(!segs.includes(".."), value);
    }),
  );
});
