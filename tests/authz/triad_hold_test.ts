/**
 * An operator's write to a triad ledger checks, rewrites and anchors its own bytes
 * (lib/authz/triad_hold.ts): a session that cuts a HALT from the log in the middle of the write
 * (right after the check, or right after the rewrite, before the anchor) never gets the cut
 * anchored as the operator's; nor does `decision accept` anchor a read other than the one it
 * verified. Each case fails when the write checks one read and rewrites another, or anchors a read
 * made after its rewrite or its verify.
 */
import assert from "node:assert/strict";
import { removeTree, tempDir } from "../_helpers/mod.ts";
import { signDecisionRow } from "../../lib/authz/decisions.ts";
import { issueWaiver } from "../../lib/authz/waivers.ts";
import { haltStop } from "../../lib/authz/stop.ts";
import { decideGate, passGate } from "../../lib/authz/gate.ts";
import type { TriadHold } from "../../lib/authz/triad_hold.ts";
import { triadWrite } from "../../lib/authz/triad_index.ts";
import { authzPaths } from "../../lib/authz/triad_paths.ts";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { acceptVerified } from "../../lib/cli/authz_common.ts";
import { decisionVerify } from "../../lib/cli/clearance_cmd.ts";
import type { Ctx } from "../../lib/cli/command_spec.ts";
import { project } from "./_fixtures.ts";

