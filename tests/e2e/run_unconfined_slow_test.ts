/**
 * The undeclared-write check's view of the control plane, end to end but in process: under
 * bwrap a command cannot touch git's hooks, config or info, nor the ledger (see
 * run_undeclared_slow_test.ts), so these call `runRequest` directly with the unconfined opt-out
 * backend (`allow_unconfined_runs: true` in the brief), where only the before/after snapshot
 * stands between the command and the control plane. Real git repositories, a real key made by
 * `agentteams keys init`, nonces from `agentteams dispatch`, real child processes, and
 * `agentteams ledger verify` on the result. (The calls never change the process's cwd.)
 *
 * Covered: a hook planted in `.git/hooks`, `.git/config` edited, `.git/info/exclude` edited, a
 * hook planted in the hooks dir shared through a linked worktree (reported by absolute path),
 * the ledger deleted and the ledger head deleted (`LEDGER_TAMPERED`: the `run-request-start` row
 * is left without a completion row), and a `setsid` grandchild holding the pipes, which the
 * runner itself kills (`survivors_killed: true`). Also through the CLI: `--unconfined` with the
 * brief's opt-out catches a planted hook the same way, and is refused without the opt-out; without
 * `--unconfined` a brief's opt-out does not unconfine a run while bwrap works.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  AgentTeamsError,
  LedgerError,
  RequestError,
  UndeclaredWritesError,
} from "../../lib/errors.ts";
import type { RunRequestResult } from "../../lib/requests/request.ts";
import type { Backend } from "../../lib/sandbox/backend_choice.ts";
import {
  assertRunRefused,
  exists,
  GIT,
  gitEnv,
  type InProcessOutcome,
  type JsonObject,
  q,
  readRows,
  type Row,
  runUnconfinedInProcess,
  sh,
  shScript,
  useCount,
  withWorld,
  workerBrief,
  type World,
  type WorldPaths,
} from "./_run_helpers.ts";
import { awaitEnd } from "../_helpers/procs.ts";

const SCRIPT_NAMES = [
  "plant-hook",
  "edit-config",
  "edit-exclude",
  "plant-shared-hook",
  "delete-ledger",
  "delete-head",
  "detach-holding-pipes",
] as const;

/** Where the linked worktree of the world's repository is added. */
function linkedRoot(p: WorldPaths): string {
  return join(p.dir, "linked");
}

// Well past the runner's 2-second drain bound, after which it kills the pipe holders: on a loaded
// machine the kill can come seconds after the bound, and a grandchild that acts first fails the test.
const CHILD_DELAY_S = 10;
/** Rounds of the setsid scenario (the child's exit races the runner's look at its pipes). */
const SETSID_ROUNDS = 6;

function scripts(p: WorldPaths): Record<string, string> {
  const saved = join(p.scratch, "ledger-before-deletion.jsonl");
  return {
    "plant-hook": shScript(
      "printf '#!/bin/sh\\necho owned\\n' > .git/hooks/pre-commit\nchmod +x .git/hooks/pre-commit",
    ),
    "edit-config": shScript("printf '[core]\\n\\tfsmonitor = /tmp/owned\\n' >> .git/config"),
    "edit-exclude": shScript("printf 'src/hidden.txt\\n' >> .git/info/exclude"),
    // Run in the linked worktree: the hooks dir is the main repository's, outside the project.
    "plant-shared-hook": shScript(
      "printf '#!/bin/sh\\n' > \"$(git rev-parse --git-common-dir)/hooks/post-checkout\"",
    ),
    // Keeps a copy of the ledger as it was during the run (its start row is last), then deletes it.
    "delete-ledger": shScript(
      `cp .agentteams/proposal-ledger.jsonl ${q(saved)}\nrm .agentteams/proposal-ledger.jsonl`,
    ),
    "delete-head": shScript("rm .agentteams/proposal-ledger.head"),
    // Its argument (a digit) names the marker the grandchild would write.
    "detach-holding-pipes": shScript(
      [
        `setsid sh -c ${
          q(`sleep ${CHILD_DELAY_S}; touch ${q(join(p.scratch, "grandchild-ran-"))}"$1"`)
        } sh "$1" &`,
        "echo started",
        "exit 0",
      ].join("\n"),
    ),
  };
}

