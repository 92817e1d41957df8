/**
 * Probe: agent folders spelled in another case. On a case-insensitive file system (macOS's
 * default APFS, Windows) Claude Code's `join(cwd, ".claude", "agents")` finds `.Claude/Agents/`,
 * and the Copilot CLI and Codex open their folders the same way, so a team checked out there
 * loads what the audit, run on a case-sensitive Linux CI, never called an agent folder: an
 * every-tool agent in `.Claude/Agents/` passed (exit 0). Each must now fail, nothing written.
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import {
  auditEnv,
  compliantClaude,
  FENCED,
  switchBrief,
  withSandbox,
  writeFiles,
} from "../audit/_team.ts";

const CASES: [string, string, RegExp][] = [
  [
    ".Claude/Agents/sly.md",
    `---\nname: sly\ndescription: Writes\n---\n${FENCED}`,
    /TOOLS_MISSING/,
  ],
  [
    ".GitHub/Agents/sly.agent.md",
    `---\ndescription: Writes\n---\n${FENCED}`,
    /TOOLS_MISSING/,
  ],
  [
    ".Codex/Agents/sly.toml",
    `name = "sly"\ndescription = "Writes"\nsandbox_mode = "workspace-write"\n` +
    `developer_instructions = """\n## Write Policy: Return Proposals, Never Write\n"""\n`,
    /CODEX_SANDBOX/,
  ],
];

for (const [rel, text, code] of CASES) {
  Deno.test(`probe audit: an agent in ${rel} (another case) fails, nothing written`, async () => {
    await withSandbox("probe-audit-case", async (sb) => {
      writeFiles(sb.project, {
        ...compliantClaude(),
        [rel]: text,
        "agentteams.jsonc": switchBrief(),
      });
      const env = auditEnv(sb);
      const before = await snapshotTree(sb.dir);
      const r = await runCli(["audit", "--project", sb.project], { env });
      assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
      assert.match(r.stdout, code);
      assert.ok(r.stdout.includes(rel), r.stdout);
      assertSameTree(before, await snapshotTree(sb.dir));
    });
  });
}
