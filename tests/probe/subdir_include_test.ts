/**
 * Probe finding F: for a project below its worktree's top, git's relative config origins and
 * relative includes are resolved against the wrong directory, so an include inside the project
 * is not control plane.
 *
 * `git config --list --show-origin` runs with cwd = the project (`<top>/sub`), and git, having
 * found the repository above, works from the top: it prints the repository's config as
 * `file:.git/config` and an included file as `file:.git/../sub/conf/x.cfg`, both relative to the
 * *top*. `parseConfigOrigins` resolves relative origins against `cwd` (the project), so the
 * config is taken to be `<top>/sub/.git/config` and `include.path = ../sub/conf/local.cfg` to name
 * `<top>/sub/sub/conf/local.cfg`. The real target, `<top>/sub/conf/local.cfg`, is in no list:
 * an agent whose scope covers `conf/` writes it (exists or not), with a `core.fsmonitor` the
 * operator's next `git status` runs.
 *
 * Expected: `CONTROL_PLANE`, nothing written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld } from "../e2e/_run_helpers.ts";
import { sha256 } from "../_helpers/mod.ts";
import { applyCode, operatorGit, present } from "./_probe.ts";

const BRIEF = JSON.stringify({ agent_policies: { worker: { write_scopes: ["conf/", "src/"] } } });

Deno.test("probe F: an include into a project below the worktree top is control plane", async (t) => {
  await withWorld("probe-subdir-include", {
    brief: { agent_policies: {} },
    files: {
      "README.md": "top\n",
      "sub/agentteams.jsonc": BRIEF,
      "sub/src/a.txt": "a\n",
      "sub/conf/readme.md": "conf\n",
    },
  }, async (w) => {
    const sub = join(w.project, "sub");
    // Relative to the including file's directory (<top>/.git), as git resolves it.
    await w.git("config", "include.path", "../sub/conf/local.cfg");
    await w.git("config", "include.path", "../sub/conf/shared.cfg", "--add");
    await Deno.writeTextFile(join(sub, "conf/shared.cfg"), "[alias]\n\tst = status\n");
    const marker = join(w.scratch, "subdir-include-ran");
    const d = await w.cli(["dispatch", "--agent", "worker", "--project", sub]);
    assert.equal(d.code, 0, d.stderr);
    const nonce = d.stdout.trim();
    let seq = 0;
    const applyAt = async (path: string, content: string) => {
      let base = "absent";
      try {
        base = sha256(Deno.readFileSync(join(sub, path)));
      } catch { /* absent */ }
      const file = join(w.scratch, `sub-proposal-${++seq}.json`);
      await Deno.writeTextFile(
        file,
        JSON.stringify({
          kind: "change-proposal",
          dispatch: nonce,
          path,
          base_sha256: base,
          content,
          rationale: "probe",
        }),
      );
      return applyCode(await w.cli(["apply", file, "--project", sub, "--json"]));
    };
    const evil = `[core]\n\tfsmonitor = "touch '${marker}'; false"\n`;
    const results: Record<string, string | null> = {};
    for (const path of ["conf/local.cfg", "conf/shared.cfg"]) {
      await t.step(path, async () => {
        results[path] = await applyAt(path, evil);
      });
    }
    await operatorGit(w, w.project, ["status"]);
    const ran = present(marker);
    const v = await w.cli(["ledger", "verify", "--project", sub, "--json"]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.deepEqual(
      { results, agentConfigRan: ran },
      {
        results: { "conf/local.cfg": "CONTROL_PLANE", "conf/shared.cfg": "CONTROL_PLANE" },
        agentConfigRan: false,
      },
      `apply codes (null = applied) ${JSON.stringify(results)}; the operator's git status ran ` +
        `the agent's fsmonitor: ${ran}`,
    );
  });
});
