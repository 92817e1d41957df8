/**
 * The anchored write helper on its own: what it refuses writes nothing, anywhere. (The race
 * against a swapping adversary is tests/proposals/race_slow_test.ts.)
 */
import assert from "node:assert/strict";
import { FsSafetyError } from "../../lib/errors.ts";
import {
  anchoredRemoveTree,
  anchoredReplace,
  type AnchoredSpec,
} from "../../lib/fs/anchored_write.ts";
import { shellProgram, snapshotTree, withoutBypass } from "../_helpers/mod.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";

const enc = new TextEncoder();

/** Writing `x` (0644) to `src/x.txt` under `root`, without creating directories; or `over`. */
function spec(root: string, over: Partial<AnchoredSpec> = {}): AnchoredSpec {
  return {
    root,
    dirs: ["src"],
    name: "x.txt",
    op: "write",
    createDirs: false,
    decide: () => ({ newFileMode: 0o644, content: enc.encode("x") }),
    ...over,
  };
}

/** The helper's program, run without the capabilities that bypass file permissions. */
function perlWithoutBypass(root: string): string {
  return shellProgram(
    `${root}/perl-without-bypass`,
    `exec ${withoutBypass().join(" ")} /usr/bin/perl "$@"\n`,
  );
}

/** Every path below `root` (itself included), sorted. */
async function paths(root: string): Promise<string[]> {
  return [...(await snapshotTree(root)).keys()].sort();
}

/** Asserts `fn` is refused with FsSafetyError `code`, at `at` (`details.at`) when given. */
async function refused(
  fn: () => Promise<unknown>,
  code: string,
  at?: "dir" | "target",
): Promise<void> {
  const e = await assertRefusal(fn, code, FsSafetyError);
  if (at !== undefined) assert.equal(e.details.at, at, `${code}: ${e.message}`);
}

Deno.test("anchored write: creates missing directories, writes the mode asked for a new file, keeps an existing file's", async () => {
  const root = Deno.makeTempDirSync();
  await anchoredReplace(spec(root, {
    dirs: ["a", "b"],
    name: "f.txt",
    createDirs: true,
    decide: (cur) => {
      assert.equal(cur, null);
      return { newFileMode: 0o640, content: enc.encode("one\n") };
    },
  }));
  assert.equal(Deno.readTextFileSync(`${root}/a/b/f.txt`), "one\n");
  assert.equal((Deno.statSync(`${root}/a/b/f.txt`).mode ?? 0) & 0o777, 0o640);
  assert.deepEqual(
    await paths(root),
    [root, `${root}/a`, `${root}/a/b`, `${root}/a/b/f.txt`],
    "no temporary file left",
  );
  // The current bytes and mode are handed to the decision; the existing file's mode is kept,
  // whatever the decision's mode for a new file.
  await anchoredReplace(spec(root, {
    dirs: ["a", "b"],
    name: "f.txt",
    decide: (cur) => {
      assert.equal(new TextDecoder().decode(cur?.bytes), "one\n");
      assert.equal(cur?.mode, 0o640);
      return { newFileMode: 0o600, content: enc.encode("two\n") };
    },
  }));
  assert.equal(Deno.readTextFileSync(`${root}/a/b/f.txt`), "two\n");
  assert.equal((Deno.statSync(`${root}/a/b/f.txt`).mode ?? 0) & 0o7777, 0o640);
});

Deno.test("anchored write: a refusing decision, a symlinked directory, a symlinked target: nothing written", async () => {
  const root = Deno.makeTempDirSync();
  const outside = Deno.makeTempDirSync();
  Deno.mkdirSync(`${root}/src`);
  Deno.writeTextFileSync(`${root}/src/t.txt`, "keep\n");
  Deno.symlinkSync(outside, `${root}/src/out`);
  Deno.writeTextFileSync(`${outside}/secret`, "s\n");
  Deno.symlinkSync(`${outside}/secret`, `${root}/src/link.txt`);
  // A symlinked directory that has the target's own name is still a directory on the way.
  Deno.symlinkSync(outside, `${root}/src/x.txt`);
  const before = await snapshotTree(root, outside);
  await assert.rejects(
    anchoredReplace(spec(root, {
      name: "t.txt",
      decide: () => {
        throw new Error("stale");
      },
    })),
    /stale/,
  );
  await refused(
    () => anchoredReplace(spec(root, { dirs: ["src", "out"], createDirs: true })),
    "SYMLINK",
    "dir",
  );
  await refused(
    () => anchoredReplace(spec(root, { dirs: ["src", "x.txt"], createDirs: true })),
    "SYMLINK",
    "dir",
  );
  await refused(
    () => anchoredReplace(spec(root, { name: "link.txt", op: "unlink" })),
    "SYMLINK",
    "target",
  );
  assertSameTree(before, await snapshotTree(root, outside));
  assert.equal(Deno.readTextFileSync(`${root}/src/t.txt`), "keep\n");
});

