/**
 * `agentteams run` end to end, undeclared writes under bwrap. The agent's confined_programs write
 * root `src` lets each write happen physically, so the before/after comparison is what catches
 * it: a tracked file edited, an untracked one created, a tracked file deleted, a same-size
 * rewrite with its mtime restored, a file whose name is not UTF-8 (reported with `\xNN`). Each
 * exits 3 with the exact `undeclared_writes` (from `--json`) and a `run-request` row carrying
 * them. Declared writes (a file, a `dir/`) are not reported. Control-plane writes (a hook in
 * `.git/hooks`, `.git/config`, `.agentteams/x`, deleting the ledger) are stopped by the sandbox
 * itself: they fail inside it and nothing changes.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { scanCachePath } from "../../lib/sandbox/write_root_scan_cache.ts";
import { probeCachePath } from "../../lib/sandbox/probe_cache.ts";
import { snapshotTree, type TreeEntry } from "../_helpers/mod.ts";
import {
  assertJsonRefused,
  bytesOrNull,
  exists,
  jsonOut,
  newRows,
  type RunOutcome,
  shScript,
  withWorld,
  workerBrief,
  type World,
  type WorldPaths,
} from "./_run_helpers.ts";
import { assertSameTree } from "../_helpers/assert.ts";

const SCRIPTS: Record<string, string | ((p: WorldPaths) => string)> = {
  "edit-tracked": shScript("printf 'more\\n' >> src/a.txt"),
  "create-untracked": shScript(": > src/new.txt"),
  "delete-tracked": shScript("rm src/b.txt"),
  // Same size ("hello\n" -> "HELLO\n"), then the old mtime put back.
  "same-size": shScript(
    'cp -p src/a.txt "$TMPDIR/keep"\nprintf \'HELLO\\n\' > src/a.txt\ntouch -r "$TMPDIR/keep" src/a.txt',
  ),
  "non-utf8": shScript(": > \"src/bad$(printf '\\377')name.txt\""),
  "declared-and-not": shScript(
    ": > src/declared.txt\nmkdir -p src/out/deep\n: > src/out/x.txt\n: > src/out/deep/y.txt\n: > src/extra.txt",
  ),
  // Every control-plane write it can think of; reports each one that succeeded on stdout.
  "control-plane": shScript(
    [
      "mkdir -p .git/hooks",
      "printf '#!/bin/sh\\necho owned\\n' > .git/hooks/pre-commit && echo PLANTED-HOOK",
      "chmod +x .git/hooks/pre-commit 2>/dev/null",
      "printf '[core]\\n\\thooksPath = /tmp\\n' >> .git/config && echo EDITED-CONFIG",
      "printf 'src/\\n' >> .git/info/exclude && echo EDITED-EXCLUDE",
      // (`touch`, not `:`: a failed redirection on a special builtin would end the script.)
      "touch .agentteams/x && echo WROTE-AGENTTEAMS",
      "printf 'junk\\n' >> .agentteams/proposal-ledger.jsonl && echo APPENDED-LEDGER",
      "rm .agentteams/proposal-ledger.jsonl && echo DELETED-LEDGER",
      "rm .agentteams/proposal-ledger.head && echo DELETED-HEAD",
      "mv .git .git-moved && echo MOVED-GIT",
      "cd src && printf 'x\\n' > ../.git/hooks/post-checkout && echo PLANTED-VIA-SRC",
      "exit 0",
    ].join("\n"),
  ),
  // Writes outside the project: HOME, the world dir, /tmp; and its private TMPDIR (allowed).
  "write-outside": shScript(
    [
      'printf x > "$HOME/.bashrc" && echo WROTE-HOME',
      'printf x > "$HOME/../outside.txt" && echo WROTE-WORLD',
      "mkdir /tmp/agentteams-e2e-escape-$$ && echo WROTE-TMP",
      "printf x > src/out-link/through.txt && echo WROTE-THROUGH-LINK",
      'printf x > "$TMPDIR/scratch" && echo WROTE-PRIVATE-TMPDIR',
      "exit 0",
    ].join("\n"),
  ),
  // Plant a hook where core.hooksPath points, inside the write root (existing dir, missing dir).
  "plant-hooks": shScript(
    "printf '#!/bin/sh\\n' > src/hooks/pre-commit && echo PLANTED-HOOKS\nexit 0",
  ),
  "plant-newhooks": shScript(
    "mkdir -p src/newhooks\nprintf '#!/bin/sh\\n' > src/newhooks/pre-commit && echo PLANTED\nexit 0",
  ),
  // A repository of the agent's own at a submodule's path (not checked out), whose config names a
  // clean filter for a file it then rewrites at the same size: a `git status` that looks into
  // submodules would run the filter as the operator, outside the sandbox.
  "submodule-filter": (p) =>
    shScript(
      [
        "cd src/sub || exit 9",
        'export HOME="$TMPDIR" GIT_CONFIG_NOSYSTEM=1',
        "git init -q . || exit 8",
        "printf 'a\\n' > f.txt",
        "printf 'f.txt filter=x\\n' > .gitattributes",
        "git -c user.name=a -c user.email=a@b add f.txt .gitattributes || exit 7",
        `git config filter.x.clean "sh -c 'echo ran > ${p.scratch}/filter-ran; cat'"`,
        "printf 'b\\n' > f.txt",
        "touch -d '@4102444800' f.txt",
        "echo PLANTED",
      ].join("\n"),
    ),
  // Add config through an include target, and hide writes through an excludes file, both inside
  // the write root where the repository's config points.
  "plant-include": shScript(
    "printf '[core]\\n\\thooksPath = /tmp\\n' > src/extra.cfg && echo PLANTED-INCLUDE\n" +
      "printf 'src/\\n' > src/ignore && echo PLANTED-EXCLUDES\nexit 0",
  ),
  // A submodule's directory swapped for a symlink out of the project.
  "submodule-swap": shScript("rmdir src/sub && ln -s /etc src/sub && echo SWAPPED"),
  // A new repository under a declared directory: its `.git` is control plane wherever it lies.
  "nested-repo": shScript("git init -q src/out/nested && echo NESTED"),
  // A package's own `.github` (npm packages ship FUNDING.yml): an ordinary, declarable write.
  "vendor-github": shScript(
    "mkdir -p src/vendor/pkg/.github && printf 'x\\n' > src/vendor/pkg/.github/FUNDING.yml && echo VENDORED",
  ),
  "noop": shScript("echo NOOP"),
  // A bare `.git` with a hook, in a tracked directory: git status lists nothing at all.
  "nested-git": shScript(
    "mkdir -p src/.git/hooks && printf '#!/bin/sh\\necho owned\\n' > src/.git/hooks/post-commit " +
      "&& echo PLANTED",
  ),
};

function brief(p: WorldPaths) {
  const cmds = Object.keys(SCRIPTS).map((name) => ({ prefix: [join(p.scripts, name)] }));
  return workerBrief(p, cmds, { write: ["src"], scopes: ["src/"] });
}

const FILES = {
  "README.md": "hello\n",
  "src/a.txt": "hello\n",
  "src/b.txt": "bee\n",
  "src/hooks/README": "hooks live here\n",
};

async function runScript(
  w: World,
  name: string,
  expected_writes?: string[],
): Promise<RunOutcome> {
  return await w.run({ argv: [join(w.scripts, name)], expected_writes }, { flags: ["--json"] });
}

/** `src/` and `.git` as they are, less git's own index (refreshed by any run's git status). */
async function srcAndGit(w: World): Promise<Map<string, TreeEntry>> {
  const tree = await snapshotTree(join(w.project, "src"), join(w.project, ".git"));
  tree.delete(join(w.project, ".git/index"));
  return tree;
}

