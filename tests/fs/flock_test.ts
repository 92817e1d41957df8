/**
 * The one flock module: what each target refuses, and the replaced-lock hook the ledger's lock
 * files use. The bounded wait (a second runner) is proven by tests/runner/start_refusals_slow_test.ts.
 */
import assert from "node:assert/strict";
import { takeFlock, withFlock } from "../../lib/fs/flock.ts";

function tmp(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-flock-" }));
}

Deno.test("flock: a directory target must be a directory (a symlink to one, a file are refused)", async () => {
  const d = tmp();
  try {
    Deno.mkdirSync(`${d}/real`);
    Deno.symlinkSync(`${d}/real`, `${d}/link`);
    Deno.writeTextFileSync(`${d}/file`, "x");
    assert.equal(await withFlock(`${d}/real`, { target: "directory" }, () => 7), 7);
    for (const p of [`${d}/link`, `${d}/file`]) {
      await assert.rejects(
        () => withFlock(p, { target: "directory" }, () => assert.fail("ran")),
        Deno.errors.NotADirectory,
      );
    }
    await assert.rejects(
      () => withFlock(`${d}/absent`, { target: "directory" }, () => assert.fail("ran")),
      Deno.errors.NotFound,
    );
    assert.deepEqual([...Deno.readDirSync(d)].map((e) => e.name).sort(), ["file", "link", "real"]);
  } finally {
    Deno.removeSync(d, { recursive: true });
  }
});

Deno.test("flock: a file target is created 0600; a symlink at the path calls onChanged and is refused unlocked", async () => {
  const d = tmp();
  try {
    const lock = await takeFlock(`${d}/a.lock`, { target: "file" });
    assert.ok(lock !== null);
    assert.equal(Deno.lstatSync(`${d}/a.lock`).mode! & 0o777, 0o600);
    lock.release();
    Deno.writeTextFileSync(`${d}/target`, "keep");
    Deno.symlinkSync(`${d}/target`, `${d}/b.lock`);
    const seen: string[] = [];
    await assert.rejects(
      () =>
        withFlock(
          `${d}/b.lock`,
          { target: "file", onChanged: (p) => seen.push(p) },
          () => assert.fail("ran"),
        ),
      Deno.errors.InvalidData,
    );
    assert.deepEqual(seen, [`${d}/b.lock`]);
    assert.equal(Deno.readTextFileSync(`${d}/target`), "keep");
  } finally {
    Deno.removeSync(d, { recursive: true });
  }
});

Deno.test("flock: a lock file removed or replaced while held throws the caller's refusal; what fn wrote stays", async () => {
  const d = tmp();
  try {
    const p = `${d}/c.lock`;
    const replaced = (how: string, when: string) => new Error(`${how} ${when}`);
    await assert.rejects(
      () =>
        withFlock(p, { target: "file", replaced }, (lock) => {
          lock.file.writeSync(new TextEncoder().encode("row\n"));
          Deno.renameSync(p, `${d}/moved`);
        }),
      { message: "removed held" },
    );
    assert.equal(Deno.readTextFileSync(`${d}/moved`), "row\n");
    await assert.rejects(
      () =>
        withFlock(p, { target: "file", replaced }, () => {
          Deno.writeTextFileSync(`${d}/other`, "");
          Deno.renameSync(`${d}/other`, p);
        }),
      { message: "replaced held" },
    );
  } finally {
    Deno.removeSync(d, { recursive: true });
  }
});
