/**
 * The triad ledgers' anchors (issue 22 residual, PROBE_22C_REPORT C4 "Left"): what a ledger is
 * held to between the operator's writes is a signed, chained row of the proposal ledger
 * (`lib/ledger/anchor_state.ts`), not the MAC'd index beside it. So through the real CLI: the
 * index removed, then the log cut, is still refused (nothing written); an older valid index put
 * back with the log it fits is refused; the anchors file removed or put back changes nothing; a
 * fresh project with no triad logs works; and `decision accept` repairs a log the operator edited.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { runCli, type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { decisionSignArgs, waiverIssueArgs } from "./_fixtures.ts";

const KEYS = { AGENTTEAMS_DECISION_SIGNING_KEY: "dk", AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" };

async function withKeys(
  prefix: string,
  fn: (sb: Sandbox, env: Record<string, string>, P: string[]) => Promise<void>,
) {
  const sb = await sandbox(prefix);
  try {
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    await fn(sb, { ...sb.env, ...KEYS, AGENTTEAMS_BROAD_OK: "1" }, ["--project", sb.project]);
  } finally {
    await sb.dispose();
  }
}

const state = (sb: Sandbox, name: string) => join(sb.project, ".agentteams", name);
const decisions = (sb: Sandbox) => join(sb.project, "references", "security-decisions.log.csv");

async function ledgerActions(sb: Sandbox): Promise<string[]> {
  const text = await Deno.readTextFile(state(sb, "proposal-ledger.jsonl"));
  return text.trim().split("\n").map((l) => JSON.parse(l).action);
}

Deno.test("anchor: the index removed, then the HALT cut from the log: the gate and decision sign refuse, nothing written", async () => {
  await withKeys("anchor-index-gone", async (sb, env, P) => {
    assert.equal((await runCli(decisionSignArgs(sb.project, "delete:a", "PASS"), { env })).code, 0);
    const kept = await Deno.readTextFile(decisions(sb));
    const halt = await runCli(decisionSignArgs(sb.project, "delete:a", "HALT"), { env });
    assert.equal(halt.code, 0, halt.stderr);
    // Each write left its anchor in the signed ledger.
    assert.deepEqual(await ledgerActions(sb), ["triad-anchor", "triad-anchor"]);
    // The session's move, with .agentteams renamed away and back: the index removed, the HALT
    // cut from the tail (the chain of the rows before it holds).
    await Deno.remove(state(sb, "csv-index-decisions.json"));
    await Deno.writeTextFile(decisions(sb), kept);
    const before = await snapshotTree(sb.dir);
    const gate = assertCliRefused(
      await runCli(["gate", "delete:a", ...P], { env }),
      "gate",
      "LEDGER_ROLLED_BACK",
    );
    assert.match(gate.reason, /security-decisions\.log\.csv no longer extends .*shorter/);
    assert.match(gate.reason, /agentteams decision accept/);
    assertCliRefused(
      await runCli(["gate", "delete:a", "--consume", ...P], { env }),
      "gate",
      "LEDGER_ROLLED_BACK",
    );
    assertCliRefused(
      await runCli(decisionSignArgs(sb.project, "delete:c", "PASS"), { env }),
      "decision sign",
      "LEDGER_ROLLED_BACK",
    );
    // The anchors file removed too: the anchor is read from the rows again.
    await Deno.remove(state(sb, "anchors.json"));
    const gone = await snapshotTree(sb.dir);
    assertCliRefused(
      await runCli(["gate", "delete:a", "--consume", ...P], { env }),
      "gate",
      "LEDGER_ROLLED_BACK",
    );
    assertSameTree(gone, await snapshotTree(sb.dir), "refused: nothing written");
    before.delete(state(sb, "anchors.json"));
    assertSameTree(before, gone, "only the session's removal changed the tree");
    // The whole log removed: the anchor says it held rows.
    await Deno.remove(decisions(sb));
    const r = assertCliRefused(
      await runCli(["gate", "delete:a", ...P], { env }),
      "gate",
      "LEDGER_ROLLED_BACK",
    );
    assert.match(r.reason, /it is gone, and it held 2 rows/);
    // An act's HALT check with no log to read (one lstat, then the anchor): the same refusal,
    // before the dispatch writes anything.
    await Deno.writeTextFile(
      join(sb.project, "agentteams.json"),
      JSON.stringify({ agent_policies: { worker: { write_scopes: ["src/"], commands: [] } } }),
    );
    const briefed = await snapshotTree(sb.dir);
    const d = assertCliRefused(
      await runCli(["dispatch", "--agent", "worker", ...P], { env }),
      "dispatch",
      "LEDGER_ROLLED_BACK",
    );
    assert.match(d.reason, /it is gone, and it held 2 rows/);
    assertSameTree(briefed, await snapshotTree(sb.dir), "the dispatch refused: nothing written");
  });
});

Deno.test("anchor: an older valid index (and anchors file) put back with the log it fits is refused", async () => {
  await withKeys("anchor-index-older", async (sb, env, P) => {
    assert.equal((await runCli(decisionSignArgs(sb.project, "delete:a", "PASS"), { env })).code, 0);
    const kept = await Deno.readTextFile(decisions(sb));
    const oldIndex = await Deno.readFile(state(sb, "csv-index-decisions.json"));
    const oldAnchors = await Deno.readFile(state(sb, "anchors.json"));
    assert.equal((await runCli(decisionSignArgs(sb.project, "*", "HALT"), { env })).code, 0);
    // Everything the session can put back as it was before the HALT: the log, its index (MAC'd
    // with the ledger key, valid, and the log fits it) and the anchors file. Not the ledger.
    await Deno.writeTextFile(decisions(sb), kept);
    await Deno.writeFile(state(sb, "csv-index-decisions.json"), oldIndex);
    await Deno.writeFile(state(sb, "anchors.json"), oldAnchors);
    const before = await snapshotTree(sb.dir);
    assertCliRefused(
      await runCli(["gate", "delete:a", "--consume", ...P], { env }),
      "gate",
      "LEDGER_ROLLED_BACK",
    );
    assertSameTree(before, await snapshotTree(sb.dir), "refused: nothing written");
    // The log left as the HALT left it, beside the older index: the HALT is read, not read
    // around (the older index is not of the anchored bytes, so the whole log is read).
    await runCli(decisionSignArgs(sb.project, "*", "HALT"), { env }); // refused: rolled back
    const signed = await runCli(["decision", "accept", ...P], { env });
    assert.equal(signed.code, 0, signed.stderr);
    assert.equal((await runCli(decisionSignArgs(sb.project, "*", "HALT"), { env })).code, 0);
    await Deno.writeFile(state(sb, "csv-index-decisions.json"), oldIndex);
    const g = assertCliRefused(
      await runCli(["gate", "delete:a", ...P], { env }),
      "gate",
      "HALTED",
    );
    assert.match(g.reason, /\*/);
  });
});

