/**
 * `audit --fix` never writes through a link (issue 22 item 5), in any mode: a `.claude/agents/`
 * entry that is a link to a directory outside the project, a file link, a named agent folder
 * that is a link, and a directory swapped for a link between the read and the write. Each is
 * refused or skipped with its reason, and nothing inside or outside the project changes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { baseChildEnv, runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { AuditReportSchema } from "../../lib/audit/report_schema.ts";
import { auditTeam } from "../../lib/audit/audit.ts";
import { compliantClaude, switchBrief, withSandbox, writeFiles } from "./_team.ts";

const GEN = "<!-- AGENTTEAMS:BEGIN body v=1 -->\nWork.\n<!-- AGENTTEAMS:END body -->\n";
/** A generated agent --fix would narrow (Edit and Bash dropped, the section appended). */
const WRITER = "---\nname: writer\ndescription: d\ntools: Read, Edit, Bash\n---\n" + GEN;

async function fixJson(project: string, args: string[], env: Record<string, string>) {
  const r = await runCli(["audit", "--project", project, "--format", "json", "--fix", ...args], {
    env: { ...env, AGENTTEAMS_BROAD_OK: "1" },
  });
  return { r, rep: AuditReportSchema.parse(JSON.parse(r.stdout)) };
}

for (const sw of [false, true]) {
  Deno.test(`--fix (switch ${sw ? "on" : "off"}) does not follow a .claude/agents/ link to a directory outside the project: refused, nothing inside or outside changed`, async () => {
    await withSandbox("audit-fix-dirlink", async (sb) => {
      const outside = join(sb.dir, "outside");
      writeFiles(outside, { "writer.md": WRITER });
      writeFiles(sb.project, {
        ...compliantClaude(),
        ...(sw ? { "agentteams.jsonc": switchBrief() } : {}),
      });
      Deno.symlinkSync(outside, join(sb.project, ".claude/agents/team"));
      const before = await snapshotTree(sb.dir);
      const { r, rep } = await fixJson(sb.project, [], sb.env);
      assert.deepEqual(rep.fixes, [{
        file: ".claude/agents/team",
        outcome: "refused",
        changes: [],
        reason: "it is a symlink, and --fix never writes through a link; replace it with a " +
          "regular file, then run agentteams audit --fix again",
      }]);
      // The link is a finding (enforced under the switch): the host may load what it points at.
      assert.ok(rep.findings.some((f) => f.code === "FILE_SYMLINK"), r.stdout);
      assert.equal(r.code, sw ? 1 : 0, r.stdout + r.stderr);
      assertSameTree(before, await snapshotTree(sb.dir));
      assert.equal(Deno.readTextFileSync(join(outside, "writer.md")), WRITER);
    });
  });
}

