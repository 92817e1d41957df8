/**
 * Probe (grants): a HALT stops a granted write only when its action spells the grant's
 * `target_path` exactly as signed (`write:<target_path>`, `haltReaches`), or names the grant id.
 * The same directory spelled another way is not stopped:
 *
 * - the absolute root the runner logs and records (`grants: G-1 adds the write root /srv/a/docs`,
 *   the `grants-loaded` row's `roots`, `grant verify --roots`) when the grant's target is
 *   relative (`docs`): an operator who HALTs what the runner printed stops nothing;
 * - `./docs` or `docs/.` (what `writeRootsOf` normalizes to the same root) against a HALT on
 *   `write:docs`.
 *
 * The HALT is the operator's brake; it should reach the root the grant widens, however the
 * target was written. Expected: `writeRootsOf` leaves the root out in every case below.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeRootsOf } from "../../lib/authz/grants.ts";
import { runCli, sandbox } from "../_helpers/mod.ts";

function grantRow(id: string, target: string, issuerRoot: string): Record<string, string> {
  return {
    grant_id: id,
    target_path: target,
    permitted_ops: "write",
    expires_at: "2099-01-01T00:00:00Z",
    issuer_root: issuerRoot,
  };
}

async function rootsAfterHalt(target: string, haltOn: string | null) {
  const sb = await sandbox("probe-halt-spelling");
  try {
    const issuer = join(sb.dir, "issuer");
    const root = join(issuer, "docs");
    const action = haltOn === "ROOT" ? `write:${root}` : haltOn;
    if (action !== null) {
      const halt = await runCli(
        ["decision", "sign", "--project", sb.project, "--action", action, "--verdict", "HALT"],
        { env: { ...sb.env, AGENTTEAMS_DECISION_SIGNING_KEY: "dk" } },
      );
      assert.equal(halt.code, 0, halt.stderr);
    }
    // The report verifyGrants would make for one valid, Ed25519-signed write grant.
    const g = await writeRootsOf(sb.project, {
      findings: [],
      valid: [grantRow("G-1", target, issuer)],
      warnings: [],
    }, { env: {}, now: new Date("2026-12-01T00:00:00Z") });
    return { roots: g.roots, root, action };
  } finally {
    await sb.dispose();
  }
}

Deno.test("probe grants (control, holds): every spelling widens to the same root; a HALT spelled as signed stops it", async () => {
  for (const t of ["docs", "./docs", "docs/."]) {
    const r = await rootsAfterHalt(t, null);
    assert.deepEqual(r.roots, [r.root], t);
  }
  assert.deepEqual((await rootsAfterHalt("docs", "write:docs")).roots, []);
});

for (
  const [what, target, haltOn] of [
    ["the absolute root the runner printed, for a relative target", "docs", "ROOT"],
    ["write:docs, for a target spelled ./docs", "./docs", "write:docs"],
    ["write:docs, for a target spelled docs/.", "docs/.", "write:docs"],
  ] as const
) {
  Deno.test(`probe grants: a HALT on ${what} takes the root away`, async () => {
    const r = await rootsAfterHalt(target, haltOn);
    assert.deepEqual(
      r.roots,
      [],
      `a HALT on ${JSON.stringify(r.action)} did not stop grant G-1 (target ` +
        `${JSON.stringify(target)}), whose root is ${r.root}`,
    );
  });
}
