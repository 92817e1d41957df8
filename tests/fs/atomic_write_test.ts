/**
 * Atomic replacement and the exclusive-create fill it shares with key creation: when the umask
 * narrowed a new file's mode, the mode is set by name, so a name swapped to another file in the
 * meantime must be refused and never chmod-ed. The swap is staged by wrapping `FsFile.statSync`
 * (the step just before the name is checked), which also reports a narrowed mode. A replaced
 * file never keeps the setuid, setgid or sticky bit (`replacementMode`, issue 13 hole 1).
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import {
  atomicWriteFile,
  atomicWriteFileSync,
  fillNewFileSync,
  isTempNameFor,
  replacementMode,
  SPECIAL_MODE_BITS,
  tempNameFor,
} from "../../lib/fs/atomic_write.ts";

type StatSync = (this: Deno.FsFile) => Deno.FileInfo;

/** Runs `fn` with the next `FsFile.statSync` first calling `swap`, and reporting mode 0. */
function withSwapAtStat<T>(swap: () => void, fn: () => T): T {
  const proto = Deno.FsFile.prototype as unknown as { statSync: StatSync };
  const real = proto.statSync;
  proto.statSync = function (this: Deno.FsFile) {
    proto.statSync = real;
    const st = real.call(this);
    swap();
    return { ...st, mode: 0 };
  };
  try {
    return fn();
  } finally {
    proto.statSync = real;
  }
}