function brief(p: WorldPaths) {
  return workerBrief(
    p,
    [
      ...SCRIPT_NAMES.map((n): JsonObject => ({
        prefix: [join(p.scripts, n)],
        args: n === "detach-holding-pipes" ? ["[0-9]"] : [],
      })),
      // Pinned to a directory the test turns into a symlink leading out of the project.
      { prefix: ["/usr/bin/touch"], args: ["[a-z]+\\.txt"], cwd: "src/link" },
    ],
    { top: { allow_unconfined_runs: true } },
  );
}

const WORLD = {
  brief,
  scripts: Object.fromEntries(
    SCRIPT_NAMES.map((n) => [n, (p: WorldPaths) => scripts(p)[n]]),
  ),
};

/** Runs `runRequest` in process, unconfined, on `root` (default: the world's project). */
function runInProcess(
  w: World,
  script: (typeof SCRIPT_NAMES)[number] | { argv: string[]; cwd?: string },
  opts: { root?: string; backend?: () => Promise<Backend> } = {},
): Promise<InProcessOutcome> {
  const fields = typeof script === "string"
    ? { argv: [join(w.scripts, script)], purpose: `in-process ${script}` }
    : { argv: script.argv, purpose: "in-process", ...(script.cwd ? { cwd: script.cwd } : {}) };
  return runUnconfinedInProcess(w, fields, opts);
}

/** The `.result` an exit-3 error carries. */
function resultOf(e: AgentTeamsError | undefined): RunRequestResult {
  assert.ok(e instanceof UndeclaredWritesError, `UndeclaredWritesError expected, got ${e}`);
  assert.equal(e.exitCode, 3);
  assert.equal(e.code, "UNDECLARED_WRITES");
  return (e as unknown as { result: RunRequestResult }).result;
}

/** Exit 3 with exactly `expected`, and a `run-request` row (unconfined) with them. */
async function assertCaught(
  w: World,
  out: { error?: AgentTeamsError; rowsBefore: number },
  expected: string[],
  root = w.project,
): Promise<void> {
  const result = resultOf(out.error);
  assert.equal(result.ran, true);
  assert.equal(result.exit, 0, result.stderr);
  assert.equal(result.confined, false);
  assert.equal(result.backend, "unconfined-opt-out");
  assert.deepEqual(result.undeclared_writes, expected);
  const rows = readRows(root).slice(out.rowsBefore);
  assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
  assert.equal(rows[0].confined, false);
  assert.equal(rows[0].backend, "unconfined-opt-out");
  assert.equal(rows[1].confined, false);
  assert.equal(rows[1].backend, "unconfined-opt-out");
  assert.equal(rows[1].exit, 0);
  assert.deepEqual(rows[1].undeclared_writes, expected);
  const v = await w.cli(["ledger", "verify", "--project", root, "--json"]);
  assert.equal(v.code, 0, v.stdout + v.stderr);
}

Deno.test("in process, unconfined: a hook planted in .git/hooks is caught (exit 3, path reported)", async () => {
  await withWorld("u-hook", WORLD, async (w) => {
    const out = await runInProcess(w, "plant-hook");
    await assertCaught(w, out, [".git/hooks/pre-commit"]);
    assert.ok(exists(join(w.project, ".git/hooks/pre-commit")), "the scenario held");
  });
});

Deno.test("in process, unconfined: editing .git/config is caught", async () => {
  await withWorld("u-config", WORLD, async (w) => {
    const out = await runInProcess(w, "edit-config");
    await assertCaught(w, out, [".git/config"]);
  });
});

Deno.test("in process, unconfined: editing .git/info/exclude is caught", async () => {
  await withWorld("u-exclude", WORLD, async (w) => {
    const out = await runInProcess(w, "edit-exclude");
    await assertCaught(w, out, [".git/info/exclude"]);
  });
});

Deno.test("in process, unconfined: a hook planted in the hooks dir a linked worktree shares is caught (absolute path)", async () => {
  await withWorld("u-worktree", WORLD, async (w) => {
    const linked = linkedRoot(w);
    await sh(w.project, GIT, ["worktree", "add", "-q", "-b", "linked", linked], gitEnv(w.home));
    const hook = join(w.project, ".git/hooks/post-checkout");
    assert.equal(exists(hook), false);
    const out = await runInProcess(w, "plant-shared-hook", { root: linked });
    await assertCaught(w, out, [hook], linked);
    assert.ok(exists(hook), "the scenario held: the shared hook was planted");
  });
});

