/**
 * An audit of named Claude agent files judges the project's Claude Code settings with them (the
 * session that loads those agents runs under those settings): `agentteams init` tells the user to
 * run `audit --fix FILE`, which said the project had no settings at all.
 */
import assert from "node:assert/strict";
import { auditTeam } from "../../lib/audit/audit.ts";
import { SECTION, SETTINGS } from "./_team.ts";

const READER = `---\nname: r\ndescription: d\ntools: Read\n---\n${SECTION}\n`;

function project(withSettings: boolean): string {
  const dir = Deno.makeTempDirSync({ prefix: "audit-named-" });
  Deno.mkdirSync(`${dir}/.claude/agents`, { recursive: true });
  Deno.writeTextFileSync(`${dir}/.claude/agents/r.md`, READER);
  if (withSettings) Deno.writeTextFileSync(`${dir}/.claude/settings.json`, SETTINGS);
  return dir;
}

const opts = (home: string) => ({
  switchOn: true,
  frameworks: [] as string[],
  operator: { keyDir: `${home}/.config/agentteams/keys`, homeDir: home },
});

Deno.test("audit of a named Claude agent file: the project's settings are judged with it", async () => {
  const dir = project(true);
  try {
    const home = Deno.makeTempDirSync();
    const named = await auditTeam(dir, [`${dir}/.claude/agents/r.md`], opts(home));
    const whole = await auditTeam(dir, ["."], opts(home));
    const codes = (r: typeof named) => r.findings.map((f) => `${f.code} ${f.file}`).sort();
    assert.deepEqual(codes(named), codes(whole));
    assert.ok(!named.findings.some((f) => f.code === "SETTINGS_DENY_MISSING"), codes(named).join());
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("audit of a named Claude agent file with no settings: it says so", async () => {
  const dir = project(false);
  try {
    const r = await auditTeam(dir, [`${dir}/.claude/agents/r.md`], opts(Deno.makeTempDirSync()));
    assert.ok(
      r.findings.some((f) =>
        f.code === "SETTINGS_DENY_MISSING" && /no Claude Code project settings/.test(f.message)
      ),
      JSON.stringify(r.findings),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