function listing(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test("atomicWriteFileSync: keeps an existing file's mode, leaves no temporary file", () => {
  const dir = Deno.makeTempDirSync();
  const target = `${dir}/t.txt`;
  Deno.writeTextFileSync(target, "old\n");
  Deno.chmodSync(target, 0o640);
  assert.equal(atomicWriteFileSync(target, "new\n", { mode: 0o600 }), 0o640);
  assert.equal(Deno.readTextFileSync(target), "new\n");
  assert.equal((Deno.statSync(target).mode ?? 0) & 0o7777, 0o640);
  assert.deepEqual(listing(dir), ["t.txt"]);
});

Deno.test("atomicWriteFileSync: its temporary file swapped before the mode is set: refused, the target unchanged", () => {
  const dir = Deno.makeTempDirSync();
  const target = `${dir}/t.txt`;
  Deno.writeTextFileSync(target, "old\n");
  Deno.chmodSync(target, 0o640);
  let newcomerMode = -1;
  assert.throws(
    () =>
      withSwapAtStat(() => {
        const tmp = `${dir}/${listing(dir).find((n) => n.endsWith(".tmp"))}`;
        Deno.removeSync(tmp);
        Deno.writeTextFileSync(tmp, "theirs\n", { mode: 0o600 });
        Deno.chmodSync(tmp, 0o600);
        // Record the newcomer's mode at the moment the write gives up on it.
        const d = Deno as unknown as { removeSync: typeof Deno.removeSync };
        const realRemove = Deno.removeSync;
        d.removeSync = (p, o) => {
          d.removeSync = realRemove;
          newcomerMode = (Deno.lstatSync(p).mode ?? 0) & 0o7777;
          return realRemove(p, o);
        };
      }, () => atomicWriteFileSync(target, "mine\n")),
    (e: unknown) =>
      e instanceof Deno.errors.AlreadyExists && /replaced while being written/.test(e.message),
  );
  assert.equal(newcomerMode, 0o600, "the newcomer was never chmod-ed to the target's mode");
  assert.equal(Deno.readTextFileSync(target), "old\n");
  assert.equal((Deno.statSync(target).mode ?? 0) & 0o7777, 0o640);
  assert.deepEqual(listing(dir), ["t.txt"]);
});

Deno.test("fillNewFileSync: the name swapped before the mode is set: the caller's error, the newcomer untouched", () => {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/key`;
  const file = Deno.openSync(path, { write: true, createNew: true, mode: 0o600 });
  try {
    assert.throws(
      () =>
        withSwapAtStat(() => {
          Deno.removeSync(path);
          Deno.writeTextFileSync(path, "theirs\n", { mode: 0o600 });
          Deno.chmodSync(path, 0o600);
        }, () =>
          fillNewFileSync(
            file,
            path,
            new TextEncoder().encode("mine\n"),
            0o644,
            () => new RangeError("replaced"),
          )),
      RangeError,
    );
  } finally {
    file.close();
  }
  assert.equal(Deno.readTextFileSync(path), "theirs\n");
  assert.equal((Deno.statSync(path).mode ?? 0) & 0o7777, 0o600);
  assert.deepEqual(listing(dir), ["key"]);
});

Deno.test("isTempNameFor knows exactly the names tempNameFor gives", () => {
  for (const target of ["/p/a.txt", ".agentteams/proposal-ledger.head"]) {
    assert.ok(isTempNameFor(tempNameFor(target), target));
  }
  const t = ".agentteams/proposal-ledger.head";
  for (
    const other of [
      ".agentteams/.proposal-ledger.head.tmp",
      ".agentteams/.proposal-ledger.head.0123456789abcdef.tmpx",
      ".agentteams/.proposal-ledger.head.0123456789ABCDEF.tmp",
      ".agentteams/.proposal-ledger.head.0123456789abcde.tmp",
      "elsewhere/.proposal-ledger.head.0123456789abcdef.tmp",
      ".agentteams/.dispatches.jsonl.0123456789abcdef.tmp",
      ".agentteams/proposal-ledger.head",
    ]
  ) assert.equal(isTempNameFor(other, t), false, other);
});

Deno.test("replacementMode: the permission bits of the replaced file (or the fresh mode), never setuid, setgid or sticky", () => {
  const table: [number | null, number, number][] = [
    [0o755, 0o644, 0o755],
    [0o4755, 0o644, 0o755],
    [0o2755, 0o644, 0o755],
    [0o6755, 0o644, 0o755],
    [0o1755, 0o644, 0o755],
    [0o2775, 0o644, 0o775],
    [0o1644, 0o644, 0o644],
    [0o7777, 0o644, 0o777],
    [0o600, 0o644, 0o600],
    [0o000, 0o644, 0o000],
    // A full st_mode (regular file type bits) counts by its low bits only.
    [0o104755, 0o644, 0o755],
    [0o100640, 0o644, 0o640],
    // No file to replace: the fresh mode, stripped the same way.
    [null, 0o644, 0o644],
    [null, 0o600, 0o600],
    [null, 0o4755, 0o755],
  ];
  for (const [current, fresh, want] of table) {
    assert.equal(
      replacementMode(current, fresh).toString(8),
      want.toString(8),
      `${current?.toString(8)} / ${fresh.toString(8)}`,
    );
  }
  assert.equal(SPECIAL_MODE_BITS, 0o7000);
  fc.assert(
    fc.property(
      fc.option(fc.integer({ min: 0, max: 0o177777 }), { nil: null }),
      fc.integer({ min: 0, max: 0o7777 }),
      (current, fresh) => {
        const m = replacementMode(current, fresh);
        assert.equal(m & SPECIAL_MODE_BITS, 0);
        assert.equal(m, (current ?? fresh) & 0o777);
      },
    ),
  );
});

Deno.test("atomicWriteFileSync: a setuid/setgid/sticky file is replaced without those bits, the rest kept", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const target = `${dir}/prog`;
    const elf = "\u007fELF\u0002\u0001\u0001\u0000\n";
    for (
      const [was, want] of [[0o4755, 0o755], [0o2755, 0o755], [0o6755, 0o755], [0o1755, 0o755], [
        0o2775,
        0o775,
      ], [0o1644, 0o644]]
    ) {
      Deno.writeTextFileSync(target, "old\n");
      Deno.chmodSync(target, was);
      assert.equal(atomicWriteFileSync(target, elf).toString(8), want.toString(8));
      assert.equal(Deno.readTextFileSync(target), elf);
      assert.equal(((Deno.statSync(target).mode ?? 0) & 0o7777).toString(8), want.toString(8));
      // forceMode is stripped the same way.
      Deno.chmodSync(target, 0o644);
      assert.equal(atomicWriteFileSync(target, elf, { forceMode: was }), want);
      assert.equal((Deno.statSync(target).mode ?? 0) & 0o7777, want);
    }
    assert.deepEqual(listing(dir), ["prog"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("atomicWriteFile: the name leads to the new bytes only once what it waits beside is durable", async () => {
  const dir = Deno.makeTempDirSync();
  const target = `${dir}/head`;
  Deno.writeTextFileSync(target, "old\n");
  let done!: () => void;
  const alongside = new Promise<void>((r) => done = r);
  const writing = atomicWriteFile(target, "new\n", { mode: 0o644 }, alongside);
  // Its own fsync has had time to finish; the other one has not: nothing is renamed yet.
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(Deno.readTextFileSync(target), "old\n");
  assert.equal(listing(dir).length, 2, "the filled temporary file waits beside the target");
  done();
  assert.equal(await writing, 0o644);
  assert.equal(Deno.readTextFileSync(target), "new\n");
  assert.deepEqual(listing(dir), ["head"]);
});

Deno.test("atomicWriteFile: what it waits beside fails: that error, the target unchanged, no temporary file", async () => {
  const dir = Deno.makeTempDirSync();
  const target = `${dir}/head`;
  Deno.writeTextFileSync(target, "old\n");
  await assert.rejects(
    atomicWriteFile(target, "new\n", {}, Promise.reject(new Error("the row's fsync failed"))),
    /the row's fsync failed/,
  );
  assert.equal(Deno.readTextFileSync(target), "old\n");
  assert.deepEqual(listing(dir), ["head"]);
});

Deno.test("atomicWriteFile: a temporary file swapped before the mode is set: refused, the target unchanged, what it waits beside still awaited", async () => {
  const dir = Deno.makeTempDirSync();
  const target = `${dir}/head`;
  Deno.writeTextFileSync(target, "old\n");
  let settled = false;
  const alongside = new Promise<void>((r) => setTimeout(r, 20)).then(() => {
    settled = true;
  });
  await assert.rejects(
    withSwapAtStat(() => {
      const tmp = [...Deno.readDirSync(dir)].find((e) => e.name !== "head")!.name;
      Deno.removeSync(`${dir}/${tmp}`);
      Deno.writeTextFileSync(`${dir}/${tmp}`, "newcomer");
    }, () => atomicWriteFile(target, "new\n", { mode: 0o600 }, alongside)),
    Deno.errors.AlreadyExists,
  );
  assert.equal(settled, true);
  assert.equal(Deno.readTextFileSync(target), "old\n");
});