Deno.test("anchored write: without its helper program it refuses (ANCHOR_UNAVAILABLE), writing nothing", async () => {
  const root = Deno.makeTempDirSync();
  await refused(() =>
    anchoredReplace(spec(root, {
      dirs: ["new"],
      name: "f.txt",
      createDirs: true,
      perl: `${root}/no-such-perl`,
    })), "ANCHOR_UNAVAILABLE");
  assert.deepEqual(await paths(root), [root]);
});

Deno.test("anchored write: a file where a directory goes, a missing directory, a non-file target, a bad name: refused, nothing written", async () => {
  const root = Deno.makeTempDirSync();
  Deno.mkdirSync(`${root}/src/sub`, { recursive: true });
  Deno.writeTextFileSync(`${root}/src/file`, "f\n");
  const before = await snapshotTree(root);
  let decided = 0;
  const counted = (dirs: string[], name: string, createDirs = true) =>
    spec(root, {
      dirs,
      name,
      createDirs,
      decide: () => {
        decided++;
        return { newFileMode: 0o644, content: enc.encode("x") };
      },
    });
  await refused(() => anchoredReplace(counted(["src", "file"], "x.txt")), "NOT_DIRECTORY");
  await refused(
    () => anchoredReplace(counted(["src", "missing"], "x.txt", false)),
    "NOT_DIRECTORY",
  );
  await refused(() => anchoredReplace(counted(["src"], "sub")), "NOT_REGULAR_FILE");
  for (const bad of ["", ".", "..", "a/b"]) {
    await refused(() => anchoredReplace(counted(["src"], bad)), "NOT_DIRECTORY");
    await refused(() => anchoredReplace(counted([bad], "x.txt")), "NOT_DIRECTORY");
  }
  assert.equal(decided, 0, "no refusal reaches the decision");
  assertSameTree(before, await snapshotTree(root));
});

Deno.test("anchored write: a target replaced or created while the decision is made: FILE_CHANGED, the newcomer kept", async () => {
  const root = Deno.makeTempDirSync();
  Deno.mkdirSync(`${root}/src`);
  Deno.writeTextFileSync(`${root}/src/t.txt`, "old\n");
  // Replaced by another inode between the read and the write. The content is larger than a pipe
  // buffer, so the helper refuses and exits while it is still being sent.
  const big = new Uint8Array(1 << 20).fill(0x6d);
  await refused(() =>
    anchoredReplace(spec(root, {
      name: "t.txt",
      decide: () => {
        Deno.writeTextFileSync(`${root}/src/.swap`, "theirs\n");
        Deno.renameSync(`${root}/src/.swap`, `${root}/src/t.txt`);
        return { newFileMode: 0o644, content: big };
      },
    })), "FILE_CHANGED");
  assert.deepEqual(
    await paths(root),
    [root, `${root}/src`, `${root}/src/t.txt`],
    "no temporary file left",
  );
  assert.equal(Deno.readTextFileSync(`${root}/src/t.txt`), "theirs\n");
  // Absent when read, present at the write.
  await refused(() =>
    anchoredReplace(spec(root, {
      name: "new.txt",
      decide: () => {
        Deno.writeTextFileSync(`${root}/src/new.txt`, "theirs\n");
        return { newFileMode: 0o644, content: big };
      },
    })), "FILE_CHANGED");
  assert.equal(Deno.readTextFileSync(`${root}/src/new.txt`), "theirs\n");
  // Removing an absent target.
  const before = await snapshotTree(root);
  await refused(
    () => anchoredReplace(spec(root, { name: "absent.txt", op: "unlink" })),
    "FILE_CHANGED",
  );
  assertSameTree(before, await snapshotTree(root));
});

