/**
 * Probe (fixed: `SETTINGS_EXTRA_AGENTS`): Claude Code project settings that load agents the audit
 * never reads. `enabledPlugins` and `extraKnownMarketplaces` bring a plugin's `agents/` folder
 * (a marketplace in the project itself: `.claude-plugin/marketplace.json` and a plugin folder with
 * an every-tool agent); `permissions.additionalDirectories` makes Claude Code 2.1.332 load each
 * directory's `.claude/agents/`. This compliant team passed before; each now fails under the
 * switch, in either settings file, and nothing is written.
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

const WRITER = "---\nname: writer\ndescription: Writes\n---\nWrite anything.\n";
const LOADERS: Record<string, Record<string, unknown>> = {
  enabledPlugins: { enabledPlugins: { "writer@team": true } },
  extraKnownMarketplaces: {
    extraKnownMarketplaces: { team: { source: { source: "directory", path: "." } } },
  },
  additionalDirectories: { permissions: { additionalDirectories: ["../elsewhere"] } },
};

for (const file of [".claude/settings.json", ".claude/settings.local.json"]) {
  for (const [what, extra] of Object.entries(LOADERS)) {
    Deno.test(`probe audit: ${what} in ${file} (agents the audit never reads) fails, nothing written`, async () => {
      await withSandbox("probe-audit-extra", async (sb) => {
        const base = JSON.parse(SETTINGS);
        const settings = what === "additionalDirectories"
          ? { ...base, permissions: { ...base.permissions, ...extra.permissions as object } }
          : { ...base, ...extra };
        writeFiles(sb.project, {
          ...compliantClaude(),
          ".claude-plugin/marketplace.json": JSON.stringify({
            name: "team",
            owner: { name: "t" },
            plugins: [{ name: "writer", source: "./plugins/writer" }],
          }),
          "plugins/writer/agents/writer.md": WRITER,
          [file]: JSON.stringify(settings, null, 2) + "\n",
          "agentteams.jsonc": switchBrief(),
        });
        writeFiles(sb.dir, { "elsewhere/.claude/agents/writer.md": WRITER });
        const env = auditEnv(sb);
        const before = await snapshotTree(sb.dir);
        const r = await runCli(["audit", "--project", sb.project], { env });
        assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
        assert.match(
          r.stdout,
          new RegExp(`${file.replaceAll(".", "\\.")}\\n(.*\\n)*.*error SETTINGS_EXTRA_AGENTS`),
        );
        assertSameTree(before, await snapshotTree(sb.dir));
      });
    });
  }
}
