/**
 * Deletion proposals under `deletions_need_clearance` through the real CLI: held until cleared
 * (the refusal recorded, the file kept), a dry run checks without consuming, the act spends the
 * clearance (or a waiver's use) and names it in its `delete-proposal` row, a replay is refused,
 * and a HALT holds it whatever else is there.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { assertSameTree } from "../_helpers/assert.ts";
import { runCli, sha256, shellProgram, snapshotTree, withoutBypass } from "../_helpers/mod.ts";
import {
  apply,
  assertApplied,
  assertApplyRefused,
  assertLedgerVerifies,
  deletion,
  dispatch,
  exists,
  ledgerRows,
  makeProject,
  putFile,
} from "../proposals/_helpers.ts";
import { decisionSignArgs, waiverIssueArgs } from "./_fixtures.ts";
import { FsSafetyError, ProposalError } from "../../lib/errors.ts";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { completePolicy, sessionOf } from "../../lib/acts/session.ts";
import { performAct } from "../../lib/acts/pipeline.ts";
import { applyAct } from "../../lib/acts/apply_act.ts";

const BRIEF = JSON.stringify({
  agent_policies: { worker: { write_scopes: ["build/"] } },
  deletions_need_clearance: true,
});

/** The ledger's rows but the triad writers' anchors (lib/ledger/anchor_state.ts). */
async function actRows(root: string): Promise<Record<string, unknown>[]> {
  return (await ledgerRows(root)).filter((r) => r.action !== "triad-anchor");
}

Deno.test("deletions_need_clearance: held until cleared, dry run spends nothing, the act spends and names it, no replay", async () => {
  const p = await makeProject("del-clear", {
    brief: BRIEF,
    files: { "build/out.bin": "old\n", "build/b.bin": "b\n", "build/h.bin": "h\n" },
  });
  try {
    const env = {
      ...p.env,
      AGENTTEAMS_DECISION_SIGNING_KEY: "dk",
      AGENTTEAMS_WAIVER_SIGNING_KEY: "wk",
    };
    const P = ["--project", p.root];
    const nonce = await dispatch(p, "worker");
    const del = deletion(nonce, "build/out.bin", sha256("old\n"));
    // Held: no clearance, no waiver.
    const held = await apply(p, del, { env });
    assertApplyRefused(held, "NO_CLEARANCE");
    assert.match(
      held.stderr,
      /deleting build\/out\.bin needs a clearance or waiver for delete:build\/out\.bin/,
    );
    assert.equal(await exists(join(p.root, "build/out.bin")), true);
    const refusedRow = (await ledgerRows(p.root)).at(-1)!;
    assert.equal(refusedRow.action, "apply-proposal-refused");
    // Cleared by a PASS: a dry run checks it and spends nothing.
    const s = await runCli(decisionSignArgs(p.root, "delete:build/out.bin", "PASS"), { env });
    assert.equal(s.code, 0, s.stderr);
    const log = join(p.root, "references", "security-decisions.log.csv");
    const logBefore = await Deno.readTextFile(log);
    const dry = assertApplied(await apply(p, del, { env, dryRun: true }));
    assert.equal(dry.written, false);
    assert.equal(await Deno.readTextFile(log), logBefore);
    // The act: deleted, the row names the clearance, the decision row is consumed.
    const out = assertApplied(await apply(p, del, { env }));
    assert.equal(out.written, true);
    assert.equal(await exists(join(p.root, "build/out.bin")), false);
    // The write-ahead row names the clearance; the spend is then recorded as a gate-pass row
    // naming its spent key (what spent stays spent rests on, lib/authz/spent.ts).
    const [row, pass] = (await actRows(p.root)).slice(-2);
    assert.equal(row.action, "delete-proposal");
    const { spent, ...named } = row.clearance as Record<string, string>;
    assert.deepEqual(named, { by: "clearance", ref: "security-decisions.log.csv:2" });
    assert.match(spent, /^clearance:[0-9a-f]{64}$/);
    assert.equal(pass.action, "gate-pass");
    assert.equal(pass.spent, spent);
    assert.equal(pass.gate_action, "delete:build/out.bin");
    assert.match(await Deno.readTextFile(log), /,yes\r\n$/);
    // Replay: the same file back, the same deletion: the clearance is spent.
    await putFile(join(p.root, "build/out.bin"), "old\n");
    const refsReplay = await snapshotTree(join(p.root, "references"));
    assertApplyRefused(await apply(p, del, { env }), "NO_CLEARANCE");
    assertSameTree(refsReplay, await snapshotTree(join(p.root, "references")), "refused replay");
    assert.equal(await exists(join(p.root, "build/out.bin")), true);
    // A waiver instead: spent at the act, named in the row.
    const w = await runCli(
      waiverIssueArgs(p.root, {
        id: "W-1",
        action: "delete:build/b.bin",
        maxUses: 1,
        ticket: "OPS-1",
        reason: "cleanup",
      }),
      { env },
    );
    assert.equal(w.code, 0, w.stderr);
    assertApplied(await apply(p, deletion(nonce, "build/b.bin", sha256("b\n")), { env }));
    assert.deepEqual((await actRows(p.root)).at(-2)!.clearance, {
      by: "waiver",
      ref: "W-1",
      spent: "waiver:W-1",
    });
    assert.equal((await actRows(p.root)).at(-1)!.spent, "waiver:W-1");
    const wv = await runCli(["waiver", "check", "delete:build/b.bin", ...P], { env });
    assert.equal(wv.code, 1);
    assert.match(wv.stderr, /USES_EXHAUSTED/);
    // A HALT holds a deletion even with a fresh PASS.
    for (const v of ["HALT", "PASS"]) {
      const r = await runCli(decisionSignArgs(p.root, "delete:build/h.bin", v), { env });
      assert.equal(r.code, 0, r.stderr);
    }
    const refsHalt = await snapshotTree(join(p.root, "references"));
    assertApplyRefused(
      await apply(p, deletion(nonce, "build/h.bin", sha256("h\n")), { env }),
      "HALTED",
    );
    // The fresh PASS is not spent by the held deletion.
    assertSameTree(refsHalt, await snapshotTree(join(p.root, "references")), "HALTed deletion");
    assert.equal(await exists(join(p.root, "build/h.bin")), true);
    assertLedgerVerifies(p);
  } finally {
    await p.dispose();
  }
});