Deno.test("anchored write: a target of many pipe chunks reaches the decision whole", async () => {
  const root = Deno.makeTempDirSync();
  Deno.mkdirSync(`${root}/src`);
  // Not a multiple of any chunk size, and every byte depends on its offset.
  const bytes = Uint8Array.from({ length: (8 << 20) + 3 }, (_, i) => (i * 7 + (i >> 16)) & 0xff);
  Deno.writeFileSync(`${root}/src/x.txt`, bytes);
  let seen: Uint8Array | undefined;
  await anchoredReplace(spec(root, {
    decide: (cur) => {
      seen = cur?.bytes;
      return { newFileMode: 0o644, content: enc.encode("small\n") };
    },
  }));
  assert.deepEqual(seen, bytes);
  assert.equal(Deno.readTextFileSync(`${root}/src/x.txt`), "small\n");
});

Deno.test("anchored write: a directory the helper cannot open for its fsync (mode 0333, an unprivileged operator) is refused before the write or the unlink, not after", async () => {
  const root = Deno.makeTempDirSync();
  try {
    // The helper runs as root without the capabilities that bypass file permissions, as an
    // unprivileged operator's would.
    const perl = perlWithoutBypass(root);
    Deno.mkdirSync(`${root}/src`);
    Deno.writeTextFileSync(`${root}/src/x.txt`, "old\n");
    const before = await snapshotTree(`${root}/src`);
    Deno.chmodSync(`${root}/src`, 0o333);
    for (const op of ["write", "unlink"] as const) {
      await assert.rejects(
        () => anchoredReplace(spec(root, { op, perl })),
        (e) => e instanceof FsSafetyError && /SYNCDIR/.test(e.message),
        op,
      );
      Deno.chmodSync(`${root}/src`, 0o755);
      assertSameTree(before, await snapshotTree(`${root}/src`), `after a refused ${op}`);
      assert.equal(Deno.readTextFileSync(`${root}/src/x.txt`), "old\n");
      Deno.chmodSync(`${root}/src`, 0o333);
    }
  } finally {
    Deno.chmodSync(`${root}/src`, 0o755);
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("anchored write: a setuid/setgid/sticky target is replaced without those bits (the decision sees them)", async () => {
  const root = Deno.makeTempDirSync();
  try {
    Deno.mkdirSync(`${root}/src`);
    const cases: [number, number][] = [
      [0o4755, 0o755],
      [0o2755, 0o755],
      [0o6755, 0o755],
      [0o1755, 0o755],
      [0o2775, 0o775],
      [0o1644, 0o644],
    ];
    for (const [was, want] of cases) {
      Deno.writeTextFileSync(`${root}/src/x.txt`, "old\n");
      Deno.chmodSync(`${root}/src/x.txt`, was);
      let seen: number | undefined;
      await anchoredReplace(spec(root, {
        decide: (cur) => {
          seen = cur?.mode;
          return { newFileMode: 0o644, content: enc.encode("\u007fELF\u0002\u0001\u0001\n") };
        },
      }));
      assert.equal(seen, was, "the decision sees the target's mode as found");
      assert.equal(Deno.readTextFileSync(`${root}/src/x.txt`), "\u007fELF\u0002\u0001\u0001\n");
      assert.equal(
        ((Deno.statSync(`${root}/src/x.txt`).mode ?? 0) & 0o7777).toString(8),
        want.toString(8),
        `was ${was.toString(8)}`,
      );
    }
    // A new file never gets them either, whatever the decision asks.
    await anchoredReplace(spec(root, {
      name: "new.txt",
      decide: () => ({ newFileMode: 0o6755, content: enc.encode("x") }),
    }));
    assert.equal((Deno.statSync(`${root}/src/new.txt`).mode ?? 0) & 0o7777, 0o755);
    assert.deepEqual(await paths(root), [
      root,
      `${root}/src`,
      `${root}/src/new.txt`,
      `${root}/src/x.txt`,
    ]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("anchored tree removal: the entry and all below it go; a link inside, or the entry itself a link, is removed, never followed", async () => {
  const root = Deno.makeTempDirSync();
  const outside = Deno.makeTempDirSync();
  Deno.writeTextFileSync(`${outside}/keep`, "k\n");
  Deno.mkdirSync(`${outside}/sub`);
  Deno.mkdirSync(`${root}/a/.git/hooks/deep`, { recursive: true });
  Deno.writeTextFileSync(`${root}/a/.git/config`, "[core]\n");
  Deno.writeTextFileSync(`${root}/a/.git/hooks/deep/x`, "x");
  Deno.symlinkSync(outside, `${root}/a/.git/hooks/out`);
  Deno.symlinkSync(`${outside}/keep`, `${root}/a/.git/keep`);
  Deno.symlinkSync(outside, `${root}/a/.agentteams`);
  Deno.writeTextFileSync(`${root}/a/sibling`, "s");
  const outsideBefore = await snapshotTree(outside);
  await anchoredRemoveTree({ root, dirs: ["a"], name: ".git" });
  await anchoredRemoveTree({ root, dirs: ["a"], name: ".agentteams" });
  // Already gone: no error.
  await anchoredRemoveTree({ root, dirs: ["a"], name: ".git" });
  assert.deepEqual(await paths(root), [root, `${root}/a`, `${root}/a/sibling`]);
  assertSameTree(outsideBefore, await snapshotTree(outside));
});

Deno.test("anchored tree removal: a folder on the way that is a link or a file, a bad name, no helper: refused, nothing removed anywhere", async () => {
  const root = Deno.makeTempDirSync();
  const outside = Deno.makeTempDirSync();
  Deno.mkdirSync(`${outside}/.git`);
  Deno.writeTextFileSync(`${outside}/.git/HEAD`, "ref\n");
  Deno.mkdirSync(`${root}/real/.git`, { recursive: true });
  Deno.symlinkSync(outside, `${root}/link`);
  Deno.writeTextFileSync(`${root}/file`, "f");
  const before = await snapshotTree(root, outside);
  await refused(() => anchoredRemoveTree({ root, dirs: ["link"], name: ".git" }), "SYMLINK", "dir");
  await refused(
    () => anchoredRemoveTree({ root, dirs: ["file"], name: ".git" }),
    "NOT_DIRECTORY",
    "dir",
  );
  await refused(
    () => anchoredRemoveTree({ root, dirs: ["real", "..", "link"], name: ".git" }),
    "NOT_DIRECTORY",
  );
  await refused(
    () => anchoredRemoveTree({ root, dirs: ["real"], name: ".git", perl: "/nonexistent/perl" }),
    "ANCHOR_UNAVAILABLE",
  );
  assertSameTree(before, await snapshotTree(root, outside));
});

Deno.test("anchored write: a folder this process cannot change (mode 0555, an unprivileged operator) is refused NOT_WRITABLE before the decision, for a write and an unlink", async () => {
  const root = Deno.makeTempDirSync();
  try {
    const perl = perlWithoutBypass(root);
    Deno.mkdirSync(`${root}/src`);
    Deno.writeTextFileSync(`${root}/src/x.txt`, "old\n");
    Deno.chmodSync(`${root}/src`, 0o555);
    let decided = 0;
    for (const op of ["write", "unlink"] as const) {
      await refused(
        () =>
          anchoredReplace(spec(root, {
            op,
            perl,
            decide: () => {
              decided++;
              return { newFileMode: 0o644, content: enc.encode("x") };
            },
          })),
        "NOT_WRITABLE",
        "target",
      );
    }
    assert.equal(decided, 0, "nothing was decided");
    assert.equal(Deno.readTextFileSync(`${root}/src/x.txt`), "old\n");
  } finally {
    Deno.chmodSync(`${root}/src`, 0o755);
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("anchored tree removal: a tree deeper than the descriptors the helper may open is removed whole (no handle held per level)", async () => {
  const root = Deno.makeTempDirSync();
  try {
    // 200 levels, under a limit of 32 open descriptors.
    const perl = shellProgram(`${root}/perl-few-fds`, 'ulimit -n 32\nexec /usr/bin/perl "$@"\n');
    let deep = `${root}/a/.git`;
    for (let i = 0; i < 200; i++) deep += "/d";
    Deno.mkdirSync(deep, { recursive: true });
    Deno.writeTextFileSync(`${deep}/leaf`, "x");
    await anchoredRemoveTree({ root, dirs: ["a"], name: ".git", perl });
    assert.deepEqual(await paths(`${root}/a`), [`${root}/a`]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
