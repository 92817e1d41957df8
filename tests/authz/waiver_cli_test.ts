/**
 * `agentteams waiver issue|verify|check` through the real CLI: issue, a verify that never changes
 * a byte (the file hashed before and after), the earlier `--verify-waivers` spelling, check's
 * exit codes and refusal line, and the narrowest launch flags the command table states.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { runCli, sandbox, sha256, snapshotTree } from "../_helpers/mod.ts";
import { decisionSignArgs, grantFieldArgs, waiverIssueArgs } from "./_fixtures.ts";

Deno.test("waiver CLI: issue, verify (read-only), check, the earlier spelling", async () => {
  const sb = await sandbox("waiver-cli");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1", AGENTTEAMS_WAIVER_SIGNING_KEY: "k1" };
    const P = ["--project", sb.project];
    // No ledger yet: verify is ok, check says no.
    const empty = await runCli(["waiver", "verify", ...P], { env });
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, /no waiver rows/);
    const none = await runCli(["waiver", "check", "delete:old.txt", ...P], { env });
    assertCliRefused(none, "waiver check", "NO_WAIVER");
    const issue = await runCli(
      waiverIssueArgs(sb.project, {
        id: "W-1",
        action: "delete:old.txt",
        maxUses: 1,
        ticket: "OPS-1",
        reason: "cleanup",
      }),
      { env },
    );
    assert.equal(issue.code, 0, issue.stderr);
    assert.match(issue.stdout, /^issued waiver W-1 for delete:old\.txt/);
    const file = join(sb.project, "references", "security-waivers.log.csv");
    const hash = sha256(await Deno.readFile(file));
    const before = await snapshotTree(sb.dir);
    const v = await runCli(["waiver", "verify", ...P], { env });
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /^line 2: W-1 \(delete:old\.txt\): valid$/m);
    const alias = await runCli(["--verify-waivers", ...P, "--json"], { env });
    assert.equal(alias.code, 0, alias.stderr);
    assert.equal(JSON.parse(alias.stdout).rows[0].valid, true);
    const c = await runCli(["waiver", "check", "delete:old.txt", ...P, "--json"], { env });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(JSON.parse(c.stdout).waiver_id, "W-1");
    // Wrong key: every row invalid, exit 1, and still not a byte changed.
    const bad = await runCli(["waiver", "verify", ...P], {
      env: { ...env, AGENTTEAMS_WAIVER_SIGNING_KEY: "k2" },
    });
    assertCliRefused(bad, "waiver verify", "SIGNATURE_INVALID");
    assert.match(bad.stdout, /^line 2: W-1 \(delete:old\.txt\): invalid: SIGNATURE_INVALID: /m);
    const noKey = await runCli(["waiver", "check", "delete:old.txt", ...P], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    assertCliRefused(noKey, "waiver check", "NO_SIGNING_KEY");
    assertSameTree(before, await snapshotTree(sb.dir), "after verify and check");
    assert.equal(sha256(await Deno.readFile(file)), hash);
    // A missing flag is a usage error; an approver off the roster is refused, nothing written.
    const usage = await runCli(["waiver", "issue", ...P, "--id", "W-2"], { env });
    assert.equal(usage.code, 2, usage.stderr);
    for (const maxUses of [0, 1.5]) {
      const badUses = await runCli(
        waiverIssueArgs(sb.project, { id: "W-2", action: "x", maxUses, ticket: "T", reason: "r" }),
        { env },
      );
      assert.equal(badUses.code, 2, badUses.stderr);
      assert.match(badUses.stderr, /--max-uses takes a whole number of uses \(1 or more\)/);
    }
    const off = await runCli(
      waiverIssueArgs(sb.project, {
        id: "W-2",
        action: "x",
        maxUses: 1,
        approver: "mallory",
        ticket: "T",
        reason: "r",
      }),
      { env },
    );
    assertCliRefused(off, "waiver issue", "APPROVER_NOT_ON_ROSTER");
    assertSameTree(before, await snapshotTree(sb.dir), "after refused issue");
  } finally {
    await sb.dispose();
  }
});

Deno.test("waiver CLI: the narrowest flags read references/ and the trust roots' inputs, and name only the waiver key and the key dir's variables", async () => {
  const sb = await sandbox("waiver-perm");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const r = await runCli(["permissions", "--project", sb.project, "--json", "waiver", "verify"], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    const flags: string[] = JSON.parse(r.stdout).flags;
    assert.ok(
      flags.some((f) => f.startsWith("--allow-read=") && f.includes(`${sb.project}/references`)),
      flags.join(" "),
    );
    assert.ok(!flags.some((f) => f.startsWith("--allow-write")), flags.join(" "));
    // The trust roots (lib/authz/trust.ts): the key dir (found with HOME, AGENTTEAMS_KEY_DIR),
    // the brief (the switch) and the Claude Code settings (the deny rules); nothing else.
    assert.ok(
      flags.includes("--allow-env=AGENTTEAMS_KEY_DIR,AGENTTEAMS_WAIVER_SIGNING_KEY,HOME"),
      flags.join(" "),
    );
    const read = flags.find((f) => f.startsWith("--allow-read="))!.slice(13).split(",");
    const trusted = ["authorized-verify-keys", "security-approvers.txt", "operator-ed25519.pub.pem"]
      .map((n) => `${sb.keyDir}/${n}`);
    for (const p of [...trusted, `${sb.project}/.claude`, `${sb.project}/agentteams.json`]) {
      assert.ok(read.includes(p), `${p} in ${read.join(",")}`);
    }
    assert.ok(!read.includes(sb.project), "not the whole project");
    assert.ok(!read.includes(sb.keyDir), "not the key dir's secret files");
  } finally {
    await sb.dispose();
  }
});

Deno.test("triad CLI: each command runs under exactly the narrow flags `permissions` prints", async () => {
  const sb = await sandbox("authz-narrow");
  try {
    const env = {
      ...sb.env,
      AGENTTEAMS_WAIVER_SIGNING_KEY: "wk",
      AGENTTEAMS_DECISION_SIGNING_KEY: "dk",
      AGENTTEAMS_GRANT_SIGNING_KEY: "gk",
    };
    const P = ["--project", sb.project];
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const cmds: string[][] = [
      waiverIssueArgs(sb.project, { id: "W-1", action: "a", maxUses: 1, ticket: "T", reason: "r" }),
      ["waiver", "verify", ...P],
      ["waiver", "check", "a", ...P],
      decisionSignArgs(sb.project, "b", "PASS"),
      ["decision", "verify", ...P],
      ["clearance", "check", "b", ...P],
      ["gate", "b", ...P],
      ["gate", "a", "--consume", ...P],
      ["grant", "issue", ...P, "--id", "G-1", "--ops", "read", ...grantFieldArgs("docs", "/srv/a")],
      ["grant", "verify", "--roots", ...P],
    ];
    const team = join(sb.project, ".agentteams", "team", "references");
    await Deno.mkdir(team, { recursive: true });
    await Deno.writeTextFile(join(team, "security-approvers.txt"), "alice\n");
    for (const c of cmds) {
      const perm = await runCli(["permissions", "--json", ...P, ...c], {
        env: { ...env, AGENTTEAMS_BROAD_OK: "1" },
      });
      assert.equal(perm.code, 0, perm.stderr);
      const exec: string[] = JSON.parse(perm.stdout).exec;
      const out = await new Deno.Command(exec[0], {
        args: exec.slice(1),
        clearEnv: true,
        env: { ...env, PATH: "/usr/bin:/bin", NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const err = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, `${c.join(" ")}: ${err}`);
      assert.doesNotMatch(err, /NOT_CAPABLE|warning: launched with broad/, c.join(" "));
    }
  } finally {
    await sb.dispose();
  }
});

Deno.test("waiver verify: a waiver simply used up is reported as spent and passes; an invalid row fails; --strict fails on spent too", async () => {
  const sb = await sandbox("waiver-spent");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1", AGENTTEAMS_WAIVER_SIGNING_KEY: "k1" };
    const P = ["--project", sb.project];
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    for (const id of ["W-1", "W-2"]) {
      const w = await runCli(
        waiverIssueArgs(sb.project, {
          id,
          action: `a-${id}`,
          maxUses: 1,
          ticket: "T",
          reason: "r",
        }),
        { env },
      );
      assert.equal(w.code, 0, w.stderr);
    }
    assert.equal((await runCli(["gate", "a-W-1", "--consume", ...P], { env })).code, 0);
    const before = await snapshotTree(sb.dir);
    const v = await runCli(["waiver", "verify", ...P], { env });
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.match(v.stdout, /^line 2: W-1 \(a-W-1\): spent: waiver use limit has been reached/m);
    assert.match(v.stdout, /^ok: 1 waiver row\(s\) valid, 1 spent \(used up\)$/m);
    const strict = await runCli(["waiver", "verify", "--strict", ...P], { env });
    assertCliRefused(strict, "waiver verify", "USES_EXHAUSTED");
    // An invalid row (a signature that does not verify) fails without --strict.
    const file = join(sb.project, "references", "security-waivers.log.csv");
    const text = await Deno.readTextFile(file);
    await Deno.writeTextFile(file, text.replace(",a-W-2,", ",a-W-3,"));
    const bad = await runCli(["waiver", "verify", ...P], { env });
    assertCliRefused(bad, "waiver verify", "SIGNATURE_INVALID");
    await Deno.writeTextFile(file, text);
    assertSameTree(before, await snapshotTree(sb.dir), "verify writes nothing");
  } finally {
    await sb.dispose();
  }
});