Deno.test("deletions_need_clearance: an Ed25519 waiver is spent at the act, re-signed with the operator's key; without that key the deletion is refused and nothing of the waiver is spent", async () => {
  const p = await makeProject("del-ed-waiver", {
    brief: BRIEF,
    files: { "build/a.bin": "a\n", "build/b.bin": "b\n" },
  });
  try {
    // No HMAC triad key anywhere: the waivers are the operator's Ed25519 ones.
    const env = p.env;
    const P = ["--project", p.root];
    const nonce = await dispatch(p, "worker");
    for (const [id, file] of [["W-A", "build/a.bin"], ["W-B", "build/b.bin"]]) {
      const w = await runCli([
        ...waiverIssueArgs(p.root, {
          id,
          action: `delete:${file}`,
          maxUses: 1,
          ticket: "OPS-1",
          reason: "cleanup",
        }),
        "--ed25519",
      ], { env });
      assert.equal(w.code, 0, w.stderr);
    }
    // Spent at the act: deleted, recorded, the waiver's use counted under a valid signature.
    assertApplied(await apply(p, deletion(nonce, "build/a.bin", sha256("a\n")), { env }));
    assert.equal(await exists(join(p.root, "build/a.bin")), false);
    assert.equal((await actRows(p.root)).at(-1)!.spent, "waiver:W-A");
    const check = await runCli(["waiver", "check", "delete:build/a.bin", ...P], { env });
    assert.match(check.stderr, /USES_EXHAUSTED/);
    const verified = await runCli(["waiver", "verify", ...P], { env });
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);

    // The operator's private key gone from the key dir: the deletion cannot spend its waiver, so
    // it is refused; the file stays, the waiver ledger is as it was, no gate-pass row spends it.
    const priv = join(p.sb.keyDir, "operator-ed25519.pem");
    const aside = join(p.sb.dir, "operator-ed25519.pem.aside");
    await Deno.rename(priv, aside);
    const refs = await snapshotTree(join(p.root, "references"));
    const passes = (await actRows(p.root)).filter((r) => r.action === "gate-pass").length;
    const refused = await apply(p, deletion(nonce, "build/b.bin", sha256("b\n")), { env });
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, /NO_SIGNING_KEY/);
    assert.match(refused.stderr, /re-signing it needs that operator key/);
    assert.equal(await exists(join(p.root, "build/b.bin")), true);
    assertSameTree(refs, await snapshotTree(join(p.root, "references")), "an unsignable spend");
    assert.equal((await actRows(p.root)).filter((r) => r.action === "gate-pass").length, passes);
    // With the key back, the same deletion spends its waiver.
    await Deno.rename(aside, priv);
    assertApplied(await apply(p, deletion(nonce, "build/b.bin", sha256("b\n")), { env }));
    assert.equal(await exists(join(p.root, "build/b.bin")), false);
    assertLedgerVerifies(p);
  } finally {
    await p.dispose();
  }
});

