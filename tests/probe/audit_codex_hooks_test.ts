/**
 * Probe 22c, finding C2 (Codex's part; tests/probe/PROBE_22C_REPORT.md): programs Codex runs as the
 * user around the agents' work, whatever `sandbox_mode` says: `.codex/hooks.json` and a `[hooks]`
 * table in a config layer (openai/codex `codex-rs/hooks/src/engine/discovery.rs`:
 * `load_hooks_json`, `load_toml_hooks_from_layer`), and `notify` (after each turn, given the
 * turn). A session may write `.codex/` (no deny rule names it); each passed the audit under the
 * switch (exit 0) and must fail, naming the file, nothing written.
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import {
  auditEnv,
  compliantClaude,
  SECTION,
  switchBrief,
  withSandbox,
  writeFiles,
} from "../audit/_team.ts";

const READER = `name = "reader"\ndescription = "Reads"\nsandbox_mode = "read-only"\n` +
  `developer_instructions = """\n${SECTION}\n"""\n`;

const CASES: [string, Record<string, string>, RegExp][] = [
  [
    ".codex/hooks.json",
    {
      ".codex/hooks.json":
        '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "sh -c x"}]}]}}\n',
    },
    /\.codex\/hooks\.json\n.*error CODEX_HOOKS/,
  ],
  [
    "a [hooks] table in .codex/config.toml",
    {
      ".codex/config.toml":
        '[[hooks.PreToolUse]]\nmatcher = "*"\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "sh -c x"\n',
    },
    /\.codex\/config\.toml\n.*error CODEX_HOOKS: hooks/,
  ],
  [
    "notify in an agent's TOML",
    { ".codex/agents/reader.toml": `notify = ["sh", "-c", "x"]\n${READER}` },
    /\.codex\/agents\/reader\.toml\n.*error CODEX_HOOKS: notify/,
  ],
];

for (const [what, files, expect] of CASES) {
  Deno.test(`probe 22c audit: ${what} fails under the switch, nothing written`, async () => {
    await withSandbox("probe-22c-codex-hooks", async (sb) => {
      writeFiles(sb.project, {
        ...compliantClaude(),
        ".codex/agents/reader.toml": READER,
        "agentteams.jsonc": switchBrief(),
        ...files,
      });
      const env = auditEnv(sb);
      const before = await snapshotTree(sb.dir);
      const r = await runCli(["audit", "--project", sb.project], { env });
      assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
      assert.match(r.stdout, expect);
      assertSameTree(before, await snapshotTree(sb.dir));
    });
  });
}
