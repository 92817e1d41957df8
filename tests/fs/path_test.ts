import assert from "node:assert/strict";
import * as nodePath from "node:path";
import fc from "../_helpers/fc.ts";
import {
  basename,
  dirname,
  isAbsolute,
  join,
  normalize,
  relative,
  resolve,
} from "../../lib/fs/path.ts";

const seg = fc.constantFrom("", ".", "..", "a", "b", "c.txt", ".git", "..x", "x..", "~", "é");
const pathArb = fc.tuple(fc.boolean(), fc.array(seg, { maxLength: 7 }), fc.boolean()).map(
  ([abs, segs, trailing]) => (abs ? "/" : "") + segs.join("/") + (trailing ? "/" : ""),
);
const anyPath = fc.oneof(pathArb, fc.string({ maxLength: 12 }));

Deno.test("path: normalize, dirname, basename, isAbsolute agree with node:path", () => {
  fc.assert(
    fc.property(anyPath, (p) => {
      assert.equal(normalize(p), nodePath.posix.normalize(p), `normalize(${JSON.stringify(p)})`);
      assert.equal(dirname(p), nodePath.posix.dirname(p), `dirname(${JSON.stringify(p)})`);
      assert.equal(basename(p), nodePath.posix.basename(p), `basename(${JSON.stringify(p)})`);
      assert.equal(isAbsolute(p), nodePath.posix.isAbsolute(p));
    }),
    { numRuns: 5000 },
  );
});

Deno.test("path: join, resolve, relative agree with node:path", () => {
  fc.assert(
    fc.property(fc.array(anyPath, { maxLength: 4 }), anyPath, anyPath, (parts, a, b) => {
      assert.equal(join(...parts), nodePath.posix.join(...parts), `join ${JSON.stringify(parts)}`);
      assert.equal(resolve(...parts), nodePath.posix.resolve(...parts));
      assert.equal(relative(a, b), nodePath.posix.relative(a, b), `relative(${a}, ${b})`);
    }),
    { numRuns: 5000 },
  );
});

Deno.test("path: examples", () => {
  assert.equal(join("/a", "b/../c"), "/a/c");
  assert.equal(dirname("/"), "/");
  assert.equal(dirname("//a"), "//");
  assert.equal(dirname("/a//b"), "/a/");
  assert.equal(basename("/"), "");
  assert.equal(relative("/a/b", "/a/b"), "");
  assert.equal(resolve(), Deno.cwd());
  assert.equal(normalize("a/.."), ".");
  assert.equal(normalize("a/../"), "./");
});
