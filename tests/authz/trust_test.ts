/**
 * Issue 22 items 2 and 3, issue 23 item 6, through the real CLI: trust roots out of every
 * session's reach (an agent-written verify key, roster or legacy unsigned decision log lifts no
 * HALT and authorizes nothing under the switch), spent stays spent (a waiver row put back to
 * `uses=0` with its old signature, a clearance row put back without `consumed`), and the
 * emergency stop (a HALT on `*`). Each refusal is asserted with its code, and that nothing else
 * changed (the tree snapshotted).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { runCli, type Sandbox, sandbox, sha256, snapshotTree } from "../_helpers/mod.ts";
import { decisionSignArgs, installedSigner, mac, pipe, waiverIssueArgs } from "./_fixtures.ts";
import { signDecisionRow } from "../../lib/authz/decisions.ts";
import { VerifyKeyStore } from "../../lib/authz/signed.ts";
import { generatePem } from "../../lib/crypto/ed25519.ts";
import {
  apply,
  assertApplied,
  assertApplyRefused,
  change,
  dispatch,
  ledgerRows,
  makeProject,
} from "../proposals/_helpers.ts";

/** A brief under the switch (valid: `brief check` passes it). */
const SWITCH_BRIEF = JSON.stringify({
  write_policy: "orchestrator-only",
  privilege_profile: "confined",
  agent_policies: { worker: { write_scopes: ["src/"] } },
});

const KEYS = { AGENTTEAMS_DECISION_SIGNING_KEY: "dk", AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" };

async function withSandbox(
  prefix: string,
  fn: (sb: Sandbox, env: Record<string, string>, P: string[]) => Promise<void>,
  brief?: string,
): Promise<void> {
  const sb = await sandbox(prefix);
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    if (brief !== undefined) await Deno.writeTextFile(join(sb.project, "agentteams.json"), brief);
    await fn(sb, env, ["--project", sb.project]);
  } finally {
    await sb.dispose();
  }
}

const refs = (sb: Sandbox, name: string) => join(sb.project, "references", name);

