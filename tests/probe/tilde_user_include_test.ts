/**
 * Probe finding D: an include (or excludes/attributes file) written `~user/...` is dropped from
 * git's resolved control plane.
 *
 * `parseConfigOrigins` expands `~` and `~/` and skips every other `~` value, on the belief that
 * "git refuses such an include itself". It does not: git's `interpolate_path` expands `~user/`
 * through `getpwnam` (git 2.39 here reads `include.path = ~root/../tmp/x.cfg`). While the
 * included file does not exist (or holds no entry), `--show-origin` never names it either, so
 * the file is not control plane at all: an agent whose scope covers it creates it, with a
 * `core.fsmonitor` that the operator's next `git status` runs.
 *
 * Expected: the apply is refused `CONTROL_PLANE` ("whether the file exists or its condition
 * holds", docs/proposals.md) and nothing is written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld } from "../e2e/_run_helpers.ts";
import { applyCode, applyIn, changeOf, operatorGit, present } from "./_probe.ts";

/** The login name whose home is `/root` (this machine's `root`). */
function userWithHome(): { user: string; home: string } {
  const line = Deno.readTextFileSync("/etc/passwd").split("\n").find((l) => l.startsWith("root:"));
  assert.ok(line !== undefined, "no root entry in /etc/passwd");
  return { user: "root", home: line.split(":")[5] };
}

Deno.test("probe D: an include named ~user/... inside the project is control plane", async () => {
  await withWorld("probe-tilde-user", {
    brief: { agent_policies: { worker: { write_scopes: ["src/", "conf/"] } } },
    files: { "src/a.txt": "a\n", "conf/readme.md": "conf\n" },
  }, async (w) => {
    const { user, home } = userWithHome();
    // ~root/.. is `/`, whatever root's home is, as long as it is one level deep.
    const up = home.split("/").filter((s) => s !== "").map(() => "..").join("/");
    const value = `~${user}/${up}${w.project}/conf/local.cfg`;
    await w.git("config", "include.path", value);
    const marker = join(w.scratch, "tilde-user-include-ran");
    const nonce = await w.dispatch();
    const r = await applyIn(
      w,
      changeOf(w, nonce, "conf/local.cfg", `[core]\n\tfsmonitor = "touch '${marker}'; false"\n`),
    );
    const code = applyCode(r);
    const written = present(join(w.project, "conf/local.cfg"));
    await operatorGit(w, w.project, ["status"]);
    const ran = present(marker);
    await w.verifyOk();
    assert.deepEqual(
      { code, written, agentConfigRan: ran },
      // The tool cannot place a `~user/` path, so it refuses to act (fail closed).
      { code: "GIT_UNAVAILABLE", written: false, agentConfigRan: false },
      `include.path=${value}: apply ${code ?? "applied"}; the operator's git status ran it: ${ran}`,
    );
  });
});