Deno.test("--fix without the switch does not follow a file link in the walk: refused, the target unchanged", async () => {
  await withSandbox("audit-fix-filelink", async (sb) => {
    const outside = join(sb.dir, "outside");
    writeFiles(outside, { "writer.md": WRITER });
    writeFiles(sb.project, compliantClaude());
    Deno.symlinkSync(join(outside, "writer.md"), join(sb.project, ".claude/agents/writer.md"));
    const before = await snapshotTree(sb.dir);
    const { rep } = await fixJson(sb.project, [], sb.env);
    assert.deepEqual(rep.fixes?.map((f) => [f.file, f.outcome]), [
      [".claude/agents/writer.md", "refused"],
    ]);
    assert.match(rep.fixes?.[0].reason ?? "", /never writes through a link/);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("--fix on a named agent folder that is a link: the link is reported, nothing followed or written", async () => {
  await withSandbox("audit-fix-namedlink", async (sb) => {
    const outside = join(sb.dir, "outside");
    writeFiles(outside, { "writer.md": WRITER });
    Deno.mkdirSync(join(sb.project, ".claude"), { recursive: true });
    Deno.symlinkSync(outside, join(sb.project, ".claude/agents"));
    const before = await snapshotTree(sb.dir);
    const { rep } = await fixJson(sb.project, [join(sb.project, ".claude/agents")], sb.env);
    assert.deepEqual(rep.fixes?.map((f) => [f.file, f.outcome]), [[".claude/agents", "refused"]]);
    assertSameTree(before, await snapshotTree(sb.dir));
    // A link to a team directory that is no agent folder is refused as a usage error.
    Deno.symlinkSync(outside, join(sb.project, "teamlink"));
    const snap = await snapshotTree(sb.dir);
    const r = await runCli(
      ["audit", "--project", sb.project, "--fix", join(sb.project, "teamlink")],
      { env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" } },
    );
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /USAGE: .*teamlink is a symlink to a directory/);
    assertSameTree(snap, await snapshotTree(sb.dir));
  });
});

for (const sw of [false, true]) {
  Deno.test(`--fix (switch ${sw ? "on" : "off"}): .claude/agents swapped for a link between the read and the write is refused, nothing written anywhere`, async () => {
    await withSandbox("audit-fix-swap", async (sb) => {
      writeFiles(sb.project, { ...compliantClaude(), ".claude/agents/writer.md": WRITER });
      // The attacker's copy holds the same bytes, so only the link can stop the write.
      const outside = join(sb.dir, "outside");
      let swapped = 0;
      const r = await auditTeam(sb.project, ["."], {
        switchOn: sw,
        frameworks: [],
        fix: true,
        beforeWrite: (abs) => {
          assert.equal(abs, join(sb.project, ".claude/agents/writer.md"));
          const agents = join(sb.project, ".claude/agents");
          Deno.renameSync(agents, outside);
          Deno.symlinkSync(outside, agents);
          swapped++;
        },
      });
      assert.equal(swapped, 1);
      assert.equal(r.fixes?.length, 1);
      assert.equal(r.fixes?.[0].outcome, "refused");
      assert.match(r.fixes?.[0].reason ?? "", /agents is a symlink, and --fix never writes/);
      // Neither the moved directory (outside) nor anything in the project was written.
      assert.equal(Deno.readTextFileSync(join(outside, "writer.md")), WRITER);
      assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name).sort(), [
        "orchestrator.md",
        "reviewer.md",
        "writer.md",
      ]);
      assert.ok(Deno.lstatSync(join(sb.project, ".claude/agents")).isSymlink);
    });
  });
}

Deno.test("--fix: a file swapped for a link between the read and the write is refused; its target unchanged", async () => {
  await withSandbox("audit-fix-fileswap", async (sb) => {
    writeFiles(sb.project, { ...compliantClaude(), ".claude/agents/writer.md": WRITER });
    const outside = join(sb.dir, "outside.md");
    Deno.writeTextFileSync(outside, WRITER);
    const r = await auditTeam(sb.project, ["."], {
      switchOn: true,
      frameworks: [],
      fix: true,
      beforeWrite: (abs) => {
        Deno.removeSync(abs);
        Deno.symlinkSync(outside, abs);
      },
    });
    assert.equal(r.fixes?.[0].outcome, "refused");
    assert.match(r.fixes?.[0].reason ?? "", /writer\.md is a symlink, and --fix never writes/);
    assert.equal(Deno.readTextFileSync(outside), WRITER);
    assert.ok(Deno.lstatSync(join(sb.project, ".claude/agents/writer.md")).isSymlink);
    // The findings are the files' as they now are: the link is reported.
    assert.ok(r.findings.some((f) => f.code === "FILE_SYMLINK"));
  });
});

Deno.test("--fix under the flags `permissions audit --fix` prints (the anchored write's perl, write of the project) fixes a file, and still refuses a link", async () => {
  await withSandbox("audit-fix-narrow", async (sb) => {
    const outside = join(sb.dir, "outside");
    writeFiles(outside, { "x.md": WRITER });
    writeFiles(sb.project, { ...compliantClaude(), ".claude/agents/writer.md": WRITER });
    Deno.symlinkSync(outside, join(sb.project, ".claude/agents/team"));
    const p = await runCli(["permissions", "audit", "--fix", "--project", sb.project], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    assert.equal(p.code, 0, p.stderr);
    const argv = p.stdout.trim().split(" ");
    assert.ok(argv.includes("--allow-run=/usr/bin/perl"), p.stdout);
    assert.ok(argv.includes(`--allow-write=${sb.project}`), p.stdout);
    const r = await new Deno.Command(argv[0], {
      args: argv.slice(1),
      clearEnv: true,
      env: { ...baseChildEnv(), ...sb.env },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(r.stdout);
    assert.equal(r.code, 0, out + new TextDecoder().decode(r.stderr));
    assert.match(out, /^fixed \.claude\/agents\/writer\.md: narrowed tools:/m);
    assert.match(out, /^not fixed \.claude\/agents\/team: it is a symlink/m);
    assert.match(
      Deno.readTextFileSync(join(sb.project, ".claude/agents/writer.md")),
      /^tools: Read, Grep, Glob$/m,
    );
    assert.equal(Deno.readTextFileSync(join(outside, "x.md")), WRITER);
  });
});
