/**
 * `agentteams init` on the corpus team (tests/init/_team.ts: the audit corpus's clean agents of
 * every framework where their hosts load them, plus an adopted agent with write tools), then
 * everything through the real CLI: `keys init`, the `audit --fix` command init printed, and
 * `doctor` (the sandbox block init wrote included) and `audit` both clean (exit 0, no finding,
 * no warning). A second `init` changes
 * nothing. Eight whole processes; `doctor` runs the real bwrap probe.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { ADOPTED, layTeam, operatorEnv } from "./_team.ts";

Deno.test("init, then the audit --fix it names, then doctor and audit are clean on the corpus team; a second init changes nothing", async () => {
  const sb = await sandbox("init-corpus");
  try {
    const placed = await layTeam(sb.project);
    const env = operatorEnv(sb);
    const cli = (...args: string[]) => runCli([...args, "--project", sb.project], { env });

    const dry = await cli("init", "--dry-run");
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^would create agentteams\.jsonc: /m);
    assert.equal(await Deno.lstat(join(sb.project, "agentteams.jsonc")).catch(() => null), null);

    const init = await cli("init");
    assert.equal(init.code, 0, init.stderr);
    for (const f of ["agentteams.jsonc", ".claude/settings.json", ".gitignore"]) {
      assert.match(init.stdout, new RegExp(`^create ${f.replaceAll(".", "\\.")}: `, "m"));
    }
    assert.match(init.stdout, /^create references\/write-policy\.reference\.md: /m);
    // Claude's sandbox, which makes the deny rules bind Bash too, shown and written.
    assert.match(
      init.stdout,
      /^create \.claude\/settings\.json: .*; hold Bash to them in Claude's sandbox: sandbox\.enabled: true, sandbox\.failIfUnavailable: true, sandbox\.allowUnsandboxedCommands: false$/m,
    );
    assert.deepEqual(
      JSON.parse(Deno.readTextFileSync(join(sb.project, ".claude", "settings.json"))).sandbox,
      { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false },
    );
    // Run from elsewhere, the command names the file by its absolute path.
    const next = /^next: agentteams (audit --fix .+)$/m.exec(init.stdout);
    assert.ok(next !== null, init.stdout);
    assert.equal(next[1], `audit --fix ${join(Deno.realPathSync(sb.project), ADOPTED.rel)}`);

    const keys = await runCli(["keys", "init"], { env });
    assert.equal(keys.code, 0, keys.stderr);
    const fix = await cli(...next[1].split(" "));
    assert.equal(fix.code, 0, fix.stdout + fix.stderr);
    assert.match(fix.stdout, new RegExp(`^fixed ${ADOPTED.rel.replaceAll(".", "\\.")}: `, "m"));

    const doctor = await cli("doctor");
    assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
    for (const line of doctor.stdout.trimEnd().split("\n")) assert.match(line, /^ok: /, line);

    const audit = await cli("audit", "--format", "json");
    assert.equal(audit.code, 0, audit.stdout + audit.stderr);
    const report = JSON.parse(audit.stdout);
    assert.equal(report.switch, true, "the brief init wrote turns the switch on");
    assert.equal(report.files, placed.length);
    assert.deepEqual(report.findings, [], "no finding, no warning");

    const brief = await cli("brief", "check");
    assert.equal(brief.code, 0, brief.stdout + brief.stderr);

    const before = await snapshotTree(sb.project);
    const again = await cli("init");
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^nothing to change: /m);
    assert.match(again.stdout, /^audit --fix --dry-run: nothing to change$/m);
    assertSameTree(before, await snapshotTree(sb.project), "a second init");
  } finally {
    await sb.dispose();
  }
});
