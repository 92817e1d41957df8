/**
 * Probe finding E: a git path reached through a symlink inside the project is control plane only
 * at the symlink's target, never at the name git is configured with.
 *
 * `gitControlPaths` resolves every path through symlinks (`realOrAsNamed`) and keeps only the
 * result. With `core.hooksPath = tools/hooks` and `tools/hooks` a tracked symlink to
 * `../shared/hooks`, the control plane holds `shared/hooks` and not `tools/hooks`. Git, though,
 * follows the *name*: whatever `tools/hooks` is when git runs is the hooks directory. So:
 *
 * - `expected_writes: ["tools/"]` passes (`controlPlaneBelow("tools")` finds nothing below it);
 * - the sandbox keeps `shared/hooks` read-only, not the link in the write root `tools`;
 * - a confined command (here the agent's own build script, written with a proposal) replaces the
 *   link with a directory holding an executable `pre-commit`, and the run exits 0 with no
 *   undeclared write;
 * - the operator's next `git commit` runs the agent's hook.
 *
 * The same holds for an include, `core.excludesFile` or `core.attributesFile` reached through a
 * link whose target exists. Expected: the link stays as it was (the run refused or the name kept
 * read-only) and no agent hook runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { newRows, withWorld, workerBrief } from "../e2e/_run_helpers.ts";
import { applyCode, applyIn, changeOf, operatorGit, present } from "./_probe.ts";

Deno.test("probe E: a hooks directory configured through a symlink keeps its name read-only", async () => {
  await withWorld("probe-linked-hooks", {
    brief: (p) =>
      workerBrief(p, [{ prefix: ["perl", "tools/build.pl"], args: [], writes: ["tools/*"] }], {
        scopes: ["tools/"],
        write: ["tools"],
      }),
    files: {
      "src/a.txt": "a\n",
      "tools/readme.md": "tools\n",
      "shared/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
    },
  }, async (w) => {
    await Deno.chmod(join(w.project, "shared/hooks/pre-commit"), 0o755);
    await Deno.symlink("../shared/hooks", join(w.project, "tools/hooks"));
    await w.git("add", "-A");
    await w.git("commit", "-q", "-m", "hooks");
    await w.git("config", "core.hooksPath", "tools/hooks");
    const marker = join(w.scratch, "agent-hook-ran");
    const script = `
use strict;
unlink "tools/hooks" or die "unlink: $!";
mkdir "tools/hooks" or die "mkdir: $!";
open(my $f, ">", "tools/hooks/pre-commit") or die "open: $!";
print $f "#!/bin/sh\\ntouch '${marker}'\\nexit 0\\n";
close $f;
chmod 0755, "tools/hooks/pre-commit" or die "chmod: $!";
`;
    const nonce = await w.dispatch();
    assert.equal(applyCode(await applyIn(w, changeOf(w, nonce, "tools/build.pl", script))), null);
    const r = await w.run({ argv: ["perl", "tools/build.pl"], expected_writes: ["tools/"] }, {
      nonce,
      flags: ["--json"],
    });
    const rows = newRows(w, r);
    const linkKept = Deno.lstatSync(join(w.project, "tools/hooks")).isSymlink;
    await operatorGit(w, w.project, [
      "-c",
      "user.name=op",
      "-c",
      "user.email=op@example.com",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "operator commit",
    ]);
    const ran = present(marker);
    await w.verifyOk();
    assert.deepEqual(
      { linkKept, agentHookRan: ran },
      { linkKept: true, agentHookRan: false },
      `run exit ${r.code}; rows ${
        JSON.stringify(rows.map((x) => [x.action, x.code ?? x.exit]))
      }; ` +
        `tools/hooks is still the link: ${linkKept}; the operator's commit ran the agent's ` +
        `pre-commit: ${ran}\n${r.stderr}`,
    );
  });
});