Deno.test("in process, unconfined: an unexpected failure before the command is recorded as INTERNAL; nothing ran", async () => {
  await withWorld("u-internal", WORLD, async (w) => {
    const before = readRows(w.project).length;
    const boom = new Error("the backend probe broke");
    await assert.rejects(
      runInProcess(w, "plant-hook", { backend: () => Promise.reject(boom) }),
      (e: unknown) => e === boom,
    );
    assert.equal(exists(join(w.project, ".git/hooks/pre-commit")), false, "the command ran");
    const rows = readRows(w.project).slice(before).filter((r) => r.action !== "issue-dispatch");
    assert.deepEqual(rows.map((r) => [r.action, r.agent, r.code]), [
      ["run-request-refused", "worker", "INTERNAL"],
    ]);
    assert.match(String(rows[0].reason), /the backend probe broke/);
    assert.equal(useCount(w.project), 0, "a use was counted");
  });
});

function lastRun(rows: Row[]): Row[] {
  return rows.filter((r) => typeof r.action === "string" && r.action.startsWith("run-request"));
}

Deno.test("in process, unconfined: deleting the ledger is LEDGER_TAMPERED; the start row has no completion", async () => {
  await withWorld("u-ledger", WORLD, async (w) => {
    const out = await runInProcess(w, "delete-ledger");
    assert.ok(out.error instanceof LedgerError, `LedgerError expected, got ${out.error}`);
    assert.equal(out.error.code, "LEDGER_TAMPERED");
    assert.match(out.error.message, /proposal-ledger\.jsonl/);
    // Nothing more was recorded: the ledger is still gone.
    assert.equal(exists(join(w.project, ".agentteams/proposal-ledger.jsonl")), false);
    // The copy the command took during the run ends with the write-ahead start row.
    const saved = (await Deno.readTextFile(join(w.scratch, "ledger-before-deletion.jsonl")))
      .split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Row);
    assert.equal(saved.length, out.rowsBefore + 1);
    const runs = lastRun(saved);
    assert.deepEqual(runs.map((r) => r.action), ["run-request-start"]);
    assert.deepEqual(runs[0].argv, [join(w.scripts, "delete-ledger")]);
    assert.equal(runs[0].confined, false);
    assert.equal(runs[0].backend, "unconfined-opt-out");
    // And verification fails, for the operator to inspect.
    const v = await w.cli(["ledger", "verify", "--project", w.project, "--json"]);
    assert.equal(v.code, 1, v.stdout + v.stderr);
    assert.match(v.stdout, /LEDGER_MISSING/);
  });
});

Deno.test("in process, unconfined: deleting the ledger head is LEDGER_TAMPERED; start row without completion", async () => {
  await withWorld("u-head", WORLD, async (w) => {
    const out = await runInProcess(w, "delete-head");
    assert.ok(out.error instanceof LedgerError, `LedgerError expected, got ${out.error}`);
    assert.equal(out.error.code, "LEDGER_TAMPERED");
    assert.match(out.error.message, /proposal-ledger\.head/);
    const rows = readRows(w.project);
    assert.equal(rows.length, out.rowsBefore + 1, "exactly the start row was added");
    const added = rows.slice(out.rowsBefore);
    assert.deepEqual(added.map((r) => r.action), ["run-request-start"]);
    assert.deepEqual(added[0].argv, [join(w.scripts, "delete-head")]);
    assert.equal(rows.some((r) => r.action === "run-request"), false);
    assert.equal(rows.some((r) => r.action === "run-request-refused"), false);
    const v = await w.cli(["ledger", "verify", "--project", w.project, "--json"]);
    assert.equal(v.code, 1, v.stdout + v.stderr);
    assert.match(v.stdout, /HEAD_MISSING/);
  });
});

