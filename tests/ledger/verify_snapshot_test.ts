/**
 * `ledger verify` judges one consistent state (lib/ledger/verify_snapshot.ts). Other processes append
 * rows and rewrite the head (by rename) and the dispatch store while verify reads; here such a
 * writer is made to act at exactly the moment that once broke verify, by wrapping the Deno call
 * verify makes at that moment (`Deno.openSync` of a state file, the first `readSync` of the
 * ledger's rows, `FsFile.lockSync`):
 *
 * - two rows appended between the head's read and the ledger's (once `HEAD_MISMATCH`);
 * - the head, or the dispatch store, renamed over between its `lstat` and its `open` (once
 *   `LEDGER_UNSAFE_PATH`), and a symlink slipped in that way (still `LEDGER_UNSAFE_PATH`);
 * - an edited row stays `ROW_MAC_INVALID` alone while rows are appended mid-read;
 * - the ledger's lock is free while rows are verified, and held to the end on a torn ledger;
 * - no lock to be had: a still ledger verifies, one that keeps changing is `LEDGER_BUSY`;
 * - a CI checkout without `dispatches.lock` verifies and nothing is created;
 * - the pure rule for unlocked looks (`lookSettles`).
 *
 * Every case asserts the verdict and that verify wrote nothing.
 */
import assert from "node:assert/strict";
import { checkTail, writeRowLockedSync } from "../../lib/ledger/append.ts";
import { atomicWriteFileSync } from "../../lib/fs/atomic_write.ts";
import { LedgerError } from "../../lib/errors.ts";
import { statePaths } from "../../lib/layout.ts";
import type { RowBody } from "../../lib/ledger/row.ts";
import { type Look, lookSettles, takeLedgerSnapshot } from "../../lib/ledger/verify_snapshot.ts";
import { assessLedger, readLedgerTexts, verifyLedgerAt } from "../../lib/ledger/verify.ts";
import {
  baseChildEnv,
  DENO,
  type Sandbox,
  snapshotTree,
  stateFiles,
  type TreeEntry,
  type TreeSnapshot,
} from "../_helpers/mod.ts";
import { copyFixture, FIXTURE_KEY, withSandbox } from "./_fixture.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";

const realOpenSync = Deno.openSync;
const realReadSync = Deno.FsFile.prototype.readSync;
const realLockSync = Deno.FsFile.prototype.lockSync;

/** A key holder's append, synchronous: what `appendRow` does, under the real exclusive lock. */
function appendNow(root: string, body: RowBody): void {
  const paths = statePaths(root);
  const file = realOpenSync(paths.ledger, { read: true, append: true });
  try {
    realLockSync.call(file, true);
    writeRowLockedSync(
      file,
      paths,
      FIXTURE_KEY.hmac,
      checkTail(file, paths, FIXTURE_KEY.hmac),
      body,
      () => new Date(),
    );
  } finally {
    file.close();
  }
}

/** Rewrites a file by rename (a new inode), as an append rewrites the head and an issue the store. */
function renameOver(path: string, bytes?: Uint8Array): void {
  atomicWriteFileSync(path, bytes ?? Deno.readFileSync(path));
}

/**
 * `after` with the inode of each of `paths` set back to `before`'s: the test itself renamed them
 * over ({@link renameOver}: the same bytes and mode, a new inode), so only their inode may differ.
 */
function renamedByTheTest(
  before: TreeSnapshot,
  after: TreeSnapshot,
  ...paths: string[]
): TreeSnapshot {
  const out = new Map(after);
  for (const p of paths) {
    const a = after.get(p);
    const b = before.get(p);
    if (a !== undefined && b !== undefined) out.set(p, { ...a, ino: b.ino });
  }
  return out;
}

/**
 * Runs `fn` with `Deno.openSync` wrapped: `act(path)` runs before each open (between the caller's
 * `lstat` and its open), or just after it with `when: "after"`. The hook's own opens are not
 * hooked again.
 */
