/**
 * lib/fs/session_dir.ts, the one helper for names in a folder a session can write: every create
 * is exclusive (a symlink, hard link, FIFO, directory or file at the name refuses it, and its
 * target keeps its bytes), every read refuses what is not a plain file with one name (a FIFO
 * never holds it), every remove takes the entry and never its target, and a folder swapped for a
 * link between the listing and the claim's rename is refused, with what the rename took put back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FsSafetyError } from "../../lib/errors.ts";
import {
  claimName,
  createNewIn,
  type DirPin,
  listNames,
  lstatName,
  NameRefused,
  pinDir,
  publishNewIn,
  readNameWithin,
  removeIn,
  replaceIn,
} from "../../lib/fs/session_dir.ts";
import { runDeno, snapshotTreeSync } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";

const enc = new TextEncoder();

/** A world: a session-writable folder `q`, a private folder `own`, and a secret outside both. */
function world(): { root: string; q: string; own: string; secret: string; pin: DirPin } {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-sessdir-" }));
  const q = join(root, "q");
  const own = join(root, "own");
  Deno.mkdirSync(q);
  Deno.mkdirSync(own);
  const secret = join(root, "secret.key");
  Deno.writeTextFileSync(secret, "k".repeat(64) + "\n", { mode: 0o600 });
  return { root, q, own, secret, pin: pinDir(q)! };
}

function mkfifo(path: string): void {
  const r = new Deno.Command("/usr/bin/mkfifo", { args: [path] }).outputSync();
  assert.ok(r.success, "mkfifo");
}

/** Each thing a session can put at a name, planted at `path` (aimed at `secret`). */
function plants(secret: string): [string, NameRefused["found"], (path: string) => void][] {
  return [
    ["a symlink to the secret", "symlink", (p) => Deno.symlinkSync(secret, p)],
    ["a hard link to the secret", "hardlink", (p) => Deno.linkSync(secret, p)],
    ["a FIFO", "fifo", mkfifo],
    ["a directory", "dir", (p) => {
      Deno.mkdirSync(p);
      Deno.writeTextFileSync(join(p, "inside"), "x");
    }],
  ];
}

function refusedAs(e: unknown, found: NameRefused["found"]): boolean {
  assert.ok(e instanceof NameRefused, String(e));
  assert.equal(e.found, found, e.message);
  assert.match(e.message, /refused, not followed/);
  return true;
}

/**
 * `make` (an exclusive create of a name in a session-writable folder) refuses every plant and a
 * plain file at the name, writing nothing anywhere, and creates a free name with its bytes and
 * mode, leaving no temporary behind.
 */
function refusesEveryPlant(make: typeof createNewIn, verb: string): void {
  const w = world();
  for (const [what, found, plant] of plants(w.secret)) {
    const name = `n-${found}`;
    plant(join(w.q, name));
    const before = snapshotTreeSync([w.root]);
    assert.throws(
      () => make(w.pin, name, enc.encode("token"), 0o644),
      (e) => refusedAs(e, found),
      what,
    );
    assertSameTree(before, snapshotTreeSync([w.root]), `after a ${verb} onto ${what}`);
  }
  Deno.writeTextFileSync(join(w.q, "plain"), "theirs");
  const before = snapshotTreeSync([w.root]);
  assert.throws(() => make(w.pin, "plain", enc.encode("x"), 0o644), NameRefused);
  assertSameTree(before, snapshotTreeSync([w.root]), `after a ${verb} onto a file`);
  assert.equal(Deno.readTextFileSync(join(w.q, "plain")), "theirs");
  // The control: a free name is created, with its mode.
  make(w.pin, "free", enc.encode("ok"), 0o640);
  assert.equal(Deno.readTextFileSync(join(w.q, "free")), "ok");
  assert.equal(Deno.statSync(join(w.q, "free")).mode! & 0o777, 0o640);
  assert.deepEqual(listNames(w.pin).filter((n) => n.endsWith(".tmp")), []);
  Deno.removeSync(w.root, { recursive: true });
}

