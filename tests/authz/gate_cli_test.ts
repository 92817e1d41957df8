/**
 * `agentteams gate ACTION [--consume]` through the real CLI: exit 1 with the reason on stderr and
 * in --json, exit 0 once cleared; --consume spends the clearance and records a signed gate-pass
 * row in the proposal ledger (which then verifies); the replay is blocked.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { decisionSignArgs, waiverIssueArgs } from "./_fixtures.ts";

Deno.test("gate CLI: blocked, allowed, consumed and recorded, replay blocked", async () => {
  const sb = await sandbox("gate-cli");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1", AGENTTEAMS_DECISION_SIGNING_KEY: "dk" };
    const P = ["--project", sb.project];
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const before = await snapshotTree(sb.dir);
    const blocked = await runCli(["gate", "delete:old.txt", ...P, "--json"], { env });
    assertCliRefused(blocked, "gate", "NO_CLEARANCE");
    const j = JSON.parse(blocked.stdout);
    assert.equal(j.allowed, false);
    assert.match(j.reason, /no unconsumed PASS decision names "delete:old\.txt"/);
    assertSameTree(before, await snapshotTree(sb.dir), "a blocked gate writes nothing");
    // The reason is said once: on the refusal line (stderr); stdout names only what was blocked.
    const plain = await runCli(["gate", "delete:old.txt", ...P], { env });
    assert.equal(plain.stdout, "blocked: delete:old.txt\n");
    const said = (plain.stdout + plain.stderr).split("no unconsumed PASS decision").length - 1;
    assert.equal(said, 1, plain.stdout + plain.stderr);
    const s = await runCli(decisionSignArgs(sb.project, "delete:old.txt", "PASS"), { env });
    assert.equal(s.code, 0, s.stderr);
    const ok = await runCli(["gate", "delete:old.txt", ...P], { env });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /^allowed: delete:old\.txt by clearance security-decisions\.log\.csv:2$/m,
    );
    const c = await runCli(["gate", "delete:old.txt", "--consume", ...P, "--json"], { env });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(JSON.parse(c.stdout).consumed, true);
    const ledger = await Deno.readTextFile(
      join(sb.project, ".agentteams", "proposal-ledger.jsonl"),
    );
    const row = ledger.trim().split("\n").map((l) => JSON.parse(l)).findLast((r) =>
      r.action !== "triad-anchor"
    );
    assert.equal(row.action, "gate-pass");
    assert.equal(row.gate_action, "delete:old.txt");
    assert.equal(row.by, "clearance");
    const v = await runCli(["ledger", "verify", ...P], { env });
    assert.equal(v.code, 0, v.stdout + v.stderr);
    const beforeReplay = await snapshotTree(sb.dir);
    const replay = await runCli(["gate", "delete:old.txt", "--consume", ...P], { env });
    assertCliRefused(replay, "gate", "NO_CLEARANCE");
    assertSameTree(beforeReplay, await snapshotTree(sb.dir), "a refused replay writes nothing");
    const h = await runCli(decisionSignArgs(sb.project, "delete", "HALT"), {
      env,
    });
    assert.equal(h.code, 0, h.stderr);
    const halted = await runCli(["gate", "delete:other.txt", ...P], { env });
    const r = assertCliRefused(halted, "gate", "HALTED");
    assert.match(r.reason, /no clearance, waiver or grant lifts a HALT/);
    // --consume under the HALT: refused the same way, and nothing spent or recorded.
    const beforeHalt = await snapshotTree(sb.dir);
    const haltedConsume = await runCli(["gate", "delete:other.txt", "--consume", ...P], { env });
    assertCliRefused(haltedConsume, "gate", "HALTED");
    assertSameTree(beforeHalt, await snapshotTree(sb.dir), "a HALTed --consume writes nothing");
  } finally {
    await sb.dispose();
  }
});

Deno.test("gate CLI: eight concurrent --consume of one PASS and one 2-use waiver: exactly three pass", async () => {
  const sb = await sandbox("gate-race");
  try {
    const env = {
      ...sb.env,
      AGENTTEAMS_BROAD_OK: "1",
      AGENTTEAMS_DECISION_SIGNING_KEY: "dk",
      AGENTTEAMS_WAIVER_SIGNING_KEY: "wk",
    };
    const P = ["--project", sb.project];
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const s = await runCli(decisionSignArgs(sb.project, "x", "PASS"), {
      env,
    });
    assert.equal(s.code, 0, s.stderr);
    const w = await runCli(
      waiverIssueArgs(sb.project, { id: "W-1", action: "x", maxUses: 2, ticket: "T", reason: "r" }),
      { env },
    );
    assert.equal(w.code, 0, w.stderr);
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => runCli(["gate", "x", "--consume", "--json", ...P], { env })),
    );
    const passed = runs.filter((r) => r.code === 0).map((r) => JSON.parse(r.stdout).by).sort();
    assert.deepEqual(
      passed,
      ["clearance", "waiver", "waiver"],
      runs.map((r) => r.stderr).join("\n"),
    );
    for (const r of runs.filter((r) => r.code !== 0)) assert.match(r.stderr, /USES_EXHAUSTED/);
    const ledger = await Deno.readTextFile(
      join(sb.project, ".agentteams", "proposal-ledger.jsonl"),
    );
    assert.equal(ledger.trim().split("\n").filter((l) => l.includes('"gate-pass"')).length, 3);
  } finally {
    await sb.dispose();
  }
});

Deno.test("gate CLI: --consume of an Ed25519 waiver re-signs it with the operator's key from the key dir; without that key it is refused before anything is recorded", async () => {
  const sb = await sandbox("gate-ed25519-spend");
  try {
    // No HMAC waiver key at all: the waiver is Ed25519, and so is its re-signing.
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const P = ["--project", sb.project];
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const w = await runCli([
      ...waiverIssueArgs(sb.project, {
        id: "W-1",
        action: "x",
        maxUses: 2,
        ticket: "T",
        reason: "r",
      }),
      "--ed25519",
    ], { env });
    assert.equal(w.code, 0, w.stderr);
    // Read-only, the operator's public key is all it needs.
    assert.equal((await runCli(["gate", "x", ...P], { env })).code, 0);

    // The operator's private key is not in the key dir: the spend cannot be signed, so it is
    // refused, and nothing is recorded or rewritten (no gate-pass row spends a use of it).
    const priv = join(sb.keyDir, "operator-ed25519.pem");
    const aside = join(sb.dir, "operator-ed25519.pem.aside");
    await Deno.rename(priv, aside);
    const before = await snapshotTree(sb.dir);
    const refused = await runCli(["gate", "x", "--consume", ...P], { env });
    const r = assertCliRefused(refused, "gate", "NO_SIGNING_KEY");
    assert.match(
      r.reason,
      /Ed25519-signed by key [0-9a-f]{16}; re-signing it needs that operator key/,
    );
    assertSameTree(before, await snapshotTree(sb.dir), "a spend that cannot be signed");

    // With the key back, the spend re-signs the row with it: allowed, recorded, the waiver's
    // uses counted and its signature still valid.
    await Deno.rename(aside, priv);
    const c = await runCli(["gate", "x", "--consume", "--json", ...P], { env });
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual([JSON.parse(c.stdout).consumed, JSON.parse(c.stdout).by], [true, "waiver"]);
    const ledger = await Deno.readTextFile(
      join(sb.project, ".agentteams", "proposal-ledger.jsonl"),
    );
    assert.equal(ledger.split("\n").filter((l) => l.includes('"gate-pass"')).length, 1);
    const [head, row] = (await Deno.readTextFile(
      join(sb.project, "references", "security-waivers.log.csv"),
    )).trim().split(/\r?\n/).map((l) => l.split(","));
    assert.equal(row[head.indexOf("uses")], "1");
    assert.equal(row[head.indexOf("sig_scheme")], "ed25519");
    const v = await runCli(["waiver", "verify", ...P], { env });
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.equal((await runCli(["ledger", "verify", ...P], { env })).code, 0);
    // The second use, then none left.
    assert.equal((await runCli(["gate", "x", "--consume", ...P], { env })).code, 0);
    assertCliRefused(
      await runCli(["gate", "x", "--consume", ...P], { env }),
      "gate",
      "USES_EXHAUSTED",
    );
  } finally {
    await sb.dispose();
  }
});
