/**
 * lib/audit/check_vscode.ts (probe 22c C2): the Copilot hooks files and the VS Code workspace
 * settings, read as widely as the hosts read them.
 */
import assert from "node:assert/strict";
import { checkHooksFile, checkVscodeSettings } from "../../lib/audit/check_vscode.ts";

const S = ".vscode/settings.json";
const H = ".github/hooks/hooks.json";

Deno.test("checkVscodeSettings: a loading key counts dotted, nested, in a language block, escaped; one that adds nothing does not", () => {
  const codes = (t: string) => checkVscodeSettings(t, S).map((s) => s.code);
  for (
    const t of [
      '{"chat.agentFilesLocations": {"a": true}}',
      '{"chat": {"agentFilesLocations": {"a": "true"}}}',
      '{"[markdown]": {"chat.hookFilesLocations": {"h.json": true}}}',
      '{"chat.plugin\\u004Cocations": {"p": true}}',
      '{"chat.useCustomizationsInParentRepositories": true}',
      // VS Code splits a key at its dots: this is chat.agentFilesLocations {"evil": true}.
      '{"chat.agentFilesLocations.evil": true}',
      '{"chat.hookFilesLocations.h.json": true, "chat.hookFilesLocations.g.json": false}',
      '{"chat.agentFilesLocations": {"a": true, "b": true}}',
      '{\n  // comment\n  "chat.modeFilesLocations": {"m": true},\n}',
    ]
  ) assert.deepEqual(codes(t), ["VSCODE_EXTRA_AGENTS"], t);
  for (
    const t of [
      "{}",
      '{"chat.agentFilesLocations": {}}',
      '{"chat.agentFilesLocations": {"a": false, "b": "FALSE"}}',
      '{"chat.agentFilesLocations.a": false}',
      '{"chat.useCustomizationsInParentRepositories": false}',
      '{"chat.useHooks": true, "editor.tabSize": 2}',
    ]
  ) assert.deepEqual(codes(t), [], t);
});

Deno.test("checkVscodeSettings: a file that does not read (a duplicate key, a syntax error) is reported, not passed", () => {
  for (const t of ['{"a": 1, "a": 2}', '{"chat.agentFilesLocations": {"a": true}', "nope"]) {
    const s = checkVscodeSettings(t, S);
    assert.equal(s.length, 1, t);
    assert.equal(s[0].code, "VSCODE_EXTRA_AGENTS");
    assert.match(s[0].message, /does not read as JSONC/);
  }
});

Deno.test("checkHooksFile: anything but empty hooks (and a version) is reported, where it is", () => {
  assert.deepEqual(checkHooksFile('{"version": 1, "hooks": {}}', H, "COPILOT_HOOKS"), []);
  assert.deepEqual(checkHooksFile('{"hooks": []}', H, "COPILOT_HOOKS"), []);
  const s = checkHooksFile(
    '{\n  "version": 1,\n  "hooks": {"preToolUse": [{"bash": "x"}]}\n}',
    H,
    "COPILOT_HOOKS",
  );
  assert.deepEqual(s.map((x) => [x.code, x.line]), [["COPILOT_HOOKS", 3]]);
  assert.match(s[0].message, /preToolUse/);
  // Claude's shape at the top level, a list, a file that does not read: reported too.
  for (const t of ['{"PreToolUse": [{"command": "x"}]}', "[]", "{", '{"hooks": {}, "hooks": {}}']) {
    assert.equal(checkHooksFile(t, H, "COPILOT_HOOKS")[0]?.code, "COPILOT_HOOKS", t);
  }
});

Deno.test("checkHooksFile and the Codex TOML checks: .codex/hooks.json, [hooks] and notify are CODEX_HOOKS", async () => {
  const { checkCodexAgent, checkCodexConfig } = await import("../../lib/audit/check_codex.ts");
  assert.equal(
    checkHooksFile('{"hooks": {"PreToolUse": []}}', ".codex/hooks.json", "CODEX_HOOKS")[0].code,
    "CODEX_HOOKS",
  );
  const codes = (s: { code: string }[]) => s.map((x) => x.code);
  assert.deepEqual(
    codes(checkCodexConfig('notify = ["sh", "-c", "x"]\n[hooks]\n[[hooks.PreToolUse]]\n')),
    ["CODEX_HOOKS", "CODEX_HOOKS"],
  );
  assert.deepEqual(
    codes(
      checkCodexAgent('sandbox_mode = "read-only"\n[[hooks.PreToolUse]]\nmatcher = "x"\n', "w"),
    ),
    ["CODEX_HOOKS"],
  );
  assert.deepEqual(codes(checkCodexAgent('sandbox_mode = "read-only"\n', "w")), []);
});

