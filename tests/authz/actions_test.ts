/**
 * The action grammar (lib/authz/actions.ts), each act's action ids, and the trust decision
 * (lib/authz/trust.ts `decideTrust`), as pure functions; and where a team dir may lie.
 */
import assert from "node:assert/strict";
import {
  actionFormProblem,
  applyActions,
  dispatchActions,
  runActions,
} from "../../lib/authz/actions.ts";
import { decideTrust } from "../../lib/authz/trust.ts";
import { haltReaches } from "../../lib/authz/table.ts";
import { readTeamDir } from "../../lib/authz/grants.ts";
import { generatePem } from "../../lib/crypto/ed25519.ts";
import { join } from "node:path";

Deno.test("action grammar: the forms are accepted, everything else refused with the forms listed", () => {
  for (
    const [a, v] of [
      ["*", "HALT"],
      ["*", "HALT-RETRACTED"],
      ["delete:build/out.bin", "PASS"],
      ["write:docs/shared", "HALT"],
      ["run:git", "HALT"],
      ["run:/usr/bin/git", "HALT"],
      ["grant:G-1", "HALT"],
      ["delete", "HALT"],
      ["deploy", "PASS"],
      ["security-intel-freshness", "CONDITIONAL PASS"],
    ]
  ) assert.equal(actionFormProblem(a, v), null, `${a} ${v}`);
  for (
    const [a, v] of [
      ["*", "PASS"],
      ["*", "CONDITIONAL PASS"],
      ["delete:*", "HALT"],
      ["write:src/**", "HALT"],
      ["deploy:prod", "HALT"],
      ["delete:", "HALT"],
      ["write:../x", "HALT"],
      ["", "HALT"],
      ["a b", "HALT"],
      ["-x", "HALT"],
    ]
  ) {
    const p = actionFormProblem(a, v);
    assert.equal(p?.code, "ACTION_FORM", `${a} ${v}`);
    assert.match(p!.reason, /the forms are: .*delete:PATH; write:PATH; run:PROGRAM/);
  }
});

Deno.test("act ids: an apply names write: (and delete:), a run its program as written and its name; a HALT reaches them", () => {
  assert.deepEqual(applyActions("src/a.ts", false), ["write:src/a.ts"]);
  assert.deepEqual(applyActions("old.txt", true), ["write:old.txt", "delete:old.txt"]);
  assert.deepEqual(runActions("/usr/bin/git"), ["run:/usr/bin/git", "run:git"]);
  assert.deepEqual(dispatchActions("worker"), ["dispatch:worker"]);
  assert.equal(haltReaches("write:src", applyActions("src/a/b.ts", false)[0]), true);
  assert.equal(haltReaches("write:src", applyActions("srcx/b.ts", false)[0]), false);
  assert.equal(haltReaches("run:git", runActions("/usr/bin/git")[1]), true);
  // `*` is not matched by the path rule: the HALT check handles it on its own.
  assert.equal(haltReaches("*", "write:src"), false);
});

Deno.test("decideTrust: under the switch a project store or roster without its deny rule is left out, with the reason; off the switch both are read after the key dir's", () => {
  const base = { root: "/p", keyDir: "/k", storeDenied: false, rosterDenied: false };
  const on = decideTrust({ ...base, switchOn: true });
  assert.deepEqual(on.storeDirs, ["/k/authorized-verify-keys"]);
  assert.deepEqual(on.rosterFiles, ["/k/security-approvers.txt"]);
  assert.equal(on.untrustedStore?.dir, "/p/references/authorized-verify-keys");
  assert.match(on.untrusted[0], /Edit\(\.\/references\/\*\*\)/);
  const denied = decideTrust({ ...base, switchOn: true, storeDenied: true, rosterDenied: true });
  assert.deepEqual(denied.storeDirs, [
    "/k/authorized-verify-keys",
    "/p/references/authorized-verify-keys",
  ]);
  assert.deepEqual(denied.untrusted, []);
  const off = decideTrust({ ...base, switchOn: false });
  assert.deepEqual(off.rosterFiles, [
    "/k/security-approvers.txt",
    "/p/references/security-approvers.txt",
  ]);
  assert.equal(off.untrustedStore, null);
  // No key dir (no HOME): only the project's, and under the switch nothing at all.
  assert.deepEqual(decideTrust({ ...base, keyDir: null, switchOn: true }).storeDirs, []);
});

Deno.test("readTeamDir: a team dir inside the project but outside its control plane is not read (fail closed)", async () => {
  const root = await Deno.makeTempDir({ prefix: "at-teamdir-" });
  try {
    const team = join(root, "team");
    await Deno.mkdir(join(team, "references", "authorized-verify-keys"), { recursive: true });
    await Deno.writeTextFile(join(team, "references", "security-approvers.txt"), "mallory\n");
    const pair = await generatePem();
    await Deno.writeTextFile(
      join(team, "references", "authorized-verify-keys", `${pair.keyId}.pub.pem`),
      pair.publicPem,
    );
    const t = readTeamDir(root, team);
    assert.equal(t.roster.size, 0);
    assert.match(t.warnings[0], /outside its control plane/);
    await assert.rejects(t.store.key(pair.keyId), /not trusted here/);
    // The default place, in the control plane, is read.
    const good = join(root, ".agentteams", "team");
    await Deno.mkdir(join(good, "references"), { recursive: true });
    await Deno.writeTextFile(join(good, "references", "security-approvers.txt"), "alice\n");
    assert.deepEqual([...readTeamDir(root, good).roster], ["alice"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
