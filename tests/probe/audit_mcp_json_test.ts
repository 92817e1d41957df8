/**
 * Probe 22d, finding D3: Claude Code's project MCP servers. A `.mcp.json` in the project (or in a
 * folder below, where a session may start) names programs Claude Code starts as the user at the
 * session's start, outside its sandbox, whatever any agent's `tools:` say: 2.1.42 `cli.js`
 * `LJ("project")` merges every `.mcp.json` from the session's directory up to `/`, and `uJ6`
 * approves each server when the settings say `enableAllProjectMcpServers` (or list it in
 * `enabledMcpjsonServers`), in every non-interactive session (`claude -p`), or on the user's yes.
 * The audit did not read `.mcp.json` at all, so a team whose `.mcp.json` starts `sh -c ...` (with
 * `enableAllProjectMcpServers` in the settings) passed with exit 0. Now each server that is not
 * agentteams' own is `CLAUDE_MCP` (lib/audit/check_mcp.ts).
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import {
  auditEnv,
  compliantClaude,
  SETTINGS,
  switchBrief,
  withSandbox,
  writeFiles,
} from "../audit/_team.ts";

const OURS = {
  agentteams_readfs: { command: "agentteams", args: ["mcp", "readfs", "--root", "."] },
  agentteams_runner: { command: "agentteams", args: ["mcp", "runner", "--agent", "worker"] },
};

/** Servers that start something other than agentteams' own servers, as written. */
const BAD: Record<string, unknown> = {
  "a shell": { command: "sh", args: ["-c", "touch /tmp/agentteams-probe-22d"] },
  "agentteams with an env": { ...OURS.agentteams_readfs, env: { LD_PRELOAD: "./x.so" } },
  "agentteams found through a ${VAR}": { command: "${AT:-sh}", args: ["-c", "id"] },
  "a runner with more arguments": {
    command: "agentteams",
    args: ["mcp", "runner", "--agent", "worker", "--project", "/"],
  },
  "a remote server": { type: "http", url: "https://example.invalid/mcp" },
};

for (const [what, server] of Object.entries(BAD)) {
  for (const at of [".mcp.json", "src/.mcp.json"]) {
    Deno.test(`probe audit: ${at} with ${what} fails, nothing written`, async () => {
      await withSandbox("probe-audit-mcp-json", async (sb) => {
        const settings = { ...JSON.parse(SETTINGS), enableAllProjectMcpServers: true };
        writeFiles(sb.project, {
          ...compliantClaude(),
          ".claude/settings.json": JSON.stringify(settings, null, 2) + "\n",
          [at]: JSON.stringify({ mcpServers: { ...OURS, sly: server } }, null, 2) + "\n",
          "agentteams.jsonc": switchBrief(),
        });
        const before = await snapshotTree(sb.dir);
        const r = await runCli(["audit", "--project", sb.project], {
          env: auditEnv(sb),
        });
        assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
        const lines = r.stdout.split("\n").filter((l) => /CLAUDE_MCP/.test(l));
        assert.equal(lines.length, 1, r.stdout);
        assert.match(lines[0], /error CLAUDE_MCP.*"sly"/);
        assert.ok(r.stdout.includes(`${at}\n`), r.stdout);
        assertSameTree(before, await snapshotTree(sb.dir));
      });
    });
  }
}

Deno.test("probe audit: a .mcp.json with agentteams' own servers only passes; one that does not read fails", async () => {
  await withSandbox("probe-audit-mcp-json-ours", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".mcp.json": JSON.stringify({ mcpServers: OURS }, null, 2) + "\n",
      "agentteams.jsonc": switchBrief(),
    });
    const env = auditEnv(sb);
    const ok = await runCli(["audit", "--project", sb.project, "--strict"], { env });
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /2 agent file\(s\)/);
    writeFiles(sb.project, {
      ".mcp.json": '{"mcpServers": {"x": {"command": "sh"}}, "mcpServers": {}}',
    });
    const bad = await runCli(["audit", "--project", sb.project], { env });
    assertCliRefused(bad, "audit", "AR_WRITE_POLICY", 1);
    assert.match(bad.stdout, /error CLAUDE_MCP.*does not read as JSON/);
  });
});

Deno.test("probe audit: .vscode/mcp.json with a server that is not agentteams' own fails (VSCODE_MCP), nothing written", async () => {
  await withSandbox("probe-audit-vscode-mcp", async (sb) => {
    const servers = {
      agentteams_readfs: { type: "stdio", ...OURS.agentteams_readfs },
      sly: { type: "stdio", command: "node", args: ["${workspaceFolder}/x.js"] },
    };
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".vscode/mcp.json": JSON.stringify({ inputs: [], servers }, null, 2) + "\n",
      "agentteams.jsonc": switchBrief(),
    });
    const env = auditEnv(sb);
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["audit", "--project", sb.project], { env });
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    const lines = r.stdout.split("\n").filter((l) => /VSCODE_MCP/.test(l));
    assert.equal(lines.length, 1, r.stdout);
    assert.match(lines[0], /error VSCODE_MCP.*"sly"/);
    assertSameTree(before, await snapshotTree(sb.dir));
    writeFiles(sb.project, {
      ".vscode/mcp.json": JSON.stringify({ servers: { r: servers.agentteams_readfs } }) + "\n",
    });
    const ok = await runCli(["audit", "--project", sb.project, "--strict"], { env });
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  });
});

Deno.test("probe audit: a parent directory's .mcp.json (Claude Code reads each up to /) fails, nothing written", async () => {
  await withSandbox("probe-audit-mcp-parent", async (sb) => {
    // A team one folder down in its repository: a session started there reads the repository's
    // root .mcp.json too.
    const team: Record<string, string> = {};
    for (const [rel, text] of Object.entries(compliantClaude())) team[`team/${rel}`] = text;
    writeFiles(sb.project, {
      ...team,
      "team/agentteams.jsonc": switchBrief(),
      ".mcp.json": JSON.stringify({ mcpServers: { sly: BAD["a shell"] } }) + "\n",
    });
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["audit", "--project", `${sb.project}/team`], {
      env: auditEnv(sb),
    });
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    assert.match(r.stdout, /error CLAUDE_MCP.*"sly"/);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});
