/**
 * Key custody through the real CLI: `agentteams keys init` (modes, refusal to overwrite) and a
 * FIFO planted at the key path, which must be refused without blocking (the child runs under a
 * hang guard, so a regression fails instead of hanging the suite).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, sandbox, snapshotTree, writeBrief } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";

Deno.test("CLI keys init: creates 0700 dir and 0600 keys; a second run refuses (KEY_EXISTS)", async () => {
  const sb = await sandbox("cli-keys");
  try {
    const r = await runCli(["keys", "init", "--json"], { env: sb.env });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.equal(lines.length, 1, r.stdout);
    const out = JSON.parse(lines[0]);
    assert.equal(out.ok, true);
    assert.equal(out.dir, sb.keyDir);
    assert.match(out.keyId, /^[0-9a-f]{16}$/);
    assert.equal((await Deno.stat(sb.keyDir)).mode! & 0o777, 0o700);
    for (const f of ["proposal-ledger.key", "operator-ed25519.pem"]) {
      const st = await Deno.lstat(join(sb.keyDir, f));
      assert.ok(st.isFile);
      assert.equal(st.mode! & 0o777, 0o600, f);
    }
    assert.equal((await Deno.lstat(join(sb.keyDir, "operator-ed25519.pub.pem"))).mode! & 0o022, 0);
    assert.match(
      await Deno.readTextFile(join(sb.keyDir, "proposal-ledger.key")),
      /^[0-9a-f]{64}\n$/,
    );

    const before = await snapshotTree(sb.dir);
    const again = await runCli(["keys", "init"], { env: sb.env });
    assertCliRefused(again, "keys init", "KEY_EXISTS");
    assertSameTree(before, await snapshotTree(sb.dir));
  } finally {
    await sb.dispose();
  }
});

Deno.test("CLI: a FIFO at the key path is refused (KEY_CUSTODY) without blocking, nothing written", async () => {
  const sb = await sandbox("cli-fifo");
  try {
    await Deno.mkdir(sb.keyDir, { mode: 0o700 });
    const fifo = join(sb.keyDir, "proposal-ledger.key");
    const mk = await new Deno.Command("mkfifo", { args: ["-m", "600", fifo] }).output();
    assert.equal(mk.code, 0, "mkfifo failed");
    assert.ok((await Deno.lstat(fifo)).isFifo);
    const env = { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: "env-must-not-be-used" };
    writeBrief(sb.project, ["w"]); // dispatch reads the brief before the key
    const before = await snapshotTree(sb.dir);
    for (
      const args of [
        ["ledger", "verify", "--project", sb.project],
        ["dispatch", "--agent", "w", "--project", sb.project],
      ]
    ) {
      const r = await runCli(args, { env, hangGuardMs: 60_000 });
      assert.equal(r.signal, null, `the child hung on the FIFO and was killed: ${r.stderr}`);
      const refusal = assertCliRefused(
        r,
        args[0] === "ledger" ? "ledger verify" : "dispatch",
        "KEY_CUSTODY",
      );
      assert.match(refusal.reason, /FIFO/);
    }
    // The same FIFO named through AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE.
    await Deno.rename(fifo, join(sb.keyDir, "named.fifo"));
    const r = await runCli(["ledger", "verify", "--project", sb.project], {
      env: { ...env, AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE: "named.fifo" },
      hangGuardMs: 60_000,
    });
    assert.equal(r.signal, null, "hung");
    assertCliRefused(r, "ledger verify", "KEY_CUSTODY");
    await Deno.rename(join(sb.keyDir, "named.fifo"), fifo);
    assertSameTree(before, await snapshotTree(sb.dir));
  } finally {
    await sb.dispose();
  }
});
