/**
 * The anchored write helper on its own: what it refuses writes nothing, anywhere. (The race
 * against a swapping adversary is tests/proposals/race_test.ts.)
 */
import assert from "node:assert/strict";
import { FsSafetyError } from "../../lib/errors.ts";
import { anchoredReplace } from "../../lib/fs/anchored_write.ts";

const enc = new TextEncoder();

function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of Deno.readDirSync(d)) {
      const p = `${d}/${e.name}`;
      const st = Deno.lstatSync(p);
      out.push(
        `${p.slice(dir.length)} ${st.isSymlink ? "link" : st.isDirectory ? "dir" : st.size}`,
      );
      if (st.isDirectory && !st.isSymlink) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

function refusedWith(code: string, at?: "dir" | "target") {
  return (e: unknown) =>
    e instanceof FsSafetyError && e.code === code && (at === undefined || e.details.at === at);
}

Deno.test("anchored write: creates missing directories, writes the mode asked, keeps nothing else", async () => {
  const root = Deno.makeTempDirSync();
  await anchoredReplace({
    root,
    dirs: ["a", "b"],
    name: "f.txt",
    op: "write",
    createDirs: true,
    decide: (cur) => {
      assert.equal(cur, null);
      return { mode: 0o640, content: enc.encode("one\n") };
    },
  });
  assert.equal(Deno.readTextFileSync(`${root}/a/b/f.txt`), "one\n");
  assert.equal((Deno.statSync(`${root}/a/b/f.txt`).mode ?? 0) & 0o777, 0o640);
  assert.deepEqual(tree(root), ["/a dir", "/a/b dir", "/a/b/f.txt 4"], "no temporary file left");
  // The current bytes and mode are handed to the decision.
  await anchoredReplace({
    root,
    dirs: ["a", "b"],
    name: "f.txt",
    op: "write",
    createDirs: false,
    decide: (cur) => {
      assert.equal(new TextDecoder().decode(cur?.bytes), "one\n");
      assert.equal(cur?.mode, 0o640);
      return { mode: cur!.mode, content: enc.encode("two\n") };
    },
  });
  assert.equal(Deno.readTextFileSync(`${root}/a/b/f.txt`), "two\n");
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
  const before = tree(root);
  const beforeOut = tree(outside);
  await assert.rejects(
    anchoredReplace({
      root,
      dirs: ["src"],
      name: "t.txt",
      op: "write",
      createDirs: false,
      decide: () => {
        throw new Error("stale");
      },
    }),
    /stale/,
  );
  await assert.rejects(
    anchoredReplace({
      root,
      dirs: ["src", "out"],
      name: "x.txt",
      op: "write",
      createDirs: true,
      decide: () => ({ mode: 0o644, content: enc.encode("x") }),
    }),
    refusedWith("SYMLINK", "dir"),
  );
  await assert.rejects(
    anchoredReplace({
      root,
      dirs: ["src", "x.txt"],
      name: "x.txt",
      op: "write",
      createDirs: true,
      decide: () => ({ mode: 0o644, content: enc.encode("x") }),
    }),
    refusedWith("SYMLINK", "dir"),
  );
  await assert.rejects(
    anchoredReplace({
      root,
      dirs: ["src"],
      name: "link.txt",
      op: "unlink",
      createDirs: false,
      decide: () => ({ mode: 0, content: new Uint8Array(0) }),
    }),
    refusedWith("SYMLINK", "target"),
  );
  assert.deepEqual(tree(root), before);
  assert.deepEqual(tree(outside), beforeOut);
  assert.equal(Deno.readTextFileSync(`${root}/src/t.txt`), "keep\n");
});

Deno.test("anchored write: without its helper program it refuses (ANCHOR_UNAVAILABLE), writing nothing", async () => {
  const root = Deno.makeTempDirSync();
  await assert.rejects(
    anchoredReplace({
      root,
      dirs: ["new"],
      name: "f.txt",
      op: "write",
      createDirs: true,
      decide: () => ({ mode: 0o644, content: enc.encode("x") }),
      perl: `${root}/no-such-perl`,
    }),
    refusedWith("ANCHOR_UNAVAILABLE"),
  );
  assert.deepEqual(tree(root), []);
});

Deno.test("anchored write: a file where a directory goes, a missing directory, a non-file target, a bad name: refused, nothing written", async () => {
  const root = Deno.makeTempDirSync();
  Deno.mkdirSync(`${root}/src/sub`, { recursive: true });
  Deno.writeTextFileSync(`${root}/src/file`, "f\n");
  const before = tree(root);
  let decided = 0;
  const spec = (dirs: string[], name: string, createDirs = true) => ({
    root,
    dirs,
    name,
    op: "write" as const,
    createDirs,
    decide: () => {
      decided++;
      return { mode: 0o644, content: enc.encode("x") };
    },
  });
  await assert.rejects(
    anchoredReplace(spec(["src", "file"], "x.txt")),
    refusedWith("NOT_DIRECTORY"),
  );
  await assert.rejects(
    anchoredReplace(spec(["src", "missing"], "x.txt", false)),
    refusedWith("NOT_DIRECTORY"),
  );
  await assert.rejects(anchoredReplace(spec(["src"], "sub")), refusedWith("NOT_REGULAR_FILE"));
  for (const bad of ["", ".", "..", "a/b"]) {
    await assert.rejects(anchoredReplace(spec(["src"], bad)), refusedWith("NOT_DIRECTORY"));
    await assert.rejects(anchoredReplace(spec([bad], "x.txt")), refusedWith("NOT_DIRECTORY"));
  }
  assert.equal(decided, 0, "no refusal reaches the decision");
  assert.deepEqual(tree(root), before);
});

Deno.test("anchored write: a target replaced or created while the decision is made: FILE_CHANGED, the newcomer kept", async () => {
  const root = Deno.makeTempDirSync();
  Deno.mkdirSync(`${root}/src`);
  Deno.writeTextFileSync(`${root}/src/t.txt`, "old\n");
  // Replaced by another inode between the read and the write. The content is larger than a pipe
  // buffer, so the helper refuses and exits while it is still being sent.
  const big = new Uint8Array(1 << 20).fill(0x6d);
  await assert.rejects(
    anchoredReplace({
      root,
      dirs: ["src"],
      name: "t.txt",
      op: "write",
      createDirs: false,
      decide: () => {
        Deno.writeTextFileSync(`${root}/src/.swap`, "theirs\n");
        Deno.renameSync(`${root}/src/.swap`, `${root}/src/t.txt`);
        return { mode: 0o644, content: big };
      },
    }),
    refusedWith("FILE_CHANGED"),
  );
  assert.deepEqual(tree(root), ["/src dir", "/src/t.txt 7"], "no temporary file left");
  assert.equal(Deno.readTextFileSync(`${root}/src/t.txt`), "theirs\n");
  // Absent when read, present at the write.
  await assert.rejects(
    anchoredReplace({
      root,
      dirs: ["src"],
      name: "new.txt",
      op: "write",
      createDirs: false,
      decide: () => {
        Deno.writeTextFileSync(`${root}/src/new.txt`, "theirs\n");
        return { mode: 0o644, content: big };
      },
    }),
    refusedWith("FILE_CHANGED"),
  );
  assert.equal(Deno.readTextFileSync(`${root}/src/new.txt`), "theirs\n");
  // Removing an absent target.
  const before = tree(root);
  await assert.rejects(
    anchoredReplace({
      root,
      dirs: ["src"],
      name: "absent.txt",
      op: "unlink",
      createDirs: false,
      decide: () => ({ mode: 0, content: new Uint8Array(0) }),
    }),
    refusedWith("FILE_CHANGED"),
  );
  assert.deepEqual(tree(root), before);
});
