/**
 * `serve` refuses to start (PREFLIGHT_FAILED) while Claude Code's sandbox settings leave a
 * session's Bash outside the deny rules (probe 22c C6): no sandbox block, each value the wrong way,
 * a right value in the shared file overridden in the local one, excluded commands in either file.
 * Each launched with the flags `agentteams permissions serve` prints; each asserts the refusal
 * names the value and its file, and that nothing was written (no queue, no beat, no ledger).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import {
  OPERATOR_SANDBOX,
  present,
  runnerBrief,
  SANDBOX_CASES,
  serveToEnd,
  writeSandboxCase,
} from "./_runner_helpers.ts";

Deno.test("serve refuses to start while the sandbox settings leave Bash outside the deny rules, naming the value and its file; nothing written", async (t) => {
  await withWorld("rq-sandbox", { brief: runnerBrief }, async (w) => {
    for (const c of SANDBOX_CASES) {
      await t.step(c.name, async () => {
        const place = writeSandboxCase(w, c);
        const before = snapshotTreeSync([w.project, w.home, w.keyDir, w.scratch]);
        const r = await serveToEnd(w);
        const refusal = assertCliRefused(r, "serve", "PREFLIGHT_FAILED", 1);
        assert.match(refusal.reason, /^session-settings: /);
        assert.ok(r.stderr.includes(`"sandbox.${c.key}"`), r.stderr);
        if (c.at) assert.ok(r.stderr.includes(place), r.stderr);
        if (c.key !== "excludedCommands") {
          assert.ok(
            new RegExp(
              `; set "sandbox": \\{[^}]*"${c.key}": ${OPERATOR_SANDBOX[c.key]}[^}]*\\} in ` +
                c.file.replaceAll(".", "\\."),
            ).test(r.stderr),
            r.stderr,
          );
        }
        assertSameTree(
          before,
          snapshotTreeSync([w.project, w.home, w.keyDir, w.scratch]),
          `after serve with ${c.name}`,
        );
        assert.equal(present(join(w.project, ".agentteams-queue")), false);
        assert.equal(present(join(w.project, ".agentteams")), false);
        assert.equal(present(queuePaths(w.project).runnerJson), false, "it beat");
      });
    }
  });
});
