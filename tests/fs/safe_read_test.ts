/**
 * `readRegularFileSync` checks the path with `lstat`, then opens it and compares the open file's
 * device and inode with what `lstat` saw. The swap between the two is staged by wrapping
 * `Deno.lstatSync` (the check): it returns the true answer and then replaces the file.
 */
import assert from "node:assert/strict";
import { FsSafetyError } from "../../lib/errors.ts";
import { readRegularFileSync } from "../../lib/fs/safe_read.ts";
import { snapshotTree, type TreeEntry } from "../_helpers/mod.ts";
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
