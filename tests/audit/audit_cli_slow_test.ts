/**
 * `agentteams audit` through the real CLI: exit codes under and without the switch, --strict,
 * the text, JSON and SARIF formats, write_policy_frameworks, symlinks and undecodable files under
 * the switch, the --post-audit alias, and that the audit writes nothing and needs no key.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  baseChildEnv,
  DENO,
  MAIN_TS,
  refusals,
  REPO_ROOT,
  runCli,
  snapshotTree,
} from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { AuditReportSchema } from "../../lib/audit/report_schema.ts";
import { compliantClaude, switchBrief, withSandbox, writeFiles } from "./_team.ts";

const BAD = "---\nname: writer\ndescription: Writes\ntools: Read, Edit\n---\nWrite.\n";

async function audit(project: string, args: string[], env: Record<string, string>) {
  // The key dir at its default place under HOME, where the compliant team's `~/` rule denies it.
  const { AGENTTEAMS_KEY_DIR: _elsewhere, ...underHome } = env;
  return await runCli(["audit", "--project", project, ...args], {
    env: { ...underHome, AGENTTEAMS_BROAD_OK: "1" },
  });
}

Deno.test("a compliant team under the switch passes (exit 0) and the audit writes nothing", async () => {
  await withSandbox("audit-ok", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": switchBrief() });
    const before = await snapshotTree(sb.dir);
    const r = await audit(sb.project, [], sb.env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /audit: 2 agent file\(s\), 0 error\(s\), 0 warning\(s\): passes/);
    assertSameTree(before, await snapshotTree(sb.dir));
    assert.ok(!(await Array.fromAsync(Deno.readDir(sb.dir))).some((e) => e.name === "keys"));
  });
});

Deno.test("a write tool fails the audit (exit 1, refusal AR_WRITE_POLICY), grouped by file, nothing written", async () => {
  await withSandbox("audit-bad", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/writer.md": BAD,
      "agentteams.jsonc": switchBrief(),
    });
    const before = await snapshotTree(sb.dir);
    const r = await audit(sb.project, [], sb.env);
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    const lines = r.stdout.split("\n");
    const at = lines.indexOf(".claude/agents/writer.md");
    assert.ok(at >= 0, r.stdout);
    assert.match(lines[at + 1], /^ {2}\d+:\d+ error /);
    assert.match(r.stdout, /4:8 error TOOL_WRITE: 'writer' declares write tool\(s\) Edit/);
    assert.match(r.stdout, /AGENT_SECTION_MISSING/);
    assert.match(r.stdout, /: fails$/m);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("without the switch the audit reports but does not fail; --strict fails on an enforced warning", async () => {
  await withSandbox("audit-noswitch", async (sb) => {
    writeFiles(sb.project, { ".claude/agents/writer.md": BAD });
    const r = await audit(sb.project, [], sb.env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /error \(not enforced\) TOOL_WRITE/);
    assert.match(r.stdout, /reported only/);
    // Under the switch, Bash on Claude is a warning: exit 0, but 1 with --strict.
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/writer.md": `---\nname: writer\ndescription: d\ntools: Read, Bash\n---\n${
        compliantClaude()[".claude/agents/reviewer.md"].split("---\n")[2]
      }`,
      "agentteams.jsonc": switchBrief(),
    });
    const w = await audit(sb.project, [], sb.env);
    assert.equal(w.code, 0, w.stdout);
    assert.match(w.stdout, /warning TOOL_SHELL_WARN/);
    const s = await audit(sb.project, ["--strict"], sb.env);
    assertCliRefused(s, "audit", "AR_WRITE_POLICY", 1);
  });
});

Deno.test("write_policy_frameworks limits the switch: an unlisted framework's errors are not enforced", async () => {
  await withSandbox("audit-fw", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".codex/agents/coder.toml": 'name = "coder"\nsandbox_mode = "workspace-write"\n',
      "agentteams.jsonc": switchBrief(["claude"]),
    });
    const r = await audit(sb.project, ["--format", "json"], sb.env);
    assert.equal(r.code, 0, r.stdout);
    const rep = AuditReportSchema.parse(JSON.parse(r.stdout));
    const codex = rep.findings.filter((f) => f.framework === "codex");
    assert.ok(codex.some((f) => f.code === "CODEX_SANDBOX" && !f.enforced));
    writeFiles(sb.project, { "agentteams.jsonc": switchBrief(["claude", "codex"]) });
    const r2 = await audit(sb.project, ["--format", "json"], sb.env);
    assertCliRefused(r2, "audit", "AR_WRITE_POLICY", 1);
    assert.equal(AuditReportSchema.parse(JSON.parse(r2.stdout)).ok, false);
  });
});

Deno.test("under the switch a symlinked or undecodable agent file is an error, reported and not followed", async () => {
  await withSandbox("audit-links", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": switchBrief() });
    const outside = join(sb.dir, "outside.md");
    Deno.writeTextFileSync(outside, BAD);
    Deno.symlinkSync(outside, join(sb.project, ".claude/agents/linked.md"));
    Deno.mkdirSync(join(sb.dir, "elsewhere"));
    Deno.writeTextFileSync(join(sb.dir, "elsewhere", "x.md"), BAD);
    Deno.symlinkSync(join(sb.dir, "elsewhere"), join(sb.project, ".claude/agents/sub"));
    Deno.writeFileSync(
      join(sb.project, ".claude/agents/latin1.md"),
      new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xe9, 0x0a, 0x2d, 0x2d, 0x2d, 0x0a]),
    );
    const r = await audit(sb.project, ["--format", "json"], sb.env);
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    const rep = AuditReportSchema.parse(JSON.parse(r.stdout));
    const by = (code: string) => rep.findings.filter((f) => f.code === code).map((f) => f.file);
    assert.deepEqual(by("FILE_SYMLINK").sort(), [
      ".claude/agents/linked.md",
      ".claude/agents/sub",
    ]);
    assert.deepEqual(by("FILE_NOT_UTF8"), [".claude/agents/latin1.md"]);
    // Not followed: the target's write tool is not reported.
    assert.equal(by("TOOL_WRITE").length, 0);
    // Without the switch, links are followed.
    writeFiles(sb.project, { "agentteams.jsonc": "{}\n" });
    const n = await audit(sb.project, ["--format", "json"], sb.env);
    assert.equal(n.code, 0, n.stderr);
    const rn = AuditReportSchema.parse(JSON.parse(n.stdout));
    assert.ok(
      rn.findings.some((f) => f.code === "TOOL_WRITE" && f.file === ".claude/agents/linked.md"),
    );
    assert.ok(
      rn.findings.some((f) => f.code === "TOOL_WRITE" && f.file === ".claude/agents/sub/x.md"),
    );
  });
});

Deno.test("under the switch a symlinked Claude settings file denies nothing: warned, so --strict fails, nothing written", async () => {
  await withSandbox("audit-settings-link", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": switchBrief() });
    // The link's target denies nothing; the audit used to skip the file: no warning, even --strict
    // passed (no settings file at all is warned about).
    const outside = join(sb.dir, "settings.json");
    Deno.writeTextFileSync(outside, "{}\n");
    Deno.removeSync(join(sb.project, ".claude/settings.json"));
    Deno.symlinkSync(outside, join(sb.project, ".claude/settings.json"));
    const before = await snapshotTree(sb.dir);
    const r = await audit(sb.project, ["--format", "json", "--strict"], sb.env);
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    const rep = AuditReportSchema.parse(JSON.parse(r.stdout));
    const at = rep.findings.filter((f) => f.file === ".claude/settings.json").map((f) => f.code);
    assert.ok(at.includes("SETTINGS_UNREADABLE"), at.join());
    assert.ok(at.includes("SETTINGS_DENY_MISSING"), at.join());
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("--post-audit is the earlier spelling of audit; a bad --format is a usage error", async () => {
  await withSandbox("audit-alias", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/writer.md": BAD,
      "agentteams.jsonc": switchBrief(),
    });
    const r = await runCli(["--post-audit", "--project", sb.project], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    assert.equal(r.code, 1);
    assert.match(r.stdout, /TOOL_WRITE/);
    const u = await audit(sb.project, ["--format", "xml"], sb.env);
    assertCliRefused(u, "audit", "USAGE", 2);
  });
});

Deno.test("the audit's narrow launch flags read the project only: no key dir, no key variable, no write", async () => {
  await withSandbox("audit-perm", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": switchBrief() });
    const p = await runCli(["permissions", "--json", "audit", "--project", sb.project], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    assert.equal(p.code, 0, p.stderr);
    const exec = (JSON.parse(p.stdout) as { exec: string[] }).exec;
    const flags = exec.filter((a) => a.startsWith("--allow-"));
    assert.ok(!flags.some((f) => f.startsWith("--allow-write")), flags.join(" "));
    assert.ok(!flags.join(" ").includes(sb.keyDir), flags.join(" "));
    // No key variable: only where the key dir is (for the settings check), never a key.
    assert.ok(!/AGENTTEAMS_[A-Z_]*KEY\b/.test(flags.join(" ")), flags.join(" "));
    const narrow = await new Deno.Command(exec[0], {
      args: exec.slice(1),
      clearEnv: true,
      env: { ...baseChildEnv(), ...sb.env },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(narrow.stdout);
    assert.equal(narrow.code, 0, out + new TextDecoder().decode(narrow.stderr));
    assert.match(out, /passes/);
  });
});

Deno.test("the text output shows a file's control characters, never sends them to the terminal", async () => {
  await withSandbox("audit-inert", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/evil.md": '---\nname: e\ndescription: d\ntools: [Read, "Bash\\e[2J"]\n---\n',
      "agentteams.jsonc": switchBrief(),
    });
    const r = await audit(sb.project, [], sb.env);
    assert.equal(r.code, 1);
    assert.ok(!r.stdout.includes("\x1b"), JSON.stringify(r.stdout));
    assert.match(r.stdout, /\\x1b\[2J/);
  });
});

Deno.test("--brief names the brief whose switch applies; a brief that doesn't load is refused, nothing written", async () => {
  await withSandbox("audit-brief", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/writer.md": BAD,
      "agentteams.jsonc": "{}\n",
      "briefs/on.jsonc": switchBrief(),
      "briefs/broken.jsonc": '{"write_policy": "orchestrator-only", "nope": 1}\n',
    });
    const off = await audit(sb.project, [], sb.env);
    assert.equal(off.code, 0, off.stdout);
    const on = await audit(sb.project, ["--brief", join(sb.project, "briefs/on.jsonc")], sb.env);
    assertCliRefused(on, "audit", "AR_WRITE_POLICY", 1);
    const before = await snapshotTree(sb.dir);
    const broken = await audit(
      sb.project,
      ["--fix", "--brief", join(sb.project, "briefs/broken.jsonc")],
      sb.env,
    );
    assert.equal(broken.code, 1, broken.stderr);
    assert.equal(refusals(broken.stderr).length, 1, broken.stderr);
    assert.notEqual(refusals(broken.stderr)[0].code, "AR_WRITE_POLICY");
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("a DIR that doesn't exist, or a named file that is no agent file, is a usage error, not a pass", async () => {
  await withSandbox("audit-typo", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      "notes.txt": "x\n",
      "agentteams.jsonc": switchBrief(),
    });
    const before = await snapshotTree(sb.dir);
    assertCliRefused(
      await audit(sb.project, [join(sb.project, ".claud")], sb.env),
      "audit",
      "USAGE",
      2,
    );
    assertCliRefused(
      await audit(sb.project, [join(sb.project, "notes.txt")], sb.env),
      "audit",
      "USAGE",
      2,
    );
    assertSameTree(before, await snapshotTree(sb.dir));
    const empty = join(sb.project, "src");
    Deno.mkdirSync(empty);
    // Under the switch an audit that finds nothing proves nothing: it fails, unless expected.
    const r = await audit(sb.project, [empty], sb.env);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /0 agent file\(s\).*fails \(no agent files found/);
    const ok = await audit(sb.project, [empty, "--allow-empty"], sb.env);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /0 agent file\(s\).*passes \(no agent files found/);
  });
});

Deno.test("action.yml's audit step runs with the read and env flags it grants: a compliant team passes, nothing written", async () => {
  await withSandbox("audit-action", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": switchBrief() });
    const action = Deno.readTextFileSync(join(REPO_ROOT, "action.yml"));
    const env = /--allow-read --allow-env=([A-Z_,]+)\n/.exec(action);
    assert.ok(env !== null, "the audit step's --allow-env flag");
    const before = await snapshotTree(sb.dir);
    const { AGENTTEAMS_KEY_DIR: _elsewhere, ...underHome } = sb.env;
    const r = await new Deno.Command(DENO, {
      args: [
        "run",
        "--config",
        join(REPO_ROOT, "deno.json"),
        "--allow-read",
        `--allow-env=${env[1]}`,
        MAIN_TS,
        "audit",
        "--project",
        sb.project,
      ],
      clearEnv: true,
      env: { ...baseChildEnv(), ...underHome, AGENTTEAMS_BROAD_OK: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(r.stdout);
    assert.equal(r.code, 0, out + new TextDecoder().decode(r.stderr));
    assert.match(out, /passes/);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});