Deno.test("spent stays spent: a waiver row put back to uses=0 with its old signature is refused, nothing written", async () => {
  await withSandbox("trust-waiver-replay", async (sb, env0, P) => {
    const env = { ...env0, ...KEYS };
    const w = await runCli(
      waiverIssueArgs(sb.project, {
        id: "W-1",
        action: "deploy",
        maxUses: 1,
        ticket: "T",
        reason: "r",
      }),
      { env },
    );
    assert.equal(w.code, 0, w.stderr);
    const fresh = await Deno.readTextFile(refs(sb, "security-waivers.log.csv"));
    const pass = await runCli(["gate", "deploy", "--consume", ...P], { env });
    assert.equal(pass.code, 0, pass.stderr);
    const row = (await ledgerRows(sb.project)).findLast((r) => r.action !== "triad-anchor")!;
    assert.equal(row.action, "gate-pass");
    // The agent's move: the row put back as it was before it was spent (its own old signature).
    await Deno.writeTextFile(refs(sb, "security-waivers.log.csv"), fresh);
    assert.equal((await runCli(["waiver", "check", "deploy", ...P], { env })).code, 0);
    let before = await snapshotTree(sb.dir);
    // The ledger no longer extends what the spend's write left: refused before anything else.
    let rolled = await runCli(["gate", "deploy", "--consume", ...P], { env });
    assertCliRefused(rolled, "gate", "LEDGER_ROLLED_BACK");
    assertSameTree(before, await snapshotTree(sb.dir), "a refused replay writes nothing");
    // Its index removed too (a session that renamed .agentteams away): the spend's anchor in the
    // signed ledger still holds the file.
    await Deno.remove(join(sb.project, ".agentteams", "csv-index-waivers.json"));
    before = await snapshotTree(sb.dir);
    rolled = await runCli(["gate", "deploy", "--consume", ...P], { env });
    assertCliRefused(rolled, "gate", "LEDGER_ROLLED_BACK");
    assertSameTree(before, await snapshotTree(sb.dir), "a refused replay writes nothing");
    // Even accepted as it is now (an operator misled into it), the spent count holds.
    assert.equal((await runCli(["waiver", "accept", ...P], { env })).code, 0);
    before = await snapshotTree(sb.dir);
    const replay = await runCli(["gate", "deploy", "--consume", ...P], { env });
    const r = assertCliRefused(replay, "gate", "USES_EXHAUSTED");
    assert.match(r.reason, /1 of 1 spent, as the proposal ledger's gate-pass rows record/);
    assertSameTree(before, await snapshotTree(sb.dir), "a refused replay writes nothing");
    assert.equal(row.spent, "waiver:W-1", "the spend names what it spent");
    // The read-only gate (with the ledger key at hand) says the same.
    assertCliRefused(await runCli(["gate", "deploy", ...P], { env }), "gate", "USES_EXHAUSTED");
    // The index is a cache: removed, it is rebuilt from the ledger, and the replay still fails.
    await Deno.remove(join(sb.project, ".agentteams", "spent-index.json"));
    assertCliRefused(
      await runCli(["gate", "deploy", "--consume", ...P], { env }),
      "gate",
      "USES_EXHAUSTED",
    );
  });
});

Deno.test("spent stays spent: a clearance row restored after consumption is refused, nothing written", async () => {
  await withSandbox("trust-clearance-replay", async (sb, env0, P) => {
    const env = { ...env0, ...KEYS };
    const s = await runCli(decisionSignArgs(sb.project, "delete:old.txt", "PASS"), { env });
    assert.equal(s.code, 0, s.stderr);
    const fresh = await Deno.readTextFile(refs(sb, "security-decisions.log.csv"));
    const pass = await runCli(["gate", "delete:old.txt", "--consume", ...P], { env });
    assert.equal(pass.code, 0, pass.stderr);
    const spent = String(
      (await ledgerRows(sb.project)).findLast((r) => r.action === "gate-pass")!.spent,
    );
    await Deno.writeTextFile(refs(sb, "security-decisions.log.csv"), fresh);
    assert.equal(
      (await runCli(["clearance", "check", "delete:old.txt", ...P], { env })).code,
      0,
      "the row alone looks unspent again",
    );
    let before = await snapshotTree(sb.dir);
    let rolled = await runCli(["gate", "delete:old.txt", "--consume", ...P], { env });
    assertCliRefused(rolled, "gate", "LEDGER_ROLLED_BACK");
    assertSameTree(before, await snapshotTree(sb.dir), "a refused replay writes nothing");
    // Its index removed too: the spend's anchor in the signed ledger still holds the file.
    await Deno.remove(join(sb.project, ".agentteams", "csv-index-decisions.json"));
    before = await snapshotTree(sb.dir);
    rolled = await runCli(["gate", "delete:old.txt", "--consume", ...P], { env });
    assertCliRefused(rolled, "gate", "LEDGER_ROLLED_BACK");
    assertSameTree(before, await snapshotTree(sb.dir), "a refused replay writes nothing");
    // Even accepted as it is now, the spent count of the proposal ledger holds.
    assert.equal((await runCli(["decision", "accept", ...P], { env })).code, 0);
    before = await snapshotTree(sb.dir);
    const replay = await runCli(["gate", "delete:old.txt", "--consume", ...P], { env });
    assertCliRefused(replay, "gate", "NO_CLEARANCE");
    assertSameTree(before, await snapshotTree(sb.dir), "a refused replay writes nothing");
    assert.match(spent, /^clearance:[0-9a-f]{64}$/, "the spend names what it spent");
  });
});

/** The legacy (6-column, unsigned) log an agent writes: its HALT, then its own retraction and PASS. */
const LEGACY_LOG =
  "timestamp,requesting_agent,action_reviewed,verdict,conditions,conditions_verified\n" +
  "2026-11-01T00:00:00Z,security,delete,HALT,,\n" +
  "2026-11-02T00:00:00Z,security,delete,HALT-RETRACTED,INC-9 fixed,verified\n" +
  "2026-11-02T00:00:00Z,security,delete:old.txt,PASS,,verified\n";

Deno.test("a legacy unsigned decision log authorizes nothing under the switch (no key needed): its HALT stays final", async () => {
  await withSandbox("trust-legacy", async (sb, env, P) => {
    await Deno.mkdir(join(sb.project, "references"), { recursive: true });
    await Deno.writeTextFile(refs(sb, "security-decisions.log.csv"), LEGACY_LOG);
    const before = await snapshotTree(sb.dir);
    const g = await runCli(["gate", "delete:old.txt", ...P], { env });
    const r = assertCliRefused(g, "gate", "HALTED");
    assert.match(
      r.reason,
      /a retraction was not accepted: the decision log has no signature column/,
    );
    const v = await runCli(["decision", "verify", ...P], { env });
    assert.equal(v.code, 1);
    assert.match(v.stdout, /invalid: LEGACY_UNSIGNED/);
    // Without the HALT: the PASS alone clears nothing either.
    await Deno.writeTextFile(
      refs(sb, "security-decisions.log.csv"),
      LEGACY_LOG.split("\n").filter((l) => !l.includes(",delete,")).join("\n"),
    );
    assertCliRefused(
      await runCli(["clearance", "check", "delete:old.txt", ...P], { env }),
      "clearance check",
      "LEGACY_UNSIGNED",
    );
    const after = await snapshotTree(sb.dir);
    after.delete(refs(sb, "security-decisions.log.csv"));
    before.delete(refs(sb, "security-decisions.log.csv"));
    assertSameTree(before, after, "the checks write nothing");
  }, SWITCH_BRIEF);
});

Deno.test("an agent-written verify key does not lift the operator's HALT under the switch; the key dir's does", async () => {
  await withSandbox("trust-verify-key", async (sb, env0, P) => {
    const env = { ...env0, ...KEYS };
    const h = await runCli(decisionSignArgs(sb.project, "delete", "HALT"), { env });
    assert.equal(h.code, 0, h.stderr);
    // The agent: its own key into references/authorized-verify-keys, and a signed, chained
    // retraction and PASS with it.
    const agent = await installedSigner(sb.project);
    const ctx = { env: {}, now: new Date(), signer: agent };
    await signDecisionRow(sb.project, {
      action: "delete",
      verdict: "HALT-RETRACTED",
      evidence: "all clear",
    }, ctx);
    await signDecisionRow(sb.project, { action: "delete:old.txt", verdict: "PASS" }, ctx);
    // The agent's rewrite (its key's columns added to the header) no longer extends what the
    // operator's HALT left: refused as such, its index removed or not (the HALT's anchor is in
    // the signed ledger); without the whole state dir (a session that renamed .agentteams away
    // and removed it, the ledger and its anchors with it), the untrusted key is what refuses.
    const index = join(sb.project, ".agentteams", "csv-index-decisions.json");
    for (let i = 0; i < 2; i++) {
      assertCliRefused(
        await runCli(["gate", "delete:old.txt", "--consume", ...P], { env }),
        "gate",
        "LEDGER_ROLLED_BACK",
      );
      await Deno.remove(index).catch(() => {});
    }
    await Deno.remove(join(sb.project, ".agentteams"), { recursive: true });
    const before = await snapshotTree(sb.dir);
    for (const e of [env, env0]) {
      const g = await runCli(["gate", "delete:old.txt", "--consume", ...P], { env: e });
      const r = assertCliRefused(g, "gate", "HALTED");
      assert.match(r.reason, /VERIFY_KEY_UNTRUSTED|not trusted here/);
    }
    assertSameTree(before, await snapshotTree(sb.dir), "a refused gate writes nothing");
    // The same key in the operator's key dir is trusted: the retraction holds (what made the
    // difference is where the key was read from).
    const store = join(sb.keyDir, "authorized-verify-keys");
    await Deno.mkdir(store, { recursive: true });
    await Deno.writeTextFile(join(store, `${agent.keyId}.pub.pem`), agent.publicPem);
    const ok = await runCli(["gate", "delete:old.txt", ...P], { env });
    assert.equal(ok.code, 0, ok.stderr);
    // And a project store the settings deny sessions writing is trusted under the switch.
    await Deno.remove(store, { recursive: true });
    await Deno.mkdir(join(sb.project, ".claude"));
    await Deno.writeTextFile(
      join(sb.project, ".claude", "settings.json"),
      JSON.stringify({ permissions: { deny: ["Edit(./references/**)"] } }),
    );
    // Not yet: the settings themselves are writable, so a session could have added the rule
    // after planting its key.
    assertCliRefused(await runCli(["gate", "delete:old.txt", ...P], { env }), "gate", "HALTED");
    const both = { deny: ["Edit(./references/**)", "Edit(./.claude/**)"] };
    await Deno.writeTextFile(
      join(sb.project, ".claude", "settings.json"),
      JSON.stringify({ permissions: both }),
    );
    // Not yet either: without Claude's sandbox the rules bind its file tools only, and a
    // session's Bash could have planted the key (probe 22c C6).
    const unsandboxed = await snapshotTree(sb.dir);
    assertCliRefused(await runCli(["gate", "delete:old.txt", ...P], { env }), "gate", "HALTED");
    assertSameTree(unsandboxed, await snapshotTree(sb.dir), "a refused gate writes nothing");
    await Deno.writeTextFile(
      join(sb.project, ".claude", "settings.json"),
      JSON.stringify({
        permissions: both,
        sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false },
      }),
    );
    assert.equal((await runCli(["gate", "delete:old.txt", ...P], { env })).code, 0);
  }, SWITCH_BRIEF);
});

