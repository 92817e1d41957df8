/**
 * `ledger verify --pubkey PEM --checkpoint FILE` as a real process where no key exists (a CI job,
 * an auditor): it verifies, and catches the rollback that plain `ledger verify` with the key
 * accepts; `--pubkey` without `--checkpoint` is a usage error.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initKeys, loadLedgerKey, VERIFY_KEY_FILE } from "../../lib/crypto/keys.ts";
import { appendRow } from "../../lib/ledger/append.ts";
import { headFor, joinLines, runCli, sandbox, snapshotTree, stateFiles } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";

Deno.test("real process: ledger verify --pubkey --checkpoint needs no key and catches a rollback plain verify accepts", async () => {
  const sb = await sandbox("cli-pubkey");
  try {
    await initKeys({ env: sb.env });
    const key = loadLedgerKey({ env: sb.env, mode: "direct" });
    for (let i = 1; i <= 5; i++) await appendRow(sb.project, key.hmac, { action: "note", n: i });
    const withKey = (args: string[]) => runCli([...args, "--project", sb.project], { env: sb.env });
    const cp = join(sb.dir, "cp.json");
    assert.equal((await withKey(["ledger", "checkpoint", "--out", cp])).code, 0);
    // The auditor's copy of the public key; its environment names a key dir that does not exist.
    const pub = join(sb.dir, "operator.pub.pem");
    await Deno.copyFile(join(sb.keyDir, VERIFY_KEY_FILE), pub);
    const noKeys = { HOME: sb.home, AGENTTEAMS_KEY_DIR: join(sb.dir, "absent") };
    const auditor = (extra: string[] = []) =>
      runCli(
        [
          "ledger",
          "verify",
          "--pubkey",
          pub,
          "--checkpoint",
          cp,
          ...extra,
          "--project",
          sb.project,
        ],
        { env: noKeys },
      );
    const ok = await auditor();
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^ok: 5 rows verify$/m);
    assert.match(ok.stdout, /extends the checkpoint of 5 rows/);
    assert.match(ok.stdout, /MACs and the dispatch store were not checked/);
    // Under its own narrow line (`permissions` prints it): read of the state and the two files,
    // the key variables' names; no write, no run, no sys.
    const printed = await runCli(
      [
        "permissions",
        "ledger",
        "verify",
        "--pubkey",
        pub,
        "--checkpoint",
        cp,
        "--project",
        sb.project,
      ],
      { env: noKeys },
    );
    assert.equal(printed.code, 0, printed.stderr);
    const line = printed.stdout.trim();
    assert.doesNotMatch(line, /--allow-(write|run|sys|net|ffi)/);
    const narrow = await new Deno.Command("bash", {
      args: ["-c", line],
      clearEnv: true,
      env: { ...noKeys, PATH: "/usr/bin:/bin" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(narrow.code, 0, new TextDecoder().decode(narrow.stderr));
    assert.match(new TextDecoder().decode(narrow.stdout), /^ok: 5 rows verify$/m);
    // Without --pubkey that environment has no key: the plain form is refused.
    assertCliRefused(
      await runCli(["ledger", "verify", "--project", sb.project], { env: noKeys }),
      "ledger verify",
      "NO_KEY",
    );

    // Rolled back to 3 rows by the key's holder, head re-signed: plain verify is satisfied ...
    const st = stateFiles(sb.project);
    const lines = (await Deno.readTextFile(st.ledger)).split("\n").slice(0, -1);
    await Deno.writeTextFile(st.ledger, joinLines(lines.slice(0, 3)));
    await Deno.writeTextFile(st.head, headFor(lines.slice(0, 3), key.hmac));
    assert.equal((await withKey(["ledger", "verify"])).code, 0);
    // ... the public-key check is not, and it writes nothing.
    const before = await snapshotTree(sb.dir);
    const caught = await auditor(["--json"]);
    assert.equal(caught.code, 1, caught.stderr);
    const body = JSON.parse(caught.stdout);
    assert.equal(body.ok, false);
    assert.equal(body.error.code, "CHECKPOINT_MISMATCH");
    assert.match(body.error.message, /3 rows, fewer than the checkpoint's 5/);
    assertSameTree(before, await snapshotTree(sb.dir));

    // --pubkey alone is a usage error (exit 2), as is naming the key twice.
    assertCliRefused(
      await runCli(["ledger", "verify", "--pubkey", pub, "--project", sb.project], {
        env: noKeys,
      }),
      "ledger verify",
      "USAGE",
      2,
    );
    assertCliRefused(await auditor(["--verify-key", pub]), "ledger verify", "USAGE", 2);
  } finally {
    await sb.dispose();
  }
});
