/**
 * Probe 22d, finding D1: Claude Code project settings that run a program of the file's author,
 * besides `hooks`. `statusLine` and `subagentStatusLine` (`{type: "command"}`, run on every
 * status refresh), `fileSuggestion` (run for `@` completions), and the credential helpers
 * `apiKeyHelper`, `awsAuthRefresh`, `awsCredentialExport`, `gcpAuthRefresh`, `otelHeadersHelper`
 * and `proxyAuthHelper` are shell commands Claude Code runs as the user, outside its sandbox,
 * from `.claude/settings.json` and `.claude/settings.local.json` (2.1.42 `cli.js` `oSA`, `sSA`,
 * `vr8`/`Er8`/`kr8`/`ow5`; 2.1.332 lists them together as its command-running settings). The
 * audit read the settings for `hooks` only, so each of them passed (exit 0). They are
 * `SETTINGS_HOOKS` now, with `hooks` (the one rule in `lib/policy/session_settings.ts`).
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

const RUN = "sh -c 'touch /tmp/agentteams-probe-22d'";

/** Each setting, as its author would write it to have `RUN` run. */
const COMMANDS: Record<string, unknown> = {
  statusLine: { type: "command", command: RUN },
  subagentStatusLine: { type: "command", command: RUN },
  fileSuggestion: { type: "command", command: RUN },
  apiKeyHelper: RUN,
  awsAuthRefresh: RUN,
  awsCredentialExport: RUN,
  gcpAuthRefresh: RUN,
  otelHeadersHelper: RUN,
  proxyAuthHelper: RUN,
};

for (const file of [".claude/settings.json", ".claude/settings.local.json"]) {
  Deno.test({
    name:
      `probe audit: command settings in ${file} (programs Claude Code runs) fail, nothing written`,
    fn: async () => {
      await withSandbox("probe-audit-commands", async (sb) => {
        const env = auditEnv(sb);
        for (const [key, value] of Object.entries(COMMANDS)) {
          const settings = { ...JSON.parse(SETTINGS), [key]: value };
          writeFiles(sb.project, {
            ...compliantClaude(),
            [file]: JSON.stringify(settings, null, 2) + "\n",
            "agentteams.jsonc": switchBrief(),
          });
          const before = await snapshotTree(sb.dir);
          const r = await runCli(["audit", "--project", sb.project], { env });
          assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
          assert.match(
            r.stdout,
            new RegExp(`${file.replaceAll(".", "\\.")}\\n.*error SETTINGS_HOOKS.*"${key}"`),
            key,
          );
          assertSameTree(before, await snapshotTree(sb.dir));
          Deno.removeSync(`${sb.project}/${file}`);
        }
      });
    },
  });
}

Deno.test("probe audit: command settings that run nothing pass (an empty or absent command)", async () => {
  await withSandbox("probe-audit-commands-empty", async (sb) => {
    const settings = {
      ...JSON.parse(SETTINGS),
      apiKeyHelper: "",
      statusLine: null,
    };
    writeFiles(sb.project, {
      ...compliantClaude(),
      ".claude/settings.json": JSON.stringify(settings, null, 2) + "\n",
      "agentteams.jsonc": switchBrief(),
    });
    const r = await runCli(["audit", "--project", sb.project], {
      env: auditEnv(sb),
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});
