/**
 * The run's private TMPDIR is removed once the command is done with it, overlapped with the
 * second snapshot's `git status` (lib/acts/run_act.ts), through the real CLI, unconfined:
 *
 * - a command that fills its TMPDIR (files, a nested directory, one left at mode 0500): the run
 *   completes with nothing undeclared, the directory is gone when `run` returns, and the ledger
 *   verifies;
 * - a TMPDIR the operator set inside the project: the directory is removed only after the second
 *   snapshot, which sees what the command left there (an undeclared write, exit 3), as before.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  exists,
  jsonOut,
  q,
  shScript,
  withWorld,
  workerBrief,
  type World,
  type WorldPaths,
} from "./_run_helpers.ts";

/** Fills $TMPDIR and writes its path to the scratch dir, so the test finds it afterwards. */
const FILL = (p: WorldPaths) =>
  shScript(
    [
      `printf '%s' "$TMPDIR" > ${q(join(p.scratch, "tmpdir"))}`,
      'mkdir -p "$TMPDIR/a/b"',
      'echo x > "$TMPDIR/a/b/f"',
      'echo y > "$TMPDIR/top"',
      'chmod 500 "$TMPDIR/a/b"',
    ].join("\n"),
  );

const WORLD = {
  brief: (p: WorldPaths) =>
    workerBrief(p, [{ prefix: [join(p.scripts, "fill")] }], {
      top: { allow_unconfined_runs: true },
    }),
  scripts: { fill: FILL },
};

function tmpdirOf(w: World): string {
  return Deno.readTextFileSync(join(w.scratch, "tmpdir"));
}

Deno.test("run: the private TMPDIR a command filled is gone when run returns; nothing of it is a write", async () => {
  await withWorld("tmpdir-gone", WORLD, async (w) => {
    const r = await w.run({ argv: [join(w.scripts, "fill")] }, {
      flags: ["--unconfined", "--json"],
    });
    assert.equal(r.code, 0, r.stderr);
    const out = jsonOut(r);
    assert.deepEqual(out.undeclared_writes, []);
    const tmp = tmpdirOf(w);
    assert.ok(tmp.startsWith(`${w.tmp}/agentteams-run-`), tmp);
    assert.equal(exists(tmp), false, `${tmp} is left behind`);
    assert.deepEqual([...Deno.readDirSync(w.tmp)].map((e) => e.name), []);
    assert.deepEqual(w.rows().slice(r.rowsBefore).map((x) => x.action), [
      "run-request-start",
      "run-request",
    ]);
    await w.verifyOk();
  });
});

Deno.test("run: a TMPDIR inside the project is removed after the second snapshot, which sees what the command left there", async () => {
  await withWorld("tmpdir-inside", WORLD, async (w) => {
    const inside = join(w.project, "src", "tmp");
    Deno.mkdirSync(inside);
    const r = await w.run({ argv: [join(w.scripts, "fill")] }, {
      flags: ["--unconfined", "--json"],
      env: { TMPDIR: inside },
    });
    assert.equal(r.code, 3, r.stdout + r.stderr);
    const tmp = tmpdirOf(w);
    assert.ok(tmp.startsWith(`${inside}/agentteams-run-`), tmp);
    const rel = tmp.slice(w.project.length + 1);
    const result = jsonOut(r).result as { undeclared_writes: string[] };
    assert.deepEqual(result.undeclared_writes, [`${rel}/a/b/f`, `${rel}/top`]);
    assert.equal(exists(tmp), false, `${tmp} is left behind`);
    const rows = w.rows().slice(r.rowsBefore);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.deepEqual(rows[1].undeclared_writes, [`${rel}/a/b/f`, `${rel}/top`]);
  });
});
