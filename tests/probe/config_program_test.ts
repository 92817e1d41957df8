/**
 * Probe finding B: a program that git's config names by a path inside the project is not control
 * plane, and the tool's own `git status` (the run's snapshots) executes it.
 *
 * `gitControlPaths` covers the files git reads (config, includes, hooks dir, info/, excludes and
 * attributes files), not the programs config values name: `filter.<d>.clean/smudge/process`,
 * `diff.<d>.textconv/command`, `merge.<d>.driver`, `core.fsmonitor`, `core.pager`,
 * `core.editor`, `core.sshCommand`, `credential.helper`, `gpg.program`, ... A repository that
 * keeps its filter script in the tree (`filter.fmt.clean = ./tools/clean.sh`, set up by the
 * project's bootstrap) is the same kind of thing as a `core.hooksPath` into the project, which the
 * tool does refuse: git runs it as whoever runs git.
 *
 * Here the agent rewrites `tools/clean.sh` (an existing executable: apply keeps its 0755) and
 * changes `src/a.txt` to other bytes of the same size. The next `agentteams run` of a harmless
 * command takes its snapshots with `git status`, which must re-read `src/a.txt` through the clean
 * filter (`GIT_SAFETY_CONFIG` turns off fsmonitor, not filters): the agent's script runs as the
 * operator, outside the sandbox, before the run's command even starts.
 *
 * Expected: the apply of `tools/clean.sh` is refused `CONTROL_PLANE` (git's filter program), and
 * nothing the agent wrote runs. Today it applies and the marker appears.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld, workerBrief } from "../e2e/_run_helpers.ts";
import { applyCode, applyIn, changeOf, present } from "./_probe.ts";

Deno.test("probe B: a filter program named by git config inside the project is control plane", async () => {
  await withWorld("probe-filter", {
    brief: (p) => workerBrief(p, [{ prefix: ["true"], args: [] }], { scopes: ["src/", "tools/"] }),
    files: {
      "src/a.txt": "hello\n",
      "tools/clean.sh": "#!/bin/sh\ncat\n",
      ".gitattributes": "*.txt filter=fmt\n",
    },
  }, async (w) => {
    // The project's bootstrap: an executable filter script kept in the tree.
    await Deno.chmod(join(w.project, "tools/clean.sh"), 0o755);
    await w.git("config", "filter.fmt.clean", "./tools/clean.sh");
    await w.git("add", "-A");
    await w.git("commit", "-q", "-m", "filter");
    const marker = join(w.scratch, "filter-ran-as-operator");
    const nonce = await w.dispatch();
    const evil = `#!/bin/sh\ntouch '${marker}'\ncat\n`;
    const code = applyCode(await applyIn(w, changeOf(w, nonce, "tools/clean.sh", evil)));
    const stillOld =
      Deno.readTextFileSync(join(w.project, "tools/clean.sh")) === "#!/bin/sh\ncat\n";
    // Same size, other bytes: git status must read it (through the filter) to compare.
    assert.equal(applyCode(await applyIn(w, changeOf(w, nonce, "src/a.txt", "HELLO\n"))), null);
    const r = await w.run({ argv: ["true"] }, { nonce });
    assert.equal(r.code, 0, r.stderr);
    const ran = present(marker);
    await w.verifyOk();
    assert.deepEqual(
      { code, stillOld, agentScriptRan: ran },
      { code: "CONTROL_PLANE", stillOld: true, agentScriptRan: false },
      `apply tools/clean.sh: ${code ?? "applied"}; the tool's own git status ran it: ${ran}`,
    );
  });
});
