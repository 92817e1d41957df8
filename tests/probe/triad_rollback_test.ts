/**
 * Issue 22, Q6's open-descriptor case and Q7's rename case, which end in the same act: the
 * decision log cut back under the deny rules' nose. The session links the log to `src/d.csv`
 * (no rule names `src/`), opens the link, removes it (the log has one name again, so the
 * single-name read passes), and writes through the open descriptor: the operator's emergency stop
 * (`HALT` on `*`, the last row) is cut, and the chain, which has no row after it, holds. The log
 * no longer extends what the operator's `decision sign` left (its index): every act refuses
 * (`LEDGER_ROLLED_BACK`, naming the file and what to do), nothing written. And the trust roots a
 * serving runner read from `references/` (the roster, the verify keys) are pinned: the roster
 * edited under it (the folder renamed away and back) stops it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { ledgerRows } from "../proposals/_helpers.ts";
import {
  handRequest,
  openAs,
  resultOf,
  runnerBrief,
  startRunner,
} from "../runner/_runner_helpers.ts";

const BRIEF = JSON.stringify({
  privilege_profile: "confined",
  agent_policies: { worker: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] } },
});

Deno.test("a HALT cut out of the decision log through an open descriptor, the second name gone: every act refuses", async () => {
  const sb = await sandbox("triad-rollback");
  try {
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    await Deno.writeTextFile(join(sb.project, "agentteams.json"), BRIEF);
    await Deno.mkdir(join(sb.project, "src"));
    const P = ["--project", sb.project];
    const sign = (action: string, verdict: string) =>
      runCli(["decision", "sign", ...P, "--action", action, "--verdict", verdict, "--ed25519"], {
        env,
      });
    assert.equal((await sign("delete:src/old.txt", "PASS")).code, 0);
    // A nonce issued before the stop: without it, its run would go ahead.
    const issued = await runCli(["dispatch", "--agent", "worker", ...P], { env });
    assert.equal(issued.code, 0, issued.stderr);
    const nonce = issued.stdout.trim();
    assert.match(nonce, /^[0-9a-f]{32}$/);
    const log = join(sb.project, "references", "security-decisions.log.csv");
    const kept = await Deno.readFile(log);
    const halt = await sign("*", "HALT");
    assert.equal(halt.code, 0, halt.stderr);
    assert.match((await runCli(["dispatch", "--agent", "worker", ...P], { env })).stderr, /HALTED/);

    // The session: link, open, unlink, write.
    const other = join(sb.project, "src", "d.csv");
    await Deno.link(log, other);
    const fd = await Deno.open(other, { write: true });
    await Deno.remove(other);
    assert.equal((await Deno.lstat(log)).nlink, 1, "one name again");
    await fd.truncate(0);
    await fd.write(kept);
    fd.close();
    // What the chain sees holds: the whole read alone would lift the stop.
    assert.equal(
      (await runCli(["decision", "verify", ...P], { env })).code,
      0,
      "the cut is one no chain sees",
    );

    const artifact = join(sb.dir, "run.json");
    await Deno.writeTextFile(
      artifact,
      JSON.stringify({
        kind: "command-request",
        dispatch: nonce,
        argv: ["true"],
        purpose: "p",
      }),
    );
    // What an act would write: the project's files, the nonces issued. (A refused arrival is
    // recorded, as every refusal is: those rows are checked below.)
    const state = join(sb.project, ".agentteams");
    const before = await snapshotTree(sb.dir);
    const rows0 = (await ledgerRows(sb.project)).length;
    for (
      const [what, args] of [
        ["dispatch", ["dispatch", "--agent", "worker", ...P]],
        ["run", ["run", artifact, ...P]],
        ["gate", ["gate", "delete:src/old.txt", ...P]],
      ] as const
    ) {
      const r = await runCli([...args], { env });
      const refusal = assertCliRefused(r, what, "LEDGER_ROLLED_BACK");
      assert.match(refusal.reason, /security-decisions\.log\.csv no longer extends/, what);
      assert.match(refusal.reason, /agentteams decision accept/, what);
    }
    const after = await snapshotTree(sb.dir);
    for (const t of [before, after]) {
      for (const k of [...t.keys()]) if (k.startsWith(state + "/")) t.delete(k);
    }
    assertSameTree(before, after, "a refused act writes nothing outside its records");
    const added = (await ledgerRows(sb.project)).slice(rows0).map((r) => String(r.action));
    assert.ok(
      added.every((a) => a.endsWith("-refused") || a === "attempt"),
      `an act was recorded as done: ${added.join(", ")}`,
    );
    assert.ok(!added.includes("dispatch") && !added.includes("run-request-start"), added.join());

    // Restored from its copy, the stop stands again; an accept of the cut is the operator's.
    const restored = await runCli(["dispatch", "--agent", "worker", ...P], { env });
    assertCliRefused(restored, "dispatch", "LEDGER_ROLLED_BACK");
  } finally {
    await sb.dispose();
  }
});

Deno.test("the roster edited under a serving runner (references/ renamed away and back) stops it", async () => {
  await withWorld("triad-roster-pin", { brief: runnerBrief }, async (w) => {
    const refs = join(w.project, "references");
    await Deno.mkdir(refs, { recursive: true });
    await Deno.writeTextFile(join(refs, "security-approvers.txt"), "security\n");
    const runner = await startRunner(w);
    try {
      const first = await handRequest(w, { kind: "verify-ledger" });
      assert.equal((await openAs(w, first, await resultOf(w, first.id))).body.ok, true);
      // The session: references/ renamed away, an approver added, the folder put back.
      await Deno.rename(refs, join(w.project, ".r"));
      await Deno.writeTextFile(join(w.project, ".r", "security-approvers.txt"), "security\nme\n");
      await Deno.rename(join(w.project, ".r"), refs);
      const second = await handRequest(w, { kind: "verify-ledger" });
      const how = await Promise.race([
        runner.exited.then(() => "stopped"),
        resultOf(w, second.id).then(() => "served", () => "no result"),
      ]);
      assert.equal(how, "stopped", "the runner served on under the changed roster");
      const s = await runner.exited;
      const r = { code: s.code, signal: s.signal, stdout: "", stderr: runner.stderr() };
      const refusal = assertCliRefused(r, "serve", "RUNNER_PIN_CHANGED", 1);
      assert.match(refusal.reason, /trust roots in references\/ .*security-approvers\.txt/);
      assert.ok(!w.rows().some((x) => x.id === second.id), "the request was acted on");
    } finally {
      await runner.kill9();
    }
  });
});
