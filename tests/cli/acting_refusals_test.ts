/**
 * Refusals of the acting commands' CLI layer (lib/cli/policy_ctx.ts, lib/cli/acting_needs.ts),
 * tried as real `agentteams` processes on a real git project: the refusal code, exactly one
 * `run-request-refused` or `apply-proposal-refused` row (agent `?`; none on a dry run), the
 * command never ran, no use spent, and every byte outside the ledger state unchanged.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, type RunResult, sha256, snapshotTree, type TreeEntry } from "../_helpers/mod.ts";
import {
  assertRunRefused,
  exists,
  newRows,
  readRows,
  useCount,
  withWorld,
  workerBrief,
  type World,
} from "../e2e/_run_helpers.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";

const BRIEF = {
  brief: (p: Parameters<typeof workerBrief>[0]) =>
    workerBrief(p, [{ prefix: ["/usr/bin/touch"] }], { top: { allow_unconfined_runs: true } }),
};

/** Every object of the world except the project's ledger state, which a refusal row changes. */
async function outsideState(w: World): Promise<Map<string, TreeEntry>> {
  const state = join(w.project, ".agentteams");
  const all = await snapshotTree(w.dir);
  for (const k of [...all.keys()]) if (k === state || k.startsWith(state + "/")) all.delete(k);
  return all;
}

/** `agentteams <args>` with the world's environment, killed after 30 s (a hang fails the test). */
function cli(w: World, args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return runCli(args, { env: { ...w.env, ...env }, cwd: w.dir, hangGuardMs: 30_000 });
}

Deno.test("run --unconfined with a FIFO as the artifact: ARTIFACT_INVALID at once (the permission needs read it through the safe read, not blocking on the FIFO), one refusal row, nothing written", async () => {
  await withWorld("cli-fifo", BRIEF, async (w) => {
    const fifo = join(w.scratch, "request.json");
    const mk = new Deno.Command("/usr/bin/mkfifo", { args: ["-m", "600", fifo] }).outputSync();
    assert.ok(mk.success, "mkfifo");
    await w.sharedNonce();
    const uses = useCount(w.project);

    // `permissions run` computes the same needs: it answers, without the request's program.
    const ledgerBefore = readRows(w.project);
    const whole = await snapshotTree(w.dir);
    const p = await cli(w, [
      "permissions",
      "run",
      "--",
      fifo,
      "--unconfined",
      "--project",
      w.project,
    ]);
    assert.equal(p.signal, null, "permissions run blocked on the FIFO");
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stdout, /--allow-run=\S*\/bwrap\S*/);
    assert.doesNotMatch(p.stdout, /touch/);
    assertSameTree(whole, await snapshotTree(w.dir), "after permissions run");
    assert.deepEqual(readRows(w.project), ledgerBefore);

    const before = await outsideState(w);
    const rowsBefore = readRows(w.project).length;
    const r = await cli(w, ["run", fifo, "--unconfined", "--project", w.project]);
    assert.equal(r.signal, null, "run blocked on the FIFO");
    const refusal = await assertRunRefused(
      w,
      { ...r, rowsBefore, file: fifo },
      "ARTIFACT_INVALID",
      {
        agent: "?",
      },
    );
    assert.match(refusal.reason, /regular file|FIFO/i);
    assertSameTree(before, await outsideState(w), "after run");
    assert.equal(useCount(w.project), uses, "a refusal must spend no use");
  });
});

Deno.test("run with a relative HOME: NO_KEY once the key is loaded, recorded with agent ?; the command never runs", async () => {
  await withWorld("cli-home", BRIEF, async (w) => {
    const marker = join(w.project, "src", "ran");
    const nonce = await w.sharedNonce();
    const file = await w.artifact({ argv: ["/usr/bin/touch", "src/ran"] }, nonce);
    const uses = useCount(w.project);
    const before = await outsideState(w);
    const rowsBefore = readRows(w.project).length;
    const r = await cli(w, ["run", file, "--project", w.project], { HOME: "home" });
    const refusal = await assertRunRefused(w, { ...r, rowsBefore, file }, "NO_KEY", {
      agent: "?",
      absent: [marker],
    });
    assert.match(refusal.reason, /HOME must be an absolute path/);
    assertSameTree(before, await outsideState(w), "after run");
    assert.equal(exists(marker), false);
    assert.equal(useCount(w.project), uses, "a refusal must spend no use");
  });
});

/** The worker's brief without `allow_unconfined_runs`: `--unconfined` must be refused. */
const NO_OPT_OUT = {
  brief: (p: Parameters<typeof workerBrief>[0]) => workerBrief(p, [{ prefix: ["/usr/bin/touch"] }]),
};

/** A change proposal for the world's `src/a.txt` (`hello\n`), written outside the project. */
async function proposal(w: World, nonce: string): Promise<string> {
  const file = join(w.scratch, "proposal.json");
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      kind: "change-proposal",
      dispatch: nonce,
      path: "src/a.txt",
      base_sha256: sha256("hello\n"),
      content: "pwned\n",
      rationale: "r",
    }),
  );
  return file;
}

Deno.test("apply --unconfined without allow_unconfined_runs: UNCONFINED_NOT_ALLOWED, one apply-proposal-refused row (agent ?), the target unchanged, no use spent", async () => {
  await withWorld("cli-apply-noopt", NO_OPT_OUT, async (w) => {
    const target = join(w.project, "src", "a.txt");
    const file = await proposal(w, await w.sharedNonce());
    const uses = useCount(w.project);
    const before = await outsideState(w);
    const rowsBefore = readRows(w.project).length;
    const r = await cli(w, ["apply", file, "--unconfined", "--project", w.project]);
    assertCliRefused(r, "apply", "UNCONFINED_NOT_ALLOWED", 1);
    const added = newRows(w, { rowsBefore });
    assert.deepEqual(
      added.map((row) => [row.action, row.agent, row.code]),
      [["apply-proposal-refused", "?", "UNCONFINED_NOT_ALLOWED"]],
    );
    assert.equal(await Deno.readTextFile(target), "hello\n", "the refused proposal was applied");
    assertSameTree(before, await outsideState(w), "after apply");
    assert.equal(useCount(w.project), uses, "a refusal must spend no use");
    await w.verifyOk();
  });
});

Deno.test("--dry-run: a refusal while loading the acting context (--unconfined without the opt-out) is not recorded; nothing is written", async () => {
  await withWorld("cli-dry-noopt", NO_OPT_OUT, async (w) => {
    const marker = join(w.project, "src", "ran");
    const nonce = await w.sharedNonce();
    const request = await w.artifact({ argv: ["/usr/bin/touch", "src/ran"] }, nonce);
    const change = await proposal(w, nonce);
    const whole = await snapshotTree(w.dir);
    for (
      const [command, file] of [["run", request], ["apply", change]] as const
    ) {
      const r = await cli(w, [command, file, "--dry-run", "--unconfined", "--project", w.project]);
      assertCliRefused(r, command, "UNCONFINED_NOT_ALLOWED", 1);
      assertSameTree(whole, await snapshotTree(w.dir), `after ${command} --dry-run`);
    }
    assert.equal(exists(marker), false);
  });
});
