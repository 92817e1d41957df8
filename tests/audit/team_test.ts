/**
 * The team rules (pure, through auditEntries): the orchestrator exemption covers only the single
 * shallowest orchestrator file (Goose also bridge-orchestrator; Codex only when its TOML name is
 * orchestrator too), the orchestrator's and the agents' write-policy sections, the Claude
 * project settings' deny rules, and which frameworks the switch covers; and that the disk walk
 * leaves a YAML file's kind to its path, as those rules expect.
 */
import assert from "node:assert/strict";
import { auditTeam } from "../../lib/audit/audit.ts";
import { auditEntries, type AuditEntry, kindOfPath } from "../../lib/audit/team.ts";
import { ORCH, SECTION, SETTINGS } from "./_team.ts";

const ON = { switchOn: true, frameworks: [] as string[] };
const t = (rel: string, text: string): AuditEntry => ({ rel, state: "text", text });
const codes = (entries: AuditEntry[], opts = ON) =>
  auditEntries(entries, opts).map((f) => `${f.file} ${f.code}`).sort();

const ORCH_MD =
  `---\nname: orchestrator\ndescription: d\ntools: Read, Edit, Bash, Task\n---\n${ORCH}\n`;
const READER = `---\nname: r\ndescription: d\ntools: Read\n---\n${SECTION}\n`;

Deno.test("only the single shallowest orchestrator is exempt; a deeper copy is checked like any agent", () => {
  assert.deepEqual(
    codes([
      t(".claude/agents/orchestrator.md", ORCH_MD),
      t(".claude/agents/team/orchestrator.md", ORCH_MD),
      t(".claude/settings.json", SETTINGS),
    ]),
    [
      ".claude/agents/team/orchestrator.md AGENT_SECTION_MISSING",
      ".claude/agents/team/orchestrator.md TOOL_DISPATCH",
      ".claude/agents/team/orchestrator.md TOOL_SHELL_WARN",
      ".claude/agents/team/orchestrator.md TOOL_WRITE",
    ],
  );
});

Deno.test("two equally shallow orchestrators are both checked", () => {
  const got = codes([
    t(".claude/agents/a/orchestrator.md", ORCH_MD),
    t(".claude/agents/b/orchestrator.md", ORCH_MD),
    t(".claude/settings.json", SETTINGS),
  ]);
  assert.ok(got.includes(".claude/agents/a/orchestrator.md TOOL_WRITE"), got.join("\n"));
  assert.ok(got.includes(".claude/agents/b/orchestrator.md TOOL_WRITE"), got.join("\n"));
});

Deno.test("the orchestrator must carry Applying Proposals, before any Project-Specific Notes", () => {
  const none = ORCH_MD.replace(ORCH, "Lead.");
  assert.deepEqual(
    codes([t(".claude/agents/orchestrator.md", none), t(".claude/settings.json", SETTINGS)]),
    [
      ".claude/agents/orchestrator.md ORCH_SECTION_MISSING",
    ],
  );
  const late = ORCH_MD.replace(ORCH, `## Project-Specific Notes\n\n${ORCH}`);
  assert.deepEqual(
    codes([t(".claude/agents/orchestrator.md", late), t(".claude/settings.json", SETTINGS)]),
    [
      ".claude/agents/orchestrator.md ORCH_SECTION_MISSING",
    ],
  );
  assert.deepEqual(
    codes([t(".claude/agents/orchestrator.md", ORCH_MD), t(".claude/settings.json", SETTINGS)]),
    [],
  );
});

Deno.test("Goose: bridge-orchestrator is exempt too; Codex: only when the TOML name is orchestrator", () => {
  const recipe =
    `title: t\ninstructions: |\n  ${ORCH}\nextensions:\n  - type: builtin\n    name: developer\n`;
  assert.deepEqual(codes([t(".goose/recipes/bridge-orchestrator.yaml", recipe)]), []);
  const toml = (name: string) =>
    `name = "${name}"\nsandbox_mode = "workspace-write"\ndeveloper_instructions = """\n${ORCH}\n"""\n`;
  assert.deepEqual(codes([t(".codex/agents/orchestrator.toml", toml("orchestrator"))]), []);
  assert.deepEqual(codes([t(".codex/agents/orchestrator.toml", toml("lead"))]), [
    ".codex/agents/orchestrator.toml AGENT_SECTION_MISSING",
    ".codex/agents/orchestrator.toml CODEX_SANDBOX",
  ]);
});

Deno.test("the Claude settings: a missing deny rule is a warning naming the rule; all four pass", () => {
  const partial = JSON.stringify({ permissions: { deny: ["Read(./.agentteams/**)"] } });
  const found = auditEntries(
    [t(".claude/agents/r.md", READER), t(".claude/settings.json", partial)],
    ON,
  ).filter((f) => f.code === "SETTINGS_DENY_MISSING");
  assert.deepEqual(found.map((f) => f.severity), ["warning", "warning", "warning"]);
  assert.ok(found.some((f) => f.message.includes("Edit(./.agentteams-status/**)")));
  assert.ok(found.some((f) => f.message.includes("Read(~/.config/agentteams/keys/**)")));
  assert.deepEqual(
    codes([t(".claude/agents/r.md", READER), t(".claude/settings.json", SETTINGS)]),
    [],
  );
  const missing = codes([t(".claude/agents/r.md", READER)]);
  assert.equal(
    missing.filter((c) => c === ".claude/settings.json SETTINGS_DENY_MISSING").length,
    5, // no settings at all, then each of the four rules
  );
  // A file that is not JSON denies nothing (Claude Code ignores all of it): each rule is missing.
  const broken = codes([t(".claude/agents/r.md", READER), t(".claude/settings.json", "{")]);
  assert.equal(broken.filter((c) => c.endsWith("SETTINGS_UNREADABLE")).length, 1, broken.join());
  assert.equal(broken.filter((c) => c.endsWith("SETTINGS_DENY_MISSING")).length, 4, broken.join());
});

