/**
 * Claude Code's parent agent folders (issue 22, item 2): a session started in the project loads
 * `.claude/agents/` of each parent directory up to the git root, else up to HOME
 * (`lib/audit/hosts/claude_dirs.ts`, from Claude Code 2.1.42's `cli.js` and 2.1.332's bundled
 * JavaScript). The audit, run under the flags `permissions audit` prints, judges those files with
 * the team: a parent's writer fails it under the switch (it passed clean before), a git root at
 * the project keeps parents out, a link there is reported, and `--fix` writes nothing outside.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { baseChildEnv, runCli, type Sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { claudeAgentDirs, claudeLookDirs } from "../../lib/audit/hosts/claude_dirs.ts";
import { compliantClaude, switchBrief, withSandbox, writeFiles } from "./_team.ts";

const WRITER = "---\nname: writer\ndescription: Writes\ntools: Read, Edit\n---\nWrite.\n";

Deno.test("claude dirs: from the start directory up to the git root, else up to HOME (left out) or /", () => {
  assert.deepEqual(claudeLookDirs("/home/op/src/p", "/home/op"), [
    "/home/op/src/p",
    "/home/op/src",
  ]);
  assert.deepEqual(claudeLookDirs("/srv/p", "/home/op"), ["/srv/p", "/srv", "/"]);
  assert.deepEqual(claudeLookDirs("/srv/p", null), ["/srv/p", "/srv", "/"]);
  assert.deepEqual(claudeAgentDirs("/repo/teams/a", "/home/op", "/repo"), [
    "/repo/teams/a",
    "/repo/teams",
    "/repo",
  ]);
  assert.deepEqual(claudeAgentDirs("/repo", "/home/op", "/repo"), ["/repo"]);
  // No git root on the way: every directory up to HOME.
  assert.deepEqual(claudeAgentDirs("/home/op/a/b", "/home/op", null), [
    "/home/op/a/b",
    "/home/op/a",
  ]);
  // A git root above HOME is never reached: the walk stops at HOME first.
  assert.deepEqual(claudeAgentDirs("/home/op/a", "/home/op", "/"), ["/home/op/a"]);
});

/** Runs `agentteams audit ARGS` under exactly the flags `permissions audit ARGS` prints. */
async function narrowAudit(sb: Sandbox, args: string[]) {
  const p = await runCli(["permissions", "audit", ...args, "--project", sb.project], {
    env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
  });
  assert.equal(p.code, 0, p.stderr);
  const argv = p.stdout.trim().split(" ");
  const r = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    clearEnv: true,
    env: { ...baseChildEnv(), ...sb.env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: r.code,
    signal: null,
    stdout: dec.decode(r.stdout),
    stderr: dec.decode(r.stderr),
  };
}

Deno.test("audit: a parent's .claude/agents writer (loaded by Claude Code, no git root between) fails under the switch, under the printed flags; --fix writes nothing there", async () => {
  await withSandbox("audit-parent-agents", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": switchBrief() });
    writeFiles(sb.dir, { ".claude/agents/writer.md": WRITER });
    const before = await snapshotTree(sb.dir);
    const r = await narrowAudit(sb, []);
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    const file = join(sb.dir, ".claude/agents/writer.md");
    assert.ok(r.stdout.includes(`${file}\n`), r.stdout);
    assert.match(r.stdout, /error TOOL_WRITE: 'writer' declares write tool\(s\) Edit/);
    assertSameTree(before, await snapshotTree(sb.dir), "after audit");
    const fix = await narrowAudit(sb, ["--fix"]);
    assertCliRefused(fix, "audit", "AR_WRITE_POLICY", 1);
    assert.equal(Deno.readTextFileSync(file), WRITER, "--fix wrote outside the team");
    assert.doesNotMatch(fix.stdout, /^fixed .*writer\.md/m);
  });
});

Deno.test("audit: a git root at the project keeps the parents' agents out (Claude Code stops there); a git root above keeps them in", async () => {
  await withSandbox("audit-parent-git", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": switchBrief() });
    writeFiles(sb.dir, { ".claude/agents/writer.md": WRITER });
    // Claude Code's git root test: a `.git` directory or file.
    Deno.writeTextFileSync(join(sb.project, ".git"), "gitdir: /nowhere\n");
    const r = await narrowAudit(sb, []);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /writer/);
    Deno.removeSync(join(sb.project, ".git"));
    Deno.mkdirSync(join(sb.dir, ".git"));
    const above = await narrowAudit(sb, []);
    assertCliRefused(above, "audit", "AR_WRITE_POLICY", 1);
    assert.ok(above.stdout.includes(join(sb.dir, ".claude/agents/writer.md")), above.stdout);
  });
});

Deno.test("audit: a parent's .claude/agents that is a link is reported under the switch, not followed", async () => {
  await withSandbox("audit-parent-link", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": switchBrief() });
    const elsewhere = join(sb.dir, "elsewhere");
    writeFiles(elsewhere, { "writer.md": WRITER });
    Deno.mkdirSync(join(sb.dir, ".claude"));
    Deno.symlinkSync(elsewhere, join(sb.dir, ".claude/agents"));
    const r = await narrowAudit(sb, []);
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    assert.ok(r.stdout.includes(`${join(sb.dir, ".claude/agents")}\n`), r.stdout);
    assert.match(r.stdout, /error FILE_SYMLINK/);
  });
});
