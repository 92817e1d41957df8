/**
 * `audit --fix` as a user with hand-written files meets it (issue 23 item 9): each file it does
 * not fix is named with why and what to run; findings after --fix no longer say to run --fix for
 * a file it left; a Codex agent whose `developer_instructions` hold lines starting with `[` (or a
 * decoy `sandbox_mode =` line) is fixed, judged by smol-toml's reading, not a line scan; a Codex
 * agent missing its write-policy section gets it; no inserted section points at a reference file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "smol-toml";
import { runCli } from "../_helpers/mod.ts";
import { AuditReportSchema } from "../../lib/audit/report_schema.ts";
import { fixText, WRITE_POLICY_REFERENCE } from "../../lib/audit/fix.ts";
import { checkFile } from "../../lib/audit/team.ts";
import { compliantClaude, SECTION, switchBrief, withSandbox, writeFiles } from "./_team.ts";

const env = (e: Record<string, string>) => ({ env: { ...e, AGENTTEAMS_BROAD_OK: "1" } });

Deno.test("--fix on adopted files names each file it left, why, and the command that fixes it; the refusal no longer says to run --fix", async () => {
  await withSandbox("audit-fix-adopted-text", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/agents/mine.md": "---\nname: mine\ndescription: d\ntools: Read, Edit\n---\nBody.\n",
      ".goose/recipes/r.yaml": "version: 1.0.0\ntitle: r\ndescription: d\ninstructions: Work.\n" +
        "extensions:\n  - type: builtin\n    name: developer\n",
      "agentteams.jsonc": switchBrief(),
    });
    const before = Deno.readTextFileSync(join(sb.project, ".claude/agents/mine.md"));
    const r = await runCli(["audit", "--project", sb.project, "--fix"], env(sb.env));
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /^not fixed \.claude\/agents\/mine\.md: an adopted file \(no AGENTTEAMS fences\), which --fix changes only when named: run agentteams audit --fix \.claude\/agents\/mine\.md \(it would make: narrowed tools:; appended the write-policy section\)$/m,
    );
    assert.match(
      r.stdout,
      /^not fixed \.goose\/recipes\/r\.yaml: Goose recipes are not rewritten: edit the recipe by hand/m,
    );
    // The findings of the files it left say why, not "run agentteams audit --fix" again.
    assert.doesNotMatch(r.stdout, /run `agentteams audit --fix`/);
    assert.match(r.stdout, /--fix left this file as it was: an adopted file/);
    assert.match(r.stderr, /refused: AR_WRITE_POLICY: .*--fix left what it says above/);
    assert.equal(Deno.readTextFileSync(join(sb.project, ".claude/agents/mine.md")), before);
    // Running what it says fixes the file.
    const named = await runCli(
      ["audit", "--project", sb.project, "--fix", join(sb.project, ".claude/agents/mine.md")],
      env(sb.env),
    );
    assert.match(named.stdout, /^fixed \.claude\/agents\/mine\.md: narrowed tools:/m, named.stdout);
    const fixed = Deno.readTextFileSync(join(sb.project, ".claude/agents/mine.md"));
    assert.match(fixed, /^tools: Read, Grep, Glob$/m);
    // The section points at the reference file `agentteams init` writes (tests/init/).
    assert.ok(fixed.includes(WRITE_POLICY_REFERENCE), "the section names the reference file");
  });
});

/** A Codex agent whose instructions hold TOML-looking lines (a table header, a decoy key). */
const TRICKY = [
  "# agentteams-generated",
  'name = "coder"',
  'developer_instructions = """',
  "[Step 1] read the issue",
  "[[notes]]",
  'sandbox_mode = "danger-full-access"',
  SECTION,
  '"""',
  'model = "gpt-5"',
  "",
].join("\n");