Deno.test("an agent-written roster is ignored under the switch: its approver approves nothing", async () => {
  await withSandbox("trust-roster", async (sb, env0, P) => {
    const env = { ...env0, ...KEYS };
    // A waiver HMAC-signed with the operator's key, approved by a name only the planted roster
    // names (signed here with node:crypto, as a row the key holder once wrote).
    const fields = [
      "W-9",
      "deploy",
      "2099-01-01T00:00:00Z",
      "1",
      "0",
      "mallory",
      "T",
      "r",
      "verified",
    ];
    await Deno.mkdir(join(sb.project, "references"), { recursive: true });
    await Deno.writeTextFile(
      refs(sb, "security-waivers.log.csv"),
      "timestamp,waiver_id,action_reviewed,expires_at,max_uses,uses,approver,ticket_id," +
        "reason_code,conditions_verified,signature\n" +
        `2026-11-01T00:00:00Z,${fields.join(",")},${mac("wk", pipe(fields))}\n`,
    );
    await Deno.writeTextFile(refs(sb, "security-approvers.txt"), "mallory\n");
    const before = await snapshotTree(sb.dir);
    const c = await runCli(["waiver", "check", "deploy", ...P], { env });
    const r = assertCliRefused(c, "waiver check", "APPROVER_NOT_ON_ROSTER");
    assert.match(r.reason, /"mallory" is not on the roster/);
    assert.match(c.stderr, /security-approvers\.txt can be written by an agent session/);
    assertCliRefused(
      await runCli(["gate", "deploy", "--consume", ...P], { env }),
      "gate",
      "APPROVER_NOT_ON_ROSTER",
    );
    assertSameTree(before, await snapshotTree(sb.dir), "nothing written");
    // The operator's roster in the key dir counts.
    await Deno.writeTextFile(join(sb.keyDir, "security-approvers.txt"), "mallory\n");
    assert.equal((await runCli(["waiver", "check", "deploy", ...P], { env })).code, 0);
  }, SWITCH_BRIEF);
});

