/**
 * Probe 22c, finding C7 (tests/probe/PROBE_22C_REPORT.md): the key dir counted as read-denied to
 * the session when two of its secret files were (the ledger key and the Ed25519 private key, one
 * rule each), while the others stayed readable to its Read tool: `runner-x25519.pem`, the runner's
 * static key (it opens every result sealed in `.agentteams-status/results/`, other waiters'
 * nonces included, makes their ack tokens, and authenticates results as the runner's), and the
 * triad's HMAC keys `decision-signing.key` and `waiver-signing.key` (a row signed with them is an
 * operator's PASS, HALT-RETRACTED or waiver). `doctor` said the key dir was denied. Now every
 * secret file of the key dir must be denied (or the whole dir), and doctor names the rule to add;
 * it writes nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { OPERATOR_SANDBOX } from "../runner/_runner_helpers.ts";

Deno.test("probe 22c: per-file key-dir rules that leave the runner's X25519 key and the triad's HMAC keys readable do not count as denying the key dir", async () => {
  const sb = await sandbox("p22c-keydir");
  try {
    // The key dir under HOME, as by default.
    const keys = join(sb.home, ".config", "agentteams", "keys");
    const env = { HOME: sb.home, AGENTTEAMS_KEY_DIR: keys, AGENTTEAMS_BROAD_OK: "1" };
    Deno.writeTextFileSync(
      join(sb.project, "agentteams.jsonc"),
      '{"write_policy": "orchestrator-only", "privilege_profile": "confined"}\n',
    );
    const rule = (f: string) => `Read(~/.config/agentteams/keys/${f})`;
    const deny = [
      rule("proposal-ledger.key"),
      rule("operator-ed25519.pem"),
      "Read(./.agentteams/**)",
      "Edit(./.agentteams/**)",
      "Edit(./.agentteams-status/**)",
      "Edit(./references/**)",
      "Edit(./.claude/**)",
      "Edit(./.git/config)",
      "Edit(./.mcp.json)",
      "Edit(./agentteams.jsonc)",
      "Edit(./agentteams.json)",
    ];
    Deno.mkdirSync(join(sb.project, ".claude"));
    Deno.writeTextFileSync(
      join(sb.project, ".claude", "settings.json"),
      JSON.stringify({ permissions: { deny }, sandbox: OPERATOR_SANDBOX }, null, 2) + "\n",
    );
    assert.equal((await runCli(["keys", "init"], { env, cwd: sb.project })).code, 0);
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["doctor", "--project", sb.project, "--json"], { env });
    const checks = JSON.parse(r.stdout).checks as {
      name: string;
      code?: string;
      message: string;
      add?: { line: string };
    }[];
    const key = checks.find((c) =>
      c.code === "SETTINGS_RULE_MISSING" && /reading the key dir/.test(c.message)
    );
    assert.ok(key !== undefined, JSON.stringify(checks, null, 2));
    assert.equal(key.add?.line, JSON.stringify("Read(~/.config/agentteams/keys/**)"));
    assertSameTree(before, await snapshotTree(sb.dir));
    // Every secret file named, one rule each, counts.
    const all = [
      ...deny,
      rule("runner-x25519.pem"),
      rule("decision-signing.key"),
      rule("waiver-signing.key"),
    ];
    Deno.writeTextFileSync(
      join(sb.project, ".claude", "settings.json"),
      JSON.stringify({ permissions: { deny: all }, sandbox: OPERATOR_SANDBOX }, null, 2) + "\n",
    );
    const ok = await runCli(["doctor", "--project", sb.project, "--json"], { env });
    const after = JSON.parse(ok.stdout).checks as { code?: string; message: string }[];
    assert.equal(
      after.some((c) => c.code === "SETTINGS_RULE_MISSING" && /key dir/.test(c.message)),
      false,
      JSON.stringify(after, null, 2),
    );
  } finally {
    await sb.dispose();
  }
});