Deno.test("createNewIn: a symlink, hard link, FIFO, directory or file at the name refuses the create; nothing is written anywhere", () => {
  refusesEveryPlant(createNewIn, "create");
});

Deno.test("publishNewIn: whatever is at the name refuses it and nothing is written anywhere; a free name gets its bytes whole", () => {
  refusesEveryPlant(publishNewIn, "publish");
});

Deno.test("publishNewIn: a reader that looks at the name while it is written never finds it empty (the runner's sweep claims an ack the moment it appears); createNewIn's file is seen empty", async () => {
  // Another process (a real one: the sweep is the runner's) polls the name as fast as it can
  // while this one makes and removes it 300 times; it counts the looks that found a file and
  // those that found it empty. createNewIn is the control: its create-then-write shows.
  const poller = [
    "import os, sys, time",
    "d = sys.argv[1]; empty = seen = 0; end = time.time() + 60",
    "open(d + '/ready', 'w').close()",
    "while time.time() < end and not os.path.exists(d + '/stop'):",
    "    try:",
    "        st = os.lstat(d + '/ack'); seen += 1",
    "        if st.st_size == 0: empty += 1",
    "    except FileNotFoundError: pass",
    "print(empty, seen)",
  ].join("\n");
  const bytes = enc.encode("a".repeat(64));
  const looks = async (make: typeof publishNewIn): Promise<[number, number]> => {
    const w = world();
    const p = new Deno.Command("python3", { args: ["-c", poller, w.q], stdout: "piped" }).spawn();
    while (lstatName(w.pin, "ready") === null) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 300; i++) {
      make(w.pin, "ack", bytes, 0o644);
      assert.equal(Deno.readTextFileSync(join(w.q, "ack")), "a".repeat(64));
      Deno.removeSync(join(w.q, "ack"));
    }
    Deno.writeTextFileSync(join(w.q, "stop"), "");
    const out = await p.output();
    assert.ok(out.success, "the poller ran");
    const [empty, seen] = new TextDecoder().decode(out.stdout).trim().split(" ").map(Number);
    Deno.removeSync(w.root, { recursive: true });
    return [empty, seen];
  };
  const [empty, seen] = await looks(publishNewIn);
  assert.ok(seen > 0, "the poller saw the name at least once");
  assert.equal(empty, 0, `publishNewIn's ack was seen empty ${empty} times of ${seen}`);
  // The control, given a few rounds on a loaded machine (its empty file shows in about one look
  // in ten when the poller runs at all).
  let controlEmpty = 0;
  for (let round = 0; round < 5 && controlEmpty === 0; round++) {
    controlEmpty = (await looks(createNewIn))[0];
  }
  assert.ok(
    controlEmpty > 0,
    "the control (createNewIn) was never seen empty: the test sees nothing",
  );
});

Deno.test("claimName: requests/ swapped for a link between the listing and the rename is refused; the entry the rename took goes back", () => {
  const w = world();
  const name = "0123456789abcdef0123456789abcdef.json";
  Deno.writeTextFileSync(join(w.q, name), '{"kind":"verify-ledger"}');
  const listed = lstatName(w.pin, name)!;
  assert.deepEqual(listNames(w.pin), [name]);
  // Between the listing and the rename: the folder goes aside and a link to another folder, which
  // holds a file under the same name (say an operator's), takes its place.
  const elsewhere = join(w.root, "elsewhere");
  Deno.mkdirSync(elsewhere);
  Deno.writeTextFileSync(join(elsewhere, name), "the operator's file");
  Deno.renameSync(w.q, join(w.root, "q-aside"));
  Deno.symlinkSync(elsewhere, w.q);
  const before = snapshotTreeSync([w.root]);
  const to = join(w.own, name);
  assert.throws(
    () => claimName(w.pin, name, to, listed),
    (e) => {
      assert.ok(e instanceof FsSafetyError && !(e instanceof NameRefused), String(e));
      assert.equal(e.code, "NOT_DIRECTORY");
      assert.match(e.message, /no longer the directory that was checked/);
      return true;
    },
  );
  assertSameTree(before, snapshotTreeSync([w.root]), "after the claim through a swapped folder");
  assert.equal(Deno.readTextFileSync(join(elsewhere, name)), "the operator's file");
  assert.deepEqual([...Deno.readDirSync(w.own)], []);
  Deno.removeSync(w.root, { recursive: true });
});

