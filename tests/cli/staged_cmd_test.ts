/**
 * `agentteams staged ...` before anything reaches a runner: a sid that is not 32 lower-case hex is
 * refused (`STAGED_ID_INVALID`) and a rejection without its reason is a usage error (exit 2),
 * both with nothing queued; with no runner, each command says `NO_RUNNER` and makes nothing.
 * What the runner answers is tested against a real serve (tests/mcp/staged_slow_test.ts).
 */
import { join } from "node:path";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";

Deno.test("staged: a malformed sid, a rejection without a reason, no runner: refused, nothing made", async () => {
  const sb = await sandbox("staged-cli");
  try {
    // A project whose queue folders exist, as a runner leaves them: nothing may be queued there.
    await Deno.mkdir(join(sb.project, ".agentteams-queue", "requests"), { recursive: true });
    const sid = "0".repeat(32);
    const cli = (args: string[]) =>
      runCli([...args, "--project", sb.project], {
        env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
        cwd: sb.dir,
      });
    const before = await snapshotTree(sb.dir);
    for (
      const [words, bad] of [
        [["show"], "../../etc/passwd"],
        [["apply"], "A".repeat(32)],
        [["reject"], "0".repeat(33)],
      ] as const
    ) {
      const extra = words[0] === "reject" ? ["--reason", "r"] : [];
      const r = await cli(["staged", ...words, bad, ...extra]);
      assertCliRefused(r, `staged ${words[0]}`, "STAGED_ID_INVALID");
    }
    // A reason of white space only (Python's str.isspace: U+3000 included) is none.
    const blank = await cli(["staged", "reject", sid, "--reason", " \u3000 "]);
    assertCliRefused(blank, "staged reject", "USAGE", 2);
    assertSameTree(before, await snapshotTree(sb.dir), "refused before queueing");
    // No runner ever served here (no queue): nothing answers, nothing is made.
    Deno.removeSync(join(sb.project, ".agentteams-queue"), { recursive: true });
    const none = await snapshotTree(sb.dir);
    for (const args of [["list"], ["apply", sid]]) {
      assertCliRefused(await cli(["staged", ...args]), `staged ${args[0]}`, "NO_RUNNER");
    }
    assertSameTree(none, await snapshotTree(sb.dir), "no runner");
  } finally {
    await sb.dispose();
  }
});
