/**
 * `audit --fix` through the real CLI: it narrows generated files (Claude and Copilot tools,
 * Codex sandbox_mode, the fenced write-policy section), keeps every other byte and the file's
 * mode, leaves adopted files alone unless named, refuses shapes it can't rewrite cleanly (file
 * unchanged), and a second --fix changes nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { AuditReportSchema } from "../../lib/audit/report_schema.ts";
import { fixText } from "../../lib/audit/fix.ts";
import { checkFile } from "../../lib/audit/team.ts";
import { auditTeam } from "../../lib/audit/audit.ts";
import { compliantClaude, switchBrief, withSandbox, writeFiles } from "./_team.ts";

const GEN_BODY =
  "<!-- AGENTTEAMS:BEGIN body v=1 -->\nWork carefully.\n<!-- AGENTTEAMS:END body -->\n";

async function audit(project: string, args: string[], env: Record<string, string>) {
  const r = await runCli(["audit", "--project", project, "--format", "json", ...args], {
    env: { ...env, AGENTTEAMS_BROAD_OK: "1" },
  });
  return { r, rep: AuditReportSchema.parse(JSON.parse(r.stdout)) };
}

Deno.test("--fix narrows generated files, keeps every other byte and the mode, and a second --fix changes nothing", async () => {
  await withSandbox("audit-fix", async (sb) => {
    const claude =
      "---\nname: writer\ndescription: Use when: you must\ntools: Read, Edit, Bash, TodoWrite # old\n" +
      "model: sonnet\n---\n" + GEN_BODY;
    const copilot = "---\ndescription: d\ntools: ['search', 'editFiles', 'runCommands']\n---\n" +
      GEN_BODY;
    const codex =
      '# agentteams-generated\nname = "coder"\nsandbox_mode = "workspace-write" # was\n' +
      'developer_instructions = """\n## Write Policy: Return Proposals, Never Write\n"""\n';
    const codexMissing = '# agentteams-generated\nname = "t"\ndeveloper_instructions = """\n' +
      '## Write Policy: Return Proposals, Never Write\n"""\n[extra]\nx = 1\n';
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/writer.md": claude,
      ".github/agents/helper.agent.md": copilot,
      ".codex/agents/coder.toml": codex,
      ".codex/agents/tester.toml": codexMissing,
      "agentteams.jsonc": switchBrief(),
    });
    Deno.chmodSync(join(sb.project, ".claude/agents/writer.md"), 0o640);
    const { r, rep } = await audit(sb.project, ["--fix"], sb.env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(rep.findings.filter((f) => f.severity === "error"), []);
    const fixed = (rep.fixes ?? []).filter((f) => f.outcome === "fixed").map((f) => f.file).sort();
    assert.deepEqual(fixed, [
      ".claude/agents/writer.md",
      ".codex/agents/coder.toml",
      ".codex/agents/tester.toml",
      ".github/agents/helper.agent.md",
    ]);
    const read = (rel: string) => Deno.readTextFileSync(join(sb.project, rel));
    const narrowed = claude.replace(
      "tools: Read, Edit, Bash, TodoWrite # old",
      "tools: Read, Grep, Glob, TodoWrite",
    );
    const after = read(".claude/agents/writer.md");
    assert.ok(after.startsWith(narrowed), after);
    const fence = after.slice(narrowed.length);
    assert.match(
      fence,
      /^\n<!-- AGENTTEAMS:BEGIN write_policy v=1 -->\n## Write Policy: Return Proposals/,
    );
    assert.match(fence, /<!-- AGENTTEAMS:END write_policy -->\n$/);
    assert.equal(Deno.statSync(join(sb.project, ".claude/agents/writer.md")).mode! & 0o777, 0o640);
    assert.ok(
      read(".github/agents/helper.agent.md").startsWith(
        "---\ndescription: d\ntools: ['read', 'search']\n---\n" + GEN_BODY,
      ),
    );
    assert.equal(
      read(".codex/agents/coder.toml"),
      codex.replace('"workspace-write"', '"read-only"'),
    );
    assert.equal(
      read(".codex/agents/tester.toml"),
      codexMissing.replace("[extra]", 'sandbox_mode = "read-only"\n[extra]'),
    );
    // A second --fix changes nothing.
    const before = await snapshotTree(sb.project);
    const second = await audit(sb.project, ["--fix"], sb.env);
    assert.equal(second.r.code, 0);
    assert.deepEqual(second.rep.fixes, []);
    assertSameTree(before, await snapshotTree(sb.project));
  });
});

Deno.test("--fix leaves an adopted file alone unless it is named", async () => {
  await withSandbox("audit-fix-adopted", async (sb) => {
    const adopted = "---\nname: mine\ndescription: d\ntools: Read, Write\n---\nMine.\n";
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/mine.md": adopted,
      "agentteams.jsonc": switchBrief(),
    });
    const before = await snapshotTree(sb.project);
    const { r, rep } = await audit(sb.project, ["--fix"], sb.env);
    assert.equal(r.code, 1);
    assert.deepEqual(rep.fixes, [{
      file: ".claude/agents/mine.md",
      outcome: "skipped-adopted",
      changes: [],
      reason: "an adopted file (no AGENTTEAMS fences), which --fix changes only when named: " +
        "run agentteams audit --fix .claude/agents/mine.md (it would make: narrowed tools:; " +
        "appended the write-policy section)",
    }]);
    assertSameTree(before, await snapshotTree(sb.project));
    const named = await audit(
      sb.project,
      ["--fix", join(sb.project, ".claude/agents/mine.md")],
      sb.env,
    );
    assert.equal(named.r.code, 0, named.r.stdout);
    assert.equal(named.rep.fixes?.[0].outcome, "fixed");
    assert.ok(
      Deno.readTextFileSync(join(sb.project, ".claude/agents/mine.md")).startsWith(
        "---\nname: mine\ndescription: d\ntools: Read, Grep, Glob\n---\nMine.\n",
      ),
    );
  });
});

Deno.test("--fix refuses a shape it can't rewrite cleanly and leaves the file unchanged", async () => {
  await withSandbox("audit-fix-refuse", async (sb) => {
    const files = {
      ".claude/agents/block.md": "---\nname: b\ntools:\n  - Read\n  # x\n  - Bash\n---\n" +
        GEN_BODY,
      ".claude/agents/mcp.md": "---\nname: m\ntools: Read\nmcpServers:\n  - gh\n---\n" + GEN_BODY,
      ".claude/agents/anchor.md": "---\nname: &n a\ntools: Read, Edit\n---\n" + GEN_BODY,
      ".codex/agents/m.toml":
        '# agentteams-x\nsandbox_mode = "workspace-write"\n[mcp_servers.x]\ncommand = "y"\n',
      ".goose/recipes/r.yaml": "# agentteams-declared-tools: read\ntitle: t\ninstructions: x\n",
    };
    writeFiles(sb.project, { ...compliantClaude(), ...files, "agentteams.jsonc": switchBrief() });
    const before = await snapshotTree(sb.project);
    const { r, rep } = await audit(sb.project, ["--fix"], sb.env);
    assert.equal(r.code, 1);
    const refused = (rep.fixes ?? []).filter((f) => f.outcome === "refused").map((f) => f.file);
    assert.deepEqual(refused.sort(), Object.keys(files).sort());
    assertSameTree(before, await snapshotTree(sb.project));
  });
});

Deno.test("fixText: missing, null and empty tools get the narrowed line; the orchestrator gets its section", () => {
  const body = "\n" + GEN_BODY;
  const m = fixText("claude", "w", "---\nname: w\n---\n" + body, false);
  assert.equal(m.outcome, "fixed");
  assert.ok(
    m.outcome === "fixed" && m.text.startsWith("---\ntools: Read, Grep, Glob\nname: w\n---\n"),
  );
  const n = fixText("claude", "w", "---\nname: w\ntools:\n---\n" + body, false);
  assert.ok(
    n.outcome === "fixed" && n.text.startsWith("---\nname: w\ntools: Read, Grep, Glob\n---\n"),
  );
  const o = fixText(
    "claude",
    "orchestrator",
    "---\nname: o\ntools: Read, Edit, Bash\n---\nLead.\n",
    true,
  );
  assert.ok(o.outcome === "fixed");
  assert.ok(o.outcome === "fixed" && o.text.includes("\n## Write Policy: Applying Proposals\n"));
  assert.ok(
    o.outcome === "fixed" && o.text.startsWith("---\nname: o\ntools: Read, Edit, Bash\n---\n"),
  );
  const late = fixText(
    "claude",
    "orchestrator",
    "---\ntools: Read\n---\n## Project-Specific Notes\n",
    true,
  );
  assert.equal(late.outcome, "refused");
});

Deno.test("fixText: a clean block list becomes one line; Copilot without tools gets ['read']; a rerun changes nothing", () => {
  const block = "---\nname: b\ntools:\n  - Read\n  - Bash\n  - TodoWrite\nmodel: x\n---\n" +
    GEN_BODY;
  const b = fixText("claude", "b", block, false);
  assert.equal(b.outcome, "fixed");
  if (b.outcome !== "fixed") return;
  assert.ok(b.text.startsWith("---\nname: b\ntools: Read, Grep, Glob, TodoWrite\nmodel: x\n---\n"));
  assert.equal(fixText("claude", "b", b.text, false).outcome, "unchanged");
  const c = fixText("copilot", "c", "---\ndescription: d\n---\n" + GEN_BODY, false);
  assert.ok(
    c.outcome === "fixed" && c.text.startsWith("---\ntools: ['read']\ndescription: d\n---\n"),
  );
  const crlf = fixText("claude", "w", "---\r\nname: w\r\ntools: Edit\r\n---\r\n", false);
  assert.equal(crlf.outcome, "refused");
});

Deno.test("fixText narrows a file whose description holds ': ' unquoted, leaving that line (a warning) as it is", () => {
  const text = "---\nname: w\ndescription: Use when: you must\ntools: Read, Edit\n---\n" + GEN_BODY;
  const r = fixText("claude", "w", text, false);
  assert.ok(r.outcome === "fixed", JSON.stringify(r));
  assert.ok(
    r.outcome === "fixed" && r.text.startsWith(text.replace("Read, Edit", "Read, Grep, Glob")),
  );
});

Deno.test("--fix judges a Goose recipe by its path as the audit does: a clean .json recipe is not refused", async () => {
  await withSandbox("audit-fix-goose-json", async (sb) => {
    // JSON-form keys are double-quoted; only the path says the recipe is JSON (a slug does not).
    const rel = ".goose/recipes/orchestrator.json";
    const text = '"title": "t"\n"instructions": |\n  ## Write Policy: Applying Proposals\n';
    assert.deepEqual(checkFile("goose", rel, text, true), []);
    writeFiles(sb.project, { ...compliantClaude(), [rel]: text });
    const before = await snapshotTree(sb.project);
    const r = await auditTeam(sb.project, [], { switchOn: true, frameworks: [], fix: true });
    assert.deepEqual(r.findings.filter((f) => f.file === rel), []);
    assert.deepEqual(r.fixes?.filter((f) => f.file === rel), []);
    assertSameTree(before, await snapshotTree(sb.project));
  });
});

Deno.test("--fix narrows a named Codex agent that starts with a byte-order mark, and keeps the mark", async () => {
  await withSandbox("audit-fix-bom", async (sb) => {
    // The audit reads the mark as part of the text; the check before writing must too, or it
    // takes the file for one that changed while the audit ran and refuses it.
    const rel = ".codex/agents/coder.toml";
    const text = '\uFEFFname = "coder"\nsandbox_mode = "workspace-write"\n' +
      'developer_instructions = """\n## Write Policy: Return Proposals, Never Write\n"""\n';
    writeFiles(sb.project, { ...compliantClaude(), [rel]: text });
    const r = await auditTeam(sb.project, [rel], { switchOn: true, frameworks: [], fix: true });
    assert.deepEqual(r.fixes, [
      { file: rel, outcome: "fixed", changes: ['set sandbox_mode = "read-only"'] },
    ]);
    assert.equal(
      new TextDecoder("utf-8", { ignoreBOM: true }).decode(
        Deno.readFileSync(join(sb.project, rel)),
      ),
      text.replace('"workspace-write"', '"read-only"'),
    );
  });
});

Deno.test("--fix refuses a named agent that is a symlink (switch off, so the audit follows it) and writes nothing", async () => {
  await withSandbox("audit-fix-link", async (sb) => {
    const target = "---\nname: w\ntools: Read, Edit\n---\n" + GEN_BODY;
    writeFiles(sb.project, { "elsewhere/w.md": target });
    Deno.mkdirSync(join(sb.project, ".claude/agents"), { recursive: true });
    Deno.symlinkSync(join(sb.project, "elsewhere/w.md"), join(sb.project, ".claude/agents/w.md"));
    const before = await snapshotTree(sb.project);
    const r = await auditTeam(sb.project, [".claude/agents/w.md"], {
      switchOn: false,
      frameworks: [],
      fix: true,
    });
    assert.deepEqual(r.fixes, [
      {
        file: ".claude/agents/w.md",
        outcome: "refused",
        changes: [],
        reason: "it is a symlink, and --fix never writes through a link; replace it with a " +
          "regular file, then run agentteams audit --fix again",
      },
    ]);
    assertSameTree(before, await snapshotTree(sb.project));
  });
});

Deno.test("--fix reports the findings a fresh audit of the written files gives (fixed, refused, adopted; a file in two groups)", async () => {
  await withSandbox("audit-fix-findings", async (sb) => {
    const adopted = ".claude/agents/adopted.md";
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/writer.md": "---\nname: writer\ntools: Read, Edit\n---\n" + GEN_BODY,
      [adopted]: "---\nname: adopted\ntools: Read, Bash\n---\nBody.\n",
      ".claude/agents/flow.md": "{name: flow, tools: Edit}\n---\n" + GEN_BODY,
    });
    const opts = { switchOn: true, frameworks: [] };
    // One directory: the written file's findings are those of the text the fix wrote.
    const one = await auditTeam(sb.project, ["."], { ...opts, fix: true });
    assert.deepEqual(
      (one.fixes ?? []).map((f) => [f.file, f.outcome]).sort(),
      [
        [adopted, "skipped-adopted"],
        [".claude/agents/flow.md", "refused"],
        [".claude/agents/writer.md", "fixed"],
      ],
    );
    const fresh = await auditTeam(sb.project, ["."], opts);
    // The same findings; in a file --fix left as it was, one that told to run --fix says why
    // it was not fixed instead.
    const bare = (fs: typeof one.findings) => fs.map(({ message: _m, ...f }) => f);
    assert.deepEqual(bare(one.findings), bare(fresh.findings));
    for (const f of one.findings.filter((f) => f.file !== ".claude/agents/writer.md")) {
      assert.doesNotMatch(f.message, /run `agentteams audit --fix`/, f.message);
    }
    assert.ok(
      one.findings.some((f) =>
        f.file === adopted &&
        f.message.endsWith(`(--fix left this file as it was: ${
          (one.fixes ?? []).find((x) => x.file === adopted)?.reason
        })`)
      ),
    );
    assert.equal(one.files, fresh.files);
    // The adopted file in the walk and named too: the walk's entry of it, skipped, must not
    // report the text the named entry's fix replaced.
    const two = await auditTeam(sb.project, [".", adopted], { ...opts, fix: true });
    assert.deepEqual(
      (two.fixes ?? []).filter((f) => f.file === adopted).map((f) => f.outcome),
      ["skipped-adopted", "fixed"],
    );
    assert.deepEqual(
      bare(two.findings),
      bare((await auditTeam(sb.project, [".", adopted], opts)).findings),
    );
  });
});

Deno.test("--fix refuses a file that no longer holds what was audited (it changed under the fix) and does not write it again", async () => {
  await withSandbox("audit-fix-changed", async (sb) => {
    // Named twice: the first entry's fix writes the file, so the second finds other bytes there
    // than it audited; its check before writing must refuse it and leave the first fix as it is.
    const rel = "named/w.toml";
    const text = 'name = "w"\nsandbox_mode = "workspace-write"\n' +
      'developer_instructions = """\n## Write Policy: Return Proposals, Never Write\n"""\n';
    writeFiles(sb.project, { ...compliantClaude(), [rel]: text });
    const opts = { switchOn: true, frameworks: [] };
    const r = await auditTeam(sb.project, [rel, rel], { ...opts, fix: true });
    assert.deepEqual(r.fixes, [
      { file: rel, outcome: "fixed", changes: ['set sandbox_mode = "read-only"'] },
      { file: rel, outcome: "refused", changes: [], reason: "it changed while the audit ran" },
    ]);
    const fixed = text.replace('"workspace-write"', '"read-only"');
    assert.equal(Deno.readTextFileSync(join(sb.project, rel)), fixed);
    // The findings are those of the file as it now is.
    assert.deepEqual(r.findings, (await auditTeam(sb.project, [rel, rel], opts)).findings);
  });
});