Deno.test("the Claude settings: a settings file the walk can't read as text (symlink, not UTF-8, unreadable) denies nothing", () => {
  // It used to be skipped whole, so a symlink in its place passed where no file at all fails.
  for (const state of ["symlink", "not-utf8", "unreadable"] as const) {
    const found = codes([t(".claude/agents/r.md", READER), {
      rel: ".claude/settings.json",
      state,
    }]);
    assert.equal(found.filter((c) => c.endsWith("SETTINGS_UNREADABLE")).length, 1, found.join());
    assert.equal(found.filter((c) => c.endsWith("SETTINGS_DENY_MISSING")).length, 4, found.join());
  }
});

Deno.test("write_policy_frameworks: only the listed frameworks' findings are enforced; no switch enforces none", () => {
  const entries = [t(".codex/agents/c.toml", 'name = "c"\n'), t("AGENTS.md", "# x\n")];
  const f1 = auditEntries(entries, { switchOn: true, frameworks: ["codex"] });
  assert.deepEqual(f1.map((f) => `${f.code} ${f.enforced}`).sort(), [
    "AGENTS_MD false",
    "AGENT_SECTION_MISSING true",
    "CODEX_SANDBOX true",
  ]);
  assert.ok(auditEntries(entries, { switchOn: false, frameworks: [] }).every((f) => !f.enforced));
});

Deno.test("which paths are agents: every .md below .claude/agents/ (README and references/ too: Claude Code loads them)", () => {
  assert.equal(kindOfPath(".claude/agents/x/y.md"), "claude");
  assert.equal(kindOfPath(".claude/agents/references/y.md"), "claude");
  assert.equal(kindOfPath(".claude/agents/README.md"), "claude");
  assert.equal(kindOfPath(".github/agents/y.md"), "copilot");
  assert.equal(kindOfPath(".github/chatmodes/y.chatmode.md"), "copilot");
  assert.equal(kindOfPath(".codex/agents/y.toml"), "codex-agent");
  assert.equal(kindOfPath(".codex/config.toml"), "codex-config");
  assert.equal(kindOfPath(".goose/recipes/y.yaml"), "goose");
  assert.equal(kindOfPath("sub/AGENTS.md"), "agents-md");
  assert.equal(kindOfPath("docs/y.md"), null);
});

Deno.test("a Write(...) deny rule does not stand in for Edit(...): Claude Code checks Read and Edit rules only", () => {
  const writeRules = JSON.stringify({
    permissions: {
      deny: [
        "Read(~/.config/agentteams/keys/**)",
        "Read(./.agentteams/**)",
        "Write(.agentteams/**)",
        "Write(.agentteams-status/**)",
      ],
    },
  });
  const found = auditEntries(
    [t(".claude/agents/r.md", READER), t(".claude/settings.json", writeRules)],
    ON,
  ).filter((f) => f.code === "SETTINGS_DENY_MISSING").map((f) => f.message);
  // Each Write rule is reported, and each Edit rule it stood for is missing: only Edit ones.
  assert.equal(found.length, 4, found.join("\n"));
  assert.ok(found.every((m) => m.includes("Edit(")), found.join("\n"));
  for (const dir of [".agentteams", ".agentteams-status"]) {
    assert.ok(found.some((m) => m.includes(`Edit(./${dir}/**)`)), dir);
  }
});

Deno.test("a JSON recipe under .goose/ is read as a recipe", () => {
  assert.equal(kindOfPath(".goose/recipes/r.json"), "goose");
  assert.deepEqual(
    codes([t(".goose/recipes/r.json", '{"title": "t", "instructions": "x"}')]),
    [
      ".goose/recipes/r.json AGENT_SECTION_MISSING",
      ".goose/recipes/r.json GOOSE_EXTENSIONS_MISSING",
    ],
  );
});

Deno.test("a YAML file under recipes/ that is no Goose recipe is not audited; one under .goose/ always is", () => {
  const ci = "name: build\non: push\njobs: {}\n";
  assert.deepEqual(codes([t("recipes/ci.yaml", ci)]), []);
  assert.deepEqual(codes([t(".goose/recipes/ci.yaml", ci)]), [
    ".goose/recipes/ci.yaml AGENT_SECTION_MISSING",
    ".goose/recipes/ci.yaml GOOSE_EXTENSIONS_MISSING",
  ]);
  assert.ok(codes([t("recipes/r.yaml", "title: t\ninstructions: x\n")]).length > 0);
});

Deno.test("on disk too, a YAML file under recipes/ that is no Goose recipe is neither audited, counted nor fixed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "audit-recipes-" });
  try {
    await Deno.mkdir(`${dir}/recipes`);
    const ci = "name: build\non: push\njobs: {}\n";
    await Deno.writeTextFile(`${dir}/recipes/ci.yaml`, ci);
    const r = await auditTeam(dir, [], { ...ON, fix: true });
    assert.deepEqual(r.findings, []);
    assert.equal(r.files, 0);
    assert.deepEqual(r.fixes, []);
    assert.equal(await Deno.readTextFile(`${dir}/recipes/ci.yaml`), ci);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