Deno.test("anchor: a waiver ledger put back with its index removed is refused; waiver accept repairs", async () => {
  await withKeys("anchor-waivers", async (sb, env, P) => {
    const file = join(sb.project, "references", "security-waivers.log.csv");
    const issue = (id: string) =>
      runCli(
        waiverIssueArgs(sb.project, { id, action: "deploy", maxUses: 1, ticket: "T", reason: "r" }),
        { env },
      );
    assert.equal((await issue("W-1")).code, 0);
    const kept = await Deno.readTextFile(file);
    assert.equal((await runCli(["gate", "deploy", "--consume", ...P], { env })).code, 0);
    await Deno.writeTextFile(file, kept);
    await Deno.remove(state(sb, "csv-index-waivers.json"));
    const before = await snapshotTree(sb.dir);
    assertCliRefused(
      await runCli(["gate", "deploy", "--consume", ...P], { env }),
      "gate",
      "LEDGER_ROLLED_BACK",
    );
    assertCliRefused(await issue("W-2"), "waiver issue", "LEDGER_ROLLED_BACK");
    assertSameTree(before, await snapshotTree(sb.dir), "refused: nothing written");
    // The operator takes the file as it is: the gate reads it again (and the spend still holds).
    assert.equal((await runCli(["waiver", "accept", ...P], { env })).code, 0);
    assertCliRefused(
      await runCli(["gate", "deploy", "--consume", ...P], { env }),
      "gate",
      "USES_EXHAUSTED",
    );
    assert.equal((await issue("W-2")).code, 0);
  });
});

Deno.test("anchor: a fresh project with no triad logs works, and writes no anchor until a triad write", async () => {
  await withKeys("anchor-fresh", async (sb, env, P) => {
    const g = await runCli(["gate", "delete:a", ...P], { env });
    assertCliRefused(g, "gate", "NO_CLEARANCE");
    // No ledger was made by reading.
    await assert.rejects(Deno.stat(state(sb, "proposal-ledger.jsonl")), Deno.errors.NotFound);
    // decision accept of no log: accepted as absent, and a log that appears later is read.
    const a = await runCli(["decision", "accept", ...P], { env });
    assert.equal(a.code, 0, a.stderr);
    assert.equal((await runCli(decisionSignArgs(sb.project, "delete:a", "PASS"), { env })).code, 0);
    assert.equal((await runCli(["gate", "delete:a", ...P], { env })).code, 0);
    const v = await runCli(["ledger", "verify", ...P], { env });
    assert.equal(v.code, 0, `the anchor rows verify as any row: ${v.stdout}${v.stderr}`);
  });
});
