/**
 * Probe (grants): attacks on granted roots that HOLD today (these tests pass). A confined command
 * with a granted root cannot: write through a symlink it plants inside the root (to the holder's
 * project or the key dir: bwrap's read-only `/` applies at the link's target); rename the granted
 * root itself aside (its parent is read-only, and it is a mount point); reach the issuer's `.git`
 * when the grant's `issuer_root` carries a trailing slash (`/srv/a/` gives `/srv/a//.git`, which
 * is still matched and bound read-only).
 */
import assert from "node:assert/strict";
import { SandboxError } from "../../lib/errors.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { makeFixture, runConfined, sh } from "../sandbox/_helpers.ts";

Deno.test("probe grants (holds): symlinks planted in a granted root, renaming the root, a trailing-slash issuer_root", async () => {
  const fx = makeFixture();
  try {
    const issuer = `${fx.base}/issuer`;
    const docs = `${issuer}/docs`;
    Deno.mkdirSync(docs, { recursive: true });
    Deno.mkdirSync(`${issuer}/.git/hooks`, { recursive: true });
    const g = { root: docs, issuerRoot: issuer, grant: "G-1" };
    const plant = await runConfined(
      fx,
      sh(`ln -s ${fx.project} ${docs}/proj && ln -s ${fx.keyDir} ${docs}/keys`),
      { extra: { grantedRoots: [g] } },
    );
    assert.equal(plant.code, 0, plant.stderr);
    const before = snapshotTreeSync(fx.base);
    for (
      const [what, script, grant] of [
        ["the project through a link", `echo x > ${docs}/proj/.git/hooks/pre-commit`, g],
        ["a project file through a link", `echo x >> ${docs}/proj/README`, g],
        ["the key dir through a link", `echo x > ${docs}/keys/k`, g],
        ["reading the key through a link", `cat ${docs}/keys/proposal-ledger.key`, g],
        ["renaming the root", `mv ${docs} ${issuer}/docs2`, g],
        [
          "the issuer's .git, issuer_root with a trailing slash",
          `echo x > ${issuer}/.git/hooks/h`,
          {
            root: issuer,
            issuerRoot: `${issuer}/`,
            grant: "G-2",
          },
        ],
      ] as const
    ) {
      // Refused before it runs (a root not named plainly), or run and failed.
      const r = await runConfined(fx, sh(script), { extra: { grantedRoots: [grant] } }).catch(
        (e: unknown) => {
          if (e instanceof SandboxError) return { code: -1, stdout: "" };
          throw e;
        },
      );
      assert.notEqual(r.code, 0, `${what}: it succeeded`);
      assert.ok(!r.stdout.includes(fx.secret), `${what}: the key was read`);
    }
    assertSameTree(before, snapshotTreeSync(fx.base), "nothing written");
  } finally {
    fx.cleanup();
  }
});
