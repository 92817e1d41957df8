/**
 * The path walk's refusals on real files: a file or a symlink standing where a directory is
 * expected, and a name that is not one path component. Each refusal creates nothing.
 */
import assert from "node:assert/strict";
import { MAX_OPENS_LEFT_WAITING, openWithin } from "../../lib/fs/safe_read.ts";
import { FsSafetyError } from "../../lib/errors.ts";
import { checkName, childKind, readChild, walkDirs } from "../../lib/fs/path_walk.ts";
import { snapshotTree } from "../_helpers/mod.ts";
import { assertRefusal, assertSameTree, hangGuard } from "../_helpers/assert.ts";

Deno.test("walkDirs: a file, a symlinked directory, a file above a component: refused, nothing created", async () => {
  const root = Deno.makeTempDirSync();
  const outside = Deno.makeTempDirSync();
  Deno.mkdirSync(`${root}/src`);
  Deno.writeTextFileSync(`${root}/src/file`, "f\n");
  Deno.symlinkSync(outside, `${root}/src/out`);
  const before = await snapshotTree(root, outside);
  assert.equal(walkDirs(root, ["src"]), `${root}/src`);
  assert.equal(walkDirs(root, ["src", "missing", "deeper"]), null);
  assertRefusal(() => walkDirs(root, ["src", "file"]), "NOT_DIRECTORY", FsSafetyError);
  assertRefusal(() => walkDirs(root, ["src", "file", "below"]), "NOT_DIRECTORY", FsSafetyError);
  assertRefusal(() => walkDirs(root, ["src", "out"]), "SYMLINK", FsSafetyError);
  assertRefusal(() => walkDirs(root, ["src", "out", "x"]), "SYMLINK", FsSafetyError);
  assertSameTree(before, await snapshotTree(root, outside));
  assert.deepEqual([...(await snapshotTree(outside)).keys()], [outside]);
});

Deno.test("checkName: empty, dot, dot-dot, slash and NUL names are refused by every walk entry point", async () => {
  const root = Deno.makeTempDirSync();
  Deno.mkdirSync(`${root}/src`);
  Deno.writeTextFileSync(`${root}/src/a.txt`, "a\n");
  const before = await snapshotTree(root);
  checkName("a.txt");
  for (const bad of ["", ".", "..", "a/b", "a\0b"]) {
    assertRefusal(() => checkName(bad), "NOT_DIRECTORY", FsSafetyError, JSON.stringify(bad));
    assertRefusal(() => walkDirs(root, ["src", bad]), "NOT_DIRECTORY", FsSafetyError);
    assertRefusal(() => childKind(`${root}/src`, bad), "NOT_DIRECTORY", FsSafetyError);
    await assertRefusal(() => readChild(`${root}/src`, bad, 1024), "NOT_DIRECTORY", FsSafetyError);
  }
  // `..` would otherwise climb out of the walked directory.
  await assertRefusal(
    () => readChild(`${root}/src`, "../src/a.txt", 1024),
    "NOT_DIRECTORY",
    FsSafetyError,
  );
  assertSameTree(before, await snapshotTree(root));
});

Deno.test("childKind and readChild: a symlink is reported, never followed; readChild refuses it", async () => {
  const root = Deno.makeTempDirSync();
  const outside = Deno.makeTempDirSync();
  Deno.writeTextFileSync(`${outside}/secret`, "s\n");
  Deno.symlinkSync(`${outside}/secret`, `${root}/link`);
  Deno.mkdirSync(`${root}/d`);
  assert.equal(childKind(root, "link"), "symlink");
  assert.equal(childKind(root, "d"), "dir");
  assert.equal(childKind(root, "absent"), "missing");
  await assertRefusal(() => readChild(root, "link", 1024), "SYMLINK", FsSafetyError);
  await assertRefusal(() => readChild(root, "d", 1024), "NOT_REGULAR_FILE", FsSafetyError);
  assert.equal(Deno.readTextFileSync(`${outside}/secret`), "s\n");
});

Deno.test("openWithin: an open that waits (a FIFO with no writer, as one swapped in after the lstat) is refused at its deadline, not waited on; a file opens", async () => {
  const root = Deno.makeTempDirSync();
  try {
    const fifo = `${root}/target`;
    const mk = await new Deno.Command("/usr/bin/mkfifo", { args: [fifo] }).output();
    assert.equal(mk.code, 0, "mkfifo is required");
    // Refused at the deadline, not after some writer came along (none ever does): an open
    // that ignored its deadline would wait forever, and the hang guard fails the test.
    await hangGuard(
      assertRefusal(() => openWithin(fifo, 200, "target"), "NOT_REGULAR_FILE", FsSafetyError),
      "openWithin on a FIFO with no writer (200 ms deadline)",
    );
    // Unblock the open left waiting, so the test's process has nothing pending.
    const w = await Deno.open(fifo, { write: true });
    w.close();
    Deno.writeTextFileSync(`${root}/file`, "x");
    const f = await openWithin(`${root}/file`, 2000, "target");
    f.close();
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("openWithin: with its bound of opens left waiting on FIFOs, a further open is refused at once (the process keeps its threads); once they complete, files open again", async () => {
  const root = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${root}/file`, "x");
    const fifos: string[] = [];
    for (let i = 0; i < MAX_OPENS_LEFT_WAITING; i++) {
      const fifo = `${root}/fifo${i}`;
      const mk = await new Deno.Command("/usr/bin/mkfifo", { args: [fifo] }).output();
      assert.equal(mk.code, 0, "mkfifo is required");
      fifos.push(fifo);
    }
    await hangGuard(
      Promise.all(
        fifos.map((f) =>
          assertRefusal(() => openWithin(f, 100, "target"), "NOT_REGULAR_FILE", FsSafetyError)
        ),
      ),
      "opens of FIFOs with no writer (100 ms deadline)",
    );
    // Refused without opening, however soon: even a plain file.
    const t = performance.now();
    const e = await assertRefusal(
      () => openWithin(`${root}/file`, 10_000, "target"),
      "NOT_REGULAR_FILE",
      FsSafetyError,
    );
    assert.match(e.message, /still waiting/);
    assert.ok(performance.now() - t < 5_000, "refused at once, not at its deadline");
    // A writer for each: the waiting opens complete (and are closed), and the bound frees.
    for (const f of fifos) (await Deno.open(f, { write: true })).close();
    let opened: Deno.FsFile | null = null;
    for (let i = 0; i < 100 && opened === null; i++) {
      try {
        opened = await openWithin(`${root}/file`, 2000, "target");
      } catch (err) {
        if (!(err instanceof FsSafetyError)) throw err;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    assert.ok(opened !== null, "files open again once the waiting opens completed");
    opened.close();
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
