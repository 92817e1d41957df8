/**
 * Probe 22c, finding C6 (tests/probe/PROBE_22C_REPORT.md), NOT FIXED: the settings `doctor` asks for
 * bind Claude Code's file tools only. Claude Code's own documentation (code.claude.com/docs/en/
 * permissions: "Read and Edit deny rules apply to Claude's built-in file tools, not to Bash
 * subprocesses"; anthropics/claude-code#45200) says a Bash command is held to them only inside
 * Claude's sandbox (`"sandbox": {"enabled": true}`), which is off by default, falls back to no
 * sandbox when it cannot start unless `failIfUnavailable` is set, lets the model rerun a refused
 * command outside it unless `allowUnsandboxedCommands` is false, and never holds
 * `excludedCommands`. The orchestrator keeps Bash under the switch, so with every rule doctor
 * lists and no sandbox, its `sed -i '$d' references/security-decisions.log.csv` cuts the
 * operator's HALT (as in `unchecked_sessions_test.ts`), and it may write `.agentteams/` and
 * `.agentteams-status/` as well. `doctor` says every check is ok.
 *
 * What the test asserts is the fix: doctor fails (exit 1) on such settings, naming the sandbox.
 * Ignored: the fix is a design change (see the report): requiring the sandbox also makes the
 * suggested `Read(~/.config/agentteams/keys/**)` hide `runner-x25519.pub.pem` from the
 * queue-mode CLI the session runs, so the key-dir rule must become one rule per secret file, and
 * `init` must write the sandbox block.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld } from "../e2e/_run_helpers.ts";
import { OPERATOR_SETTINGS, runnerBrief } from "../runner/_runner_helpers.ts";

Deno.test({
  name:
    "probe 22c (ignored, C6): settings that leave the orchestrator's Bash outside Claude's sandbox fail doctor",
  ignore: true,
  fn: async () => {
    await withWorld("p22c-bash", { brief: runnerBrief }, async (w) => {
      Deno.mkdirSync(join(w.project, ".claude"), { recursive: true });
      Deno.writeTextFileSync(join(w.project, ".claude", "settings.json"), OPERATOR_SETTINGS);
      const r = await w.cli(["doctor", "--project", w.project]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /error: session-settings: .*sandbox/);
    });
  },
});