/** Exit 3, `--json` result's undeclared_writes, and the `run-request` row. */
async function assertUndeclared(w: World, r: RunOutcome, expected: string[]): Promise<void> {
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /^agentteams run: ran, but: UNDECLARED_WRITES: the command ran \(exit \d+\) and wrote /m,
  );
  const out = assertJsonRefused(r, "UNDECLARED_WRITES");
  const result = out.result as Record<string, unknown>;
  assert.equal(result.ran, true);
  assert.equal(result.exit, 0);
  assert.deepEqual(result.undeclared_writes, expected);
  const rows = newRows(w, r);
  assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
  assert.equal(rows[1].exit, 0);
  assert.equal(rows[1].confined, true);
  assert.equal(rows[1].backend, "bwrap");
  assert.deepEqual(rows[1].undeclared_writes, expected);
  await w.verifyOk();
}

Deno.test("run undeclared: editing a tracked file, creating an untracked one, deleting one: exit 3, exact paths", async () => {
  await withWorld("undeclared", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    await assertUndeclared(w, await runScript(w, "edit-tracked"), ["src/a.txt"]);
    assert.equal(await Deno.readTextFile(join(w.project, "src/a.txt")), "hello\nmore\n");
    await assertUndeclared(w, await runScript(w, "create-untracked"), ["src/new.txt"]);
    await assertUndeclared(w, await runScript(w, "delete-tracked"), ["src/b.txt"]);
    // Human mode: the same exit 3 and the paths in the refusal line.
    await w.git("clean", "-fdq", "src");
    const h = await w.run({ argv: [join(w.scripts, "create-untracked")] });
    assert.equal(h.code, 3, h.stderr);
    assert.match(h.stderr, /ran, but: UNDECLARED_WRITES: .*src\/new\.txt/);
    // What happened, and the declaration that would cover it.
    assert.match(h.stderr, /nothing was undone/);
    assert.match(h.stderr, /"expected_writes": \["src\/"\]/);
    await w.verifyOk();
  });
});

