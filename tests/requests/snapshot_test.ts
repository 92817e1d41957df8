/**
 * Undeclared-write detection against real git repositories and real commands: every change a
 * command can make to the worktree, the control plane or git's behaviour-changing paths is
 * reported; git's own derived files (`info/refs` after `git gc`) are not.
 */

import assert from "node:assert/strict";
import { RequestError } from "../../lib/errors.ts";
import {
  GIT_CALLS_PER_CONTEXT,
  GIT_CALLS_PER_SNAPSHOT,
  type GitContext,
  openGitContext,
} from "../../lib/git/context.ts";
import { runProcess } from "../../lib/process/spawn.ts";
import {
  BLIND_SPOT,
  diffSnapshots,
  startStatus,
  takeSnapshot,
  type WriteCheck,
} from "../../lib/requests/snapshot.ts";
import { RACY_WINDOW_MS, statFingerprint } from "../../lib/requests/watch.ts";
import { declaredMatcher } from "../../lib/requests/writes.ts";
import { cleanup, GIT, sh, tempRepo } from "./_helpers.ts";
import { assertRefusal } from "../_helpers/assert.ts";

interface Checked extends WriteCheck {
  readonly exit: number | null;
  readonly ctx: GitContext;
}

/** Snapshot, run `script` with /bin/sh in `cwd` (default the root), snapshot again, compare. */
async function around(
  root: string,
  env: Record<string, string>,
  script: string,
  declared: readonly string[] = [],
  cwd = root,
): Promise<Checked> {
  const ctx = await openGitContext(root, { git: GIT, parentEnv: env });
  const before = await takeSnapshot(ctx);
  const r = await runProcess({
    program: "/bin/sh",
    args: ["-c", script],
    cwd,
    env,
    timeoutMs: 60_000,
  });
  assert.equal(new TextDecoder().decode(r.stderr), "", "the test command ran cleanly");
  const after = await takeSnapshot(ctx, { previous: before });
  const check = diffSnapshots(before, after, declaredMatcher(declared));
  assert.equal(check.blindSpot, BLIND_SPOT);
  return { ...check, exit: r.exit, ctx };
}

Deno.test("a clean tree costs one git status per snapshot and two calls per context", async () => {
  const { root, env } = await tempRepo();
  try {
    const ctx = await openGitContext(root, { git: GIT, parentEnv: env });
    assert.equal(ctx.counter.calls, GIT_CALLS_PER_CONTEXT);
    assert.equal(GIT_CALLS_PER_CONTEXT, 2, "one rev-parse, one config --list");
    const a = await takeSnapshot(ctx);
    const b = await takeSnapshot(ctx, { previous: a });
    assert.equal(a.gitCalls, GIT_CALLS_PER_SNAPSHOT);
    assert.equal(b.gitCalls, 1);
    assert.equal(a.worktree.size, 0, "nothing hashed on a clean tree");
    assert.equal(ctx.counter.calls, GIT_CALLS_PER_CONTEXT + 2);
    assert.deepEqual(diffSnapshots(a, b, () => false).changed, []);
    const noop = await around(root, env, "true");
    assert.deepEqual(noop.changed, []);
  } finally {
    cleanup(root);
  }
});