const NOW = new Date("2026-11-30T12:00:00Z");
const ENV = { AGENTTEAMS_DECISION_SIGNING_KEY: "dk", AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" };
const KEY = new HmacKey(new TextEncoder().encode("ledger-key"));
const plain = { env: ENV, now: NOW };

/** Signs a decision row as `decision sign` does, with the ledger key; `around` wraps the hold. */
function sign(
  p: string,
  action: string,
  verdict: string,
  around: (hold: TriadHold) => TriadHold = (h) => h,
) {
  return triadWrite(
    p,
    KEY,
    "decisions",
    (hold) => signDecisionRow(p, { action, verdict }, { ...plain, hold: around(hold!) }),
  );
}

/** A project whose log holds a PASS and then a HALT on delete:x, each anchored; and the cut. */
async function halted(dir: string): Promise<{ p: string; full: string; cut: string }> {
  const p = await project(dir);
  await sign(p, "delete:x", "PASS");
  const cut = Deno.readTextFileSync(authzPaths(p).decisions);
  await sign(p, "delete:x", "HALT");
  const full = Deno.readTextFileSync(authzPaths(p).decisions);
  assert.equal((await haltStop(p, ["delete:x"], plain, KEY))?.code, "HALTED");
  return { p, full, cut };
}

Deno.test("triad write: a HALT cut right after the writer's check is not what it rewrites", async () => {
  const dir = await tempDir("triad-hold-check");
  try {
    const { p, cut } = await halted(dir);
    const log = authzPaths(p).decisions;
    await sign(p, "delete:y", "PASS", (h) => ({
      held: async (read) => {
        await h.held(read);
        Deno.writeTextFileSync(log, cut); // the session's cut, once the check has passed
      },
      kept: h.kept,
    }));
    // The rewrite is of the bytes checked: the HALT is back, and anchored with the new row.
    const now = Deno.readTextFileSync(log);
    assert.match(now, /,delete:x,HALT,/);
    assert.match(now, /,delete:y,PASS,/);
    assert.equal((await haltStop(p, ["delete:x"], plain, KEY))?.code, "HALTED");
    assert.equal((await decideGate(p, "delete:x", { ...plain, indexKey: KEY })).halted, true);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("triad write: a HALT cut right after the rewrite, before the anchor, is refused, not anchored", async () => {
  const dir = await tempDir("triad-hold-keep");
  try {
    const { p, cut } = await halted(dir);
    const log = authzPaths(p).decisions;
    await sign(p, "delete:y", "PASS", (h) => ({
      held: h.held,
      kept: async (written) => {
        Deno.writeTextFileSync(log, cut); // the session's cut, after the rewrite
        await h.kept(written);
      },
    }));
    // What is anchored is what the writer wrote: the cut file no longer extends it.
    for (const actions of [["delete:x"], ["write:a"]]) {
      await assert.rejects(
        haltStop(p, actions, plain, KEY),
        (e: Error & { code?: string }) => e.code === "LEDGER_ROLLED_BACK",
      );
    }
    await assert.rejects(
      decideGate(p, "delete:x", { ...plain, indexKey: KEY }),
      (e: Error & { code?: string }) => e.code === "LEDGER_ROLLED_BACK",
    );
  } finally {
    await removeTree(dir);
  }
});

Deno.test("triad write: the waiver ledger's writer takes the same two steps on its own bytes", async () => {
  const dir = await tempDir("triad-hold-waiver");
  try {
    const p = await project(dir);
    const waiver = (id: string) => ({
      waiverId: id,
      action: `delete:${id}`,
      expiresAt: "2026-12-31T00:00:00Z",
      maxUses: 1,
      approver: "security",
      ticketId: "T-1",
      reasonCode: "cleanup",
    });
    const issue = (id: string, around: (h: TriadHold) => TriadHold = (h) => h) =>
      triadWrite(
        p,
        KEY,
        "waivers",
        (hold) => issueWaiver(p, waiver(id), { ...plain, hold: around(hold!) }),
      );
    await issue("W-1");
    const one = Deno.readTextFileSync(authzPaths(p).waivers);
    await issue("W-2");
    // W-2 cut right after the check of the next write: the rewrite brings it back.
    await issue("W-3", (h) => ({
      held: async (read) => {
        await h.held(read);
        Deno.writeTextFileSync(authzPaths(p).waivers, one);
      },
      kept: h.kept,
    }));
    const gate = await decideGate(p, "delete:W-2", { ...plain, indexKey: KEY });
    assert.equal(gate.allowed, true, gate.problem?.reason);
    // A write that keeps nothing (a writer that skipped its hold) is an internal error.
    await assert.rejects(triadWrite(p, KEY, "waivers", () => Promise.resolve(0)), TypeError);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("decision accept: the bytes verified are the bytes anchored, under the project's lock", async () => {
  const dir = await tempDir("triad-hold-accept");
  try {
    const { p, cut } = await halted(dir);
    const log = authzPaths(p).decisions;
    const ctx: Ctx = {
      name: "decision accept",
      parsed: { flags: {}, positionals: {} },
      // The ledger key by its variable (no key dir): the same key the fixture anchors with.
      env: {
        ...ENV,
        AGENTTEAMS_KEY_DIR: `${dir}/no-keys`,
        AGENTTEAMS_PROPOSAL_LEDGER_KEY: "ledger-key",
      },
      project: p,
      json: false,
      now: () => NOW,
      note: () => {},
    };
    const out = await acceptVerified(ctx, "decisions", async (read) => {
      const verified = await decisionVerify(ctx, read);
      Deno.writeTextFileSync(log, cut); // the session's cut, once the verify has passed
      return verified;
    });
    assert.equal(out.exit, 0, out.text);
    assert.match(out.text ?? "", /accepted:/);
    // What was accepted is the log with its HALT: the cut file no longer extends it.
    await assert.rejects(
      haltStop(p, ["delete:x"], plain, KEY),
      (e: Error & { code?: string }) => e.code === "LEDGER_ROLLED_BACK",
    );
  } finally {
    await removeTree(dir);
  }
});

Deno.test("gate --consume: a HALT cut between its check and its decision is not decided from; nothing is spent or written", async () => {
  const dir = await tempDir("triad-hold-pass");
  try {
    const { p, cut } = await halted(dir);
    const log = authzPaths(p).decisions;
    const recorded: string[] = [];
    // The gate asks what was spent once the ledgers are checked and before it decides: the
    // session's cut lands there.
    const ledger = {
      spent: () => {
        Deno.writeTextFileSync(log, cut);
        return new Map<string, number>();
      },
      record: (pass: { ref: string }) => {
        recorded.push(pass.ref);
        return Promise.resolve();
      },
    };
    await assert.rejects(
      passGate(p, "delete:x", { ...plain, indexKey: KEY, ledger }),
      (e: Error & { code?: string }) => e.code === "HALTED",
    );
    assert.deepEqual(recorded, [], "no spend recorded");
    assert.equal(Deno.readTextFileSync(log), cut, "the log was not rewritten");
  } finally {
    await removeTree(dir);
  }
});
