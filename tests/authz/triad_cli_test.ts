/**
 * `decision sign|verify`, `clearance check` and `grant sign|issue|verify` through the real CLI:
 * minting with the operator's keys (keys init), read-only verifies (every byte the same), the
 * earlier `--verify-grants` and `--sign-grant` spellings, and refusals with nothing written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { decisionSignArgs, grantFieldArgs } from "./_fixtures.ts";

Deno.test("decision CLI: sign, clearance check (read-only), verify; a missing key is refused", async () => {
  const sb = await sandbox("decision-cli");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1", AGENTTEAMS_DECISION_SIGNING_KEY: "dk" };
    const P = ["--project", sb.project];
    const no = await runCli(["clearance", "check", "delete:a", ...P], { env });
    assertCliRefused(no, "clearance check", "NO_CLEARANCE");
    const s = await runCli(
      decisionSignArgs(sb.project, "delete:a", "PASS"),
      { env },
    );
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /^signed PASS for delete:a \(HMAC\)/);
    const before = await snapshotTree(sb.dir);
    const c = await runCli(["clearance", "check", "delete:a", ...P, "--json"], { env });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(JSON.parse(c.stdout).line, 2);
    const v = await runCli(["decision", "verify", ...P], { env });
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /^line 2: PASS \(delete:a\): valid$/m);
    const nokey = await runCli(["clearance", "check", "delete:a", ...P], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    assertCliRefused(nokey, "clearance check", "NO_SIGNING_KEY");
    assertSameTree(before, await snapshotTree(sb.dir), "after the read-only commands");
    const halt = await runCli(decisionSignArgs(sb.project, "delete:a", "HALT"), { env });
    assert.equal(halt.code, 0, halt.stderr);
    const h = await runCli(["clearance", "check", "delete:a", ...P], { env });
    assertCliRefused(h, "clearance check", "HALTED");
  } finally {
    await sb.dispose();
  }
});

Deno.test("grant CLI: keys init, grant sign (and --sign-grant), grant issue refuses write, grant verify is read-only", async () => {
  const sb = await sandbox("grant-cli");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1", AGENTTEAMS_GRANT_SIGNING_KEY: "gk" };
    const P = ["--project", sb.project];
    const init = await runCli(["keys", "init", "--json"], { env });
    assert.equal(init.code, 0, init.stderr);
    const keyId = JSON.parse(init.stdout).key_id ?? JSON.parse(init.stdout).keyId;
    const team = join(sb.project, ".agentteams", "team");
    await Deno.mkdir(join(team, "references", "authorized-verify-keys"), { recursive: true });
    await Deno.writeTextFile(join(team, "references", "security-approvers.txt"), "alice\n");
    const fields = grantFieldArgs("docs/shared", "/srv/team-a");
    // The verify key is not in the team dir's store yet: refused, nothing written.
    const before0 = await snapshotTree(sb.project);
    const nokey = await runCli(
      ["grant", "sign", ...P, "--id", "G-1", "--ops", "write", ...fields],
      { env },
    );
    assertCliRefused(nokey, "grant sign", "VERIFY_KEY_INVALID");
    assert.match(nokey.stderr, /put the signer's public key PEM there/);
    assertSameTree(before0, await snapshotTree(sb.project), "refused sign");
    await Deno.copyFile(
      join(sb.keyDir, "operator-ed25519.pub.pem"),
      join(team, "references", "authorized-verify-keys", `${keyId}.pub.pem`),
    );
    const s = await runCli(["--sign-grant", ...P, "--id", "G-1", "--ops", "write", ...fields], {
      env,
    });
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, new RegExp(`Ed25519, key ${keyId}`));
    const hw = await runCli(["grant", "issue", ...P, "--id", "G-2", "--ops", "write", ...fields], {
      env,
    });
    assertCliRefused(hw, "grant issue", "SCHEME_INSUFFICIENT");
    const hr = await runCli(["grant", "issue", ...P, "--id", "G-2", "--ops", "read", ...fields], {
      env,
    });
    assert.equal(hr.code, 0, hr.stderr);
    const before = await snapshotTree(sb.dir);
    const v = await runCli(["grant", "verify", ...P], { env });
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /^line 2: G-1 \(write docs\/shared\): valid$/m);
    assert.match(v.stdout, /^line 3: G-2 \(read docs\/shared\): valid$/m);
    const roots = await runCli(["grant", "verify", "--roots", ...P, "--json"], { env });
    assert.equal(roots.code, 0, roots.stderr);
    const rj = JSON.parse(roots.stdout);
    assert.deepEqual(rj.rows.map((r: { valid: boolean }) => r.valid), [true, true]);
    assert.deepEqual(rj.write_roots, ["/srv/team-a/docs/shared"]);
    assert.deepEqual(rj.active, ["G-1"]);
    const rootsText = await runCli(["grant", "verify", "--roots", ...P], { env });
    assert.match(
      rootsText.stdout,
      /^write roots the holder's runner adds at its next start: \/srv\/team-a\/docs\/shared$/m,
    );
    const alias = await runCli(["--verify-grants", ...P, "--json"], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    assertCliRefused(alias, "grant verify", "NO_SIGNING_KEY");
    assert.deepEqual(JSON.parse(alias.stdout).rows.map((r: { valid: boolean }) => r.valid), [
      true,
      false,
    ]);
    // A --max-uses that is not a whole number of uses: a usage error, nothing written.
    const badUses = fields.map((x, i) => fields[i - 1] === "--max-uses" ? "0" : x);
    const u = await runCli(["grant", "issue", ...P, "--id", "G-3", "--ops", "read", ...badUses], {
      env,
    });
    assert.equal(u.code, 2, u.stderr);
    assert.match(u.stderr, /--max-uses takes a whole number of uses \(1 or more\), got 0/);
    assertSameTree(before, await snapshotTree(sb.dir), "after grant verify");
  } finally {
    await sb.dispose();
  }
});