Deno.test("in process, unconfined: a setsid grandchild holding the pipes is killed by the runner (survivors_killed)", async () => {
  await withWorld("u-setsid", WORLD, async (w) => {
    // The command exits at once, so it sometimes exits before the runner reads which pipes it
    // holds: several rounds, each grandchild with its own marker.
    for (let i = 0; i < SETSID_ROUNDS; i++) {
      const argv = [join(w.scripts, "detach-holding-pipes"), String(i)];
      const out = await runInProcess(w, { argv });
      assert.equal(out.error, undefined, String(out.error));
      const result = out.result;
      assert.ok(result !== undefined);
      assert.equal(result.exit, 0);
      assert.equal(result.stdout, "started\n");
      assert.equal(result.survivors_killed, true);
      const rows = readRows(w.project).slice(out.rowsBefore);
      assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
      assert.equal(rows[1].survivors_killed, true);
      assert.equal(rows[1].confined, false);
      assert.equal(rows[1].backend, "unconfined-opt-out");
    }
    // The grandchildren (their command lines name the scratch dir) have ended; one the runner did
    // not kill would have written its marker first.
    await awaitEnd(w.scratch);
    const ran = [...Deno.readDirSync(w.scratch)].map((e) => e.name)
      .filter((n) => n.startsWith("grandchild-ran-")).sort();
    assert.deepEqual(ran, [], `grandchildren the runner reported killed ran on: ${ran.join(", ")}`);
    const v = await w.cli(["ledger", "verify", "--project", w.project, "--json"]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
  });
});

Deno.test("CLI: allow_unconfined_runs does not unconfine a run while bwrap works; the hook fails in the sandbox", async () => {
  // The CLI decides the backend itself (the probe first; the brief's opt-out applies only when no
  // sandbox works): the same request is confined, and the planted hook fails inside the sandbox.
  await withWorld("u-cli", WORLD, async (w) => {
    const r = await w.run({ argv: [join(w.scripts, "plant-hook")] }, { flags: ["--json"] });
    // The script's own writes fail (read-only), so it exits 1; nothing changed, nothing to report.
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout.trim()) as Record<string, unknown>;
    assert.equal(out.exit, 1);
    assert.equal(out.confined, true);
    assert.equal(out.backend, "bwrap");
    assert.match(out.stderr as string, /Read-only file system/);
    assert.deepEqual(out.undeclared_writes, []);
    assert.equal(exists(join(w.project, ".git/hooks/pre-commit")), false);
    const rows = readRows(w.project).slice(r.rowsBefore);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.equal(rows[0].confined, true);
    assert.equal(rows[0].backend, "bwrap");
    assert.equal(rows[1].exit, 1);
    await w.verifyOk();
  });
});

Deno.test("in process, unconfined: a pinned cwd that is a symlink out of the project is CWD_NOT_ALLOWED; nothing runs outside", async () => {
  await withWorld("u-cwdlink", WORLD, async (w) => {
    await Deno.symlink(w.scratch, join(w.project, "src/link"));
    const out = await runInProcess(w, { argv: ["/usr/bin/touch", "escaped.txt"], cwd: "src/link" });
    assert.equal(
      exists(join(w.scratch, "escaped.txt")),
      false,
      "the command ran outside the project, where the write check cannot see it",
    );
    assert.ok(out.error instanceof RequestError, `RequestError expected, got ${out.error}`);
    assert.equal(out.error.code, "CWD_NOT_ALLOWED");
    const rows = readRows(w.project).slice(out.rowsBefore);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-refused"]);
    assert.equal(rows[0].code, "CWD_NOT_ALLOWED");
  });
});

Deno.test("CLI --unconfined: with allow_unconfined_runs the opt-out runs and the snapshot catches a planted hook (exit 3)", async () => {
  await withWorld("u-cli-optout", WORLD, async (w) => {
    const r = await w.run({ argv: [join(w.scripts, "plant-hook")] }, {
      flags: ["--json", "--unconfined"],
    });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /^agentteams run: ran, but: UNDECLARED_WRITES: /m);
    const out = JSON.parse(r.stdout.trim()) as Record<string, unknown>;
    const result = out.result as Record<string, unknown>;
    assert.equal(result.confined, false);
    assert.equal(result.backend, "unconfined-opt-out");
    assert.deepEqual(result.undeclared_writes, [".git/hooks/pre-commit"]);
    const rows = readRows(w.project).slice(r.rowsBefore);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.equal(rows[0].confined, false);
    assert.equal(rows[0].backend, "unconfined-opt-out");
    assert.deepEqual(rows[1].undeclared_writes, [".git/hooks/pre-commit"]);
    await w.verifyOk();
  });
});

Deno.test("CLI --unconfined without allow_unconfined_runs is UNCONFINED_NOT_ALLOWED; nothing runs", async () => {
  await withWorld("u-cli-noopt", {
    ...WORLD,
    brief: (p: WorldPaths) => {
      const b = brief(p);
      delete b.allow_unconfined_runs;
      return b;
    },
  }, async (w) => {
    const hook = join(w.project, ".git/hooks/pre-commit");
    const r = await w.run({ argv: [join(w.scripts, "plant-hook")] }, { flags: ["--unconfined"] });
    await assertRunRefused(w, r, "UNCONFINED_NOT_ALLOWED", { agent: "?", absent: [hook] });
  });
});