function withOpenHook<T>(
  act: (path: string) => void,
  fn: () => T,
  when: "before" | "after" = "before",
): T {
  let inHook = false;
  const run = (path: string | URL) => {
    if (inHook) return;
    inHook = true;
    try {
      act(String(path));
    } finally {
      inHook = false;
    }
  };
  const hooked = (path: string | URL, options?: Deno.OpenOptions): Deno.FsFile => {
    if (when === "before") run(path);
    const file = realOpenSync(path, options);
    if (when === "after") run(path);
    return file;
  };
  Object.defineProperty(Deno, "openSync", { value: hooked, configurable: true, writable: true });
  try {
    return fn();
  } finally {
    Object.defineProperty(Deno, "openSync", {
      value: realOpenSync,
      configurable: true,
      writable: true,
    });
  }
}

/** Runs `fn`; `first()` runs once, at the first read of more than one byte from the ledger. */
function withFirstLedgerRead<T>(root: string, first: () => void, fn: () => T): T {
  const ino = Deno.statSync(statePaths(root).ledger).ino;
  let fired = false;
  Deno.FsFile.prototype.readSync = function (this: Deno.FsFile, p: Uint8Array) {
    if (!fired && p.length > 1 && this.statSync().ino === ino) {
      fired = true;
      first();
    }
    return realReadSync.call(this, p);
  };
  try {
    return fn();
  } finally {
    Deno.FsFile.prototype.readSync = realReadSync;
    assert.ok(fired, "the ledger's rows were never read");
  }
}

/** Runs `fn` on a system where no file lock can be taken (an NFS mount without lockd, ...). */
function withoutLocks<T>(fn: () => T): T {
  Deno.FsFile.prototype.lockSync = function () {
    throw new Error("ENOLCK: no locks available");
  };
  try {
    return fn();
  } finally {
    Deno.FsFile.prototype.lockSync = realLockSync;
  }
}

/**
 * Whether another process can take the ledger's lock exclusively right now: a child that tries
 * for 1.5 s (it runs while this process is inside a synchronous call).
 */
function ledgerLockFree(root: string): boolean {
  const script = "const f = Deno.openSync(Deno.args[0], { read: true });" +
    "setTimeout(() => Deno.exit(1), 1500);" +
    "await f.lock(true); Deno.exit(0);";
  const r = new Deno.Command(DENO, {
    args: ["eval", "--quiet", script, statePaths(root).ledger],
    clearEnv: true,
    env: baseChildEnv(),
    stdout: "null",
    stderr: "piped",
  }).outputSync();
  if (r.code !== 0 && r.code !== 1) throw new Error(new TextDecoder().decode(r.stderr));
  return r.code === 0;
}

/** The files of `sb` but the ledger and head, whose changes the test's own writer makes. */
async function othersThanLedger(sb: Sandbox): Promise<Map<string, TreeEntry>> {
  const p = stateFiles(sb.project);
  const tree = await snapshotTree(sb.dir);
  tree.delete(p.ledger);
  tree.delete(p.head);
  tree.delete(p.anchors); // the appender's cache of its anchors, beside the head
  return tree;
}

const codes = (r: { problems: { code: string; row: number | null }[] }) =>
  r.problems.map((x) => [x.code, x.row]);

Deno.test("rows appended between the head's read and the rows' read: the verdict is the snapshot's (once HEAD_MISMATCH)", async () => {
  await withSandbox("snap-grow", async (sb) => {
    await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    for (
      const [name, verify] of [
        ["verifyLedgerAt", () => verifyLedgerAt(sb.project, FIXTURE_KEY)],
        ["readLedgerTexts", () => assessLedger(readLedgerTexts(sb.project), FIXTURE_KEY)],
      ] as const
    ) {
      const rowsBefore = (await Deno.readTextFile(p.ledger)).split("\n").length - 1;
      const others = await othersThanLedger(sb);
      const ledgerBefore = await Deno.readFile(p.ledger);
      const report = withFirstLedgerRead(sb.project, () => {
        appendNow(sb.project, { action: "note", n: 1 });
        appendNow(sb.project, { action: "note", n: 2 });
      }, verify);
      assert.deepEqual(codes(report), [], name);
      assert.deepEqual(report.notes, [], name);
      // The rows appended after the snapshot are not judged: the head read with the length
      // counted the rows before them.
      assert.equal(report.rows, rowsBefore, name);
      // The writer's rows are there (the hook ran), after the old bytes; nothing else changed.
      const after = await Deno.readFile(p.ledger);
      assert.deepEqual(after.subarray(0, ledgerBefore.length), ledgerBefore);
      assert.equal(verifyLedgerAt(sb.project, FIXTURE_KEY).rows, rowsBefore + 2, name);
      assertSameTree(others, await othersThanLedger(sb), name);
    }
  });
});

