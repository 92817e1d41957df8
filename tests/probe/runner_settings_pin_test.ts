/**
 * Probe 22, finding Q7: the session settings change under a serving runner. The runner checks the
 * Claude Code settings once, at its start (doctor's rules: warnings), and pins the brief, the
 * confined file and the grants ledger, not the settings. A session can still change the settings
 * (`mv .claude .c; edit .c/settings.json; mv .c .claude`: the rules cover what is below `.claude/`,
 * not the name; or through a hard link): with `Edit(./references/**)` gone, Claude Code lets it
 * write the decision log (cut the HALT), and the runner goes on serving as if nothing changed.
 * The settings are a trust root: they are pinned like the brief, and a change stops the runner.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused } from "../_helpers/assert.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import {
  handRequest,
  openAs,
  operatorLocalSettings,
  resultOf,
  runnerBrief,
  startRunner,
} from "../runner/_runner_helpers.ts";

const SETTINGS = JSON.stringify({
  permissions: {
    deny: [
      "Read(./.agentteams/**)",
      "Edit(./.agentteams/**)",
      "Edit(./.agentteams-status/**)",
      "Edit(./references/**)",
      "Edit(./.claude/**)",
      "Edit(./.git/config)",
      "Edit(./.mcp.json)",
      "Edit(./agentteams.jsonc)",
      "Edit(./agentteams.json)",
    ],
  },
  // Claude's sandbox, which makes the rules bind Bash too (probe 22c C6).
  sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false },
});

Deno.test("probe Q7: the session settings changed while the runner serves stop it (RUNNER_PIN_CHANGED)", async () => {
  await withWorld("probe-q7", { brief: runnerBrief }, async (w) => {
    await Deno.mkdir(join(w.project, ".claude"));
    await Deno.writeTextFile(join(w.project, ".claude", "settings.json"), SETTINGS);
    await Deno.writeTextFile(
      join(w.project, ".claude", "settings.local.json"),
      operatorLocalSettings(w),
    );
    const runner = await startRunner(w);
    try {
      const first = await handRequest(w, { kind: "verify-ledger" });
      assert.equal((await openAs(w, first, await resultOf(w, first.id))).body.ok, true);
      // The session: the folder renamed away, the deny rules dropped, the folder put back.
      await Deno.rename(join(w.project, ".claude"), join(w.project, ".c"));
      await Deno.writeTextFile(
        join(w.project, ".c", "settings.json"),
        JSON.stringify({ permissions: { deny: [] } }),
      );
      await Deno.rename(join(w.project, ".c"), join(w.project, ".claude"));
      const second = await handRequest(w, { kind: "verify-ledger" });
      const how = await Promise.race([
        runner.exited.then(() => "stopped"),
        resultOf(w, second.id).then(() => "served", () => "no result"),
      ]);
      assert.equal(how, "stopped", "the runner served on under the changed settings");
      const s = await runner.exited;
      const r = { code: s.code, signal: s.signal, stdout: "", stderr: runner.stderr() };
      const refusal = assertCliRefused(r, "serve", "RUNNER_PIN_CHANGED", 1);
      assert.match(refusal.reason, /settings/);
    } finally {
      await runner.kill9();
    }
  });
});
