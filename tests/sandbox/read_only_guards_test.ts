/** The walk that gathers what exists of each guarded path (`guardFacts`), on real files. */

import { guardFacts, scrubGrantedRoots } from "../../lib/sandbox/mod.ts";
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

Deno.test("scrubGrantedRoots: a folder above a found entry swapped for a link after the scan (while an earlier entry is removed) is not followed: the entry is named, left, and nothing outside the granted root is removed", () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-scrub-link-" }));
  const granted = `${dir}/granted`;
  const victim = `${dir}/victim`;
  Deno.mkdirSync(`${granted}/a/.git`, { recursive: true });
  Deno.mkdirSync(`${granted}/z/.agentteams`, { recursive: true });
  Deno.mkdirSync(`${victim}/.agentteams`, { recursive: true });
  Deno.writeTextFileSync(`${victim}/.agentteams/proposal-ledger.jsonl`, "the ledger\n");
  // The swap, made the moment the first entry (a/.git) is removed: z becomes a link to victim.
  const remove = Deno.removeSync;
  let swapped = false;
  Deno.removeSync = (path: string | URL, opts?: Deno.RemoveOptions) => {
    remove(path, opts);
    if (!swapped && String(path) === `${granted}/a/.git`) {
      swapped = true;
      Deno.renameSync(`${granted}/z`, `${granted}/z.orig`);
      Deno.symlinkSync(victim, `${granted}/z`);
    }
  };
  let named: string[];
  try {
    named = scrubGrantedRoots({ readOnly: [], masks: [] }, [granted], [], new Map());
  } finally {
    Deno.removeSync = remove;
  }
  assert.ok(swapped, "the swap was made");
  assert.deepEqual(named, [`${granted}/a/.git`, `${granted}/z/.agentteams`]);
  assert.equal(entryKindOf(`${granted}/a/.git`), "missing", "the first entry was removed");
  assert.equal(
    Deno.readTextFileSync(`${victim}/.agentteams/proposal-ledger.jsonl`),
    "the ledger\n",
    "removed through the link",
  );
  assert.ok(Deno.lstatSync(`${granted}/z.orig/.agentteams`).isDirectory);
  Deno.removeSync(dir, { recursive: true });
});

function entryKindOf(path: string): string {
  try {
    Deno.lstatSync(path);
    return "present";
  } catch {
    return "missing";
  }
}
