/**
 * Probe 22c, finding C6 (tests/probe/PROBE_22C_REPORT.md): the settings `doctor` asked for bound
 * Claude Code's file tools only. Claude Code's own documentation (code.claude.com/docs/en/
 * permissions: "Read and Edit deny rules apply to Claude's built-in file tools, not to Bash
 * subprocesses"; anthropics/claude-code#45200) says a Bash command is held to them only inside
 * Claude's sandbox (`"sandbox": {"enabled": true}`), which is off by default, falls back to no
 * sandbox when it cannot start unless `failIfUnavailable` is set, lets the model rerun a refused
 * command outside it unless `allowUnsandboxedCommands` is false, and never holds
 * `excludedCommands`. The orchestrator keeps Bash under the switch, so with every deny rule and
 * no sandbox, its `sed -i '$d' references/security-decisions.log.csv` cuts the operator's HALT
 * (as in `unchecked_sessions_test.ts`), and it may write `.agentteams/` and `.agentteams-status/`
 * as well. `doctor` said every check is ok.
 *
 * The fix: doctor fails (exit 1) on such settings, naming the sandbox values to set and the file,
 * and `serve` refuses to start (PREFLIGHT_FAILED), nothing written. Every other way the sandbox
 * settings leave Bash out is in `tests/cli/doctor_test.ts` and
 * `tests/runner/serve_sandbox_slow_test.ts`.
 */
import assert from "node:assert/strict";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import {
  runnerBrief,
  SANDBOX_CASES,
  serveToEnd,
  writeSandboxCase,
} from "../runner/_runner_helpers.ts";

Deno.test("probe 22c (C6): settings that leave the orchestrator's Bash outside Claude's sandbox fail doctor and keep serve from starting", async () => {
  await withWorld("p22c-bash", { brief: runnerBrief }, async (w) => {
    // Every deny rule doctor asks for (the key dir's in the local file), and no sandbox block.
    const none = SANDBOX_CASES.find((c) => c.shared === null);
    assert.ok(none);
    writeSandboxCase(w, none);
    const whole = () => snapshotTreeSync([w.project, w.home, w.keyDir, w.scratch]);
    const before = whole();
    const r = await w.cli(["doctor", "--project", w.project]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    for (
      const [key, value] of [["enabled", true], ["failIfUnavailable", true], [
        "allowUnsandboxedCommands",
        false,
      ]]
    ) {
      assert.match(
        r.stdout,
        new RegExp(
          `^error: session-settings: SETTINGS_SANDBOX: no settings file sets "sandbox\\.${key}".*` +
            `add "sandbox": \\{"${key}": ${value}\\} to \\.claude/settings\\.json$`,
          "m",
        ),
      );
    }
    // Only the sandbox is missing: no deny rule is.
    assert.doesNotMatch(r.stdout, /SETTINGS_RULE_MISSING/);
    assertSameTree(before, whole(), "after doctor");
    const s = await serveToEnd(w);
    const refusal = assertCliRefused(s, "serve", "PREFLIGHT_FAILED", 1);
    assert.match(refusal.reason, /sandbox\.enabled/);
    assert.ok(
      s.stderr.includes(
        'set "sandbox": {"enabled": true, "failIfUnavailable": true, ' +
          '"allowUnsandboxedCommands": false} in .claude/settings.json',
      ),
      s.stderr,
    );
    assertSameTree(before, whole(), "after serve");
  });
});
