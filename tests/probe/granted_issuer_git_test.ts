/**
 * Probe (grants): the issuer's control plane inside a granted root is its static table only
 * (`controlPlaneReadOnly(staticPlane(issuerRoot))` in `prepareConfinement`), never git's resolved
 * paths of the issuer's repository. An issuer whose `core.hooksPath` (or an `include.path`, or
 * `core.excludesFile`/`core.attributesFile`) names a directory inside the granted root has that
 * directory writable to the holder's agent: the agent writes `pre-commit`, and the issuer's next
 * `git commit` runs it, outside any sandbox. The holder's own git paths are resolved (its
 * `openGitContext`); the issuer's, whose workspace the grant reaches into, are not.
 *
 * Expected: the issuer's hooks directory stays read-only (the run refused or the hook unwritten),
 * and the issuer's commit runs no agent hook.
 */
import assert from "node:assert/strict";
import { planeFromGit } from "../../lib/acts/session.ts";
import { openGitContext } from "../../lib/git/context.ts";
import { lexists, makeFixture, runConfined, runSync, sh } from "../sandbox/_helpers.ts";

Deno.test("probe grants: the issuer's core.hooksPath inside a granted root stays read-only", async () => {
  const fx = makeFixture();
  try {
    const issuer = `${fx.base}/issuer`;
    const docs = `${issuer}/docs`;
    Deno.mkdirSync(`${docs}/hooks`, { recursive: true });
    const git = (...args: string[]) =>
      runSync("/usr/bin/git", ["-C", issuer, ...args], {
        env: { HOME: fx.home, PATH: "/usr/bin:/bin" },
      });
    assert.equal(git("init", "-q").code, 0);
    assert.equal(git("config", "core.hooksPath", "docs/hooks").code, 0);
    const marker = `${fx.base}/issuer-hook-ran`;
    const hook = `${docs}/hooks/pre-commit`;
    const r = await runConfined(
      fx,
      sh(`printf '#!/bin/sh\\ntouch ${marker}\\n' > ${hook} && chmod +x ${hook}`),
      {
        extra: {
          grantedRoots: [{
            root: docs,
            issuerRoot: issuer,
            grant: "G-1",
            // What the runner asks the issuer's git before each run (lib/runner/granted.ts).
            issuerGit: (await planeFromGit(issuer, openGitContext(issuer))).git,
          }],
        },
      },
    );
    // The issuer's own next commit, outside any sandbox.
    Deno.writeTextFileSync(`${issuer}/a.txt`, "a\n");
    git("add", "a.txt");
    git("-c", "user.name=i", "-c", "user.email=i@x", "commit", "-qm", "x");
    assert.ok(
      !lexists(hook) && !lexists(marker),
      `the confined command (exit ${r.code}) wrote the issuer's hook: ${lexists(hook)}; the ` +
        `issuer's commit ran it: ${lexists(marker)}`,
    );
  } finally {
    fx.cleanup();
  }
});
