/**
 * `agentteams brief check` and `schema brief` through the real CLI (issue 14, item 6): every
 * problem at once and exit 1, a passing brief exit 0 with its warnings, nothing written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";

Deno.test("brief check: all problems, exit 1; a good brief, exit 0 with its warning; nothing written", async () => {
  const sb = await sandbox("brief-check");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    await Deno.mkdir(join(sb.project, "src"));
    const brief = join(sb.project, "agentteams.jsonc");
    await Deno.writeTextFile(
      brief,
      '{\n  "agent_policies": {\n    "a": {"write_scopes": ["/abs"]},\n' +
        '    "b": {"write_scopes": ["../up"]}\n  }\n}\n',
    );
    const before = await snapshotTree(sb.dir);
    const bad = await runCli(["brief", "check", "--project", sb.project], { env });
    assert.equal(bad.code, 1, bad.stderr);
    const lines = bad.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 2, bad.stdout);
    assert.match(
      lines[0],
      /^POLICY_LINT: agentteams\.jsonc:3:\d+: .*"\/abs" must be project-relative/,
    );
    assert.match(lines[1], /^POLICY_LINT: agentteams\.jsonc:4:\d+: .*"\.\.\/up"/);
    assert.match(bad.stderr, /brief check: refused: POLICY_LINT: 2 problem\(s\) in /);
    assertSameTree(before, await snapshotTree(sb.dir), "after brief check");
    await Deno.writeTextFile(brief, '{"agent_policies": {"w": {"write_scopes": ["src"]}}}\n');
    const ok = await runCli(["brief", "check", "--brief", brief, "--project", sb.project], { env });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^ok: \S+agentteams\.jsonc passes \(1 agent\(s\): w; 0 gate\(s\)\)$/m);
    assert.match(ok.stdout, /^warning: .*write "src\/" for the directory$/m);
    const json = await runCli(["brief", "check", "--json", "--project", sb.project], { env });
    assert.equal(JSON.parse(json.stdout).ok, true);
    // No brief at all: the load's own refusal.
    await Deno.remove(brief);
    const none = await runCli(["brief", "check", "--project", sb.project], { env });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /refused: BRIEF_NOT_FOUND/);
  } finally {
    await sb.dispose();
  }
});

Deno.test("schema brief prints the brief's JSON Schema; schema lists it", async () => {
  const sb = await sandbox("schema-brief");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const r = await runCli(["schema", "brief"], { env });
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.equal(s.title, "brief");
    assert.ok("agent_policies" in s.properties);
    const list = await runCli(["schema"], { env });
    assert.match(list.stdout, /^brief$/m);
  } finally {
    await sb.dispose();
  }
});
