/**
 * Issue 22 item 1, probe 22d's "noticed": VS Code's workspace settings start MCP servers too, and
 * the audit did not read them there.
 *
 * - The `mcp` setting (`.vscode/settings.json`'s `"mcp": {"servers": ...}` or `"mcp.servers"`,
 *   a `*.code-workspace` file's `settings.mcp.servers`): the legacy form of `.vscode/mcp.json`,
 *   whose content is that same `mcp` section (microsoft/vscode
 *   `src/vs/workbench/services/configuration/common/configuration.ts`: `MCP_CONFIGURATION_KEY =
 *   'mcp'`, its standalone file `.vscode/mcp.json`; `mcpWorkbenchManagementService.ts`: a
 *   workspace file's servers at `['settings', 'mcp']`; vscode-docs `docs/copilot/chat/
 *   mcp-servers.md` of 1.99 documents `"mcp": {"servers": ...}` in settings.json). Each server is
 *   judged as a `.vscode/mcp.json` server is (`VSCODE_MCP`).
 * - `chat.mcp.discovery.enabled`: VS Code then loads the MCP servers configured for other
 *   applications (Claude Desktop, Windsurf, Cursor's global and workspace `.cursor/mcp.json`:
 *   `mcpConfiguration.ts` `DiscoverySource`) and starts them as the user. Only `false` is off in
 *   every release: 1.99 took any object as on (`if (!enabled)`), later releases read an object
 *   entry as on unless it is `false`, current ones unless it is `true`.
 *
 * Each case failed on main with exit 0 (`--strict` included): the audit never looked.
 */
import assert from "node:assert/strict";
import { auditStrict, compliantClaude } from "./_team.ts";

const OURS = { type: "stdio", command: "agentteams", args: ["mcp", "readfs", "--root", "."] };
const SLY = { type: "stdio", command: "sh", args: ["-c", "id"] };

/** A settings file (its path, its text) and what the audit must say: a finding on its line. */
const BAD: [string, string, string, number, RegExp][] = [
  [
    "the mcp setting's servers",
    ".vscode/settings.json",
    JSON.stringify({ "editor.tabSize": 2, mcp: { servers: { r: OURS, sly: SLY } } }, null, 2),
    15,
    /server "sly" is not one of agentteams' own \(it launches sh/,
  ],
  [
    "a dotted mcp.servers",
    ".vscode/settings.json",
    '{\n  "mcp.servers": {\n    "sly": ' + JSON.stringify(SLY) + "\n  }\n}",
    3,
    /server "sly" is not one of agentteams' own/,
  ],
  [
    "a workspace file's settings.mcp.servers",
    "team.code-workspace",
    JSON.stringify({ folders: [{ path: "." }], settings: { mcp: { servers: { sly: SLY } } } }),
    1,
    /server "sly" is not one of agentteams' own/,
  ],
  [
    "discovery on",
    ".vscode/settings.json",
    '{\n  // every other host\'s servers\n  "chat.mcp.discovery.enabled": true\n}',
    3,
    /"chat\.mcp\.discovery\.enabled" is not false/,
  ],
  [
    "discovery of one source, nested",
    ".vscode/settings.json",
    JSON.stringify({ chat: { mcp: { discovery: { enabled: { "claude-desktop": true } } } } }),
    1,
    /"chat\.mcp\.discovery\.enabled" is not false/,
  ],
  [
    "discovery as an object of false entries (1.99 reads any object as on)",
    ".vscode/settings.json",
    '{\n  "a": 1,\n  "chat.mcp.discovery.enabled": {"claude-desktop": false}\n}',
    3,
    /"chat\.mcp\.discovery\.enabled" is not false/,
  ],
];

for (const [what, rel, text, line, message] of BAD) {
  Deno.test(`audit --strict: ${what} in ${rel} is VSCODE_MCP on its line, nothing written`, async () => {
    const r = await auditStrict("audit-vscode-settings-mcp", {
      ...compliantClaude(),
      [rel]: text + "\n",
    }, { refused: true });
    const lines = r.stdout.split("\n").filter((l) => /VSCODE_MCP/.test(l));
    assert.equal(lines.length, 1, r.stdout);
    assert.match(lines[0], new RegExp(`^\\s*${line}:\\d+ error VSCODE_MCP: `), r.stdout);
    assert.match(lines[0], message);
    assert.ok(r.stdout.includes(`${rel}\n`), r.stdout);
  });
}

Deno.test("audit --strict: agentteams' own server in the mcp setting and discovery false pass", async () => {
  const r = await auditStrict("audit-vscode-settings-mcp-ok", {
    ...compliantClaude(),
    ".vscode/settings.json": JSON.stringify({
      "chat.mcp.discovery.enabled": false,
      mcp: { inputs: [], servers: { r: OURS } },
    }) + "\n",
    "team.code-workspace": JSON.stringify({
      folders: [{ path: "." }],
      settings: { "chat.mcp.discovery.enabled": false, "mcp.servers": { r: OURS } },
    }) + "\n",
  }, { refused: false });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout, /VSCODE_MCP/);
});

Deno.test("audit --strict: a loading setting below a dotted key (VS Code splits keys at dots) is VSCODE_EXTRA_AGENTS, nothing written", async () => {
  // `toValuesTree` (src/vs/platform/configuration/common/configurationModels.ts) makes this the
  // setting chat.agentFilesLocations {"elsewhere/agents": true}; main passed it.
  const r = await auditStrict("audit-vscode-settings-dotted", {
    ...compliantClaude(),
    ".vscode/settings.json": '{\n  "chat.agentFilesLocations.elsewhere/agents": true\n}\n',
  }, { refused: true });
  assert.match(r.stdout, /2:3 error VSCODE_EXTRA_AGENTS: "chat\.agentFilesLocations\.elsewhere/);
});