Deno.test("run undeclared: a same-size rewrite with its mtime restored is still caught", async () => {
  await withWorld("samesize", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    const a = join(w.project, "src/a.txt");
    const before = await Deno.stat(a);
    const r = await runScript(w, "same-size");
    const after = await Deno.stat(a);
    // The scenario held: same size, same mtime, different bytes.
    assert.equal(after.size, before.size);
    assert.equal(after.mtime?.getTime(), before.mtime?.getTime());
    assert.equal(await Deno.readTextFile(a), "HELLO\n");
    await assertUndeclared(w, r, ["src/a.txt"]);
  });
});

Deno.test("run undeclared: a non-UTF-8 file name is reported with a \\xNN escape", async () => {
  await withWorld("nonutf8", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    const r = await runScript(w, "non-utf8");
    await assertUndeclared(w, r, ["src/bad\\xffname.txt"]);
  });
});

Deno.test("run undeclared: declared writes (a file, a dir/) are not reported; the rest is", async () => {
  await withWorld("declared", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    const r = await runScript(w, "declared-and-not", ["src/declared.txt", "src/out/"]);
    await assertUndeclared(w, r, ["src/extra.txt"]);
    for (const f of ["src/declared.txt", "src/out/x.txt", "src/out/deep/y.txt", "src/extra.txt"]) {
      assert.ok(exists(join(w.project, f)), f);
    }
    // Declaring everything: exit 0, nothing reported.
    await w.git("clean", "-fdq", "src");
    const ok = await runScript(w, "declared-and-not", [
      "src/declared.txt",
      "src/out/",
      "src/extra.txt",
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    const out = jsonOut(ok);
    assert.equal(out.ok, true);
    assert.deepEqual(out.undeclared_writes, []);
    const rows = newRows(w, ok);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.deepEqual(rows[1].undeclared_writes, []);
    await w.verifyOk();
  });
});

Deno.test("run: control-plane writes fail inside the sandbox and change nothing (hooks, config, .agentteams, ledger)", async () => {
  await withWorld("ctlplane", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    const nonce = await w.sharedNonce();
    const git = join(w.project, ".git");
    const hooksBefore = await snapshotTree(join(git, "hooks"), join(git, "info"));
    const configBefore = bytesOrNull(join(git, "config"));
    const ledgerPath = join(w.project, ".agentteams/proposal-ledger.jsonl");
    const ledgerBefore = bytesOrNull(ledgerPath);
    assert.ok(ledgerBefore !== null);

    const r = await w.run({ argv: [join(w.scripts, "control-plane")] }, {
      nonce,
      flags: ["--json"],
    });
    assert.equal(r.code, 0, r.stderr);
    const out = jsonOut(r);
    assert.equal(out.exit, 0);
    assert.equal(out.stdout, "", `a control-plane write succeeded: ${out.stdout}`);
    assert.match(out.stderr as string, /Read-only file system/);
    assert.deepEqual(out.undeclared_writes, []);

    assertSameTree(hooksBefore, await snapshotTree(join(git, "hooks"), join(git, "info")));
    assert.deepEqual(bytesOrNull(join(git, "config")), configBefore);
    assert.equal(exists(join(w.project, ".git-moved")), false);
    assert.equal(exists(join(w.project, ".agentteams/x")), false);
    // The ledger only grew by the runner's own two rows.
    const ledgerAfter = bytesOrNull(ledgerPath);
    assert.ok(ledgerAfter !== null, "the ledger was deleted");
    assert.deepEqual(ledgerAfter.subarray(0, ledgerBefore.length), ledgerBefore);
    const rows = newRows(w, r);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.deepEqual(rows[1].undeclared_writes, []);
    await w.verifyOk();
  });
});

