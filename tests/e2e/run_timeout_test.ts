/**
 * `agentteams run` end to end, timeouts and process groups under bwrap. A command (entry
 * `timeout: 1`) that sleeps past its timeout exits 3 with a `run-request-timeout` row
 * (`group_killed: true`, no `run-request` row), and the children it started in the background
 * (one in its process group, one that left it with `setsid`) never write their markers
 * afterwards. A command that exits at once while a `setsid` grandchild holds its output pipes
 * does not hang the run, and the grandchild never writes its marker either.
 *
 * No timing is asserted: each run has a generous hang guard (the test fails if it fires), and the
 * "never afterwards" checks wait for the children's end itself (no process of the world left in
 * /proc: tests/_helpers/procs.ts), then look for their markers: a child that was not killed would
 * have written its marker before it ended.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  assertJsonRefused,
  exists,
  jsonOut,
  newRows,
  q,
  shScript,
  withWorld,
  workerBrief,
  type WorldOptions,
  type WorldPaths,
} from "./_run_helpers.ts";
import { awaitEnd } from "../_helpers/procs.ts";

/** The delay before a background child writes its marker (seconds). */
const CHILD_DELAY_S = 3;

function scripts(p: WorldPaths): Record<string, string> {
  const inGroup = join(p.project, "src/orphan-in-group");
  const escaped = join(p.project, "src/orphan-setsid");
  const detached = join(p.project, "src/detached-setsid");
  return {
    // Starts two orphans (one in its group, one in a new session), then outlives its timeout.
    "sleep-past-timeout": shScript(
      [
        `( sleep ${CHILD_DELAY_S}; touch ${q(inGroup)} ) &`,
        `setsid sh -c ${q(`sleep ${CHILD_DELAY_S}; touch ${q(escaped)}`)} &`,
        "echo started",
        "sleep 60",
      ].join("\n"),
    ),
    // Exits at once; a setsid grandchild keeps the output pipes open.
    "detach-holding-pipes": shScript(
      [
        `setsid sh -c ${q(`sleep ${CHILD_DELAY_S}; touch ${q(detached)}; sleep 60`)} &`,
        "echo started",
        "exit 0",
      ].join("\n"),
    ),
  };
}

function brief(p: WorldPaths) {
  return workerBrief(p, [
    { prefix: [join(p.scripts, "sleep-past-timeout")], timeout: 1 },
    { prefix: [join(p.scripts, "detach-holding-pipes")] },
  ]);
}

/** Both tests' world: the brief and its two scripts (written outside the project). */
const WORLD: WorldOptions = {
  brief,
  scripts: {
    "sleep-past-timeout": (p) => scripts(p)["sleep-past-timeout"],
    "detach-holding-pipes": (p) => scripts(p)["detach-holding-pipes"],
  },
};

Deno.test("run timeout: exit 3, run-request-timeout row (group_killed), orphans never write afterwards", async () => {
  await withWorld("timeout", WORLD, async (w) => {
    const r = await w.run({ argv: [join(w.scripts, "sleep-past-timeout")], purpose: "sleep" }, {
      flags: ["--json"],
    });
    assert.equal(r.signal, null, "the run hung and was killed by the test's guard");
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /^agentteams run: ran, but: TIMEOUT: .*1-second timeout/m);
    const out = assertJsonRefused(r, "TIMEOUT");
    const result = out.result as Record<string, unknown>;
    assert.equal(result.ran, true);
    assert.equal(result.exit, -9);
    assert.deepEqual(result.undeclared_writes, []);

    const rows = newRows(w, r);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request-timeout"]);
    const row = rows[1];
    assert.equal(row.agent, "worker");
    assert.deepEqual(row.argv, [join(w.scripts, "sleep-past-timeout")]);
    assert.equal(row.group_killed, true);
    assert.deepEqual(row.undeclared_writes, []);
    assert.equal(row.purpose, "sleep");
    assert.equal(typeof row.duration_ms, "number");
    assert.equal("confined" in row, false, "a timeout row never carries confined");

    // Every process whose command line names this world (the script's in-group subshell, the
    // setsid shell) has ended; then their markers tell whether they were killed or ran out.
    await awaitEnd(w.dir);
    assert.equal(
      exists(join(w.project, "src/orphan-in-group")),
      false,
      "the in-group orphan ran on",
    );
    assert.equal(exists(join(w.project, "src/orphan-setsid")), false, "the setsid orphan ran on");
    await w.verifyOk();
  });
});

Deno.test("run: a setsid grandchild holding the pipes does not hang the run, and never runs on", async () => {
  await withWorld("setsid", WORLD, async (w) => {
    const r = await w.run({ argv: [join(w.scripts, "detach-holding-pipes")] }, {
      flags: ["--json"],
    });
    assert.equal(r.signal, null, "the run hung and was killed by the test's guard");
    assert.equal(r.code, 0, r.stderr);
    const out = jsonOut(r);
    assert.equal(out.exit, 0);
    assert.equal(out.stdout, "started\n");
    assert.deepEqual(out.undeclared_writes, []);
    const rows = newRows(w, r);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.equal(rows[1].confined, true);
    assert.equal(rows[1].backend, "bwrap");
    assert.equal(typeof rows[1].survivors_killed, "boolean");
    // Under bwrap the grandchild lives in the sandbox's PID namespace, which the kernel tears
    // down when the command's sandbox exits: nothing outlives the sandbox for the runner to find
    // and kill, so the row says `survivors_killed: false`. (Without a sandbox the runner kills
    // the pipe holders itself and records `true`: see run_unconfined_slow_test.ts.)
    assert.equal(rows[1].survivors_killed, false);
    assert.equal(out.survivors_killed, false);

    await awaitEnd(w.dir);
    assert.equal(exists(join(w.project, "src/detached-setsid")), false, "the grandchild ran on");
    await w.verifyOk();
  });
});
