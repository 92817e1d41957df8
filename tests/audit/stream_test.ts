/**
 * The audit reads each file just before it checks it (issue 24 item 5): the walk lists the team
 * (`listTeam`) without reading it, the exemption is decided from the paths (reading only a Codex
 * orchestrator's name), and `auditTeam` gives what the whole-team reading (`walkTeam`, then
 * `auditEntries`) gives, on a team with every kind of entry the walk settles itself.
 */
import assert from "node:assert/strict";
import { auditTeam } from "../../lib/audit/audit.ts";
import { auditEntries, exemptFiles, isAgentEntry } from "../../lib/audit/team.ts";
import { listTeam, walkTeam } from "../../lib/audit/walk.ts";
import { ORCH, SECTION, SETTINGS } from "./_team.ts";

const ORCH_MD =
  `---\nname: orchestrator\ndescription: d\ntools: Read, Edit, Bash, Task\n---\n${ORCH}\n`;
const READER = `---\nname: r\ndescription: d\ntools: Read\n---\n${SECTION}\n`;
const WRITER = `---\nname: w\ndescription: d\ntools: Read, Edit\n---\n${SECTION}\n`;
const toml = (name: string) =>
  `name = "${name}"\nsandbox_mode = "workspace-write"\ndeveloper_instructions = """\n${ORCH}\n"""\n`;

function team(): string {
  const dir = Deno.makeTempDirSync({ prefix: "audit-stream-" });
  const put = (rel: string, text: string | Uint8Array) => {
    const abs = `${dir}/${rel}`;
    Deno.mkdirSync(abs.slice(0, abs.lastIndexOf("/")), { recursive: true });
    if (typeof text === "string") Deno.writeTextFileSync(abs, text);
    else Deno.writeFileSync(abs, text);
  };
  put(".claude/agents/orchestrator.md", ORCH_MD);
  put(".claude/agents/team/orchestrator.md", ORCH_MD);
  put(".claude/agents/reader.md", READER);
  put(".claude/agents/writer.md", WRITER);
  put(".claude/agents/bad.md", new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0x0a]));
  put(".claude/agents/README.md", "# notes, no front matter\n");
  put(".claude/settings.json", SETTINGS);
  put(".codex/agents/orchestrator.toml", toml("orchestrator"));
  put(".codex/agents/lead.toml", toml("lead"));
  put("recipes/ci.yaml", "on: push\n");
  put("AGENTS.md", "# team\n");
  Deno.symlinkSync(`${dir}/.claude/agents/reader.md`, `${dir}/.claude/agents/linked.md`);
  return dir;
}

const OPTS = { switchOn: true, frameworks: [] as string[] };

Deno.test("the streamed audit finds and counts what the whole-team reading does", async () => {
  const dir = team();
  try {
    const entries = await walkTeam(dir, { followLinks: false });
    const whole = auditEntries(entries, OPTS);
    const r = await auditTeam(dir, ["."], OPTS);
    assert.deepEqual(r.findings, whole);
    // Exempt: the shallow Claude orchestrator and the Codex one named orchestrator; checked: the
    // deeper copy, the writer, the file that is not UTF-8, the link, the Codex lead.
    const codes = r.findings.map((f) => `${f.file} ${f.code}`);
    assert.ok(codes.includes(".claude/agents/team/orchestrator.md TOOL_WRITE"), codes.join("\n"));
    assert.ok(codes.includes(".claude/agents/writer.md TOOL_WRITE"));
    assert.ok(codes.includes(".claude/agents/bad.md FILE_NOT_UTF8"));
    assert.ok(codes.includes(".claude/agents/linked.md FILE_SYMLINK"));
    assert.ok(codes.includes(".codex/agents/lead.toml CODEX_SANDBOX"));
    assert.ok(!codes.some((c) => c.startsWith(".claude/agents/orchestrator.md ")));
    assert.ok(!codes.some((c) => c.startsWith(".codex/agents/orchestrator.toml ")));
    // Counted: every agent file (AGENTS.md too) but the README without a front matter and the CI
    // YAML, as the whole-team reading counts them.
    assert.equal(r.files, 9);
    assert.equal(r.files, entries.filter(isAgentEntry).length);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the walk lists without reading: each file is read when asked, as it is then", async () => {
  const dir = team();
  try {
    const listed = await listTeam(dir, { followLinks: false });
    const reader = listed.find((l) => l.rel === ".claude/agents/reader.md");
    assert.ok(reader !== undefined);
    Deno.writeTextFileSync(`${dir}/.claude/agents/reader.md`, WRITER);
    const e = reader.read();
    assert.equal(e.state, "text");
    assert.equal(e.text, WRITER);
    // A link is settled by the walk itself, not read.
    assert.equal(listed.find((l) => l.rel === ".claude/agents/linked.md")?.read().state, "symlink");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the exemption from paths reads only the Codex orchestrator's text", async () => {
  const dir = team();
  try {
    const listed = await listTeam(dir, { followLinks: false });
    const asked: string[] = [];
    const exempt = exemptFiles(listed, (l) => {
      asked.push(l.rel);
      const e = l.read();
      return e.state === "text" ? e.text ?? "" : null;
    });
    assert.deepEqual(asked, [".codex/agents/orchestrator.toml"]);
    assert.deepEqual(
      [...exempt].sort(),
      [".claude/agents/orchestrator.md", ".codex/agents/orchestrator.toml"],
    );
    // Renamed in its TOML, it is no longer exempt.
    Deno.writeTextFileSync(`${dir}/.codex/agents/orchestrator.toml`, toml("lead"));
    assert.deepEqual([...exemptFiles(listed, (l) => l.read().text ?? null)], [
      ".claude/agents/orchestrator.md",
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the streamed audit of a team larger than one read batch equals the whole-team reading", async () => {
  const dir = team();
  try {
    // 150 more agents (every tenth a writer) spread over three folders: three batches and more.
    for (let i = 0; i < 150; i++) {
      const sub = `${dir}/.claude/agents/g${i % 3}`;
      Deno.mkdirSync(sub, { recursive: true });
      Deno.writeTextFileSync(`${sub}/a${i}.md`, i % 10 === 0 ? WRITER : READER);
    }
    const entries = await walkTeam(dir, { followLinks: false });
    const r = await auditTeam(dir, ["."], OPTS);
    assert.deepEqual(r.findings, auditEntries(entries, OPTS));
    assert.equal(r.files, entries.filter(isAgentEntry).length);
    assert.equal(r.files, 159);
    assert.equal(r.findings.filter((f) => f.code === "TOOL_WRITE").length, 15 + 2);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
