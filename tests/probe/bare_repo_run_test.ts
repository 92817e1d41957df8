/**
 * Probe finding A (run): a confined command makes an embedded bare repository in its write root.
 *
 * After a confined run, `newReadOnlyEntries` scans the write roots for a new `.git` (and the
 * other control-plane names) and reports each one as an undeclared write, because "git commands
 * run later in that directory, by the operator or a shell prompt, would obey its hooks and
 * config". A bare repository (`HEAD`, `objects/`, `refs/`, `config`, `info/attributes`) has no
 * such name, so the scan and the write check both pass it: the run below, whose build script the
 * agent wrote with an ordinary proposal, declares `src/out/` and exits 0 with no undeclared write.
 * The operator's next `git show` in `src/out` runs the agent's `textconv` command.
 *
 * Expected: the new repository is reported as an undeclared write (exit 3), as a new `.git` is.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { newRows, withWorld, workerBrief } from "../e2e/_run_helpers.ts";
import { applyCode, applyIn, changeOf, operatorGit, present } from "./_probe.ts";

Deno.test("probe A: a bare repository made by a confined command is an undeclared write", async () => {
  await withWorld("probe-bare-run", {
    brief: (p) =>
      workerBrief(p, [{ prefix: ["perl", "src/build.pl"], args: [], writes: ["src/out/*"] }]),
  }, async (w) => {
    const head = (await w.git("rev-parse", "HEAD")).trim();
    const marker = join(w.scratch, "bare-repo-run-textconv-ran");
    // The agent's build script: it "generates" src/out/, which is a bare repository to git.
    const script = `
use strict;
my $o = "src/out";
for my $d ("$o", "$o/objects", "$o/objects/info", "$o/refs", "$o/refs/heads", "$o/info") { mkdir $d; }
sub put { my ($p, $t) = @_; open(my $f, ">", $p) or die "$p: $!"; print $f $t; close $f; }
put("$o/HEAD", "${head}\\n");
put("$o/refs/heads/main", "${head}\\n");
put("$o/objects/info/alternates", "../../../.git/objects\\n");
put("$o/info/attributes", "* diff=probe\\n");
put("$o/config", "[diff \\"probe\\"]\\n\\ttextconv = \\"touch '${marker}'; cat\\"\\n");
`;
    const nonce = await w.dispatch();
    assert.equal(applyCode(await applyIn(w, changeOf(w, nonce, "src/build.pl", script))), null);
    const r = await w.run({ argv: ["perl", "src/build.pl"], expected_writes: ["src/out/"] }, {
      nonce,
      flags: ["--json"],
    });
    const rows = newRows(w, r);
    const done = rows.find((x) => x.action === "run-request");
    assert.ok(done !== undefined, `no completion row: ${r.stderr}`);
    assert.equal(done.confined, true, JSON.stringify(done));
    await operatorGit(w, join(w.project, "src/out"), ["show", "HEAD"]);
    const ran = present(marker);
    await w.verifyOk();
    assert.deepEqual(
      {
        exit: r.code,
        reportsNewRepository: (done.undeclared_writes as string[]).some((p) =>
          p.startsWith("src/out")
        ),
        agentCommandRan: ran,
      },
      { exit: 3, reportsNewRepository: true, agentCommandRan: ran },
      `run exit ${r.code}, undeclared ${JSON.stringify(done.undeclared_writes)}; ` +
        `the operator's git show in src/out ran the agent's textconv: ${ran}\n${r.stderr}`,
    );
  });
});