Deno.test("an edited row is still ROW_MAC_INVALID, and only that, while rows are appended mid-read", async () => {
  await withSandbox("snap-edit", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const lines = [...f.lines];
    lines[2] = lines[2].replace('"row 3"', '"row 3, edited"');
    assert.notEqual(lines[2], f.lines[2]);
    await Deno.writeTextFile(p.ledger, lines.map((l) => l + "\n").join(""));
    const report = withFirstLedgerRead(sb.project, () => {
      appendNow(sb.project, { action: "note", n: 7 });
      appendNow(sb.project, { action: "note", n: 8 });
    }, () => verifyLedgerAt(sb.project, FIXTURE_KEY));
    assert.deepEqual(codes(report), [["ROW_MAC_INVALID", 3]]);
    assert.equal(report.rows, f.lines.length);
  });
});

Deno.test("the head renamed over between its lstat and its open: verify reads it again (once LEDGER_UNSAFE_PATH)", async () => {
  await withSandbox("snap-head-rename", async (sb) => {
    await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const before = await snapshotTree(sb.dir);
    let renamed = 0;
    const report = withOpenHook((path) => {
      if (path === p.head && renamed === 0) {
        renamed++;
        renameOver(p.head);
      }
    }, () => verifyLedgerAt(sb.project, FIXTURE_KEY));
    assert.equal(renamed, 1);
    assert.deepEqual(codes(report), []);
    assert.deepEqual(report.notes, []);
    assertSameTree(before, renamedByTheTest(before, await snapshotTree(sb.dir), p.head));
  });
});

Deno.test("the dispatch store renamed over between its lstat and its open (an issue's rewrite): read again (once LEDGER_UNSAFE_PATH)", async (t) => {
  for (const lock of ["with dispatches.lock", "without dispatches.lock"] as const) {
    await t.step(lock, () =>
      withSandbox("snap-store-rename", async (sb) => {
        await copyFixture(sb.project);
        const p = stateFiles(sb.project);
        if (lock === "without dispatches.lock") await Deno.remove(p.lock).catch(() => {});
        const before = await snapshotTree(sb.dir);
        let renamed = 0;
        const report = withOpenHook((path) => {
          if (path === p.dispatches && renamed === 0) {
            renamed++;
            renameOver(p.dispatches);
          }
        }, () => verifyLedgerAt(sb.project, FIXTURE_KEY));
        assert.equal(renamed, 1);
        assert.deepEqual(codes(report), []);
        assert.deepEqual(report.notes, []);
        assertSameTree(before, renamedByTheTest(before, await snapshotTree(sb.dir), p.dispatches));
      }));
  }
});

Deno.test("adversarial: a symlink renamed in for the head mid-read is still LEDGER_UNSAFE_PATH; nothing else written", async () => {
  await withSandbox("snap-symlink", async (sb) => {
    await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const elsewhere = `${sb.dir}/head-copy`;
    await Deno.copyFile(p.head, elsewhere);
    let swapped = false;
    const swap = () => {
      const tmp = `${p.dir}/.swap`;
      Deno.symlinkSync(elsewhere, tmp);
      Deno.renameSync(tmp, p.head);
      swapped = true;
    };
    const before = await snapshotTree(sb.dir);
    await assertRefusal(
      () =>
        withOpenHook((path) => {
          if (path === p.head && !swapped) swap();
        }, () => verifyLedgerAt(sb.project, FIXTURE_KEY)),
      "LEDGER_UNSAFE_PATH",
      LedgerError,
    );
    assert.ok(swapped);
    // Only the swap itself changed the tree.
    const after = await snapshotTree(sb.dir);
    const head = after.get(p.head);
    assert.ok(head?.kind === "symlink", `the head is now ${head?.kind}`);
    assert.equal(head.target, elsewhere);
    after.set(p.head, before.get(p.head)!);
    assertSameTree(before, after);
  });
});