Deno.test("Codex --fix reads the TOML as smol-toml does: [ lines and a decoy sandbox_mode inside developer_instructions are left as they are", () => {
  for (
    const [label, text, line] of [
      ["missing", TRICKY, null],
      ["wrong", TRICKY.replace('model = "gpt-5"', 'sandbox_mode = "workspace-write"'), null],
      [
        "wrong, before the string",
        TRICKY.replace('name = "coder"', 'name = "coder"\nsandbox_mode = "workspace-write" # x'),
        'sandbox_mode = "read-only" # x',
      ],
    ] as const
  ) {
    const before = parse(text) as Record<string, unknown>;
    const r = fixText("codex-agent", ".codex/agents/coder.toml", text, false);
    assert.equal(r.outcome, "fixed", `${label}: ${JSON.stringify(r)}`);
    if (r.outcome !== "fixed") continue;
    assert.deepEqual(r.changes, ['set sandbox_mode = "read-only"'], label);
    const after = parse(r.text) as Record<string, unknown>;
    assert.equal(after.developer_instructions, before.developer_instructions, label);
    assert.deepEqual({ ...after }, { ...before, sandbox_mode: "read-only" }, label);
    if (line !== null) assert.ok(r.text.includes(line), `${label}: ${r.text}`);
    assert.deepEqual(checkFile("codex-agent", ".codex/agents/coder.toml", r.text, false), []);
    assert.deepEqual(
      fixText("codex-agent", ".codex/agents/coder.toml", r.text, false),
      { outcome: "unchanged" },
      `${label}: a rerun changes nothing`,
    );
  }
});

Deno.test("Codex --fix adds the missing write-policy section to developer_instructions (present or absent), and the audit then passes", async () => {
  const withInstr = '# agentteams-generated\nname = "t"\nsandbox_mode = "read-only"\n' +
    "developer_instructions = '''\nRead the code.\n[not a table]\n'''\n[extra]\nx = 1\n";
  const without =
    '# agentteams-generated\nname = "u"\nsandbox_mode = "read-only"\n[extra]\nx = 1\n';
  for (const text of [withInstr, without]) {
    const before = parse(text) as Record<string, unknown>;
    assert.deepEqual(
      checkFile("codex-agent", ".codex/agents/t.toml", text, false).map((s) => s.code),
      ["AGENT_SECTION_MISSING"],
    );
    const r = fixText("codex-agent", ".codex/agents/t.toml", text, false);
    assert.equal(r.outcome, "fixed", JSON.stringify(r));
    if (r.outcome !== "fixed") continue;
    assert.deepEqual(r.changes, ["appended the write-policy section to developer_instructions"]);
    const after = parse(r.text) as Record<string, unknown>;
    const { developer_instructions: di, ...rest } = after;
    const { developer_instructions: old, ...restBefore } = before;
    assert.deepEqual(rest, restBefore, "every other key as it was");
    assert.ok(typeof di === "string" && di.startsWith(typeof old === "string" ? old : ""));
    assert.match(String(di), /^## Write Policy: Return Proposals, Never Write$/m);
    assert.ok(r.text.includes(WRITE_POLICY_REFERENCE), "the section names the reference file");
    assert.deepEqual(checkFile("codex-agent", ".codex/agents/t.toml", r.text, false), []);
    assert.deepEqual(fixText("codex-agent", ".codex/agents/t.toml", r.text, false), {
      outcome: "unchanged",
    });
  }
  // Through the CLI: the Codex finding's advice (--fix) is now true.
  await withSandbox("audit-fix-codex-section", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".codex/agents/t.toml": withInstr,
      "agentteams.jsonc": switchBrief(),
    });
    const r = await runCli(
      ["audit", "--project", sb.project, "--fix", "--format", "json"],
      env(sb.env),
    );
    const rep = AuditReportSchema.parse(JSON.parse(r.stdout));
    assert.equal(r.code, 0, r.stdout);
    assert.deepEqual(rep.fixes?.map((f) => [f.file, f.outcome]), [
      [".codex/agents/t.toml", "fixed"],
    ]);
  });
});

Deno.test("a Codex agent's section in a TOML comment does not count (the host never shows comments); --fix puts it in developer_instructions", () => {
  // The heading line itself starts with `#`: at the top level of a TOML file it is a comment.
  const text = `# agentteams-generated\nname = "c"\nsandbox_mode = "read-only"\n${SECTION}\n` +
    'developer_instructions = """\nRead.\n"""\n';
  assert.equal(parse(text).developer_instructions, "Read.\n");
  assert.deepEqual(
    checkFile("codex-agent", ".codex/agents/c.toml", text, false).map((s) => s.code),
    ["AGENT_SECTION_MISSING"],
  );
  const r = fixText("codex-agent", ".codex/agents/c.toml", text, false);
  assert.equal(r.outcome, "fixed");
  if (r.outcome !== "fixed") return;
  assert.deepEqual(checkFile("codex-agent", ".codex/agents/c.toml", r.text, false), []);
  // In a string value it counts.
  const inString = 'name = "c"\nsandbox_mode = "read-only"\ndeveloper_instructions = """\n' +
    `${SECTION}\n"""\n`;
  assert.deepEqual(checkFile("codex-agent", ".codex/agents/c.toml", inString, false), []);
});
