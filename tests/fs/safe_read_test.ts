/**
 * `readRegularFileSync` checks the path with `lstat`, then opens it and compares the open file's
 * device and inode with what `lstat` saw. The swap between the two is staged by wrapping
 * `Deno.lstatSync` (the check): it returns the true answer and then replaces the file.
 */
import assert from "node:assert/strict";
import { FsSafetyError } from "../../lib/errors.ts";
import { custodyProblem, readRegularFileSync } from "../../lib/fs/safe_read.ts";
import { runDeno, snapshotTree, type TreeEntry } from "../_helpers/mod.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";

/** Runs `fn` with the next `Deno.lstatSync` renaming `from` over `to` right after it looked. */
function withRenameAfterLstat<T>(from: string, to: string, fn: () => T): T {
  const d = Deno as unknown as { lstatSync: typeof Deno.lstatSync };
  const real = Deno.lstatSync;
  d.lstatSync = (p) => {
    d.lstatSync = real;
    const st = real(p);
    Deno.renameSync(from, to);
    return st;
  };
  try {
    return fn();
  } finally {
    d.lstatSync = real;
  }
}

/** `before` with the entry at `from` moved to `to`: the staged swap and nothing else. */
function afterRename(
  before: Map<string, TreeEntry>,
  from: string,
  to: string,
): Map<string, TreeEntry> {
  const out = new Map(before);
  out.set(to, out.get(from)!);
  out.delete(from);
  return out;
}

for (
  const [what, stage] of [
    [
      "a symlink to a file outside",
      (dir: string, outside: string) => Deno.symlinkSync(`${outside}/secret`, `${dir}/.swap`),
    ],
    [
      "another regular file",
      (dir: string) => Deno.writeTextFileSync(`${dir}/.swap`, "theirs\n"),
    ],
  ] as const
) {
  Deno.test(`readRegularFileSync: ${what} renamed in between the check and the open: FILE_CHANGED, its bytes never returned`, async () => {
    const dir = Deno.makeTempDirSync();
    const outside = Deno.makeTempDirSync();
    try {
      const target = `${dir}/key`;
      Deno.writeTextFileSync(target, "mine\n");
      Deno.writeTextFileSync(`${outside}/secret`, "secret\n");
      stage(dir, outside);
      const before = await snapshotTree(dir, outside);
      await assertRefusal(
        () =>
          withRenameAfterLstat(
            `${dir}/.swap`,
            target,
            () => readRegularFileSync(target, { maxBytes: 1024, what: "key file" }),
          ),
        "FILE_CHANGED",
        FsSafetyError,
      );
      assertSameTree(afterRename(before, `${dir}/.swap`, target), await snapshotTree(dir, outside));
      assert.equal(Deno.readTextFileSync(`${outside}/secret`), "secret\n");
    } finally {
      Deno.removeSync(dir, { recursive: true });
      Deno.removeSync(outside, { recursive: true });
    }
  });
}

Deno.test("custodyProblem: kind, owner and mode, each under its own code, in that order", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.chmodSync(dir, 0o700);
    const file = `${dir}/f`;
    Deno.writeTextFileSync(file, "x", { mode: 0o600 });
    Deno.chmodSync(file, 0o600);
    Deno.symlinkSync(file, `${dir}/l`);
    const uid = Deno.uid()!;
    const dirRule = { kind: "directory", uid, forbiddenModeBits: 0o077 } as const;
    assert.equal(custodyProblem(Deno.lstatSync(dir), dirRule), null);
    assert.equal(custodyProblem(Deno.lstatSync(`${dir}/l`), dirRule)?.code, "SYMLINK");
    assert.equal(custodyProblem(Deno.lstatSync(file), dirRule)?.code, "NOT_DIRECTORY");
    assert.equal(custodyProblem(Deno.lstatSync(dir), { kind: "file" })?.code, "NOT_REGULAR_FILE");
    const other = custodyProblem(Deno.lstatSync(dir), { ...dirRule, uid: uid + 1 });
    assert.deepEqual(other, {
      code: "UNSAFE_OWNER",
      why: `is owned by uid ${uid}, not ${uid + 1}`,
    });
    Deno.chmodSync(dir, 0o750);
    assert.deepEqual(custodyProblem(Deno.lstatSync(dir), dirRule), {
      code: "UNSAFE_MODE",
      why: "has mode 0750; it must be 0700",
    });
    // The owner comes before the mode; a rule that checks neither passes any mode.
    assert.equal(
      custodyProblem(Deno.lstatSync(dir), { ...dirRule, uid: uid + 1 })?.code,
      "UNSAFE_OWNER",
    );
    assert.equal(custodyProblem(Deno.lstatSync(dir), { kind: "directory" }), null);
    Deno.chmodSync(file, 0o620);
    assert.equal(
      custodyProblem(Deno.lstatSync(file), { kind: "file", uid, forbiddenModeBits: 0o022 })?.why,
      "has mode 0620; it must not be group- or world-writable",
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("readWholeFileWithin: a FIFO at the name is refused at once, unopened, so no blocking thread is left waiting on it (forty in a row, then the pool still serves)", async () => {
  // In a child with a deadline: each open of a FIFO would wait its 2 s deadline and then hold one
  // of Deno's blocking threads; forty of them would take more than the deadline, and exhaust the
  // pool.
  const dir = Deno.makeTempDirSync({ prefix: "at-fifo-pool-" });
  const fifo = `${dir}/index`;
  const mk = new Deno.Command("/usr/bin/mkfifo", { args: [fifo] }).outputSync();
  assert.ok(mk.success, "mkfifo");
  const lib = JSON.stringify(new URL("../../lib/fs/safe_read.ts", import.meta.url).href);
  const code = `
    import { readWholeFileWithin } from ${lib};
    const codes = new Set();
    const t = performance.now();
    for (let i = 0; i < 40; i++) {
      try { await readWholeFileWithin(${
    JSON.stringify(fifo)
  }, "git index", 1024); codes.add("read"); }
      catch (e) { codes.add(e.code ?? e.name); }
    }
    const took = performance.now() - t;
    await Deno.lstat("/"); // through the blocking pool: it must still serve
    console.log([...codes].join(",") + " " + (took < 1000 ? "fast" : "slow " + took));
  `;
  try {
    const r = await runDeno(["eval", "--no-check", code], { hangGuardMs: 20_000 });
    assert.equal(r.code, 0, `the child did not finish: ${r.stderr}`);
    assert.equal(r.stdout.trim(), "NOT_REGULAR_FILE fast");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