Deno.test("action grammar: decision sign refuses unknown forms and a PASS on '*', listing the forms; nothing written", async () => {
  await withSandbox("trust-grammar", async (sb, env0) => {
    const env = { ...env0, ...KEYS };
    const before = await snapshotTree(sb.dir);
    for (
      const [action, verdict] of [["delete:*", "HALT"], ["deploy:prod", "HALT"], ["*", "PASS"], [
        "a b",
        "HALT",
      ]]
    ) {
      const r = await runCli(decisionSignArgs(sb.project, action, verdict), { env });
      const f = assertCliRefused(r, "decision sign", "ACTION_FORM");
      assert.match(f.reason, /the forms are: \* \(every act: the emergency stop/);
    }
    assertSameTree(before, await snapshotTree(sb.dir), "nothing signed");
  });
});

Deno.test("the emergency stop: a HALT on '*' stops gate, dispatch and apply (recorded) until retracted; a HALT on write:src stops applies under src only", async () => {
  const p = await makeProject("trust-estop", {
    brief: JSON.stringify({ agent_policies: { worker: { write_scopes: ["src/", "docs/"] } } }),
    files: { "src/a.txt": "a\n", "docs/b.txt": "b\n" },
  });
  try {
    const env = { ...p.env, ...KEYS };
    const P = ["--project", p.root];
    const nonce = await dispatch(p, "worker");
    const h = await runCli(decisionSignArgs(p.root, "*", "HALT"), { env });
    assert.equal(h.code, 0, h.stderr);
    assertCliRefused(await runCli(["gate", "anything", ...P], { env }), "gate", "HALTED");
    const d = await runCli(["dispatch", "--agent", "worker", ...P], { env });
    const dr = assertCliRefused(d, "dispatch", "HALTED");
    assert.match(dr.reason, /the emergency stop/);
    const rowsBefore = (await ledgerRows(p.root)).length;
    const a = await apply(p, change(nonce, "docs/b.txt", "B\n", sha256("b\n")), { env });
    assertApplyRefused(a, "HALTED");
    assert.equal(await Deno.readTextFile(join(p.root, "docs/b.txt")), "b\n");
    const rows = await ledgerRows(p.root);
    assert.equal(rows.length, rowsBefore + 1, "the refusal is recorded");
    assert.equal(rows.at(-1)!.action, "apply-proposal-refused");
    assert.equal(rows.at(-1)!.agent, "worker", "the refusal names the agent");
    // Retracted (with evidence): everything acts again.
    const rt = await runCli([
      ...decisionSignArgs(p.root, "*", "HALT-RETRACTED"),
      "--evidence",
      "INC-1 closed",
    ], { env });
    assert.equal(rt.code, 0, rt.stderr);
    assertApplied(await apply(p, change(nonce, "docs/b.txt", "B\n", sha256("b\n")), { env }));
    // A HALT on write:src: an apply under src/ is stopped, one under docs/ is not; a retraction
    // of a narrower HALT never lifts '*' (signed again: it stops once more).
    assert.equal((await runCli(decisionSignArgs(p.root, "write:src", "HALT"), { env })).code, 0);
    assertApplyRefused(
      await apply(p, change(nonce, "src/a.txt", "A\n", sha256("a\n")), { env }),
      "HALTED",
    );
    assert.equal(await Deno.readTextFile(join(p.root, "src/a.txt")), "a\n");
    assertApplied(await apply(p, change(nonce, "docs/b.txt", "C\n", sha256("B\n")), { env }));
    assert.equal((await runCli(decisionSignArgs(p.root, "*", "HALT"), { env })).code, 0);
    const narrow = await runCli([
      ...decisionSignArgs(p.root, "write:docs", "HALT-RETRACTED"),
      "--evidence",
      "x",
    ], { env });
    assert.equal(narrow.code, 0, narrow.stderr);
    assertApplyRefused(
      await apply(p, change(nonce, "docs/b.txt", "D\n", sha256("C\n")), { env }),
      "HALTED",
    );
  } finally {
    await p.dispose();
  }
});

Deno.test("a verify key swapped while a gate runs is not read again: the store keeps the key it first read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "at-trust-swap-" });
  try {
    const a = await generatePem();
    const b = await generatePem();
    const path = join(dir, `${a.keyId}.pub.pem`);
    await Deno.writeTextFile(path, a.publicPem);
    const store = new VerifyKeyStore(dir);
    const first = await store.key(a.keyId);
    await Deno.writeTextFile(path, b.publicPem);
    assert.equal(await store.key(a.keyId), first);
    // An untrusted directory's key is refused, never read.
    const other = new VerifyKeyStore(join(dir, "none"), {
      untrusted: { dir, why: "a session can write it" },
    });
    await assert.rejects(other.key(a.keyId), (e: Error & { code?: string }) => {
      assert.equal(e.code, "VERIFY_KEY_UNTRUSTED");
      assert.match(e.message, /a session can write it/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