Deno.test("run: git's hooks dir inside a write root (core.hooksPath) stays read-only, existing or not", async () => {
  await withWorld("hookspath", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    for (
      const [hooksPath, script] of [["src/hooks", "plant-hooks"], [
        "src/newhooks",
        "plant-newhooks",
      ]]
    ) {
      await w.git("config", "core.hooksPath", hooksPath);
      const before = await srcAndGit(w);
      const r = await w.run({ argv: [join(w.scripts, script)] }, { flags: ["--json"] });
      assert.equal(r.code, 0, r.stderr);
      const out = jsonOut(r);
      assert.equal(out.stdout, "", `a hook was planted in ${hooksPath}`);
      assert.match(out.stderr as string, /Read-only file system/);
      assert.deepEqual(out.undeclared_writes, []);
      // Nothing changed below src or in .git (no hook, no mask point left behind), apart from
      // git's own index refresh.
      assertSameTree(before, await srcAndGit(w));
      const rows = newRows(w, r);
      assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    }
    await w.verifyOk();
  });
});

Deno.test("run: git's include targets and excludes file inside a write root are control plane: read-only in the sandbox, never declarable", async () => {
  await withWorld("git-includes", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    // Relative to the including file's directory (.git/): ../src/extra.cfg is src/extra.cfg.
    await w.git("config", "include.path", "../src/extra.cfg");
    await w.git("config", "core.excludesFile", "src/ignore");
    const before = await srcAndGit(w);
    const r = await w.run({ argv: [join(w.scripts, "plant-include")] }, { flags: ["--json"] });
    assert.equal(r.code, 0, r.stderr);
    const out = jsonOut(r);
    assert.equal(out.stdout, "", "a config include or an excludes file was planted");
    // An existing path is bound read-only; a missing one is masked (bwrap's mask point).
    assert.match(out.stderr as string, /Read-only file system|Is a directory/);
    assert.deepEqual(out.undeclared_writes, []);
    assertSameTree(before, await srcAndGit(w));
    // Declaring them is refused before anything runs: no use spent, no start row.
    for (const declared of ["src/extra.cfg", "src/ignore", "src/"]) {
      const refused = await w.run(
        { argv: [join(w.scripts, "plant-include")], expected_writes: [declared] },
        { flags: ["--json"] },
      );
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /refused: WRITES_NOT_ALLOWED: .*control plane/, refused.stderr);
      assert.deepEqual(newRows(w, refused).map((x) => x.action), ["run-request-refused"]);
    }
    assertSameTree(before, await srcAndGit(w));
    await w.verifyOk();
  });
});