Deno.test("claimName: requests/ swapped for a link in the instant between the check and the rename: the rename takes the link target's entry, the check after refuses, and the entry goes back where it was", () => {
  const w = world();
  const name = "0123456789abcdef0123456789abcdef.json";
  Deno.writeTextFileSync(join(w.q, name), '{"kind":"verify-ledger"}');
  const listed = lstatName(w.pin, name)!;
  const elsewhere = join(w.root, "elsewhere");
  Deno.mkdirSync(elsewhere);
  Deno.writeTextFileSync(join(elsewhere, name), "the operator's file");
  const aside = join(w.root, "q-aside");
  const to = join(w.own, name);
  assert.throws(
    () =>
      claimName(w.pin, name, to, listed, () => {
        Deno.renameSync(w.q, aside);
        Deno.symlinkSync(elsewhere, w.q);
      }),
    (e) => e instanceof FsSafetyError && e.code === "NOT_DIRECTORY",
  );
  assert.equal(Deno.readTextFileSync(join(elsewhere, name)), "the operator's file");
  assert.deepEqual([...Deno.readDirSync(elsewhere)].map((e) => e.name), [name]);
  assert.deepEqual([...Deno.readDirSync(w.own)], [], "the taken entry stayed in the claim folder");
  assert.equal(Deno.readTextFileSync(join(aside, name)), '{"kind":"verify-ledger"}');
  Deno.removeSync(w.root, { recursive: true });
});

Deno.test("claimName: another file renamed in after the listing (another inode) is refused, and so is every non-plain entry; the secret keeps its bytes", () => {
  const w = world();
  const name = "0123456789abcdef0123456789abcdef.json";
  Deno.writeTextFileSync(join(w.q, name), "listed");
  const listed = lstatName(w.pin, name)!;
  Deno.writeTextFileSync(join(w.root, "swap"), "swapped in");
  Deno.renameSync(join(w.root, "swap"), join(w.q, name));
  assert.throws(
    () => claimName(w.pin, name, join(w.own, name), listed),
    (e) => e instanceof NameRefused && /another file than the one listed/.test(e.message),
  );
  Deno.removeSync(join(w.own, name));
  const secretBefore = Deno.readFileSync(w.secret);
  for (const [what, found, plant] of plants(w.secret)) {
    const n = `c-${found}`;
    plant(join(w.q, n));
    const seen = lstatName(w.pin, n);
    assert.throws(
      () => claimName(w.pin, n, join(w.own, n), seen),
      (e) => refusedAs(e, found),
      what,
    );
    if (found === "dir") {
      // A directory is never moved (a session process inside it would come along, and reach
      // the private folder by ..): it stays where it was put, and nothing arrives.
      assert.equal(Deno.lstatSync(join(w.q, n)).ino, seen?.ino, what);
      assert.throws(() => Deno.lstatSync(join(w.own, n)), Deno.errors.NotFound, what);
      continue;
    }
    // What arrived is in the private folder (for the caller to remove); never opened.
    Deno.removeSync(join(w.own, n), { recursive: true });
  }
  assert.deepEqual(Deno.readFileSync(w.secret), secretBefore);
  assert.equal(Deno.statSync(w.secret).nlink, 1);
  // The control: the plain file listed is claimed.
  Deno.writeTextFileSync(join(w.q, name), "real");
  const st = claimName(w.pin, name, join(w.own, name), lstatName(w.pin, name));
  assert.ok(st?.isFile);
  assert.equal(Deno.readTextFileSync(join(w.own, name)), "real");
  assert.equal(claimName(w.pin, "gone.json", join(w.own, "gone.json"), null), null);
  Deno.removeSync(w.root, { recursive: true });
});

