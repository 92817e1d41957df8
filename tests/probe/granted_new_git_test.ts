/**
 * Probe (grants): a confined run with a granted root creates a NEW `.git` (or a bare repository)
 * inside it, and the issuer's next `git status` there runs the agent's `core.fsmonitor` command,
 * outside any sandbox.
 *
 * Inside a granted root only the control-plane entries that already exist (the scan) and the
 * issuer's own root-level table (`controlPlaneReadOnly(staticPlane(issuerRoot))`) are kept
 * read-only. A `.git` the command makes at the top of the granted root is neither. Through the
 * runner, `newReadOnlyEntries` (run_act.ts) scans the write roots after the run and reports it as
 * an UNDECLARED_WRITES (exit 3), on the holder's side, but "nothing was undone": the `.git` stays
 * in the issuer's workspace and the issuer is told nothing. git's
 * discovery takes the nearest `.git`, so every git command the issuer runs at or below the
 * granted root obeys the agent's config (fsmonitor, hooks, aliases, pager, filters).
 *
 * The same hole in another shape: an EXISTING nested `.git` the scan keeps read-only is a bind
 * mount point, and its parent directory (writable) can be renamed aside with the mount inside it;
 * a copy then takes the old name. That holds in the project's own write roots too (last test).
 *
 * Expected: the `.git` is not created (the run refused, or `<granted>/.git` masked like a missing
 * root-level entry of the project), and no agent command runs.
 */
import assert from "node:assert/strict";
import { lexists, makeFixture, runConfined, runSync, sh } from "../sandbox/_helpers.ts";

// Held since the fix: each control-plane name at a granted root's top is masked like a missing
// root-level entry of the project. A repository made deeper (a bare one, or a nested `.git`
// renamed aside and replaced) cannot be stopped by a mount; the run then fails naming it and the
// runner removes it (`scrubGrantedRoots`): tests/runner/grants_slow_test.ts.

Deno.test("probe grants: a new .git made inside a granted root is refused (the issuer's git would obey it)", async () => {
  const fx = makeFixture();
  try {
    const issuer = `${fx.base}/issuer`;
    const docs = `${issuer}/docs`;
    Deno.mkdirSync(docs, { recursive: true });
    assert.equal(runSync("/usr/bin/git", ["init", "-q", issuer]).code, 0);
    Deno.writeTextFileSync(`${docs}/guide.md`, "guide\n");
    const marker = `${fx.base}/fsmonitor-ran`;
    const script = `/usr/bin/git init -q ${docs} && ` +
      `/usr/bin/git -C ${docs} config core.fsmonitor 'touch ${marker}; exit 1'`;
    const r = await runConfined(fx, sh(script), {
      extra: { grantedRoots: [{ root: docs, issuerRoot: issuer, grant: "G-1" }] },
    });
    // The issuer, later, in its own workspace, outside any sandbox.
    runSync("/usr/bin/git", ["-C", docs, "status"], {
      env: { HOME: fx.home, PATH: "/usr/bin:/bin" },
    });
    const made = lexists(`${docs}/.git`);
    const ran = lexists(marker);
    assert.ok(
      !made && !ran,
      `the confined command (exit ${r.code}) made ${docs}/.git: ${made}; the issuer's git ran ` +
        `the agent's fsmonitor: ${ran}`,
    );
  } finally {
    fx.cleanup();
  }
});
