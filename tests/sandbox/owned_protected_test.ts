/**
 * Owned protected writes in the confinement plan: a protected path the command entry's own
 * `writes` globs cover is not kept read-only inside a write root (neither re-bound nor masked);
 * every other protected path, and the control plane, still is. Plans only, and one live bwrap
 * run (bwrap is required: a missing one fails the test).
 */
import assert from "node:assert/strict";
import { makePrivateTmpdir, removePrivateTmpdir } from "../../lib/sandbox/mod.ts";
import { newReadOnlyEntries } from "../../lib/sandbox/read_only_guards.ts";
import { makeFixture, planFor, runConfined } from "./_helpers.ts";

const PROTECTED = ["build/*/counterexamples.json", "build/lit.json", "build/keys"];

function withRecords(fx: { project: string }): void {
  Deno.mkdirSync(`${fx.project}/build/p1`, { recursive: true });
  Deno.writeTextFileSync(`${fx.project}/build/p1/counterexamples.json`, "[0]\n");
  Deno.mkdirSync(`${fx.project}/build/keys`, { recursive: true });
}

Deno.test("plan: an owned protected path is neither re-bound nor masked; the rest still are", () => {
  const fx = makeFixture();
  const tmpdir = makePrivateTmpdir();
  try {
    withRecords(fx);
    const p = fx.project;
    const guarded = planFor(fx, ["/usr/bin/true"], tmpdir, { protectedPaths: PROTECTED });
    assert.ok(guarded.readOnly.includes(`${p}/build/p1/counterexamples.json`));
    assert.ok(guarded.masks.includes(`${p}/build/lit.json`));
    const owned = planFor(fx, ["/usr/bin/true"], tmpdir, {
      protectedPaths: PROTECTED,
      extra: { ownedWrites: ["build/*/counterexamples.json", "build/lit.json"] },
    });
    assert.equal(owned.readOnly.includes(`${p}/build/p1/counterexamples.json`), false);
    assert.equal(owned.masks.includes(`${p}/build/lit.json`), false);
    assert.ok(owned.readOnly.includes(`${p}/build/keys`), "a protected path it does not own");
    assert.ok(owned.readOnly.includes(`${p}/build/sub/.GIT`), "the control plane, always");
    // A writes glob covering the control plane does not make it writable.
    const greedy = planFor(fx, ["/usr/bin/true"], tmpdir, {
      protectedPaths: PROTECTED,
      extra: { ownedWrites: ["build/*"] },
    });
    assert.ok(greedy.readOnly.includes(`${p}/build/sub/.GIT`));
    // After the run, a new owned record is not reported; a new unowned one is.
    Deno.mkdirSync(`${p}/build/p2`);
    Deno.writeTextFileSync(`${p}/build/p2/counterexamples.json`, "[2]\n");
    assert.deepEqual(newReadOnlyEntries(owned, PROTECTED, ["build/*/counterexamples.json"]), []);
    assert.deepEqual(newReadOnlyEntries(owned, PROTECTED, []), [
      `${p}/build/p1/counterexamples.json`,
      `${p}/build/p2/counterexamples.json`,
    ]);
  } finally {
    removePrivateTmpdir(tmpdir);
    fx.cleanup();
  }
});

Deno.test("bwrap: the owning entry writes the protected record; another entry cannot", async () => {
  const fx = makeFixture();
  try {
    withRecords(fx);
    const file = `${fx.project}/build/p1/counterexamples.json`;
    const argv = ["/usr/bin/sh", "-c", `printf '[1]\\n' > ${file}`];
    const refused = await runConfined(fx, argv, { protectedPaths: PROTECTED });
    assert.notEqual(refused.code, 0, refused.stderr);
    assert.equal(Deno.readTextFileSync(file), "[0]\n");
    const notOwner = await runConfined(fx, argv, {
      protectedPaths: PROTECTED,
      extra: { ownedWrites: ["build/*/notes.md"] },
    });
    assert.notEqual(notOwner.code, 0, notOwner.stderr);
    assert.equal(Deno.readTextFileSync(file), "[0]\n");
    const owner = await runConfined(fx, argv, {
      protectedPaths: PROTECTED,
      extra: { ownedWrites: ["build/*/counterexamples.json"] },
    });
    assert.equal(owner.code, 0, owner.stderr);
    assert.equal(Deno.readTextFileSync(file), "[1]\n");
  } finally {
    fx.cleanup();
  }
});

Deno.test("plan and bwrap: a literal protected directory whose own name an entry's glob covers stays read-only (nothing inside is owned)", async () => {
  const fx = makeFixture();
  try {
    withRecords(fx);
    const p = fx.project;
    const tmpdir = makePrivateTmpdir();
    try {
      const plan = planFor(fx, ["/usr/bin/true"], tmpdir, {
        protectedPaths: PROTECTED,
        extra: { ownedWrites: ["build/keys"] },
      });
      assert.ok(plan.readOnly.includes(`${p}/build/keys`), "the directory stays bound read-only");
    } finally {
      removePrivateTmpdir(tmpdir);
    }
    const argv = ["/usr/bin/sh", "-c", `printf 'k\\n' > ${p}/build/keys/new.pem`];
    const r = await runConfined(fx, argv, {
      protectedPaths: PROTECTED,
      extra: { ownedWrites: ["build/keys"] },
    });
    assert.notEqual(r.code, 0, r.stderr);
    assert.deepEqual([...Deno.readDirSync(`${p}/build/keys`)], [], "nothing written inside");
  } finally {
    fx.cleanup();
  }
});
