/**
 * Probe 22, finding Q4: a clean filter the session wrote into `.git/config` itself. The session
 * settings doctor asks for do not deny `.git/` (only proposals and confined runs are kept out of
 * git's control plane), so a session's own edit tool writes
 * `[filter "x"] clean = <any shell command>` and `.gitattributes` `* filter=x`, and touches a
 * tracked file (same bytes, a new mtime). The next run's snapshot (`git status`, the runner's or
 * the operator's `agentteams run`) must re-read that file through the clean filter: the session's
 * command runs as the operator, outside the sandbox, before the run's own command starts.
 *
 * Expected: the tool's own git runs no filter the config names (each driver made inert on its
 * calls), so nothing the session wrote runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sleep, withWorld, workerBrief } from "../e2e/_run_helpers.ts";
import { present } from "./_probe.ts";

Deno.test("probe Q4: a clean filter a session wrote into .git/config is not run by the tool's own git status", async () => {
  await withWorld("probe-q4", {
    brief: (p) => workerBrief(p, [{ prefix: ["true"], args: [] }], { scopes: ["src/"] }),
    files: { "src/a.txt": "hello\n" },
  }, async (w) => {
    const marker = join(w.scratch, "filter-ran-as-operator");
    const nonce = await w.dispatch();
    // The session, with its own tools (no deny rule names .git/ or .gitattributes).
    const cfg = join(w.project, ".git", "config");
    await Deno.writeTextFile(
      cfg,
      (await Deno.readTextFile(cfg)) +
        `[filter "x"]\n\tclean = touch '${marker}'; cat\n\tprocess = sh -c 'touch ${marker}'\n`,
    );
    await Deno.writeTextFile(join(w.project, ".gitattributes"), "* filter=x\n");
    const a = join(w.project, "src", "a.txt");
    const later = new Date(Date.now() + 5000);
    await Deno.utime(a, later, later);
    const r = await w.run({ argv: ["true"] }, { nonce });
    assert.equal(present(marker), false, `the session's filter ran as the operator: ${r.stderr}`);
  });
});

Deno.test("probe Q4: a filter a session adds to .git/config while the run's command runs is not run by the after snapshot", async () => {
  await withWorld("probe-q4-race", {
    brief: (p) =>
      workerBrief(p, [{ prefix: [`${p.scripts}/signal.sh`], args: [] }], { scopes: ["src/"] }),
    files: { "src/a.txt": "hello\n" },
    scripts: {
      // Says it started, then waits (at most ~60 s) for the session's go-ahead.
      "signal.sh": "#!/bin/sh\ntouch src/started\ni=0\n" +
        "while [ ! -e src/go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n",
    },
  }, async (w) => {
    const marker = join(w.scratch, "filter-ran-as-operator");
    const nonce = await w.dispatch();
    const run = w.run({
      argv: [`${w.scripts}/signal.sh`],
      expected_writes: ["src/started"],
    }, { nonce });
    const started = join(w.project, "src", "started");
    for (let i = 0; i < 1200 && !present(started); i++) await sleep(50);
    assert.ok(present(started), "the command started");
    // The session, while the command runs: a filter, attributes, a touched tracked file.
    const cfg = join(w.project, ".git", "config");
    await Deno.writeTextFile(
      cfg,
      (await Deno.readTextFile(cfg)) + `[filter "y"]\n\tclean = touch '${marker}'; cat\n`,
    );
    await Deno.writeTextFile(join(w.project, ".gitattributes"), "* filter=y\n");
    const a = join(w.project, "src", "a.txt");
    const later = new Date(Date.now() + 5000);
    await Deno.utime(a, later, later);
    await Deno.writeTextFile(join(w.project, "src", "go"), "");
    const r = await run;
    assert.equal(present(marker), false, `the session's filter ran as the operator: ${r.stderr}`);
    assert.notEqual(r.code, 0, "the session's writes are reported: the run is refused");
  });
});
