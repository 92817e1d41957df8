/**
 * Issue 22 residual: a planted second brief name stops every act (two default briefs are
 * `BRIEF_UNREADABLE`, never one picked: probe Q2), so a session able to write the other name
 * could stop every act at will. The rule lives in the session settings: doctor, serve and init
 * ask for a write-deny rule for every name the brief is found under (`agentteams.jsonc` and
 * `agentteams.json`), not only the one in use. Through the real CLI: serve refuses settings that
 * deny only the brief in use, naming the line to add, and makes nothing; init writes both rules,
 * and doctor then passes them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld } from "../e2e/_run_helpers.ts";
import { OPERATOR_SETTINGS, runnerBrief, serveToEnd } from "../runner/_runner_helpers.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";

for (const [inUse, other] of [["agentteams.jsonc", "agentteams.json"]] as const) {
  Deno.test(`serve refuses settings that deny writing only ${inUse}, naming ${other}'s line; nothing made`, async () => {
    await withWorld("brief-names", { brief: (p) => runnerBrief(p) }, async (w) => {
      assert.ok(Deno.statSync(join(w.project, inUse)).isFile, "the world's brief");
      const settings = JSON.parse(OPERATOR_SETTINGS) as { permissions: { deny: string[] } };
      settings.permissions.deny = settings.permissions.deny.filter((r) => r !== `Edit(./${other})`);
      await Deno.mkdir(join(w.project, ".claude"));
      await Deno.writeTextFile(
        join(w.project, ".claude", "settings.json"),
        JSON.stringify(settings),
      );
      const before = snapshotTreeSync([w.project, w.home, w.keyDir]);
      const r = await serveToEnd(w);
      const refusal = assertCliRefused(r, "serve", "PREFLIGHT_FAILED", 1);
      assert.match(refusal.reason, /session-settings: /);
      assert.ok(
        refusal.reason.includes(`"Edit(./${other})" to .claude/settings.json`),
        refusal.reason,
      );
      assertSameTree(before, snapshotTreeSync([w.project, w.home, w.keyDir]), "after serve");
      // doctor says the same, as an error, with the line to add.
      const d = await w.cli(["doctor", "--project", w.project]);
      assertCliRefused(d, "doctor", "SETTINGS_RULE_MISSING");
      assert.match(
        d.stdout,
        new RegExp(
          `error: session-settings: SETTINGS_RULE_MISSING: .*${other.replace(".", "\\.")}`,
        ),
      );
      assert.ok(d.stdout.includes(`    ${JSON.stringify(`Edit(./${other})`)},`), d.stdout);
    });
  });
}