Deno.test("claimName: a file swapped for a directory in the instant before the rename is refused and left where it is; nothing arrives in the private folder (probe 22c C1)", () => {
  const w = world();
  const name = "0123456789abcdef0123456789abcdef.json";
  Deno.writeTextFileSync(join(w.q, name), "listed");
  const listed = lstatName(w.pin, name)!;
  let dirIno = 0;
  assert.throws(
    () =>
      claimName(w.pin, name, join(w.own, name), listed, () => {
        Deno.removeSync(join(w.q, name));
        Deno.mkdirSync(join(w.q, name));
        dirIno = Deno.lstatSync(join(w.q, name)).ino!;
      }),
    (e) => refusedAs(e, "dir"),
  );
  assert.equal(Deno.lstatSync(join(w.q, name)).ino, dirIno);
  assert.deepEqual(listNames(pinDir(w.own)!), []);
  Deno.removeSync(w.root, { recursive: true });
});

Deno.test("readNameWithin: a symlink, hard link, FIFO or directory at the name is refused unread (a FIFO does not hold it); a plain file is read", async () => {
  const w = world();
  for (const [what, found, plant] of plants(w.secret)) {
    const name = `r-${found}`;
    plant(join(w.q, name));
    await assert.rejects(() => readNameWithin(w.pin, name, 4096), (e) => refusedAs(e, found), what);
  }
  Deno.writeTextFileSync(join(w.q, "big"), "x".repeat(100));
  await assert.rejects(
    () => readNameWithin(w.pin, "big", 10),
    (e) => e instanceof FsSafetyError && e.code === "FILE_TOO_LARGE",
  );
  Deno.writeTextFileSync(join(w.q, "ok"), "fine");
  assert.equal(new TextDecoder().decode((await readNameWithin(w.pin, "ok", 4096))!), "fine");
  assert.equal(await readNameWithin(w.pin, "absent", 4096), null);
  Deno.removeSync(w.root, { recursive: true });
});

Deno.test("removeIn takes the entry, never its target; a directory is refused, not emptied. replaceIn replaces a link or FIFO at the name (its target untouched) and refuses a directory", () => {
  const w = world();
  const secretBefore = Deno.readFileSync(w.secret);
  Deno.symlinkSync(w.secret, join(w.q, "link"));
  assert.equal(removeIn(w.pin, "link"), true);
  Deno.linkSync(w.secret, join(w.q, "hard"));
  assert.equal(removeIn(w.pin, "hard"), true);
  assert.deepEqual(Deno.readFileSync(w.secret), secretBefore);
  Deno.mkdirSync(join(w.q, "dir"));
  Deno.writeTextFileSync(join(w.q, "dir", "inside"), "x");
  assert.throws(() => removeIn(w.pin, "dir"), (e) => refusedAs(e, "dir"));
  assert.equal(Deno.readTextFileSync(join(w.q, "dir", "inside")), "x");
  assert.equal(removeIn(w.pin, "absent"), false);

  Deno.symlinkSync(w.secret, join(w.q, "r.json"));
  replaceIn(w.pin, "r.json", enc.encode("result"), 0o644);
  assert.ok(Deno.lstatSync(join(w.q, "r.json")).isFile);
  assert.equal(Deno.readTextFileSync(join(w.q, "r.json")), "result");
  mkfifo(join(w.q, "f.json"));
  replaceIn(w.pin, "f.json", enc.encode("result"), 0o644);
  assert.equal(Deno.readTextFileSync(join(w.q, "f.json")), "result");
  assert.deepEqual(Deno.readFileSync(w.secret), secretBefore);
  assert.throws(() => replaceIn(w.pin, "dir", enc.encode("x"), 0o644), (e) => refusedAs(e, "dir"));
  // No temporary file is left behind by the refused write.
  assert.deepEqual(listNames(w.pin).filter((n) => n.endsWith(".tmp")), []);
  Deno.removeSync(w.root, { recursive: true });
});