Deno.test("tracked edit, untracked file, deletion: reported unless declared", async () => {
  const { root, env } = await tempRepo({
    "README.md": "hello\n",
    "src/a.ts": "a\n",
    "src/b.ts": "b\n",
    "gone.txt": "bye\n",
  });
  try {
    const r = await around(
      root,
      env,
      "echo more >> src/a.ts; echo n > new.txt; mkdir -p out/deep; echo d > out/deep/x.o; " +
        "echo b2 > src/b.ts; rm gone.txt",
      ["out/", "src/b.ts"],
    );
    assert.equal(r.exit, 0);
    assert.deepEqual(r.undeclared, ["gone.txt", "new.txt", "src/a.ts"]);
    assert.deepEqual(r.changed, ["gone.txt", "new.txt", "out/deep/x.o", "src/a.ts", "src/b.ts"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("a same-size rewrite with its mtime restored is caught (tracked, dirty and untracked)", async () => {
  const { root, env } = await tempRepo({ "README.md": "hello\n", "dirty.txt": "one\n" });
  try {
    Deno.writeTextFileSync(`${root}/dirty.txt`, "two\n");
    Deno.writeTextFileSync(`${root}/untracked.txt`, "aaaa\n");
    const mtimes = ["README.md", "dirty.txt", "untracked.txt"].map((f) =>
      Deno.statSync(`${root}/${f}`).mtime?.getTime()
    );
    const rewrite = (f: string, text: string) =>
      `m=$(stat -c %y ${f}); printf '${text}' > ${f}; touch -d "$m" ${f}; `;
    const r = await around(
      root,
      env,
      rewrite("README.md", "HELLO\\n") + rewrite("dirty.txt", "TWO\\n") +
        rewrite("untracked.txt", "bbbb\\n"),
    );
    const after = ["README.md", "dirty.txt", "untracked.txt"].map((f) =>
      Deno.statSync(`${root}/${f}`).mtime?.getTime()
    );
    assert.deepEqual(after, mtimes, "the command really restored every mtime");
    assert.equal(Deno.readTextFileSync(`${root}/README.md`), "HELLO\n");
    assert.deepEqual(r.undeclared, ["README.md", "dirty.txt", "untracked.txt"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("files dirty before the run: untouched ones are quiet, edited ones are reported", async () => {
  const { root, env } = await tempRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  try {
    Deno.writeTextFileSync(`${root}/a.txt`, "a dirty\n");
    Deno.writeTextFileSync(`${root}/b.txt`, "b dirty\n");
    Deno.writeTextFileSync(`${root}/u.txt`, "u\n");
    const r = await around(root, env, "echo again >> b.txt");
    assert.deepEqual(r.undeclared, ["b.txt"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("a change the command commits (clean before and after) is caught through the index", async () => {
  const { root, env } = await tempRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  try {
    const r = await around(
      root,
      env,
      `echo changed > a.txt && ${GIT} add a.txt && ${GIT} commit -q -m sneaky && ${GIT} rm -q --cached b.txt`,
    );
    assert.equal(r.exit, 0);
    const status = await sh(root, GIT, ["status", "--porcelain"], env);
    assert.equal(status, "D  b.txt\n?? b.txt\n", "a.txt is clean again after the commit");
    // a.txt's content changed although git calls it clean; b.txt was only untracked, its bytes
    // are the same, and the check compares content.
    assert.deepEqual(r.undeclared, ["a.txt"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("files git status skips (assume-unchanged, skip-worktree) are still compared", async () => {
  const { root, env, git } = await tempRepo({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
  try {
    await git("update-index", "--assume-unchanged", "a.txt");
    await git("update-index", "--skip-worktree", "b.txt");
    const r = await around(root, env, "echo A > a.txt; echo B > b.txt");
    assert.equal(await git("status", "--porcelain"), "", "git itself sees nothing");
    assert.deepEqual(r.undeclared, ["a.txt", "b.txt"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("a split index is read through git ls-files (one more call) and still compared", async () => {
  const { root, env, git } = await tempRepo({ "a.txt": "a\n" });
  try {
    await git("update-index", "--split-index");
    const ctx = await openGitContext(root, { git: GIT, parentEnv: env });
    const before = await takeSnapshot(ctx);
    assert.equal(before.gitCalls, 2);
    assert.equal(before.index.entries.length, 1);
    await runProcess({
      program: "/bin/sh",
      args: ["-c", `echo b > a.txt && ${GIT} commit -qam x`],
      cwd: root,
      env,
      timeoutMs: 60_000,
    });
    const after = await takeSnapshot(ctx, { previous: before });
    assert.deepEqual(diffSnapshots(before, after, () => false).undeclared, ["a.txt"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("git hooks, config and info are watched; git gc's info/refs is not", async () => {
  const { root, env } = await tempRepo();
  try {
    Deno.mkdirSync(`${root}/.git/hooks`, { recursive: true });
    const r = await around(
      root,
      env,
      "printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; " +
        "printf '[alias]\\n\\tx = !sh\\n' >> .git/config; " +
        "echo secret.txt >> .git/info/exclude; echo 'x filter=evil' > .git/info/attributes; " +
        "echo planted > .git/info/new-file; echo hidden > secret.txt",
    );
    assert.deepEqual(r.undeclared, [
      ".git/config",
      ".git/hooks/pre-commit",
      ".git/info/attributes",
      ".git/info/exclude",
      ".git/info/new-file",
    ]);
    const gc = await around(root, env, `${GIT} gc -q && echo x > .git/info/refs`);
    assert.equal(gc.exit, 0);
    assert.ok(Deno.statSync(`${root}/.git/info/refs`).isFile, "gc really wrote info/refs");
    assert.deepEqual(gc.undeclared, []);
    const bg = await around(root, env, `(${GIT} gc -q --auto &) ; ${GIT} update-server-info`);
    assert.deepEqual(bg.undeclared, []);
  } finally {
    cleanup(root);
  }
});

Deno.test("a hook planted through a linked worktree lands in the shared hooks dir and is caught", async () => {
  const { root, env, git } = await tempRepo();
  const wt = `${root}-wt`;
  try {
    await git("worktree", "add", "-q", wt);
    const r = await around(
      wt,
      env,
      `d=$(${GIT} rev-parse --git-common-dir); mkdir -p "$d/hooks"; ` +
        `printf '#!/bin/sh\\n' > "$d/hooks/post-checkout"; ` +
        `echo '[core]' >> "$(${GIT} rev-parse --git-path config.worktree)"; ` +
        `echo x >> README.md`,
    );
    assert.equal(r.ctx.top, wt);
    assert.ok(r.ctx.watched.hooks.startsWith(`${root}/.git/`), r.ctx.watched.hooks);
    assert.deepEqual(r.undeclared, [
      `${root}/.git/hooks/post-checkout`,
      `${root}/.git/worktrees/${wt.slice(wt.lastIndexOf("/") + 1)}/config.worktree`,
      "README.md",
    ]);
    const gitfile = await around(
      wt,
      env,
      "echo 'gitdir: /elsewhere' > .git.new && mv .git.new .git",
    );
    assert.ok(gitfile.undeclared.includes(".git"), "replacing the .git file is reported");
  } finally {
    Deno.removeSync(wt, { recursive: true });
    cleanup(root);
  }
});

Deno.test("core.hooksPath is watched wherever it points", async () => {
  const { root, env, git } = await tempRepo();
  const hooks = `${root}-hooks`;
  try {
    Deno.mkdirSync(hooks);
    await git("config", "core.hooksPath", hooks);
    const r = await around(root, env, `printf '#!/bin/sh\\n' > '${hooks}/pre-push'`);
    assert.deepEqual(r.undeclared, [`${hooks}/pre-push`]);
  } finally {
    Deno.removeSync(hooks, { recursive: true });
    cleanup(root);
  }
});

Deno.test("a non-UTF-8 file name is reported, rendered with escapes", async () => {
  const { root, env } = await tempRepo();
  try {
    const r = await around(root, env, "printf x > \"$(printf 'bad\\377name')\"");
    assert.deepEqual(r.undeclared, ["bad\\xffname"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("the control plane is watched by stat, even when git ignores it", async () => {
  const { root, env, git } = await tempRepo({ ".gitignore": ".agentteams/\n", "README.md": "r\n" });
  try {
    Deno.mkdirSync(`${root}/.agentteams`);
    Deno.writeTextFileSync(`${root}/.agentteams/proposal-ledger.jsonl`, '{"row": 1}\n');
    Deno.writeTextFileSync(`${root}/.agentteams/proposal-ledger.head`, '{"count": 1}\n');
    Deno.mkdirSync(`${root}/.Claude`);
    Deno.writeTextFileSync(`${root}/.Claude/settings.json`, "{}\n");
    await git("add", ".Claude");
    await git("commit", "-q", "-m", "claude");
    const r = await around(
      root,
      env,
      "rm .agentteams/proposal-ledger.jsonl; " +
        "m=$(stat -c %y .agentteams/proposal-ledger.head); printf '{\"count\": 9}\\n' > .agentteams/proposal-ledger.head; " +
        'touch -d "$m" .agentteams/proposal-ledger.head; ' +
        "mkdir -p sandbox; echo x > sandbox/profile.sb; echo '{\"a\":1}' > .Claude/settings.json",
      [".Claude/settings.json", "sandbox/"],
    );
    assert.deepEqual(r.undeclared, [
      ".Claude/settings.json",
      ".agentteams/proposal-ledger.head",
      ".agentteams/proposal-ledger.jsonl",
      "sandbox",
      "sandbox/profile.sb",
    ]);
  } finally {
    cleanup(root);
  }
});

Deno.test("stat fingerprints differ on ctime, inode or size even with mtime equal", () => {
  const base = {
    isFile: true,
    isDirectory: false,
    isSymlink: false,
    size: 5,
    mtime: new Date(1000),
    ctime: new Date(2000),
    ino: 7,
    mode: 0o100644,
  } as Deno.FileInfo;
  const fp = statFingerprint(base);
  assert.notEqual(statFingerprint({ ...base, ctime: new Date(3000) }), fp);
  assert.notEqual(statFingerprint({ ...base, ino: 8 }), fp);
  assert.notEqual(statFingerprint({ ...base, size: 6 }), fp);
  assert.notEqual(statFingerprint({ ...base, mode: 0o100755 }), fp);
  assert.equal(statFingerprint({ ...base, atime: new Date(9) }), fp, "atime is not compared");
  const dir = { ...base, isFile: false, isDirectory: true };
  assert.equal(
    statFingerprint({ ...dir, mtime: new Date(5000), ctime: new Date(6000) }),
    statFingerprint(dir),
    "a directory's listing changes show as its entries, not as the directory",
  );
});

Deno.test("symlinks are compared by target, never followed", async () => {
  const { root, env, git } = await tempRepo({ "a.txt": "a\n", "b.txt": "b\n" });
  try {
    Deno.symlinkSync("a.txt", `${root}/link`);
    await git("add", "link");
    await git("commit", "-q", "-m", "link");
    const r = await around(root, env, "ln -sfn b.txt link; ln -s /etc/passwd newlink; mkfifo fifo");
    assert.deepEqual(r.undeclared, ["link", "newlink"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("a project in a subdirectory sees only its own paths, relative to itself", async () => {
  const { root, env } = await tempRepo({ "top.txt": "t\n", "sub/in.txt": "i\n" });
  try {
    const r = await around(
      `${root}/sub`,
      env,
      "echo x >> in.txt; echo y > new.txt; echo z >> ../top.txt; echo '#!/bin/sh' > ../.git/hooks/pre-push",
    );
    assert.equal(r.ctx.prefix, "sub/");
    assert.deepEqual(r.undeclared, [`${root}/.git/hooks/pre-push`, "in.txt", "new.txt"]);
  } finally {
    cleanup(root);
  }
});

Deno.test("git runs inert: no fsmonitor hook, no index refresh, parent GIT_* ignored", async () => {
  const { root, env, git } = await tempRepo({ "a.txt": "a\n" });
  const other = await tempRepo({ "other.txt": "o\n" });
  try {
    const marker = `${root}-fsmonitor-ran`;
    const hook = `${root}-fsmonitor.sh`;
    Deno.writeTextFileSync(hook, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
    Deno.chmodSync(hook, 0o755);
    await git("config", "core.fsmonitor", hook);
    const hostile = {
      ...env,
      GIT_DIR: `${other.root}/.git`,
      GIT_WORK_TREE: other.root,
      GIT_INDEX_FILE: `${other.root}/.git/index`,
      GIT_CONFIG_PARAMETERS: "'core.fsmonitor'='" + hook + "'",
    };
    Deno.utimeSync(`${root}/a.txt`, new Date(), new Date(Date.now() + 5000));
    const indexBefore = Deno.readFileSync(`${root}/.git/index`);
    const ctx = await openGitContext(root, { git: GIT, parentEnv: hostile });
    assert.equal(ctx.top, root);
    const snap = await takeSnapshot(ctx);
    assert.throws(() => Deno.statSync(marker), Deno.errors.NotFound, "fsmonitor hook never ran");
    assert.deepEqual(Deno.readFileSync(`${root}/.git/index`), indexBefore, "index not rewritten");
    assert.equal(snap.worktree.size, 0, "a stat-only change is clean");
    // Control: plain git with the same config does run the hook.
    await sh(root, GIT, ["status", "--porcelain"], env);
    assert.ok(Deno.statSync(marker).isFile, "the control run shows the hook would have run");
  } finally {
    cleanup(other.root);
    cleanup(root);
  }
});

Deno.test("no worktree, a bare repository, or a git too old: refused before anything runs", async () => {
  const plain = Deno.realPathSync(await Deno.makeTempDir({ prefix: "at-nogit-" }));
  try {
    const env = { PATH: "/usr/bin:/bin", HOME: plain };
    await assertRefusal(
      () => openGitContext(plain, { git: GIT, parentEnv: env }),
      "NO_WORKTREE",
      RequestError,
    );
    await sh(plain, GIT, ["init", "-q", "--bare", "bare.git"], env);
    await assertRefusal(
      () => openGitContext(`${plain}/bare.git`, { git: GIT, parentEnv: env }),
      "NO_WORKTREE",
      RequestError,
    );
    const log = `${plain}/calls.log`;
    for (const [name, version] of [["old", "git version 2.30.1"], ["odd", "hub version 2.14.2"]]) {
      const fake = `${plain}/${name}-git`;
      Deno.writeTextFileSync(fake, `#!/bin/sh\necho "$@" >> '${log}'\necho '${version}'\n`);
      Deno.chmodSync(fake, 0o755);
      await assertRefusal(
        () => openGitContext(plain, { git: fake, parentEnv: env }),
        "GIT_UNAVAILABLE",
        RequestError,
      );
    }
    // The read-only rev-parse and the config listing (started together: listing config runs
    // nothing), then the version to explain rev-parse's refused answer; nothing else is ever
    // asked of a git that is too old or unrecognised, and what it listed is never read (the
    // refusal is the version's).
    const calls = Deno.readTextFileSync(log).trim().split("\n");
    assert.equal(calls.filter((c) => c === "--version").length, 2, "the version was asked");
    assert.equal(calls.length, 6, `three calls each: ${calls.join(" | ")}`);
    assert.ok(
      calls.every((c) =>
        c === "--version" || c === "config --list --show-origin -z" ||
        c.includes(" rev-parse --path-format=absolute ")
      ),
      `only the version, rev-parse and the config listing were asked: ${calls.join(" | ")}`,
    );
    await assertRefusal(
      () => openGitContext(plain, { parentEnv: { PATH: plain, HOME: plain } }),
      "GIT_UNAVAILABLE",
      RequestError,
      "no git on the sanitized PATH",
    );
  } finally {
    Deno.removeSync(plain, { recursive: true });
  }
});

Deno.test("a git that answers rev-parse as git 2.30 does (the flag echoed back) is refused by its version", async () => {
  const { root, env } = await tempRepo();
  try {
    // Git before 2.31 prints an option it does not know, `--path-format=absolute`, as a line of
    // its own and then answers the rest with paths that may be relative. This script does exactly
    // that around the real git, so only the shape of the answer tells the two apart.
    const fake = `${root.slice(0, root.lastIndexOf("/"))}/old-shape-git`;
    for (
      const [claims, why] of [["2.30.2", /older than 2\.31/], [
        "2.45.0",
        /cannot read git's paths/,
      ]] as const
    ) {
      Deno.writeTextFileSync(
        fake,
        `#!/bin/sh
case "$*" in
  *--version*) echo 'git version ${claims}'; exit 0;;
esac
echo '--path-format=absolute'
args=''
for a in "$@"; do [ "$a" = --path-format=absolute ] || args="$args '$a'"; done
eval exec '${GIT}' "$args"
`,
      );
      Deno.chmodSync(fake, 0o755);
      const e = await assertRefusal(
        () => openGitContext(root, { git: fake, parentEnv: env }),
        "GIT_UNAVAILABLE",
        RequestError,
        `claiming ${claims}`,
      );
      assert.match(e.message, why, `claiming ${claims}`);
    }
    // The same script without the echo is accepted: the refusal came from the shape alone.
    Deno.writeTextFileSync(fake, `#!/bin/sh\nexec '${GIT}' "$@"\n`);
    const ctx = await openGitContext(root, { git: fake, parentEnv: env });
    assert.equal(ctx.counter.calls, GIT_CALLS_PER_CONTEXT);
  } finally {
    cleanup(root);
  }
});

Deno.test("a status started before the caller writes its state compares the control plane through the watch only", async () => {
  const { root, env } = await tempRepo();
  try {
    const ctx = await openGitContext(root, { git: GIT, parentEnv: env });
    // The run's order: status first, then the ledger rows (here: a new .agentteams/), then the
    // snapshot's watch.
    const status = startStatus(ctx);
    Deno.mkdirSync(`${root}/.agentteams`);
    Deno.writeTextFileSync(`${root}/.agentteams/proposal-ledger.jsonl`, "start row\n");
    const before = await takeSnapshot(ctx, { status });
    assert.equal(before.gitCalls, 0, "the started status is used, not a second one");
    const quiet = await takeSnapshot(ctx, { previous: before });
    assert.deepEqual(diffSnapshots(before, quiet, () => true).changed, []);
    // A change there after the watch read it is still caught (and never declarable).
    Deno.writeTextFileSync(`${root}/.agentteams/proposal-ledger.jsonl`, "start row\nforged\n");
    const after = await takeSnapshot(ctx, { previous: before });
    const check = diffSnapshots(before, after, () => true);
    assert.deepEqual(check.undeclared, [".agentteams/proposal-ledger.jsonl"]);
  } finally {
    await cleanup(root);
  }
});

/** Waits until the file at `path` last changed before the racy window of a snapshot taken now. */
async function untilOutOfRacyWindow(path: string): Promise<void> {
  const st = Deno.statSync(path);
  const changed = Math.max(st.mtime?.getTime() ?? 0, st.ctime?.getTime() ?? 0);
  while (Math.floor(Date.now() / 1000) * 1000 - RACY_WINDOW_MS < changed) {
    await new Promise((res) => setTimeout(res, 100));
  }
}

Deno.test("an index unchanged since the last snapshot is reused; one rewritten in place (same inode, size and mtime) is read again", async () => {
  const { root, env } = await tempRepo();
  try {
    // A staged edit first, so that staging the next one leaves the index the same size (its
    // cached tree is already invalid).
    Deno.writeTextFileSync(`${root}/src/a.ts`, "export const a = 0;\n");
    await sh(root, GIT, ["add", "src/a.ts"], env);
    const ctx = await openGitContext(root, { git: GIT, parentEnv: env });
    await untilOutOfRacyWindow(ctx.indexPath);
    const before = await takeSnapshot(ctx);
    const quiet = await takeSnapshot(ctx, { previous: before });
    assert.equal(quiet.index.source, before.index.source, "the old index was reused");
    assert.deepEqual(diffSnapshots(before, quiet, () => false).changed, []);
    // The command edits a tracked file and stages it, then puts the new index's bytes into the
    // old index's inode and gives it back the old mtime: only the ctime tells them apart.
    const old = Deno.statSync(ctx.indexPath);
    const mtime = (old.mtime?.getTime() ?? 0) / 1000;
    const r = await runProcess({
      program: "/bin/sh",
      args: [
        "-c",
        `ln .git/index .git/old-index && printf 'export const a = 2;\\n' > src/a.ts && ` +
        `'${GIT}' add src/a.ts && cat .git/index > .git/old-index && ` +
        `mv .git/old-index .git/index && touch -m -d @${mtime} .git/index`,
      ],
      cwd: root,
      env,
      timeoutMs: 60_000,
    });
    assert.equal(new TextDecoder().decode(r.stderr), "");
    const now = Deno.statSync(ctx.indexPath);
    assert.deepEqual(
      [now.ino, now.size, now.mtime?.getTime()],
      [old.ino, old.size, old.mtime?.getTime()],
      "the rewrite kept inode, size and mtime",
    );
    const after = await takeSnapshot(ctx, { previous: before });
    assert.notEqual(after.index.source, before.index.source, "the index was read again");
    const check = diffSnapshots(before, after, () => false);
    assert.deepEqual(check.undeclared, ["src/a.ts"]);
  } finally {
    cleanup(root);
  }
});