Deno.test("adversarial: a head replaced at every open is LEDGER_BUSY, never a verdict; nothing else written", async () => {
  await withSandbox("snap-busy-head", async (sb) => {
    await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const before = await snapshotTree(sb.dir);
    let renames = 0;
    await assertRefusal(
      () =>
        withOpenHook((path) => {
          if (path === p.head) {
            renames++;
            renameOver(p.head);
          }
        }, () => verifyLedgerAt(sb.project, FIXTURE_KEY)),
      "LEDGER_BUSY",
      LedgerError,
    );
    assert.ok(renames >= 8, `${renames} renames`);
    assertSameTree(before, renamedByTheTest(before, await snapshotTree(sb.dir), p.head));
  });
});

Deno.test("the ledger's lock is free while the rows are verified; on a torn ledger it is held to the end", async (t) => {
  await t.step(
    "intact: held only for the snapshot",
    () =>
      withSandbox("snap-lock-free", async (sb) => {
        await copyFixture(sb.project);
        let free: boolean | null = null;
        const report = withFirstLedgerRead(sb.project, () => {
          free = ledgerLockFree(sb.project);
        }, () => verifyLedgerAt(sb.project, FIXTURE_KEY));
        assert.equal(report.ok, true);
        assert.equal(free, true, "an appender would have waited for the whole verification");
      }),
  );
  await t.step(
    "torn: held until the verdict (repair and appends wait, and appends refuse anyway)",
    () =>
      withSandbox("snap-lock-torn", async (sb) => {
        await copyFixture(sb.project);
        const p = stateFiles(sb.project);
        await Deno.writeTextFile(p.ledger, '{"action": "no', { append: true });
        const before = await snapshotTree(sb.dir);
        let free: boolean | null = null;
        const report = withFirstLedgerRead(sb.project, () => {
          free = ledgerLockFree(sb.project);
        }, () => verifyLedgerAt(sb.project, FIXTURE_KEY));
        assert.deepEqual(codes(report), [["TORN_TAIL", 7]]);
        assert.equal(free, false, "the torn tail could have been repaired mid-verification");
        assert.equal(ledgerLockFree(sb.project), true, "the lock was not released");
        assertSameTree(before, await snapshotTree(sb.dir));
      }),
  );
});

