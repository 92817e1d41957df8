/** The live scan of writable roots for control-plane names and protected matches. */

import { SandboxError } from "../../lib/errors.ts";
import { readOnlyMatcher, scanWritableRoots } from "../../lib/sandbox/mod.ts";
import {
  rescanWritableRoots,
  SCAN_SETTLE_MS,
  type ScanRecord,
} from "../../lib/sandbox/write_root_scan.ts";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("scan: finds control-plane names at any depth in any case, and protected matches", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-scan-" }));
  try {
    const p = base;
    for (
      const d of [
        "build/a/b/c/.GIT/objects",
        "build/.claude",
        "build/x/.Agentteams",
        "build/x/.github/workflows",
        "build/ok/src",
        "build/nogit.d",
        "tmp/.codex",
        "elsewhere/.git",
      ]
    ) Deno.mkdirSync(`${p}/${d}`, { recursive: true });
    Deno.writeTextFileSync(`${p}/build/ok/src/key.PEM`, "k");
    Deno.writeTextFileSync(`${p}/build/ok/src/main.c`, "c");
    Deno.writeTextFileSync(`${p}/build/.goose`, "a file named like the control plane");
    Deno.symlinkSync(`${p}/elsewhere`, `${p}/build/ok/link`); // never followed
    const hits = scanWritableRoots(
      [`${p}/build`, `${p}/tmp`],
      readOnlyMatcher(p, ["*.pem"], false),
    );
    assert.deepEqual(hits, [
      { path: `${p}/build/.claude`, kind: "dir" },
      { path: `${p}/build/.goose`, kind: "file" },
      { path: `${p}/build/a/b/c/.GIT`, kind: "dir" },
      { path: `${p}/build/ok/src/key.PEM`, kind: "file" },
      { path: `${p}/build/x/.Agentteams`, kind: "dir" },
      { path: `${p}/build/x/.github`, kind: "dir" },
      { path: `${p}/tmp/.codex`, kind: "dir" },
    ]);
    Deno.symlinkSync(`${p}/elsewhere/.git`, `${p}/build/.Git`);
    const withLink = scanWritableRoots([`${p}/build`], readOnlyMatcher(p, [], false));
    assert.deepEqual(withLink.find((h) => h.path === `${p}/build/.Git`)?.kind, "symlink");
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("scan: a directory that cannot be listed is refused", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-scan-" }));
  try {
    Deno.mkdirSync(`${base}/build/locked`, { recursive: true });
    Deno.writeTextFileSync(`${base}/build/locked/x`, "x");
    if (Deno.uid() !== 0) {
      Deno.chmodSync(`${base}/build/locked`, 0o000);
      assertRefusal(
        () => scanWritableRoots([`${base}/build`], readOnlyMatcher(base, [], false)),
        "CONFINED_PATH_UNSAFE",
        SandboxError,
      );
      Deno.chmodSync(`${base}/build/locked`, 0o755);
    } else {
      // Root lists every directory, so the rule is shown with a root that cannot be listed
      // for another reason (a file where a directory was expected): same refusal path.
      Deno.writeTextFileSync(`${base}/notadir`, "");
      assertRefusal(
        () => scanWritableRoots([`${base}/notadir`], readOnlyMatcher(base, [], false)),
        "CONFINED_PATH_UNSAFE",
        SandboxError,
      );
    }
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("scan: a missing root is skipped", () => {
  assert.deepEqual(scanWritableRoots(["/nonexistent-agentteams-root"], () => true), []);
});

Deno.test("scan: a directory git takes for a repository (HEAD, objects/, refs/) is a hit whatever its name", () => {
  const p = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-scan-bare-" }));
  try {
    for (const d of ["build/vendored/objects", "build/vendored/refs/heads", "build/half/objects"]) {
      Deno.mkdirSync(`${p}/${d}`, { recursive: true });
    }
    Deno.writeTextFileSync(`${p}/build/vendored/HEAD`, "ref: refs/heads/main\n");
    Deno.writeTextFileSync(`${p}/build/half/HEAD`, "ref: refs/heads/main\n"); // no refs/: not one
    const hits = scanWritableRoots([`${p}/build`], readOnlyMatcher(p, [], false));
    assert.deepEqual(hits, [{ path: `${p}/build/vendored`, kind: "dir" }]);
  } finally {
    Deno.removeSync(p, { recursive: true });
  }
});

Deno.test("rescan: unchanged directories are not listed again; every new or changed one is, and a new `.git`, a new bare repository or a replaced directory is found", async () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-rescan-" }));
  try {
    const root = `${base}/build`;
    for (const d of ["a/b/c", "d/e", "f"]) Deno.mkdirSync(`${root}/${d}`, { recursive: true });
    for (const f of ["a/1.txt", "a/b/2.txt", "a/b/c/3.txt", "d/e/4.txt"]) {
      Deno.writeTextFileSync(`${root}/${f}`, f);
    }
    // Older than the settle window, as a repo's directories are before a run.
    await new Promise((r) => setTimeout(r, SCAN_SETTLE_MS + 100));
    let calls = 0;
    const m = (abs: string, name: string) => {
      calls++;
      return readOnlyMatcher(base, [], false)(abs, name);
    };
    const record: ScanRecord = new Map();
    assert.deepEqual(scanWritableRoots([root], m, record), []);
    assert.ok(calls >= 9, `the first walk judged every entry (${calls})`);
    assert.deepEqual([...record.keys()].sort(), [
      root,
      `${root}/a`,
      `${root}/a/b`,
      `${root}/a/b/c`,
      `${root}/d`,
      `${root}/d/e`,
      `${root}/f`,
    ]);
    // Nothing changed: no directory is listed (no entry judged), nothing found.
    calls = 0;
    assert.deepEqual(rescanWritableRoots([root], m, record), []);
    assert.equal(calls, 0);
    // A file's contents changed: its directory's entries did not; still nothing to list.
    Deno.writeTextFileSync(`${root}/a/b/c/3.txt`, "changed");
    assert.deepEqual(rescanWritableRoots([root], m, record), []);
    assert.equal(calls, 0);
    // A `.git` made deep down, a new tree holding one, a new bare-repository-shaped directory,
    // and a directory replaced by another holding a `.git` under the same name: all found, and
    // only the directories that changed (and the new ones) were listed.
    Deno.mkdirSync(`${root}/a/b/c/.git`);
    Deno.mkdirSync(`${root}/f/new/deeper/.GIT`, { recursive: true });
    for (const d of ["bare/objects", "bare/refs"]) {
      Deno.mkdirSync(`${root}/d/e/${d}`, { recursive: true });
    }
    Deno.writeTextFileSync(`${root}/d/e/bare/HEAD`, "ref: refs/heads/main\n");
    Deno.renameSync(`${root}/a/b`, `${base}/b-moved`);
    Deno.mkdirSync(`${root}/a/b/.git`, { recursive: true });
    calls = 0;
    const hits = rescanWritableRoots([root], m, record).map((h) => h.path);
    assert.deepEqual(hits, [
      `${root}/a/b/.git`,
      `${root}/d/e/bare`,
      `${root}/f/new/deeper/.GIT`,
    ]);
    assert.ok(calls > 0 && calls < 20, `${calls} entries judged`);
    // The moved-away tree's new `.git` is outside the root, and not looked for there.
    assert.ok(Deno.lstatSync(`${base}/b-moved/c/.git`).isDirectory);
    // A fresh walk agrees with the incremental one.
    assert.deepEqual(scanWritableRoots([root], m).map((h) => h.path), hits);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("rescan: a directory that changed within the settle window before the first walk is listed again", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-rescan-fresh-" }));
  try {
    const root = `${base}/build`;
    Deno.mkdirSync(`${root}/sub`, { recursive: true });
    Deno.writeTextFileSync(`${root}/sub/x.txt`, "x");
    const record: ScanRecord = new Map();
    assert.deepEqual(scanWritableRoots([root], readOnlyMatcher(base, [], false), record), []);
    let calls = 0;
    const m = (abs: string, name: string) => {
      calls++;
      return readOnlyMatcher(base, [], false)(abs, name);
    };
    assert.deepEqual(rescanWritableRoots([root], m, record), []);
    assert.equal(calls, 2, "both directories listed again: their times cannot be trusted yet");
    Deno.mkdirSync(`${root}/sub/.git`);
    assert.deepEqual(rescanWritableRoots([root], m, record).map((h) => h.path), [
      `${root}/sub/.git`,
    ]);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});

Deno.test("rescan, as an attacker: times put back, a hard link, a rename in place and a protected file made by link are all found", async () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-rescan-attack-" }));
  try {
    const root = `${base}/build`;
    for (const d of ["a", "b", "c", "d"]) Deno.mkdirSync(`${root}/${d}`, { recursive: true });
    Deno.writeTextFileSync(`${root}/b/gitfile`, "gitdir: /elsewhere/.git\n");
    Deno.writeTextFileSync(`${root}/c/plain`, "gitdir: /elsewhere/.git\n");
    Deno.writeTextFileSync(`${root}/d/key.txt`, "secret");
    await new Promise((r) => setTimeout(r, SCAN_SETTLE_MS + 100));
    const m = readOnlyMatcher(base, ["**/*.pem"], false);
    const record: ScanRecord = new Map();
    assert.deepEqual(scanWritableRoots([root], m, record), []);
    // A `.git` made in a/, then a/'s access and modification times set back to what they were:
    // only its change time (which no unprivileged process sets) tells.
    const was = Deno.lstatSync(`${root}/a`);
    Deno.mkdirSync(`${root}/a/.git`);
    Deno.utimeSync(`${root}/a`, was.atime ?? new Date(0), was.mtime ?? new Date(0));
    assert.equal(Deno.lstatSync(`${root}/a`).mtime?.getTime(), was.mtime?.getTime());
    // A hard link named `.git` to a file elsewhere in the root (the file's own directory is
    // unchanged), a file renamed to `.git` in its own directory, and a protected file made as
    // a hard link of an unprotected one.
    Deno.linkSync(`${root}/b/gitfile`, `${root}/d/.git`);
    Deno.renameSync(`${root}/c/plain`, `${root}/c/.Git`);
    Deno.linkSync(`${root}/d/key.txt`, `${root}/b/key.pem`);
    const hits = rescanWritableRoots([root], m, record).map((h) => h.path);
    assert.deepEqual(hits, [
      `${root}/a/.git`,
      `${root}/b/key.pem`,
      `${root}/c/.Git`,
      `${root}/d/.git`,
    ]);
    // A fresh walk agrees with the incremental one.
    assert.deepEqual(scanWritableRoots([root], m).map((h) => h.path), hits);
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});
