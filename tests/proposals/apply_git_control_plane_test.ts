/**
 * Hole 2 of issue 13: git's own resolved paths are control plane for `apply` too, wherever git
 * says they are. A `core.hooksPath`, an `include.path` target, a `core.excludesFile` or a git dir
 * named by a `.git` file, pointing inside the project (and inside the agent's write scope), is
 * refused `CONTROL_PLANE` through the real CLI: nothing on disk changes, the refusal row is
 * recorded, the ledger verifies. The same paths are refused as a command's `expected_writes`
 * and kept read-only by the sandbox (see tests/e2e/run_git_control_plane_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { GIT, gitEnv, sh } from "../_helpers/git.ts";
import {
  apply,
  assertApplied,
  change,
  dispatch,
  expectRefusal,
  makeProject,
  type Project,
  putFile,
  withProject,
} from "./_helpers.ts";

const BRIEF = `{
  "agent_policies": {
    "worker": { "write_scopes": ["tools/", "conf/", "meta/", "src/"] },
  },
}
`;

const FILES = {
  "tools/readme.md": "tools\n",
  "conf/readme.md": "conf\n",
  "src/a.txt": "a\n",
};

async function gitConfig(p: Project, ...args: string[]): Promise<void> {
  await sh(p.root, GIT, ["config", ...args], gitEnv(p.sb.home));
}

function setup(prefix: string): Promise<Project> {
  return makeProject(prefix, { brief: BRIEF, files: FILES });
}

Deno.test("apply refuses git's resolved control plane inside a write scope (CONTROL_PLANE)", async (t) => {
  await withProject(setup("gitcp"), async (p) => {
    await gitConfig(p, "core.hooksPath", "tools/hooks");
    // Relative to the including file's directory (.git/), so ../conf/extra.cfg is conf/extra.cfg.
    await gitConfig(p, "include.path", "../conf/extra.cfg");
    await gitConfig(p, "includeIf.onbranch:never.path", "../conf/never.cfg");
    await gitConfig(p, "core.excludesFile", "conf/ignore");
    await putFile(join(p.root, "tools/hooks/readme.md"), "hooks\n");
    const nonce = await dispatch(p, "worker");
    const cases = [
      "tools/hooks/pre-commit", // core.hooksPath, the directory exists
      "tools/hooks/readme.md", // an existing file below it
      "tools/Hooks/post-checkout", // in another letter case
      "conf/extra.cfg", // an include that does not exist yet
      "conf/never.cfg", // an include whose condition does not hold
      "conf/ignore", // core.excludesFile
    ];
    for (const path of cases) {
      await t.step(path, async () => {
        const { run } = await expectRefusal(
          p,
          change(nonce, path, "#!/bin/sh\nid\n"),
          "CONTROL_PLANE",
          {
            agent: "worker",
            attempts: 1,
          },
        );
        assert.match(run.stderr, /git's/, run.stderr);
      });
    }
    await t.step("a path beside them is still applied", async () => {
      const ok = await apply(p, change(nonce, "tools/build.sh", "echo ok\n"));
      assert.equal(assertApplied(ok).written, true);
      assert.equal(await Deno.readTextFile(join(p.root, "tools/build.sh")), "echo ok\n");
    });
  });
});

Deno.test("apply refuses the git dir a .git file names inside the project (CONTROL_PLANE)", async () => {
  await withProject(setup("gitdir"), async (p) => {
    // Move the repository to meta/repo and point the worktree at it with a .git file.
    await Deno.mkdir(join(p.root, "meta"));
    await Deno.rename(join(p.root, ".git"), join(p.root, "meta/repo"));
    await Deno.writeTextFile(join(p.root, ".git"), "gitdir: meta/repo\n");
    await gitConfig(p, "core.worktree", p.root);
    const nonce = await dispatch(p, "worker");
    for (const path of ["meta/repo/hooks/pre-commit", "meta/repo/config", "meta/repo/HEAD"]) {
      await expectRefusal(p, change(nonce, path, "x\n"), "CONTROL_PLANE", {
        agent: "worker",
        attempts: 1,
      });
    }
  });
});