Deno.test("no lock to be had (the lock call fails): a still ledger verifies, nothing written", async () => {
  await withSandbox("snap-nolock", async (sb) => {
    await copyFixture(sb.project);
    const before = await snapshotTree(sb.dir);
    const snap = withoutLocks(() => takeLedgerSnapshot(sb.project));
    assert.equal(snap.how, "settled");
    snap.close();
    const report = withoutLocks(() => verifyLedgerAt(sb.project, FIXTURE_KEY));
    assert.deepEqual(codes(report), []);
    assert.deepEqual(report.notes, []);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("no lock, an append between the looks' reads: the next look settles on the new state", async () => {
  await withSandbox("snap-nolock-once", async (sb) => {
    const f = await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    let appended = 0;
    const report = withoutLocks(() =>
      withOpenHook((path) => {
        // The first head read of the first look: an append (row and head) lands right then.
        if (path === p.head && appended === 0) {
          appended++;
          appendNow(sb.project, { action: "note", n: 9 });
        }
      }, () => verifyLedgerAt(sb.project, FIXTURE_KEY))
    );
    assert.equal(appended, 1);
    assert.deepEqual(codes(report), []);
    assert.deepEqual(report.notes, []);
    assert.equal(report.rows, f.lines.length + 1);
  });
});

Deno.test("adversarial: no lock and the ledger changes at every look: LEDGER_BUSY (fail closed), verify writes nothing", async () => {
  await withSandbox("snap-nolock-busy", async (sb) => {
    await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    const others = await othersThanLedger(sb);
    const ledgerBefore = await Deno.readFile(p.ledger);
    let appended = 0;
    await assertRefusal(
      () =>
        withoutLocks(() =>
          withOpenHook(
            (path) => {
              // Right after each open of the head: the head read is whole and consistent, but the
              // ledger and the head have moved on before the look's next read.
              if (path === p.head) {
                appended++;
                appendNow(sb.project, { action: "note", n: appended });
              }
            },
            () => verifyLedgerAt(sb.project, FIXTURE_KEY),
            "after",
          )
        ),
      "LEDGER_BUSY",
      LedgerError,
    );
    assert.ok(appended >= 40, `${appended} appends: not every look was tried`);
    // The ledger holds its old bytes and the writer's rows, nothing else changed (no lock file
    // made, no temporary file left).
    const after = await Deno.readFile(p.ledger);
    assert.deepEqual(after.subarray(0, ledgerBefore.length), ledgerBefore);
    assert.equal(verifyLedgerAt(sb.project, FIXTURE_KEY).ok, true);
    assertSameTree(others, await othersThanLedger(sb));
  });
});

Deno.test("a CI checkout without dispatches.lock: verify works and creates nothing", async () => {
  await withSandbox("snap-ci", async (sb) => {
    await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    await Deno.remove(p.lock);
    const before = await snapshotTree(sb.dir);
    const report = verifyLedgerAt(sb.project, FIXTURE_KEY);
    assert.deepEqual(codes(report), []);
    assert.equal(assessLedger(readLedgerTexts(sb.project), FIXTURE_KEY).ok, true);
    assertSameTree(before, await snapshotTree(sb.dir));
    // And tampering is still seen there.
    await Deno.writeTextFile(p.dispatches, "{}\n", { append: true });
    assert.deepEqual(codes(verifyLedgerAt(sb.project, FIXTURE_KEY)), [["DISPATCH_ROW_INVALID", 2]]);
  });
});

Deno.test("lookSettles: one state only when both reads agree; a mid-line end only when seen twice", () => {
  const look: Look = {
    headBefore: "h5",
    size: 500,
    endsLine: true,
    headAfter: "h5",
    sizeAfter: 500,
  };
  assert.equal(lookSettles(look, null), true);
  // A head rewritten between the reads: an append finished in between.
  assert.equal(lookSettles({ ...look, headAfter: "h6" }, null), false);
  // The ledger grew between the reads.
  assert.equal(lookSettles({ ...look, sizeAfter: 640 }, null), false);
  // Absent head both times (a ledger with no head yet, or removed): one state.
  assert.equal(lookSettles({ ...look, headBefore: null, headAfter: null }, null), true);
  // Ends mid-line: a write in progress or a torn tail; believed only when seen twice alike.
  const mid: Look = { ...look, endsLine: false, size: 520, sizeAfter: 520 };
  assert.equal(lookSettles(mid, null), false);
  assert.equal(lookSettles(mid, mid), true);
  assert.equal(lookSettles(mid, { ...mid, size: 510, sizeAfter: 510 }), false);
  assert.equal(lookSettles(mid, look), false);
});

Deno.test("the snapshot holds no lock once taken on an intact ledger, and never creates a lock file", async () => {
  await withSandbox("snap-direct", async (sb) => {
    await copyFixture(sb.project);
    const p = stateFiles(sb.project);
    await Deno.remove(p.lock);
    const before = await snapshotTree(sb.dir);
    const snap = takeLedgerSnapshot(sb.project);
    try {
      assert.equal(snap.how, "locked");
      assert.equal(snap.torn, false);
      assert.equal(ledgerLockFree(sb.project), true);
      assert.equal(snap.size, (await Deno.stat(p.ledger)).size);
      assert.equal(snap.head, await Deno.readTextFile(p.head));
      assert.equal(snap.dispatches, await Deno.readTextFile(p.dispatches));
    } finally {
      snap.close();
    }
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});
