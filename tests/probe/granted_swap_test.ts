/**
 * Probe (grants): the granted root is checked by name (`grantedRootFacts`: `lstat` + real path)
 * and then bound by name (`bwrap --bind ROOT ROOT`), and bwrap resolves the name again when it
 * mounts. The granted root lies in ANOTHER team's workspace: whoever may write its parent (the
 * issuer, or the issuer team's own confined agents) can swap it for a symlink between the check
 * and the mount. The mount then follows the link, and the read-only re-binds the plan computed
 * (the holder's `.git`, `references/`, ...) are skipped, since by the plan's paths they do not lie
 * in a writable root. The holder's own `.git/hooks` becomes writable to the holder's agent.
 *
 * The link is relative (`../proj/.git`): bwrap resolves the mount point inside its new root,
 * where an absolute link's target does not exist, but a relative one resolves there too.
 *
 * The test does the swap deterministically at the moment a racing issuer would: after
 * `prepareConfinement` (the runner's check) and before bwrap starts. docs/sandbox.md says "swapping
 * a root for a link after the check widens nothing"; for a root whose parent someone else writes,
 * it does.
 *
 * Expected: the holder's `.git/hooks/pre-commit` is not written (the root bound from a descriptor
 * opened at check time, `--bind-fd`, or the mount point verified inside the sandbox).
 */
import assert from "node:assert/strict";
import { confineArgv, makePrivateTmpdir, removePrivateTmpdir } from "../../lib/sandbox/mod.ts";
import { lexists, makeFixture, planFor, sh, spawnCommand } from "../sandbox/_helpers.ts";

Deno.test("probe grants: a granted root swapped for a symlink after the check does not reach the holder's .git", async () => {
  const fx = makeFixture();
  const tmpdir = makePrivateTmpdir();
  try {
    const issuer = `${fx.base}/issuer`;
    const docs = `${issuer}/docs`;
    Deno.mkdirSync(docs, { recursive: true });
    const hook = `${fx.project}/.git/hooks/pre-commit`;
    const script = `printf '#!/bin/sh\\ntouch ${fx.base}/hook-ran\\n' > ${docs}/hooks/pre-commit` +
      ` && chmod +x ${docs}/hooks/pre-commit`;
    const plan = planFor(fx, sh(script), tmpdir, {
      extra: { grantedRoots: [{ root: docs, issuerRoot: issuer, grant: "G-1" }] },
    });
    assert.ok(plan.writeRoots.includes(docs), "the check accepted the granted root");
    // The issuer side swaps its directory for a link to the holder's .git.
    Deno.renameSync(docs, `${issuer}/docs.orig`);
    // Relative, so that bwrap resolves the mount point inside its new root too.
    Deno.symlinkSync("../proj/.git", docs);
    const cmd = confineArgv(plan, "bwrap");
    const out = await spawnCommand(cmd);
    assert.ok(
      !lexists(hook),
      `the confined command (exit ${out.code}) wrote the holder's ${hook} through the swapped root`,
    );
    // Refused by the exec guard before bwrap mounted anything: it binds the checked directory's
    // descriptor, and the name no longer names it.
    assert.notEqual(out.code, 0);
    assert.match(
      out.stderr,
      /docs changed since it was checked; refused/,
    );
  } finally {
    removePrivateTmpdir(tmpdir);
    fx.cleanup();
  }
});

Deno.test("a project write root swapped for a symlink after the check is refused the same way", async () => {
  const fx = makeFixture();
  const tmpdir = makePrivateTmpdir();
  try {
    const build = `${fx.project}/build`;
    const plan = planFor(fx, sh(`echo x > ${build}/hooks/pre-commit`), tmpdir);
    Deno.renameSync(build, `${fx.project}/build.orig`);
    Deno.symlinkSync(".git", build);
    const cmd = confineArgv(plan, "bwrap");
    const out = await spawnCommand(cmd);
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /build changed since it was checked/);
    assert.ok(!lexists(`${fx.project}/.git/hooks/pre-commit`), "the holder's hook was written");
  } finally {
    removePrivateTmpdir(tmpdir);
    fx.cleanup();
  }
});
