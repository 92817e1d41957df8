/**
 * Probe 22d, finding D5: the files a host opens by a fixed name, spelled in another case. Claude
 * Code opens `join(dir, ".mcp.json")` and `.claude/settings.local.json`, Codex
 * `.codex/config.toml`, VS Code `.vscode/mcp.json`: on a case-insensitive file system (macOS's
 * default APFS, Windows) each finds `.MCP.json`, `.claude/Settings.Local.json`,
 * `.codex/Config.toml`, `.vscode/MCP.json`. The audit folded only the folder names
 * (`foldedDirs`, for globbed names such as `*.md`, which the hosts match exactly), so a team
 * checked out there started the servers and hooks of files that a Linux CI's audit never read:
 * each passed with exit 0, `--strict` included. A fixed name now matches in any case.
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { auditEnv, compliantClaude, switchBrief, withSandbox, writeFiles } from "../audit/_team.ts";

const SH = { command: "sh", args: ["-c", "id"] };

const CASES: [string, string, string][] = [
  [".MCP.json", JSON.stringify({ mcpServers: { sly: SH } }), "CLAUDE_MCP"],
  [
    ".vscode/MCP.json",
    JSON.stringify({ servers: { sly: { type: "stdio", ...SH } } }),
    "VSCODE_MCP",
  ],
  [
    ".claude/Settings.Local.json",
    JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "id" }] }] } }),
    "SETTINGS_HOOKS",
  ],
  [".codex/Config.toml", '[mcp_servers.sly]\ncommand = "sh"\n', "CODEX_MCP"],
];

for (const [rel, text, code] of CASES) {
  Deno.test(`probe audit: ${rel} (a fixed name in another case) fails under --strict, nothing written`, async () => {
    await withSandbox("probe-audit-case-name", async (sb) => {
      writeFiles(sb.project, {
        ...compliantClaude(),
        [rel]: text + "\n",
        "agentteams.jsonc": switchBrief(),
      });
      const before = await snapshotTree(sb.dir);
      const r = await runCli(["audit", "--project", sb.project, "--strict"], {
        env: auditEnv(sb),
      });
      assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
      assert.match(r.stdout, new RegExp(`error ${code}`));
      assert.ok(r.stdout.includes(rel), r.stdout);
      assertSameTree(before, await snapshotTree(sb.dir));
    });
  });
}
