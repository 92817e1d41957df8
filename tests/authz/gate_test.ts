/**
 * The destructive gate (lib/authz/gate.ts) and HALT finality for each instrument: blocked, then
 * cleared by a PASS, replay refused; a waiver spent to its limit; a HALT that no PASS, waiver or
 * grant lifts (and nothing spent trying); a pending CONDITIONAL PASS blocking as a HALT; the
 * authority a plan named being the one spent.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { removeTree, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { AuthzError } from "../../lib/errors.ts";
import { decideGate, passGate } from "../../lib/authz/gate.ts";
import { signDecisionRow } from "../../lib/authz/decisions.ts";
import { issueWaiver } from "../../lib/authz/waivers.ts";
import { appendGrant, grantWriteRoots } from "../../lib/authz/grants.ts";
import { grantFields, installedSigner, project } from "./_fixtures.ts";

const NOW = new Date("2026-11-30T12:00:00Z");
const ENV = { AGENTTEAMS_DECISION_SIGNING_KEY: "dk", AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" };
const ctx = { env: ENV, now: NOW };
const A = "delete:build/out.bin";

function waiver(id: string, maxUses = 2, action = A) {
  return {
    waiverId: id,
    action,
    expiresAt: "2026-12-31T00:00:00Z",
    maxUses,
    approver: "security",
    ticketId: "OPS-1",
    reasonCode: "cleanup",
  };
}

Deno.test("gate: blocked, cleared by a PASS, consumed once; a replay is refused", async () => {
  const dir = await tempDir("gate-pass");
  try {
    const p = await project(dir);
    const none = await decideGate(p, A, ctx);
    assert.equal(none.allowed, false);
    assert.equal(none.problem?.code, "NO_CLEARANCE");
    assert.match(none.problem!.reason, /no waiver names/);
    await signDecisionRow(p, { action: A, verdict: "PASS" }, ctx);
    const d = await decideGate(p, A, ctx);
    assert.deepEqual(
      { by: d.authority?.by, ref: d.authority?.ref },
      { by: "clearance", ref: "security-decisions.log.csv:2" },
    );
    assert.match(d.authority!.spent!, /^clearance:[0-9a-f]{64}$/);
    await passGate(p, A, ctx);
    const again = await decideGate(p, A, ctx);
    assert.equal(again.problem?.code, "NO_CLEARANCE");
    const before = await snapshotTree(p);
    await assertRefusal(() => passGate(p, A, ctx), "NO_CLEARANCE", AuthzError);
    assertSameTree(before, await snapshotTree(p), "a refused pass spends nothing");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("gate: a waiver consumed to its limit, then refused", async () => {
  const dir = await tempDir("gate-waiver");
  try {
    const p = await project(dir);
    await issueWaiver(p, waiver("W-1", 2), ctx);
    for (let i = 0; i < 2; i++) {
      const d = await passGate(p, A, ctx);
      assert.deepEqual(d.authority, { by: "waiver", ref: "W-1", spent: "waiver:W-1" });
    }
    const e = await assertRefusal(() => passGate(p, A, ctx), "USES_EXHAUSTED", AuthzError);
    assert.match(e.message, /waiver W-1: waiver use limit has been reached \(2 of 2\)/);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("HALT stays final: no clearance, waiver or grant lifts it, and nothing is spent trying", async () => {
  const dir = await tempDir("gate-halt");
  try {
    const p = await project(dir);
    await signDecisionRow(p, { action: "delete", verdict: "HALT" }, ctx);
    await signDecisionRow(p, { action: A, verdict: "PASS" }, ctx);
    await issueWaiver(p, waiver("W-1", 5), ctx);
    // The grant instrument: a valid Ed25519 write grant on the HALTed write.
    const team = join(p, ".agentteams", "team");
    await Deno.mkdir(join(team, "references"), { recursive: true });
    await Deno.writeTextFile(join(team, "references", "security-approvers.txt"), "alice\n");
    const signer = await installedSigner(team, "op1");
    await appendGrant(
      p,
      team,
      grantFields({ issuerTeam: "a", holderTeam: "b", targetPath: "build", issuerRoot: "/srv/a" }),
      ctx,
      signer,
    );
    assert.deepEqual((await grantWriteRoots(p, team, ctx)).roots, ["/srv/a/build"]);
    await signDecisionRow(p, { action: "write:build", verdict: "HALT" }, ctx);
    const before = await snapshotTree(p);
    const d = await decideGate(p, A, ctx);
    assert.equal(d.allowed, false);
    assert.equal(d.halted, true);
    assert.equal(d.problem?.code, "HALTED");
    await assertRefusal(() => passGate(p, A, ctx), "HALTED", AuthzError);
    const g = await grantWriteRoots(p, team, ctx);
    assert.deepEqual(g.roots, []);
    assert.match(g.problems[0], /^G-1: HALTED: /);
    assertSameTree(before, await snapshotTree(p), "nothing spent under a HALT");
    // An authenticated retraction with evidence clears it; the PASS then allows.
    await signDecisionRow(
      p,
      { action: "delete", verdict: "HALT-RETRACTED", evidence: "INC-9" },
      ctx,
    );
    assert.equal((await decideGate(p, A, ctx)).authority?.by, "clearance");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("gate: a pending CONDITIONAL PASS blocks as a HALT: a waiver does not lift it", async () => {
  const dir = await tempDir("gate-cond");
  try {
    const p = await project(dir);
    await signDecisionRow(p, { action: A, verdict: "CONDITIONAL PASS", conditions: "backup" }, ctx);
    await issueWaiver(p, waiver("W-1"), ctx);
    const d = await decideGate(p, A, ctx);
    assert.equal(d.problem?.code, "CONDITIONS_UNVERIFIED");
    assert.equal(d.halted, true);
    await signDecisionRow(p, {
      action: A,
      verdict: "CONDITIONAL PASS",
      conditions: "backup",
      conditionsVerified: "verified",
    }, ctx);
    assert.equal((await decideGate(p, A, ctx)).authority?.by, "clearance");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("gate: an expected authority that changed is refused before anything is spent", async () => {
  const dir = await tempDir("gate-expect");
  try {
    const p = await project(dir);
    await issueWaiver(p, waiver("W-1"), ctx);
    const before = await snapshotTree(p);
    await assertRefusal(
      () => passGate(p, A, ctx, { by: "clearance", ref: "security-decisions.log.csv:2" }),
      "NO_CLEARANCE",
      AuthzError,
    );
    assertSameTree(before, await snapshotTree(p));
    assert.equal((await passGate(p, A, ctx, { by: "waiver", ref: "W-1" })).allowed, true);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("gate: an Ed25519 waiver is spent only with its own operator key; without it refused, nothing written", async () => {
  const dir = await tempDir("gate-ed-waiver");
  try {
    const p = await project(dir);
    const signer = await installedSigner(p, "op1");
    const other = await installedSigner(p, "op2");
    await issueWaiver(p, waiver("W-1"), { ...ctx, signer });
    assert.deepEqual((await decideGate(p, A, ctx)).authority, {
      by: "waiver",
      ref: "W-1",
      spent: "waiver:W-1",
    });
    const before = await snapshotTree(p);
    // The spend's record (the gate-pass row) comes after it is signed: a spend that cannot be
    // signed records nothing, as none of it is written.
    const recorded: string[] = [];
    const ledger = {
      spent: () => new Map<string, number>(),
      record: (pass: { spent: string }) => (recorded.push(pass.spent), Promise.resolve()),
    };
    for (const s of [undefined, null, other, () => Promise.resolve(null)]) {
      const e = await assertRefusal(
        () => passGate(p, A, { ...ctx, signer: s, ledger }),
        "NO_SIGNING_KEY",
        AuthzError,
      );
      assert.match(e.message, /Ed25519-signed by key op1/);
    }
    assert.deepEqual(recorded, [], "a spend that could not be signed was recorded");
    assertSameTree(before, await snapshotTree(p), "a waiver that could not be re-signed");
    // A loader is asked only when the Ed25519 row is re-signed.
    assert.deepEqual(
      (await passGate(p, A, { ...ctx, signer: () => Promise.resolve(signer), ledger })).authority,
      { by: "waiver", ref: "W-1", spent: "waiver:W-1" },
    );
    assert.deepEqual(recorded, ["waiver:W-1"]);
    const after = await decideGate(p, A, ctx);
    assert.equal(after.allowed, true, after.problem?.reason);
    assert.deepEqual((await passGate(p, A, { ...ctx, signer })).authority, {
      by: "waiver",
      ref: "W-1",
      spent: "waiver:W-1",
    });
    await assertRefusal(() => passGate(p, A, { ...ctx, signer }), "USES_EXHAUSTED", AuthzError);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("gate: an HMAC clearance with the decision key gone is refused at the pass, nothing written", async () => {
  const dir = await tempDir("gate-nokey");
  try {
    const p = await project(dir);
    await signDecisionRow(p, { action: A, verdict: "PASS" }, ctx);
    const before = await snapshotTree(p);
    const noKey = { env: { AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" }, now: NOW };
    await assertRefusal(() => passGate(p, A, noKey), "NO_SIGNING_KEY", AuthzError);
    assertSameTree(before, await snapshotTree(p), "a pass without the decision key");
    assert.equal((await passGate(p, A, ctx)).allowed, true);
  } finally {
    await removeTree(dir);
  }
});
