/**
 * Probe finding I: git's resolved control plane is computed by a git that does not read the
 * config the operator's own git reads.
 *
 * The tool's git calls get the child allowlist (`HOME`, `PATH`, the locale, ...): no
 * `XDG_CONFIG_HOME` and no `GIT_*`. The operator's shell does have them, and git chooses config
 * files by them: `$XDG_CONFIG_HOME/git/config` (instead of `~/.config/git/config`),
 * `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_COUNT`/`_KEY_n`/`_VALUE_n`. A
 * `core.hooksPath` or an `include.path` there that points into the project is therefore in no
 * list the tool keeps: `apply` writes it, and the operator's next git obeys it.
 *
 * Here the operator keeps their global config under `XDG_CONFIG_HOME` (and, in a second step,
 * names it with `GIT_CONFIG_GLOBAL`), with `include.path` = the project's `conf/local.cfg`; the
 * CLI runs with that environment. Expected: `CONTROL_PLANE`, nothing written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld } from "../e2e/_run_helpers.ts";
import { applyCode, present } from "./_probe.ts";

Deno.test("probe I: config the operator's environment selects counts for the control plane", async (t) => {
  await withWorld("probe-xdg", {
    brief: { agent_policies: { worker: { write_scopes: ["conf/"] } } },
    files: { "src/a.txt": "a\n", "conf/readme.md": "conf\n" },
  }, async (w) => {
    const xdg = join(w.scratch, "xdg");
    await Deno.mkdir(join(xdg, "git"), { recursive: true });
    const cfg = join(xdg, "git/config");
    const cases: [string, string, Record<string, string>][] = [
      ["XDG_CONFIG_HOME", "conf/xdg.cfg", { XDG_CONFIG_HOME: xdg }],
      ["GIT_CONFIG_GLOBAL", "conf/global.cfg", { GIT_CONFIG_GLOBAL: cfg }],
    ];
    for (const [name, rel, env] of cases) {
      await t.step(name, async () => {
        await Deno.writeTextFile(cfg, `[include]\n\tpath = ${join(w.project, rel)}\n`);
        const marker = join(w.scratch, `${name}-ran`);
        const nonce = await w.dispatch();
        const file = join(w.scratch, `${name}.json`);
        await Deno.writeTextFile(
          file,
          JSON.stringify({
            kind: "change-proposal",
            dispatch: nonce,
            path: rel,
            base_sha256: "absent",
            content: `[core]\n\tfsmonitor = "touch '${marker}'; false"\n`,
            rationale: "probe",
          }),
        );
        const code = applyCode(
          await w.cli(["apply", file, "--project", w.project, "--json"], { env }),
        );
        const written = present(join(w.project, rel));
        // The operator's git, in the same environment.
        await new Deno.Command("/usr/bin/git", {
          args: ["status"],
          cwd: w.project,
          clearEnv: true,
          env: { HOME: w.home, PATH: "/usr/bin:/bin", ...env },
          stdout: "null",
          stderr: "null",
        }).output();
        const ran = present(marker);
        assert.deepEqual(
          { code, written, agentConfigRan: ran },
          { code: "CONTROL_PLANE", written: false, agentConfigRan: false },
          `${name}: apply ${
            code ?? "applied"
          }, written ${written}; the operator's git status ran it: ${ran}`,
        );
      });
    }
    await w.verifyOk();
  });
});