Deno.test("run: writes outside the project (HOME, its parent, /tmp, through a symlink in the write root) fail in the sandbox; the private TMPDIR works", async () => {
  await withWorld("outside", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    await w.sharedNonce();
    // A symlink inside the write root leading out of the project.
    await Deno.symlink(w.scratch, join(w.project, "src/out-link"));
    const names = () => [...Deno.readDirSync(w.dir)].map((e) => e.name).sort();
    const namesBefore = names();
    const before = await snapshotTree(w.home, w.scripts, w.keyDir);
    const r = await w.run({ argv: [join(w.scripts, "write-outside")] }, { flags: ["--json"] });
    assert.equal(r.code, 0, r.stderr);
    const out = jsonOut(r);
    assert.equal(out.stdout, "WROTE-PRIVATE-TMPDIR\n");
    assert.match(out.stderr as string, /Read-only file system/);
    assert.deepEqual(out.undeclared_writes, []);
    assertSameTree(before, await snapshotTree(w.home, w.scripts, w.keyDir));
    assert.deepEqual(names(), namesBefore);
    assert.equal(exists(join(w.dir, "outside.txt")), false);
    assert.equal(exists(join(w.scratch, "through.txt")), false);
    // The private TMPDIR is gone after the run; beside where it was, only the write roots' scan
    // and the sandbox probe's answer stay (regular files, the operator's alone, signed:
    // write_root_scan_cache.ts, probe_cache.ts).
    const left = [...Deno.readDirSync(w.tmp)].sort((a, b) => a.name < b.name ? -1 : 1);
    assert.deepEqual(
      left.map((e) => e.name),
      [basename(probeCachePath(w.tmp)), basename(scanCachePath(w.tmp, w.project))].sort(),
    );
    for (const e of left) {
      assert.equal(e.isFile, true);
      assert.equal((Deno.statSync(join(w.tmp, e.name)).mode ?? 0) & 0o777, 0o600);
    }
    await w.verifyOk();
  });
});

Deno.test("run undeclared: a read-only path inside a write root replaced by moving its parent aside (a protected dir, a masked protected file), even where git does not look: exit 3, the guarded paths named", async () => {
  const scripts = {
    "move-aside": shScript(
      [
        "mv src/pkg src/old1 && mkdir -p src/pkg/keep && echo evil > src/pkg/keep/x.txt",
        "mv src/lib src/old2 && mkdir src/lib && echo evil > src/lib/secret.txt",
      ].join("\n"),
    ),
  };
  await withWorld("moveaside", {
    brief: (p) =>
      workerBrief(p, [{ prefix: [join(p.scripts, "move-aside")] }], {
        write: ["src"],
        scopes: ["src/"],
        top: { protected_paths: ["src/pkg/keep", "src/lib/secret.txt"] },
      }),
    scripts,
    // git ignores all of it, so only the guarded paths' own check can see the change.
    files: {
      ".gitignore": "src/pkg/\nsrc/lib/\nsrc/old1/\nsrc/old2/\n",
      "README.md": "hello\n",
    },
  }, async (w) => {
    await Deno.mkdir(join(w.project, "src/pkg/keep"), { recursive: true });
    await Deno.writeTextFile(join(w.project, "src/pkg/keep/x.txt"), "kept\n");
    await Deno.mkdir(join(w.project, "src/lib"), { recursive: true });
    await Deno.writeTextFile(join(w.project, "src/lib/readme.txt"), "lib\n");
    const r = await runScript(w, "move-aside");
    await assertUndeclared(w, r, ["src/lib/secret.txt", "src/pkg/keep"]);
  });
});

