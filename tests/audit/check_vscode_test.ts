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
      '{\n  // comment\n  "chat.modeFilesLocations": {"m": true},\n}',
    ]
  ) assert.deepEqual(codes(t), ["VSCODE_EXTRA_AGENTS"], t);
  for (
    const t of [
      "{}",
      '{"chat.agentFilesLocations": {}}',
      '{"chat.agentFilesLocations": {"a": false, "b": "FALSE"}}',
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