Deno.test("checkVscodeSettings: a .code-workspace file's settings count; its other keys do not", () => {
  const W = "team.code-workspace";
  const t = '{"folders": [{"path": "."}], "settings": {"chat.agentFilesLocations": {"x": true}}}';
  assert.deepEqual(checkVscodeSettings(t, W).map((s) => s.code), ["VSCODE_EXTRA_AGENTS"]);
  assert.deepEqual(checkVscodeSettings('{"chat.agentFilesLocations": {"x": true}}', W), []);
  assert.deepEqual(checkVscodeSettings('{"settings": {"editor.tabSize": 2}}', W), []);
});

Deno.test("checkVscodeSettings: the mcp section's servers are judged as .vscode/mcp.json's, each once, where it is", () => {
  const sh = '{"type": "stdio", "command": "sh", "args": ["-c", "id"]}';
  const ours = '{"command": "agentteams", "args": ["mcp", "readfs", "--root", "."]}';
  const spots = (t: string, rel = S) => checkVscodeSettings(t, rel).map((s) => [s.code, s.line]);
  assert.deepEqual(spots(`{\n"mcp": {\n"servers": {\n"sly": ${sh},\n"r": ${ours}}}}`), [
    ["VSCODE_MCP", 4],
  ]);
  assert.deepEqual(spots(`{"mcp.servers": {"a": ${sh}, "b": ${sh}}}`).length, 2);
  assert.deepEqual(spots(`{"[python]": {"mcp": {"servers": {"sly": ${sh}}}}}`), [[
    "VSCODE_MCP",
    1,
  ]]);
  // VS Code splits a key at its dots: a server written as a dotted key is one too.
  assert.deepEqual(spots(`{"a": 1,\n"mcp.servers.sly": ${sh}}`), [["VSCODE_MCP", 2]]);
  assert.deepEqual(spots('{"mcp.servers.sly.command": "sh"}'), [["VSCODE_MCP", 1]]);
  assert.deepEqual(spots('{"mcp": {"servers": "sh"}}'), [["VSCODE_MCP", 1]]);
  assert.match(checkVscodeSettings('{"mcp": {"servers": []}}', S)[0].message, /is not an object/);
  // A workspace file's settings; its other keys are not settings.
  const ws = "t.code-workspace";
  assert.deepEqual(spots(`{"settings": {"mcp": {"servers": {"sly": ${sh}}}}}`, ws).length, 1);
  assert.deepEqual(spots(`{"folders": [], "settings": {"mcp.servers": {"r": ${ours}}}}`, ws), []);
  for (
    const t of [
      `{"mcp": {"inputs": [], "servers": {"r": ${ours}}}}`,
      '{"mcp": {"servers": {}}}',
      '{"mcp": {"servers": null}}',
      '{"mcp": {}}',
    ]
  ) assert.deepEqual(spots(t), [], t);
});

Deno.test("checkVscodeSettings: chat.mcp.discovery.enabled is VSCODE_MCP on its line unless it is false", () => {
  const spots = (t: string) => checkVscodeSettings(t, S).map((s) => [s.code, s.line]);
  for (
    const t of [
      '{\n"chat.mcp.discovery.enabled": true}',
      '{\n"chat.mcp.discovery.enabled": {"claude-desktop": false, "cursor-workspace": false}}',
      '{\n"chat.mcp.discovery.enabled": {"cursor-workspace": true}}',
      '{\n"chat.mcp.discovery.enabled": {}}',
      '{\n"chat.mcp.discovery.enabled": null}',
      '{\n"chat.mcp.discovery.enabled": "false"}',
      '{\n"chat": {"mcp": {"discovery": {"enabled": true}}}}',
      '{\n"chat.mcp.discovery.enabled.claude-desktop": true}',
      '{\n"[markdown]": {"chat.mcp.discovery.enabled": 1}}',
    ]
  ) assert.deepEqual(spots(t), [["VSCODE_MCP", 2]], t);
  assert.match(
    checkVscodeSettings('{"chat.mcp.discovery.enabled": true}', S)[0].message,
    /"chat\.mcp\.discovery\.enabled" is not false in \.vscode\/settings\.json.*Claude Desktop/,
  );
  for (const t of ['{"chat.mcp.discovery.enabled": false}', '{"chat.mcp.access": "all"}']) {
    assert.deepEqual(spots(t), [], t);
  }
});