Deno.test("run undeclared: an agent-made repository at a submodule's path never gets its filters run by the operator's git status; its .git is reported", async () => {
  await withWorld("submodule", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    // A submodule at src/sub, not checked out (a clone without --recurse-submodules).
    await Deno.writeTextFile(
      join(w.project, ".gitmodules"),
      '[submodule "sub"]\n\tpath = src/sub\n\turl = ./nowhere\n',
    );
    await w.git("update-index", "--add", "--cacheinfo", `160000,${"1".repeat(40)},src/sub`);
    await w.git("add", ".gitmodules");
    await w.git("commit", "-q", "-m", "submodule");
    await Deno.mkdir(join(w.project, "src/sub"));
    const r = await runScript(w, "submodule-filter", ["src/sub"]);
    assert.match(r.stdout, /PLANTED/, r.stderr);
    // The filter never ran: no git of the operator looked inside the submodule.
    assert.equal(await exists(join(w.scratch, "filter-ran")), false, "the agent's filter ran");
    await assertUndeclared(w, r, ["src/sub/.git"]);
    // The submodule's directory replaced by a symlink: git status does not see it either.
    await Deno.remove(join(w.project, "src/sub"), { recursive: true });
    await Deno.mkdir(join(w.project, "src/sub"));
    const swapped = await runScript(w, "submodule-swap", ["src/sub"]);
    assert.match(swapped.stdout, /SWAPPED/, swapped.stderr);
    await assertUndeclared(w, swapped, ["src/sub"]);
  });
});

Deno.test("run undeclared: a new repository or a bare .git under a declared directory is reported (a .git is control plane wherever it lies)", async () => {
  await withWorld("nested-repo", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    const r = await runScript(w, "nested-repo", ["src/out/"]);
    assert.match(r.stdout, /NESTED/, r.stderr);
    await assertUndeclared(w, r, ["src/out/nested/", "src/out/nested/.git"]);
    // A `.git` made in a tracked directory, where git status sees nothing: the after-scan does.
    const g = await runScript(w, "nested-git", ["src/"]);
    assert.match(g.stdout, /PLANTED/, g.stderr);
    await assertUndeclared(w, g, ["src/.git"]);
  });
});

Deno.test("run: a new .github below a declared directory is control plane (never declared); what lies under a read-only path is not new", async () => {
  await withWorld("after-scan-quiet", { brief, scripts: SCRIPTS, files: FILES }, async (w) => {
    // The control plane's names count at any depth (lib/policy/control_plane.ts), as they do for
    // proposals and in the sandbox: a declared directory does not declare a `.github` below it.
    const vendored = await runScript(w, "vendor-github", ["src/vendor/"]);
    assert.match(vendored.stdout, /VENDORED/, vendored.stderr);
    await assertUndeclared(w, vendored, ["src/vendor/pkg/.github/FUNDING.yml"]);
    await Deno.remove(join(w.project, "src/vendor"), { recursive: true });
    // git's hooks dir inside the write root stays read-only; what it already holds (a `.github`
    // among it) is not reported by a run that changes nothing.
    await Deno.mkdir(join(w.project, "src/hooks/.github"), { recursive: true });
    await Deno.writeTextFile(join(w.project, "src/hooks/.github/FUNDING.yml"), "x\n");
    await w.git("add", "src/hooks");
    await w.git("commit", "-q", "-m", "hooks");
    await w.git("config", "core.hooksPath", "src/hooks");
    for (let i = 0; i < 2; i++) {
      const r = await runScript(w, "noop");
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(jsonOut(r).undeclared_writes, []);
    }
    await w.verifyOk();
  });
});
