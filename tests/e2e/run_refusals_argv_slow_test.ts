/**
 * `agentteams run` end to end, refusals of the argv: shells and launchers (refused by the
 * allowlist, and by the policy lint when a brief allowlists them), shell metacharacters (no shell
 * ever runs: an argument the pattern admits reaches the command verbatim, one it does not is
 * refused), wrong arity, options smuggled where a file was expected, `..` segments (refused
 * even when the pattern admits them, glued to an option too: `--output=../x`, `-o../x`), and
 * briefs whose argument patterns use a construct whose CPython meaning is not reproduced
 * (possessive quantifiers, atomic groups). Each refusal: the code on stderr (or `--json`),
 * nothing ran (the marker the command would create is absent, no `run-request-start`), one
 * `run-request-refused` row with the agent and code, and `ledger verify` passes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { snapshotTree } from "../_helpers/mod.ts";
import {
  assertEachRefused,
  assertJsonRefused,
  assertRunRefused,
  exists,
  jsonOut,
  newRows,
  withWorld,
  workerBrief,
  type WorldPaths,
  writeFileAt,
} from "./_run_helpers.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";

function brief(p: WorldPaths) {
  return workerBrief(p, [
    { prefix: ["cat"], args: ["src/[a-z]+\\.txt"] },
    { prefix: ["/usr/bin/touch"], args: ["src/[a-z]+\\.txt"], writes: ["src/*"] },
    { prefix: ["/usr/bin/sort"], args: ["src/[a-z]+\\.txt"], variadic: true },
    // Admits `;`, `$`, `(`, `)` and spaces after a literal `hi`: never a shell, so harmless.
    { prefix: ["echo"], args: ["hi[; a-z$()]*"], cwd: "src" },
    // A pattern that admits a `..` segment (the lint's probes do not hit it).
    { prefix: ["/usr/bin/touch"], args: ["src/\\.\\./src/[a-z]+\\.txt"] },
  ]);
}

Deno.test("run refuses shells and launchers the allowlist does not name (ARGV_NOT_ALLOWED)", async () => {
  await withWorld("shells", { brief }, async (w) => {
    const marker = join(w.project, "src/shell-ran.txt");
    await assertEachRefused(
      w,
      [
        ["bash", "-c", "touch src/shell-ran.txt"],
        ["/bin/bash", "-c", "touch src/shell-ran.txt"],
        ["/bin/sh", "-c", "touch src/shell-ran.txt"],
        ["sh", "-c", "touch src/shell-ran.txt"],
        ["/usr/bin/env", "bash", "-c", "touch src/shell-ran.txt"],
        ["env", "touch", "src/shell-ran.txt"],
        ["/usr/bin/xargs", "touch", "src/shell-ran.txt"],
        // The allowlisted program, wrapped in a launcher.
        ["/usr/bin/env", "cat", "src/a.txt"],
        // Case matters: the prefix is compared exactly.
        ["Cat", "src/a.txt"],
      ].map((argv) => ({ argv })),
      "ARGV_NOT_ALLOWED",
      { absent: [marker], verify: false },
    );
    const j = await w.run({ argv: ["bash", "-c", "touch src/shell-ran.txt"] }, {
      flags: ["--json"],
    });
    assertJsonRefused(j, "ARGV_NOT_ALLOWED");
    await assertRunRefused(w, j, "ARGV_NOT_ALLOWED", { agent: "worker", absent: [marker] });
  });
});

Deno.test("run: `bash -c` against a brief that allowlists only `cat` is ARGV_NOT_ALLOWED", async () => {
  await withWorld("catonly", {
    brief: (p) => workerBrief(p, [{ prefix: ["cat"], args: ["src/[a-z]+\\.txt"] }]),
  }, async (w) => {
    const marker = join(w.project, "src/shell-ran.txt");
    await assertEachRefused(
      w,
      [
        ["bash", "-c", "touch src/shell-ran.txt"],
        ["cat", "-c", "touch src/shell-ran.txt"],
        ["bash", "src/a.txt"],
      ].map((argv) => ({ argv })),
      "ARGV_NOT_ALLOWED",
      { absent: [marker] },
    );
  });
});

Deno.test("run: a brief allowlisting a shell or launcher (or a relative program) is refused at load (POLICY_LINT)", async () => {
  await withWorld("lint", { brief }, async (w) => {
    await w.sharedNonce(); // issued while the brief still loads (dispatch reads it too)
    const marker = join(w.project, "src/shell-ran.txt");
    const briefPath = join(w.project, "agentteams.jsonc");
    const variants: { prefix: string[]; argv: string[] }[] = [
      {
        prefix: ["bash", "-c", "touch src/shell-ran.txt"],
        argv: ["bash", "-c", "touch src/shell-ran.txt"],
      },
      { prefix: ["/bin/sh"], argv: ["/bin/sh"] },
      { prefix: ["/usr/bin/env"], argv: ["/usr/bin/env"] },
      { prefix: ["env", "bash"], argv: ["env", "bash"] },
      { prefix: ["bash5"], argv: ["bash5"] },
      { prefix: ["/usr/bin/xargs"], argv: ["/usr/bin/xargs"] },
      { prefix: ["bin/tool"], argv: ["bin/tool"] },
      { prefix: ["./x.sh"], argv: ["./x.sh"] },
    ];
    const refusedRows: unknown[] = [];
    for (const v of variants) {
      await writeFileAt(
        briefPath,
        JSON.stringify(workerBrief(w, [{ prefix: v.prefix }, { prefix: ["cat"] }])),
      );
      const r = await w.run({ argv: v.argv });
      const refusal = assertCliRefused(r, "run", "POLICY_LINT");
      assert.match(refusal.reason, /agent_policies\.worker\.commands\[0\]\.prefix\[0\]/);
      assert.equal(exists(marker), false);
      const added = newRows(w, r);
      assert.ok(
        added.every((row) => row.action !== "run-request-start" && row.action !== "run-request"),
        JSON.stringify(added),
      );
      refusedRows.push(...added);
    }
    await w.verifyOk();
    // Every refusal outside a dry run is recorded while a key is present (agent "?": the brief
    // failed before the nonce was resolved).
    assert.equal(
      refusedRows.length,
      variants.length,
      `one run-request-refused row per refused run expected, got ${JSON.stringify(refusedRows)}`,
    );
    for (const row of refusedRows as Record<string, unknown>[]) {
      assert.equal(row.action, "run-request-refused");
      assert.equal(row.agent, "?");
      assert.equal(row.code, "POLICY_LINT");
    }
  });
});

Deno.test("run: `;` and `$(...)` are passed verbatim when the pattern admits them (no shell), else ARGV_NOT_ALLOWED", async () => {
  await withWorld("meta", { brief }, async (w) => {
    const marker = join(w.project, "src/marker");
    for (
      const arg of [
        "hi; touch marker",
        "hi$(touch marker)",
        "hi;touch marker;",
        "hi $(touch marker) ;",
      ]
    ) {
      const r = await w.run({ argv: ["echo", arg], cwd: "src" }, { flags: ["--json"] });
      assert.equal(r.code, 0, r.stderr);
      const out = jsonOut(r);
      assert.equal(out.stdout, `${arg}\n`, "the command got the argument verbatim");
      assert.equal(exists(marker), false, `a shell ran ${JSON.stringify(arg)}`);
      const rows = newRows(w, r);
      assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
      assert.deepEqual(rows[1].argv, ["echo", arg]);
    }
    await assertEachRefused(
      w,
      [
        "hi && touch marker",
        "hi `touch marker`",
        "hi; touch /tmp/marker",
        "hi|touch marker",
        "hi\ntouch marker",
        "hi > marker",
      ].map((arg) => ({ argv: ["echo", arg], cwd: "src" })),
      "ARGV_NOT_ALLOWED",
      { absent: [marker] },
    );
    // A `..` glued to anything is refused before any pattern is tried.
    const r = await w.run({ argv: ["echo", "hi; touch ../marker"], cwd: "src" });
    await assertRunRefused(w, r, "PARENT_SEGMENT", {
      agent: "worker",
      absent: [marker, join(w.project, "marker")],
    });
  });
});

Deno.test("run: wrong arity is ARGV_NOT_ALLOWED and nothing runs", async () => {
  await withWorld("arity", { brief }, async (w) => {
    const one = join(w.project, "src/one.txt");
    const two = join(w.project, "src/two.txt");
    await assertEachRefused(
      w,
      [
        ["/usr/bin/touch"],
        ["/usr/bin/touch", "src/one.txt", "src/two.txt"],
        ["cat", "src/a.txt", "src/one.txt"],
        ["cat"],
        // A variadic entry needs at least one trailing argument.
        ["/usr/bin/sort"],
      ].map((argv) => ({ argv, expected_writes: ["src/one.txt"] })),
      "ARGV_NOT_ALLOWED",
      { absent: [one, two] },
    );
  });
});

Deno.test("run: an option smuggled where a file was expected is ARGV_NOT_ALLOWED", async () => {
  await withWorld("options", { brief }, async (w) => {
    const sorted = join(w.project, "src/sorted.txt");
    await assertEachRefused(
      w,
      [
        ["/usr/bin/sort", "-o", "src/sorted.txt", "src/a.txt"],
        ["/usr/bin/sort", "--output=src/sorted.txt", "src/a.txt"],
        ["/usr/bin/sort", "src/a.txt", "-osrc/sorted.txt"],
        ["/usr/bin/sort", "src/a.txt", "--output=src/sorted.txt"],
        ["cat", "-n"],
        ["cat", "--show-all"],
        ["/usr/bin/touch", "-d"],
        ["/usr/bin/touch", "--reference=src/a.txt"],
        ["cat", "@src/a.txt"],
        ["cat", "/etc/passwd"],
        ["cat", "~/src/a.txt"],
      ].map((argv) => ({ argv })),
      "ARGV_NOT_ALLOWED",
      { absent: [sorted] },
    );
  });
});

Deno.test("run: a `..` segment in an argument is PARENT_SEGMENT even when the pattern admits it", async () => {
  await withWorld("dotdot", { brief }, async (w) => {
    const dots = join(w.project, "src/dots.txt");
    // The positive control: the pattern does admit it (the matcher would accept it).
    assert.match("src/../src/dots.txt", /^(?:src\/\.\.\/src\/[a-z]+\.txt)$/);
    await assertEachRefused(
      w,
      [
        ["/usr/bin/touch", "src/../src/dots.txt"],
        ["cat", "src/../../etc/passwd"],
        ["cat", ".."],
        ["cat", "src\\..\\dots.txt"],
        ["/usr/bin/sort", "src/a.txt", "src/.."],
      ].map((argv) => ({ argv, expected_writes: ["src/dots.txt"] })),
      "PARENT_SEGMENT",
      { absent: [dots], verify: false },
    );
    const j = await w.run({ argv: ["/usr/bin/touch", "src/../src/dots.txt"] }, {
      flags: ["--json"],
    });
    assertJsonRefused(j, "PARENT_SEGMENT");
    await assertRunRefused(w, j, "PARENT_SEGMENT", { agent: "worker", absent: [dots] });
  });
});

Deno.test("run: a `..` glued to an option (`--output=../x`, `-o../x`) is PARENT_SEGMENT even when the pattern admits it", async () => {
  // Issue 13, hole 5. Each entry admits an option with a path glued to it; the lint's probes do
  // not hit these patterns, so only the run-time `..` rule stands between them and `../x`.
  const glued = (p: WorldPaths) =>
    workerBrief(p, [
      {
        prefix: ["/usr/bin/sort"],
        args: ["src/[a-z]+\\.txt", "--output=[./a-z]+"],
        writes: ["src/*"],
      },
      { prefix: ["/usr/bin/sort"], args: ["src/[a-z]+\\.txt", "-o[./a-z]+"], writes: ["src/*"] },
    ]);
  await withWorld("glued", { brief: glued }, async (w) => {
    // The positive control: the entries admit the shape, and the command then writes.
    const ok = await w.run({
      argv: ["/usr/bin/sort", "src/a.txt", "--output=src/sorted.txt"],
      expected_writes: ["src/sorted.txt"],
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(Deno.readTextFileSync(join(w.project, "src/sorted.txt")), "hello\n");
    assert.deepEqual(newRows(w, ok).map((r) => r.action), ["run-request-start", "run-request"]);
    for (const arg of ["--output=../x", "-o../x"]) {
      assert.match(arg, /^(?:--output=[./a-z]+|-o[./a-z]+)$/, "a pattern admits it");
    }

    // What a refused run may touch: the ledger state and the artifacts it reads; nothing else.
    const state = join(w.project, ".agentteams");
    const outsideState = async () => {
      const t = await snapshotTree(w.dir);
      for (const k of [...t.keys()]) {
        if (k === state || k.startsWith(`${state}/`) || k.startsWith(`${w.scratch}/`)) t.delete(k);
      }
      return t;
    };
    const markers = [join(w.dir, "x"), join(w.project, "x"), join(w.project, "src/x")];
    // The reference: an argv refusal of the same rule without anything glued.
    const plain = await w.run({ argv: ["/usr/bin/sort", "src/a.txt", "../x"] }, {
      flags: ["--json"],
    });
    assertJsonRefused(plain, "PARENT_SEGMENT");
    await assertRunRefused(w, plain, "PARENT_SEGMENT", { agent: "worker", absent: markers });
    const [ref] = newRows(w, plain);
    for (const arg of ["--output=../x", "-o../x", "--output=..", "-o.."]) {
      const before = await outsideState();
      const r = await w.run({
        argv: ["/usr/bin/sort", "src/a.txt", arg],
        expected_writes: ["src/x"],
      }, { flags: ["--json"] });
      const j = assertJsonRefused(r, "PARENT_SEGMENT");
      const refusal = await assertRunRefused(w, r, "PARENT_SEGMENT", {
        agent: "worker",
        absent: markers,
        exit: 1,
      });
      assert.equal(refusal.reason, `argument 2 ${JSON.stringify(arg)} has a .. path segment`);
      assert.equal((j.error as Record<string, unknown>).code, "PARENT_SEGMENT");
      assertSameTree(before, await outsideState(), `after ${arg}`);
      // Recorded exactly as the plain `../x` refusal is: the same fields, action, agent, code,
      // and the reason naming the argument.
      const [row] = newRows(w, r);
      assert.deepEqual(Object.keys(row).sort(), Object.keys(ref).sort());
      assert.equal(row.action, ref.action);
      assert.equal(row.agent, ref.agent);
      assert.equal(row.code, ref.code);
      assert.equal(row.reason, `argument 2 ${JSON.stringify(arg)} has a .. path segment`);
      assert.equal(ref.reason, `argument 2 "../x" has a .. path segment`);
    }
  });
});

Deno.test("run: a brief whose argument pattern is possessive or atomic is refused at load (POLICY_LINT), and nothing runs", async () => {
  // Issue 13: `(?:[a-z0-9]*|-rf)*+` admitted `-rf` when emulated in JavaScript, though CPython's
  // re.fullmatch does not. Such a brief never loads, so `rm -rf src` cannot run through it.
  await withWorld("possessive", { brief }, async (w) => {
    await w.sharedNonce(); // issued while the brief still loads (dispatch reads it too)
    const briefPath = join(w.project, "agentteams.jsonc");
    const src = join(w.project, "src");
    const variants: { pattern: string; construct: string }[] = [
      { pattern: "(?:[a-z0-9]*|-rf)*+", construct: 'possessive quantifier "*+"' },
      { pattern: "(?:[a-z0-9]*|-rf)++", construct: 'possessive quantifier "++"' },
      { pattern: "(?>[a-z0-9]*|-rf)*", construct: 'atomic group "(?>...)"' },
      { pattern: "(?>(?:[a-z0-9]*|-rf)*)", construct: 'atomic group "(?>...)"' },
    ];
    const refusedRows: Record<string, unknown>[] = [];
    for (const v of variants) {
      await writeFileAt(
        briefPath,
        JSON.stringify(
          workerBrief(w, [{ prefix: ["/bin/rm"], args: [v.pattern], variadic: true }]),
        ),
      );
      const before = await snapshotTree(src, join(w.project, ".git"));
      for (const flags of [[], ["--json"]]) {
        const r = await w.run({ argv: ["/bin/rm", "-rf", "src"] }, { flags });
        if (flags.length === 0) {
          const refusal = assertCliRefused(r, "run", "POLICY_LINT");
          assert.match(refusal.reason, /agent_policies\.worker\.commands\[0\]\.args\[0\]/);
          assert.ok(refusal.reason.includes(JSON.stringify(v.pattern)), refusal.reason);
          assert.ok(refusal.reason.includes(v.construct), refusal.reason);
        } else {
          assertJsonRefused(r, "POLICY_LINT");
        }
        const added = newRows(w, r);
        assert.ok(
          added.every((row) => row.action !== "run-request-start" && row.action !== "run-request"),
          JSON.stringify(added),
        );
        refusedRows.push(...added);
      }
      assertSameTree(before, await snapshotTree(src, join(w.project, ".git")), v.pattern);
      assert.equal(exists(join(src, "a.txt")), true, "rm ran");
    }
    await w.verifyOk();
    assert.equal(refusedRows.length, variants.length * 2, JSON.stringify(refusedRows));
    for (const row of refusedRows) {
      assert.equal(row.action, "run-request-refused");
      assert.equal(row.code, "POLICY_LINT");
    }
  });
});