Deno.test("a folder swapped for a link after it was pinned refuses every operation; nothing is created in the link's target", () => {
  const w = world();
  const elsewhere = join(w.root, "elsewhere");
  Deno.mkdirSync(elsewhere);
  Deno.renameSync(w.q, join(w.root, "q-aside"));
  Deno.symlinkSync(elsewhere, w.q);
  const ops: [string, () => unknown][] = [
    ["listNames", () => listNames(w.pin)],
    ["createNewIn", () => createNewIn(w.pin, "ack", enc.encode("t"), 0o644)],
    ["replaceIn", () => replaceIn(w.pin, "r.json", enc.encode("t"), 0o644)],
    ["removeIn", () => removeIn(w.pin, "x")],
  ];
  for (const [what, op] of ops) {
    assert.throws(op, (e) => e instanceof FsSafetyError && e.code === "NOT_DIRECTORY", what);
  }
  assert.deepEqual([...Deno.readDirSync(elsewhere)], []);
  // A symlink at the folder's path is never pinned.
  assert.throws(() => pinDir(w.q), (e) => e instanceof FsSafetyError && e.code === "NOT_DIRECTORY");
  Deno.removeSync(w.root, { recursive: true });
});

Deno.test("a folder the tool fsyncs, swapped for a FIFO: refused at once (NotADirectory), never waited on; replaceIn refuses it as a folder that moved", async () => {
  // Run in a child process with a deadline: a regression blocks the open forever (a FIFO opened
  // for reading waits for a writer), which must fail this test, not hang the suite.
  const w = world();
  const fifo = join(w.root, "fifo");
  mkfifo(fifo);
  const lib = (f: string) => JSON.stringify(new URL(`../../lib/fs/${f}`, import.meta.url).href);
  const code = `
    import { fsyncDirSync } from ${lib("atomic_write.ts")};
    import { openDirectorySync } from ${lib("entry.ts")};
    import { pinDir, replaceIn } from ${lib("session_dir.ts")};
    const [fifo, q, aside] = ${JSON.stringify([fifo, w.q, join(w.root, "q-aside")])};
    const out = [];
    const attempt = (what, f) => {
      try { f(); out.push(what + ": done"); } catch (e) { out.push(what + ": " + (e.code ?? e.name)); }
    };
    attempt("open", () => openDirectorySync(fifo).close());
    attempt("fsync", () => fsyncDirSync(fifo));
    // replaceIn: the folder renamed away and a FIFO put at its name right after the rename (the
    // instant its fsync opens the folder).
    const pin = pinDir(q);
    const rename = Deno.renameSync;
    Deno.renameSync = (from, to) => {
      rename(from, to);
      if (String(to).endsWith("/r.json")) {
        rename(q, aside);
        new Deno.Command("/usr/bin/mkfifo", { args: [q] }).outputSync();
      }
    };
    attempt("replaceIn", () => replaceIn(pin, "r.json", new TextEncoder().encode("x"), 0o644));
    console.log(out.join("\\n"));
  `;
  const out = await runDeno(["eval", "--no-check", code], { hangGuardMs: 20_000 });
  assert.equal(out.code, 0, `the child did not finish: ${out.stderr}`);
  assert.equal(
    out.stdout.trim(),
    "open: ENOTDIR\nfsync: ENOTDIR\nreplaceIn: NOT_DIRECTORY",
  );
  assert.ok(Deno.lstatSync(w.q).isFifo, "the FIFO was swapped in");
  Deno.removeSync(w.root, { recursive: true });
});
