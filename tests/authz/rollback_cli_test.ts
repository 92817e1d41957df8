/**
 * Triad roll-backs through the real CLI (issue 22): a decision log or waiver ledger that no
 * longer extends what the operator's last write left is refused by the gate and by the operator's
 * own writers (`decision sign`, `waiver issue`: nothing written, so a write never makes a cut
 * file the operator's); `decision accept` / `waiver accept` take a hand-edited file that verifies,
 * and accept nothing that does not. And the runner's pins of `references/` (unit): the roster, a
 * verify key added, swapped for a link, or renamed, each `RUNNER_PIN_CHANGED`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { runCli, type Sandbox, sandbox, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { decisionSignArgs, waiverIssueArgs } from "./_fixtures.ts";
import { QueueError } from "../../lib/errors.ts";
import { checkPins, pinPaths, readPins } from "../../lib/queue/pins.ts";

const KEYS = { AGENTTEAMS_DECISION_SIGNING_KEY: "dk", AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" };

async function withKeys(
  prefix: string,
  fn: (sb: Sandbox, env: Record<string, string>) => Promise<void>,
) {
  const sb = await sandbox(prefix);
  try {
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    await fn(sb, { ...sb.env, ...KEYS, AGENTTEAMS_BROAD_OK: "1" });
  } finally {
    await sb.dispose();
  }
}

Deno.test("a cut decision log: the gate and decision sign refuse (nothing written); decision accept takes it only when it verifies", async () => {
  await withKeys("rollback-decisions", async (sb, env) => {
    const P = ["--project", sb.project];
    const log = join(sb.project, "references", "security-decisions.log.csv");
    assert.equal((await runCli(decisionSignArgs(sb.project, "delete:a", "PASS"), { env })).code, 0);
    const kept = await Deno.readTextFile(log);
    const halt = await runCli(decisionSignArgs(sb.project, "delete:b", "HALT"), { env });
    assert.equal(halt.code, 0, halt.stderr);
    // The HALT cut from the tail (the chain holds).
    await Deno.writeTextFile(log, kept);
    const before = await snapshotTree(sb.dir);
    const gate = assertCliRefused(
      await runCli(["gate", "delete:b", ...P], { env }),
      "gate",
      "LEDGER_ROLLED_BACK",
    );
    assert.match(gate.reason, /security-decisions\.log\.csv no longer extends .*shorter/);
    assert.match(gate.reason, /agentteams decision accept/);
    const sign = await runCli(decisionSignArgs(sb.project, "delete:c", "PASS"), { env });
    assertCliRefused(sign, "decision sign", "LEDGER_ROLLED_BACK");
    assertSameTree(before, await snapshotTree(sb.dir), "refused: nothing written");

    // A log that does not verify is not accepted (its index stays as it was).
    const broken = kept.replace("delete:a", "delete:z");
    await Deno.writeTextFile(log, broken);
    const snap = await snapshotTree(sb.dir);
    const no = await runCli(["decision", "accept", ...P], { env });
    assert.equal(no.code, 1, no.stdout + no.stderr);
    assert.match(no.stdout, /not accepted/);
    assertSameTree(snap, await snapshotTree(sb.dir), "nothing accepted");

    // The cut log, which verifies, accepted by the operator: the gate reads it again.
    await Deno.writeTextFile(log, kept);
    const yes = await runCli(["decision", "accept", ...P], { env });
    assert.equal(yes.code, 0, yes.stderr);
    assert.match(yes.stdout, /accepted: .*security-decisions\.log\.csv/);
    assert.equal((await runCli(["gate", "delete:b", ...P], { env })).code, 1, "no clearance");
    assert.equal((await runCli(["gate", "delete:a", ...P], { env })).code, 0, "the PASS holds");
    assert.equal((await runCli(decisionSignArgs(sb.project, "delete:c", "PASS"), { env })).code, 0);
  });
});

Deno.test("a waiver ledger put back: the gate and waiver issue refuse; waiver accept takes it", async () => {
  await withKeys("rollback-waivers", async (sb, env) => {
    const P = ["--project", sb.project];
    const file = join(sb.project, "references", "security-waivers.log.csv");
    const issue = (id: string) =>
      runCli(
        waiverIssueArgs(sb.project, {
          id,
          action: `deploy:${id}`,
          maxUses: 1,
          ticket: "T",
          reason: "r",
        }),
        {
          env,
        },
      );
    assert.equal((await issue("W-1")).code, 0);
    const kept = await Deno.readTextFile(file);
    assert.equal((await issue("W-2")).code, 0);
    await Deno.writeTextFile(file, kept);
    const before = await snapshotTree(sb.dir);
    const g = assertCliRefused(
      await runCli(["gate", "deploy:W-1", ...P], { env }),
      "gate",
      "LEDGER_ROLLED_BACK",
    );
    assert.match(g.reason, /security-waivers\.log\.csv no longer extends/);
    assert.match(g.reason, /agentteams waiver accept/);
    assertCliRefused(await issue("W-3"), "waiver issue", "LEDGER_ROLLED_BACK");
    assertSameTree(before, await snapshotTree(sb.dir), "refused: nothing written");
    const yes = await runCli(["waiver", "accept", ...P], { env });
    assert.equal(yes.code, 0, yes.stderr);
    assert.equal((await runCli(["gate", "deploy:W-1", ...P], { env })).code, 0);
  });
});

Deno.test("pins: the roster, a verify key added, linked or renamed is RUNNER_PIN_CHANGED naming references/", async () => {
  const dir = await tempDir("pins-references");
  try {
    const brief = join(dir, "agentteams.json");
    Deno.writeTextFileSync(brief, "{}");
    const refs = join(dir, "references");
    const keys = join(refs, "authorized-verify-keys");
    Deno.mkdirSync(keys, { recursive: true });
    Deno.writeTextFileSync(join(refs, "security-approvers.txt"), "security\n");
    Deno.writeTextFileSync(join(keys, "k1.pub.pem"), "key one\n");
    const paths = pinPaths(dir, brief, null);
    const at = await readPins(paths);
    checkPins(at, await readPins(paths), paths);
    const changed = async (what: string) => {
      const now = await readPins(paths);
      const e = assertRefusal(
        () => checkPins(at, now, paths),
        "RUNNER_PIN_CHANGED",
        QueueError,
      );
      assert.match(e.message, /trust roots in references\//, what);
      assert.match(e.message, /security-approvers\.txt/, what);
    };
    const restore = async () => {
      Deno.removeSync(keys, { recursive: true });
      Deno.mkdirSync(keys);
      Deno.writeTextFileSync(join(keys, "k1.pub.pem"), "key one\n");
      Deno.writeTextFileSync(join(refs, "security-approvers.txt"), "security\n");
      checkPins(at, await readPins(paths), paths);
    };
    Deno.writeTextFileSync(join(refs, "security-approvers.txt"), "security\nme\n");
    await changed("an approver added");
    await restore();
    Deno.writeTextFileSync(join(keys, "k2.pub.pem"), "key two\n");
    await changed("a key added");
    await restore();
    Deno.renameSync(join(keys, "k1.pub.pem"), join(keys, "k9.pub.pem"));
    await changed("a key renamed");
    await restore();
    const elsewhere = join(dir, "elsewhere.pem");
    Deno.writeTextFileSync(elsewhere, "key one\n");
    Deno.removeSync(join(keys, "k1.pub.pem"));
    Deno.symlinkSync(elsewhere, join(keys, "k1.pub.pem"));
    await changed("a key swapped for a link to the same bytes");
    await restore();
    Deno.removeSync(keys, { recursive: true });
    await changed("the keys folder removed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