/**
 * A deletion of `build/a.bin` whose one waiver (2 uses) would pay for it, acted in process with
 * `perlScript` as the anchored helper's program (a shell script that does its part, then runs the
 * real helper, as `$PERL`): refused with `refusal`'s check, with the file, the `references/`
 * folder (wherever it now is) and the gate-pass rows as they were, and the waiver still usable.
 */
async function refusedWithNothingSpent(
  prefix: string,
  perlScript: (target: string, root: string) => string,
  refusal: (e: unknown) => boolean,
  after: (root: string) => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  const p = await makeProject(prefix, { brief: BRIEF, files: { "build/a.bin": "a\n" } });
  try {
    const env = { ...p.env, AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" };
    const nonce = await dispatch(p, "worker");
    const w = await runCli(
      waiverIssueArgs(p.root, {
        id: "W-A",
        action: "delete:build/a.bin",
        maxUses: 2,
        ticket: "OPS-1",
        reason: "cleanup",
      }),
      { env },
    );
    assert.equal(w.code, 0, w.stderr);
    const target = join(p.root, "build/a.bin");
    const perl = shellProgram(
      join(p.sb.dir, "perl-that-races"),
      "PERL=/usr/bin/perl\n" + perlScript(target, p.root),
    );
    const session = sessionOf({
      root: p.root,
      key: loadLedgerKey({ env, mode: "direct" }),
      env,
      home: p.sb.home,
      policy: await completePolicy(p.root, undefined, env),
      perl,
    });
    const refs = await snapshotTree(join(p.root, "references"));
    const passes = (await actRows(p.root)).filter((r) => r.action === "gate-pass").length;
    await assert.rejects(
      performAct(session, applyAct, deletion(nonce, "build/a.bin", sha256("a\n"))),
      refusal,
    );
    await after(p.root);
    assert.ok(await exists(target), "the file is kept");
    assert.equal((await actRows(p.root)).filter((r) => r.action === "gate-pass").length, passes);
    assertSameTree(refs, await snapshotTree(join(p.root, "references")), "the refused deletion");
    const check = await runCli(["waiver", "check", "delete:build/a.bin", "--project", p.root], {
      env,
    });
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assertLedgerVerifies(p);
  } finally {
    await p.dispose();
  }
}

Deno.test("deletions_need_clearance: a target changed after the checks, before the anchored removal reads it, is refused STALE_BASE with nothing of its waiver spent", async () => {
  await refusedWithNothingSpent(
    "del-stale-spend",
    (target) => `printf 'changed\\n' > '${target}'\nexec "$PERL" "$@"\n`,
    (e) => e instanceof ProposalError && e.code === "STALE_BASE",
  );
});

Deno.test("deletions_need_clearance: a spend that fails on its own (references/ swapped for a link after the checks) is refused with its own code, not as the anchored write's, nothing spent", async () => {
  await refusedWithNothingSpent(
    "del-spend-refused",
    (_target, root) =>
      `mv '${root}/references' '${root}/references.real' && ` +
      `ln -s references.real '${root}/references'\nexec "$PERL" "$@"\n`,
    (e) => e instanceof FsSafetyError && e.code === "SYMLINK" && /references/.test(e.message),
    async (root) => {
      // The folder back where it was, for the checks of what it holds.
      await Deno.remove(join(root, "references"));
      await Deno.rename(join(root, "references.real"), join(root, "references"));
    },
  );
});

Deno.test("deletions_need_clearance: a target whose folder this process cannot change (mode 0555, an unprivileged operator) is refused WRITE_UNAVAILABLE before anything is spent", async () => {
  const noBypass = withoutBypass().join(" ");
  await refusedWithNothingSpent(
    "del-unwritable",
    (target) => `chmod 0555 '${dirname(target)}'\nexec ${noBypass} "$PERL" "$@"\n`,
    (e) =>
      e instanceof ProposalError && e.code === "WRITE_UNAVAILABLE" &&
      /not writable/.test(e.message),
    (root) => Deno.chmod(join(root, "build"), 0o755),
  );
});
