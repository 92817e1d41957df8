/**
 * Worktree fingerprints of large files: one unchanged for a while is fingerprinted by its stat,
 * not read (a sparse file of gigabytes costs nothing); a write to it shows; one changed just now
 * is read.
 */
import assert from "node:assert/strict";
import {
  type Digest,
  type HashFactory,
  LARGE_FILE_BYTES,
  loadHashFactory,
  worktreeEntry,
  worktreeFingerprint,
} from "../../lib/requests/fingerprint.ts";
import { openGitContext } from "../../lib/git/context.ts";
import { diffSnapshots, takeSnapshot } from "../../lib/requests/snapshot.ts";
import { cleanup, GIT, tempRepo } from "./_helpers.ts";

/**
 * `make`, counting the digests it makes and the bytes they are fed. A digest fed more than
 * `limit` bytes throws (the fingerprint then reads `unreadable:`), so a file that should cost a
 * stat fails the test at once instead of being hashed in full.
 */
function countingFactory(
  make: HashFactory,
  limit = Number.POSITIVE_INFINITY,
): { make: HashFactory; digests: () => number; bytes: () => number } {
  let digests = 0;
  let bytes = 0;
  const counted: HashFactory = (format) => {
    digests++;
    const d = make(format);
    const wrapped: Digest = {
      update(data) {
        bytes += typeof data === "string" ? new TextEncoder().encode(data).length : data.length;
        if (bytes > limit) throw new Error(`more than ${limit} bytes hashed`);
        d.update(data);
        return wrapped;
      },
      digest: (encoding) => d.digest(encoding),
    };
    return wrapped;
  };
  return { make: counted, digests: () => digests, bytes: () => bytes };
}

Deno.test("worktreeFingerprint: a settled 8 GiB sparse file costs a stat; a write to it (even same size) changes the fingerprint; a fresh large file is read", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const make = await loadHashFactory();
    const big = `${dir}/big.bin`;
    const f = Deno.openSync(big, { write: true, create: true });
    f.truncateSync(8 * 1024 * 1024 * 1024);
    f.close();
    // Fresh: read like any other file would be; for this test's speed, a small large file.
    const fresh = `${dir}/fresh.bin`;
    const g = Deno.openSync(fresh, { write: true, create: true });
    g.truncateSync(LARGE_FILE_BYTES + 1);
    g.close();
    // Changed "in an hour": fresh however long this process is stalled before reading it.
    Deno.utimeSync(fresh, new Date(), new Date(Date.now() + 3600_000));
    // The counter sees what hashing costs: the fresh file's header and every byte of it.
    const freshCount = countingFactory(make);
    assert.match(
      await worktreeFingerprint(fresh, "sha1", freshCount.make),
      /^100644 [0-9a-f]{40}$/,
    );
    assert.equal(freshCount.digests(), 1);
    assert.equal(
      freshCount.bytes(),
      `blob ${LARGE_FILE_BYTES + 1}\0`.length + LARGE_FILE_BYTES + 1,
    );
    await new Promise((r) => setTimeout(r, 2100));
    // Settled: decided by stat alone, not one byte hashed (a read would stop at 1 MiB).
    const bigCount = countingFactory(make, 1 << 20);
    const before = await worktreeFingerprint(big, "sha1", bigCount.make);
    const again = await worktreeFingerprint(big, "sha1", bigCount.make);
    assert.equal(bigCount.digests(), 0, `a digest was made for the settled large file: ${before}`);
    assert.equal(bigCount.bytes(), 0, "the settled large file was read");
    assert.match(before, /^large 100644 8589934592 /);
    assert.equal(again, before);
    // A same-size write keeps the size; its ctime moves, so the fingerprint changes.
    const h = Deno.openSync(big, { write: true });
    h.writeSync(new Uint8Array([1]));
    h.close();
    await new Promise((r) => setTimeout(r, 2100));
    assert.notEqual(await worktreeFingerprint(big, "sha1", make), before);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("takeSnapshot: a large untracked file hashed by the first snapshot (it had just changed) is hashed again by the second, so an untouched one is not reported", async () => {
  const { root, env } = await tempRepo();
  try {
    const ctx = await openGitContext(root, { git: GIT, parentEnv: env });
    const big = `${root}/big.bin`;
    const f = Deno.openSync(big, { write: true, create: true });
    f.truncateSync(LARGE_FILE_BYTES + 1);
    f.close();
    const before = await takeSnapshot(ctx);
    assert.match(before.worktree.get("big.bin")?.fp ?? "", /^100644 [0-9a-f]{40}$/);
    // The command runs past the settling time and leaves the file alone.
    await new Promise((r) => setTimeout(r, 2100));
    const after = await takeSnapshot(ctx, { previous: before });
    assert.deepEqual(diffSnapshots(before, after, () => false).changed, []);
    // A snapshot with no earlier one would fingerprint it by stat by now.
    assert.match((await takeSnapshot(ctx)).worktree.get("big.bin")?.fp ?? "", /^large /);
  } finally {
    cleanup(root);
  }
});

Deno.test("worktreeEntry: a path gone, a directory or a special file is decided by its lstat (no digest made); a file or a symlink is left to hash, and hashed as without it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fp-entry-" });
  try {
    Deno.writeTextFileSync(`${dir}/f`, "hello\n");
    Deno.symlinkSync("f", `${dir}/link`);
    Deno.mkdirSync(`${dir}/d`);
    const counted = countingFactory(await loadHashFactory());
    for (
      const [path, want] of [[`${dir}/gone`, "absent"], [`${dir}/f/x`, "absent"], [
        `${dir}/d`,
        "dir",
      ]]
    ) {
      const entry = worktreeEntry(path);
      assert.equal(entry, want, path);
      assert.equal(await worktreeFingerprint(path, "sha1", counted.make, true, entry), want);
    }
    assert.match(String(worktreeEntry("/dev/null")), /^special \d+$/);
    assert.equal(counted.digests(), 0, "a digest was made for a path its lstat decides");
    for (const name of ["f", "link"]) {
      const entry = worktreeEntry(`${dir}/${name}`);
      assert.equal(typeof entry, "object", name);
      const plain = await worktreeFingerprint(`${dir}/${name}`, "sha1", await loadHashFactory());
      assert.equal(
        await worktreeFingerprint(`${dir}/${name}`, "sha1", counted.make, true, entry),
        plain,
      );
    }
    assert.equal(counted.digests(), 2);
    // `git hash-object` of "hello\n", and of the link's target "f".
    assert.equal(
      await worktreeFingerprint(`${dir}/f`, "sha1", await loadHashFactory()),
      "100644 ce013625030ba8dba906f756967f9e9ca394464a",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
