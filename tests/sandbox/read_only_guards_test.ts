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

/**
 * The issuer's side racing a scrub of `${dir}/granted` for three seconds: the folder `flip` (a
 * path under `dir`) is the real one holding a planted `plant` (its name), then a link to the
 * victim (the real one moved aside), then the real one again. The victim holds a `plant` of its
 * own with a file in it; it must survive every round.
 */
async function raceScrub(prefix: string, flip: string, plant: string): Promise<void> {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix }));
  const granted = `${dir}/granted`;
  const victim = `${dir}/victim`;
  const stop = `${dir}/stop`;
  const kept = `${victim}/${plant}/kept`;
  Deno.mkdirSync(`${dir}/${flip}/${plant}`, { recursive: true });
  Deno.mkdirSync(`${victim}/${plant}`, { recursive: true });
  Deno.writeTextFileSync(kept, "the victim's\n");
  const swapper = new Deno.Command("/usr/bin/perl", {
    args: [
      "-e",
      'my ($f, $p, $v, $s) = @ARGV; my $n = 0; until (-e $s) { mkdir "$f/$p"; ' +
      'rename $f, "$f.orig" or die; symlink $v, $f or die; unlink $f; rename "$f.orig", $f ' +
      "or die; $n++ } print $n;",
      flip,
      plant,
      victim,
      stop,
    ],
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let rounds = 0;
  let named = 0;
  try {
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      rounds++;
      const found = await scrubGrantedRoots({ readOnly: [], masks: [] }, [granted], [], new Map());
      if (found.length > 0) named++;
      assert.equal(entryKindOf(kept), "present", `removed through the link in round ${rounds}`);
    }
  } finally {
    Deno.writeTextFileSync(stop, "");
  }
  const out = await swapper.output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const swaps = Number(new TextDecoder().decode(out.stdout));
  assert.ok(swaps > rounds, `the swapper ran ${swaps} swaps in ${rounds} rounds`);
  // How often the scan meets the planted entry depends on the machine's load; enough rounds
  // must have raced a removal for the test to mean something.
  assert.ok(named >= 20, `a planted entry was found in ${named} of ${rounds} rounds`);
  assert.equal(Deno.readTextFileSync(kept), "the victim's\n");
  Deno.removeSync(dir, { recursive: true });
}

Deno.test("scrubGrantedRoots: a folder above a found entry swapped for a link back and forth by another process the whole time: nothing outside the granted root is ever removed", async () => {
  await raceScrub("at-scrub-link-", "granted/z", ".agentteams");
});

Deno.test("scrubGrantedRoots: the granted root itself swapped for a link back and forth (its parent is the issuer's): nothing outside it is ever removed", async () => {
  await raceScrub("at-scrub-root-", "granted", ".git");
});

function entryKindOf(path: string): string {
  try {
    Deno.lstatSync(path);
    return "present";
  } catch {
    return "missing";
  }
}
