/**
 * `keys init --decision --waiver` (issue 23 item 9): the triad's HMAC signing keys, made with the
 * custody of every key (0600 in the 0700 key dir, exclusively, never replaced), each file holding
 * exactly the bytes the triad reads from its variable: with the variable set from the file as
 * printed (`VAR="$(cat FILE)"`), a decision signed and a waiver issued verify, and with any other
 * key they do not.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { baseChildEnv, runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { decisionSignArgs, waiverIssueArgs } from "../authz/_fixtures.ts";

/** The value a shell gives `VAR="$(cat FILE)"`, by a real shell. */
async function catInShell(path: string): Promise<string> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", 'V="$(cat "$1")"; printf %s "$V"', "sh", path],
    clearEnv: true,
    env: baseChildEnv(),
    stdout: "piped",
  }).output();
  assert.equal(out.code, 0);
  return new TextDecoder().decode(out.stdout);
}

Deno.test("keys init --decision --waiver: 0600 HMAC keys the triad signs and verifies with, as printed; never replaced; the earlier keys kept", async () => {
  const sb = await sandbox("keys-triad");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const first = await runCli(["keys", "init"], { env });
    assert.equal(first.code, 0, first.stderr);
    const ledger = await Deno.readTextFile(join(sb.keyDir, "proposal-ledger.key"));
    const r = await runCli(["keys", "init", "--decision", "--waiver", "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.made, false, "the ledger key and the Ed25519 pair are kept");
    assert.equal(await Deno.readTextFile(join(sb.keyDir, "proposal-ledger.key")), ledger);
    const paths: Record<string, string> = {};
    for (const t of out.triad) paths[t.env] = t.path;
    assert.deepEqual(Object.keys(paths).sort(), [
      "AGENTTEAMS_DECISION_SIGNING_KEY",
      "AGENTTEAMS_WAIVER_SIGNING_KEY",
    ]);
    const keys: Record<string, string> = {};
    for (const [name, path] of Object.entries(paths)) {
      assert.equal(
        path,
        join(sb.keyDir, name.includes("DECISION") ? "decision-signing.key" : "waiver-signing.key"),
      );
      const st = await Deno.lstat(path);
      assert.equal(st.mode! & 0o777, 0o600, path);
      const text = await Deno.readTextFile(path);
      assert.match(text, /^[0-9a-f]{64}$/, "64 hex characters, no newline");
      assert.equal(await catInShell(path), text);
      keys[name] = text;
    }
    assert.notEqual(keys.AGENTTEAMS_DECISION_SIGNING_KEY, keys.AGENTTEAMS_WAIVER_SIGNING_KEY);
    // The text prints the export lines to run.
    const again = await runCli(["keys", "init", "--decision"], { env });
    assertCliRefused(again, "keys init", "KEY_EXISTS");
    assert.equal(
      await Deno.readTextFile(paths.AGENTTEAMS_DECISION_SIGNING_KEY),
      keys.AGENTTEAMS_DECISION_SIGNING_KEY,
    );

    // The keys as the printed export lines set them: the triad signs and verifies with them.
    const signing = { ...env, ...keys };
    const P = ["--project", sb.project];
    await Deno.mkdir(join(sb.project, "references"));
    await Deno.writeTextFile(
      join(sb.project, "references", "security-approvers.txt"),
      "security\n",
    );
    const sign = await runCli(decisionSignArgs(sb.project, "delete:a", "PASS"), { env: signing });
    assert.equal(sign.code, 0, sign.stderr);
    const dv = await runCli(["decision", "verify", ...P], { env: signing });
    assert.equal(dv.code, 0, dv.stderr);
    assert.match(dv.stdout, /^line 2: PASS \(delete:a\): valid$/m);
    const issue = await runCli(
      waiverIssueArgs(sb.project, {
        id: "W-1",
        action: "delete:b",
        maxUses: 1,
        ticket: "T",
        reason: "r",
      }),
      { env: signing },
    );
    assert.equal(issue.code, 0, issue.stderr);
    const wv = await runCli(["waiver", "verify", ...P], { env: signing });
    assert.equal(wv.code, 0, wv.stderr);
    assert.match(wv.stdout, /^line 2: W-1 \(delete:b\): valid$/m);
    // Another key: not valid.
    const other = await runCli(["waiver", "verify", ...P], {
      env: { ...signing, AGENTTEAMS_WAIVER_SIGNING_KEY: keys.AGENTTEAMS_DECISION_SIGNING_KEY },
    });
    assertCliRefused(other, "waiver verify", "SIGNATURE_INVALID");
  } finally {
    await sb.dispose();
  }
});

Deno.test("keys init --decision on a fresh key dir makes every key; text names the export line; a second plain keys init is KEY_EXISTS and changes nothing", async () => {
  const sb = await sandbox("keys-triad-fresh");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const r = await runCli(["keys", "init", "--decision"], { env });
    assert.equal(r.code, 0, r.stderr);
    const path = join(sb.keyDir, "decision-signing.key");
    assert.match(r.stdout, /^ {2}ledger key {4}/m);
    assert.ok(
      r.stdout.includes(`export AGENTTEAMS_DECISION_SIGNING_KEY="$(cat ${path})"`),
      r.stdout,
    );
    assert.doesNotMatch(r.stdout, /WAIVER/);
    const before = await snapshotTree(sb.keyDir);
    const plain = await runCli(["keys", "init"], { env });
    assertCliRefused(plain, "keys init", "KEY_EXISTS");
    assertSameTree(before, await snapshotTree(sb.keyDir), "a refused keys init");
  } finally {
    await sb.dispose();
  }
});
