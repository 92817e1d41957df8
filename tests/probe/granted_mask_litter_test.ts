/**
 * Probe (grants), through a real runner: a grant of the issuer's whole workspace (`target .`).
 * Every missing root-level control-plane entry of the issuer (`.claude`, `.agentteams`,
 * `references`, `sandbox`, ...) is masked with an empty read-only tmpfs; bwrap makes each mount
 * point, an empty directory, in the issuer's workspace on the host. `removeMaskPoints` then
 * removes them, but the runner is launched with read (not write) of a granted root
 * (`serveNeeds` / `grantedReads`), the removal fails, and the error is swallowed. Each confined
 * run leaves empty control-plane directories in the other team's workspace.
 *
 * The runner then reports those mask points as the command's UNDECLARED_WRITES (exit 3): a grant
 * of a whole workspace fails every run it widens, and the empty `.git`, `references`, `.claude`,
 * ... stay in the issuer's workspace.
 *
 * Expected: after the run the issuer's workspace holds only what the command wrote.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { shScript, withWorld } from "../e2e/_run_helpers.ts";
import { installTeamDir, runnerBrief, startRunner } from "../runner/_runner_helpers.ts";

Deno.test("probe grants (runner): a run in a granted issuer workspace leaves no mask points behind", async () => {
  await withWorld("probe-mask-litter", {
    brief: (p) => runnerBrief(p, [{ prefix: [join(p.scripts, "touch-notes")] }]),
    scripts: { "touch-notes": (p) => shScript(`echo hi >> ${p.dir}/issuer/notes.txt`) },
  }, async (w) => {
    const issuer = join(w.dir, "issuer");
    await Deno.mkdir(issuer);
    await installTeamDir(w);
    const sign = await w.cli([
      ..."grant sign --project".split(" "),
      w.project,
      ..."--id G-1 --issuer-team a --holder-team h --target . --ops write".split(" "),
      ..."--expires 2099-01-01T00:00:00Z --max-uses 1 --approver alice".split(" "),
      ..."--ticket T --reason r --issuer-root".split(" "),
      issuer,
    ]);
    assert.equal(sign.code, 0, sign.stderr);
    const runner = await startRunner(w);
    let ran: { code: number; stdout: string; stderr: string };
    try {
      ran = await w.run({ argv: [join(w.scripts, "touch-notes")] });
    } finally {
      assert.equal((await runner.stop()).code, 0, runner.stderr());
    }
    const left = [...Deno.readDirSync(issuer)].map((e) => e.name).sort();
    assert.ok(
      ran.code === 0 && left.length === 1 && left[0] === "notes.txt",
      `the run exited ${ran.code} (${ran.stderr.match(/UNDECLARED_WRITES/)?.[0] ?? "-"}) and ` +
        `left ${left.join(", ")} in the issuer's workspace`,
    );
  });
});
