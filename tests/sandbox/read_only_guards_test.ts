/** The walk that gathers what exists of each guarded path (`guardFacts`), on real files. */

import { guardFacts } from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";

Deno.test("guards (live): missing, symlinked and file-blocked paths; each component lstat'ed once", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-guards-" }));
  try {
    Deno.mkdirSync(`${base}/build/keys`, { recursive: true });
    Deno.mkdirSync(`${base}/outside`);
    Deno.symlinkSync(`${base}/outside`, `${base}/build/link`);
    Deno.writeTextFileSync(`${base}/build/file`, "x");
    const paths = [
      `${base}/build/keys`,
      `${base}/build/locked/deep`,
      `${base}/build/link/.git`,
      `${base}/build/file/.git/hooks`,
    ];
    const real = Deno.lstatSync;
    const calls: string[] = [];
    let facts;
    try {
      Deno.lstatSync = (p: string | URL) => {
        calls.push(String(p));
        return real(p);
      };
      facts = guardFacts(paths);
    } finally {
      Deno.lstatSync = real;
    }
    assert.deepEqual(facts, [
      { path: `${base}/build/keys`, firstMissing: null, symlinkAt: null },
      {
        path: `${base}/build/locked/deep`,
        firstMissing: `${base}/build/locked`,
        symlinkAt: null,
      },
      { path: `${base}/build/link/.git`, firstMissing: null, symlinkAt: `${base}/build/link` },
      // A file where a directory was expected: the file itself is what must stay read-only.
      { path: `${base}/build/file`, firstMissing: null, symlinkAt: null },
    ]);
    assert.deepEqual(calls.length, new Set(calls).size, `repeated lstat: ${calls.join(" ")}`);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});
