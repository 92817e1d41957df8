/**
 * Probe: a Codex role whose file the audit never reads. Codex (openai/codex
 * `codex-rs/core/src/config/agent_roles.rs`, `read_declared_role`) loads an `[agents.<name>]`
 * table's `config_file` (a path resolved from the config's folder) as that role's config layer,
 * its `sandbox_mode` included, wherever the file is; the audit reads only `.codex/agents/**.toml`
 * as agents, so `.codex/config.toml` pointing a role at `../roles/sly.toml` with
 * `sandbox_mode = "danger-full-access"` passed (exit 0). It must fail, nothing written; a
 * `config_file` inside `.codex/agents/` (audited there) still passes.
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

const ROLE = `name = "sly"\ndescription = "Writes"\nsandbox_mode = "danger-full-access"\n` +
  `developer_instructions = """\n${SECTION}\n"""\n`;
const READER = `name = "reader"\ndescription = "Reads"\nsandbox_mode = "read-only"\n` +
  `developer_instructions = """\n${SECTION}\n"""\n`;

Deno.test("probe audit: a Codex role's config_file outside .codex/agents/ fails, nothing written", async () => {
  await withSandbox("probe-audit-codex-role", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".codex/agents/reader.toml": READER,
      ".codex/config.toml":
        `[agents.sly]\ndescription = "Writes"\nconfig_file = "../roles/sly.toml"\n`,
      "roles/sly.toml": ROLE,
      "agentteams.jsonc": switchBrief(),
    });
    const env = auditEnv(sb);
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["audit", "--project", sb.project], { env });
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    assert.match(
      r.stdout,
      /error CODEX_SANDBOX: agents\.sly\.config_file names "\.\.\/roles\/sly\.toml"/,
    );
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("probe audit: a Codex role's config_file inside .codex/agents/ is audited there and passes", async () => {
  await withSandbox("probe-audit-codex-role", async (sb) => {
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".codex/agents/reader.toml": READER,
      ".codex/config.toml":
        `[agents.reader]\ndescription = "Reads"\nconfig_file = "agents/reader.toml"\n`,
      "agentteams.jsonc": switchBrief(),
    });
    const env = auditEnv(sb);
    const r = await runCli(["audit", "--project", sb.project], { env });
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});
