/**
 * `agentteams apply` refuses by what is on disk, through the real CLI: a symlinked parent that
 * points into `.git` or outside the project (SYMLINK_ESCAPE), a target that is a symlink, a
 * dangling symlink, a directory, a FIFO (without hanging) or a device (TARGET_NOT_FILE), a
 * non-UTF-8 target, content over the 256 KiB cap (and exactly the cap passes), a stale base,
 * `absent` for an existing file, deletions of missing files; and names the kernel cannot take
 * (a segment over NAME_MAX, a path over PATH_MAX, a lone surrogate), which must be refused
 * (PATH_INVALID) with a ledger row, never half-applied. Hard links to files outside the project
 * or in `.git` are replaced, never written through.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  applyFile,
  assertApplied,
  assertOnlyChanged,
  before,
  change,
  deletion,
  dispatch,
  exists,
  expectRefusal,
  fileSha,
  ledgerRows,
  makeProject,
  type Project,
  sha256,
  snapshot,
  withProject,
  writeArtifact,
} from "./_helpers.ts";

const BRIEF = `{
  "agent_policies": { "worker": { "write_scopes": ["src/"] } }
}
`;

const BIN = new Uint8Array([0x80, 0xff, 0xfe, 0x00, 0x41, 0xc3]);

async function run(cmd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  assert.equal(out.code, 0, `${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

/** The project, with the hostile entries created after the commit. */
async function setup(prefix: string): Promise<Project> {
  const p = await makeProject(prefix, {
    brief: BRIEF,
    files: {
      "src/a.txt": "hello\n",
      "src/bin.dat": BIN,
      "src/dir/inner.txt": "inner\n",
      "src/old.txt": "old\n",
    },
  });
  await Deno.writeTextFile(join(p.outside, "victim.txt"), "victim\n");
  await Deno.mkdir(join(p.outside, "sub"));
  await Deno.symlink("../.git/hooks", join(p.root, "src/hooks"));
  await Deno.symlink(p.outside, join(p.root, "src/out"));
  await Deno.symlink("a.txt", join(p.root, "src/link.txt"));
  await Deno.symlink(join(p.outside, "victim.txt"), join(p.root, "src/outlink.txt"));
  await Deno.symlink(join(p.outside, "planted.txt"), join(p.root, "src/dangling.txt"));
  await run("mkfifo", "-m", "644", join(p.root, "src/fifo"));
  await run("mknod", "-m", "666", join(p.root, "src/null"), "c", "1", "3");
  return p;
}

Deno.test("apply refuses symlinked parents, link targets and non-files (each its own case)", async (t) => {
  await withProject(setup("links"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const hookSample = join(p.root, ".git/hooks/pre-commit.sample");
    const victim = sha256("victim\n");
    const hello = sha256("hello\n");
    const exp = { agent: "worker", attempts: 1 } as const;

    await t.step(
      "src/hooks -> ../.git/hooks: a new src/hooks/pre-commit (SYMLINK_ESCAPE)",
      async () => {
        await expectRefusal(
          p,
          change(nonce, "src/hooks/pre-commit", "#!/bin/sh\necho pwned\n"),
          "SYMLINK_ESCAPE",
          exp,
        );
        assert.equal(await exists(join(p.root, ".git/hooks/pre-commit")), false);
      },
    );
    await t.step(
      "src/hooks -> ../.git/hooks: overwrite an existing hook file (SYMLINK_ESCAPE)",
      async () => {
        await expectRefusal(
          p,
          change(nonce, "src/hooks/pre-commit.sample", "pwned\n", await fileSha(hookSample)),
          "SYMLINK_ESCAPE",
          exp,
        );
      },
    );
    await t.step("src/hooks -> ../.git/hooks: delete a hook file (SYMLINK_ESCAPE)", async () => {
      await expectRefusal(
        p,
        deletion(nonce, "src/hooks/pre-commit.sample", await fileSha(hookSample)),
        "SYMLINK_ESCAPE",
        exp,
      );
    });
    await t.step("src/out -> outside: overwrite outside/victim.txt (SYMLINK_ESCAPE)", async () => {
      await expectRefusal(
        p,
        change(nonce, "src/out/victim.txt", "pwned\n", victim),
        "SYMLINK_ESCAPE",
        exp,
      );
    });
    await t.step("src/out -> outside: a new file outside (SYMLINK_ESCAPE)", async () => {
      await expectRefusal(p, change(nonce, "src/out/new.txt", "pwned\n"), "SYMLINK_ESCAPE", exp);
      assert.equal(await exists(join(p.outside, "new.txt")), false);
    });
    await t.step(
      "src/out -> outside: a new file in a new directory below it (SYMLINK_ESCAPE)",
      async () => {
        await expectRefusal(
          p,
          change(nonce, "src/out/sub/new/x.txt", "pwned\n"),
          "SYMLINK_ESCAPE",
          exp,
        );
        assert.equal(await exists(join(p.outside, "sub/new")), false);
      },
    );
    await t.step("src/out -> outside: delete outside/victim.txt (SYMLINK_ESCAPE)", async () => {
      await expectRefusal(p, deletion(nonce, "src/out/victim.txt", victim), "SYMLINK_ESCAPE", exp);
    });
    await t.step("a parent that is a regular file: src/a.txt/x (SYMLINK_ESCAPE)", async () => {
      await expectRefusal(p, change(nonce, "src/a.txt/x", "x\n"), "SYMLINK_ESCAPE", exp);
    });
    await t.step("the target is a symlink inside the project (TARGET_NOT_FILE)", async () => {
      await expectRefusal(
        p,
        change(nonce, "src/link.txt", "pwned\n", hello),
        "TARGET_NOT_FILE",
        exp,
      );
    });
    await t.step("the target is a symlink to a file outside (TARGET_NOT_FILE)", async () => {
      await expectRefusal(
        p,
        change(nonce, "src/outlink.txt", "pwned\n", victim),
        "TARGET_NOT_FILE",
        exp,
      );
    });
    await t.step("the target is a symlink, deleted (TARGET_NOT_FILE)", async () => {
      await expectRefusal(p, deletion(nonce, "src/outlink.txt", victim), "TARGET_NOT_FILE", exp);
    });
    await t.step("the target is a dangling symlink, base absent (TARGET_NOT_FILE)", async () => {
      await expectRefusal(p, change(nonce, "src/dangling.txt", "pwned\n"), "TARGET_NOT_FILE", exp);
      assert.equal(await exists(join(p.outside, "planted.txt")), false);
    });
    await t.step("the target is a directory (TARGET_NOT_FILE)", async () => {
      await expectRefusal(p, change(nonce, "src/dir", "x\n"), "TARGET_NOT_FILE", exp);
    });
    await t.step("a deletion of a directory (TARGET_NOT_FILE)", async () => {
      await expectRefusal(p, deletion(nonce, "src/dir", sha256("")), "TARGET_NOT_FILE", exp);
    });
    await t.step("the target is a FIFO: refused without hanging (TARGET_NOT_FILE)", async () => {
      for (const base of ["absent", sha256("")]) {
        await expectRefusal(p, change(nonce, "src/fifo", "x\n", base), "TARGET_NOT_FILE", {
          ...exp,
          hangGuardMs: 60_000,
        });
      }
    });
    await t.step("the target is a character device (TARGET_NOT_FILE)", async () => {
      await expectRefusal(p, change(nonce, "src/null", "x\n", sha256("")), "TARGET_NOT_FILE", {
        ...exp,
        hangGuardMs: 60_000,
      });
    });
    await t.step("the target is not UTF-8 (TARGET_NOT_UTF8)", async () => {
      await expectRefusal(
        p,
        change(nonce, "src/bin.dat", "text\n", sha256(BIN)),
        "TARGET_NOT_UTF8",
        exp,
      );
    });
  });
});

Deno.test("apply refuses stale bases, oversized content and missing deletions", async (t) => {
  await withProject(setup("base"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const exp = { agent: "worker", attempts: 1 } as const;
    await t.step("a stale base (STALE_BASE), the current hash not named", async () => {
      const { run, row } = await expectRefusal(
        p,
        change(nonce, "src/a.txt", "new\n", sha256("hello, older\n")),
        "STALE_BASE",
        exp,
      );
      // In a race the walk can read another file than the target: its hash must not leak.
      const current = sha256(await Deno.readTextFile(join(p.root, "src/a.txt"))).slice(0, 12);
      assert.ok(!run.stderr.includes(current), run.stderr);
      assert.ok(!String(row?.reason).includes(current), String(row?.reason));
    });
    await t.step("`absent` for an existing file (STALE_BASE)", async () => {
      await expectRefusal(p, change(nonce, "src/a.txt", "new\n"), "STALE_BASE", exp);
    });
    await t.step("a hash base for a file that does not exist (STALE_BASE)", async () => {
      await expectRefusal(
        p,
        change(nonce, "src/missing.txt", "new\n", sha256("x")),
        "STALE_BASE",
        exp,
      );
    });
    await t.step("a deletion of a missing file (STALE_BASE)", async () => {
      await expectRefusal(p, deletion(nonce, "src/missing.txt", sha256("x")), "STALE_BASE", exp);
    });
    await t.step("a deletion in a missing directory (STALE_BASE)", async () => {
      await expectRefusal(p, deletion(nonce, "src/nodir/x.txt", sha256("x")), "STALE_BASE", exp);
    });
    await t.step("a deletion with a stale base (STALE_BASE)", async () => {
      await expectRefusal(p, deletion(nonce, "src/old.txt", sha256("older\n")), "STALE_BASE", exp);
    });
    await t.step("content of 256 KiB + 1 byte (CONTENT_TOO_LARGE)", async () => {
      await expectRefusal(
        p,
        change(nonce, "src/big.txt", "a".repeat(256 * 1024 + 1)),
        "CONTENT_TOO_LARGE",
        exp,
      );
    });
    await t.step(
      "content under the cap in characters but over it in UTF-8 bytes (CONTENT_TOO_LARGE)",
      async () => {
        // 131073 two-byte characters: 262146 bytes.
        await expectRefusal(
          p,
          change(nonce, "src/big.txt", "\u00e9".repeat(131073)),
          "CONTENT_TOO_LARGE",
          exp,
        );
      },
    );
    await t.step("content with a lone surrogate (CONTENT_NOT_UTF8)", async () => {
      const raw = `{"kind": "change-proposal", "dispatch": "${nonce}", "path": "src/s.txt", ` +
        `"base_sha256": "absent", "content": "a\\ud800b", "rationale": "r"}`;
      await expectRefusal(p, raw, "CONTENT_NOT_UTF8", exp);
    });
    await t.step("content of exactly 256 KiB is written", async () => {
      const content = "b".repeat(256 * 1024 - 1) + "\n";
      const b = await before(p);
      const file = await writeArtifact(p, change(nonce, "src/big.txt", content));
      const out = assertApplied(await applyFile(p, file));
      assert.equal(out.written, true);
      assert.equal(out.new_sha256, sha256(content));
      assert.equal(await fileSha(join(p.root, "src/big.txt")), sha256(content));
      const rows = await ledgerRows(p.root);
      assert.equal(rows.length, b.ledger.length + 1);
      assert.equal(rows[rows.length - 1].action, "apply-proposal");
      assert.equal(rows[rows.length - 1].bytes, 256 * 1024);
    });
  });
});

Deno.test("hard links to files outside the project or in .git are replaced, never written through", async () => {
  await withProject(setup("hardlink"), async (p) => {
    const nonce = await dispatch(p, "worker");
    await Deno.link(join(p.outside, "victim.txt"), join(p.root, "src/hl-out.txt"));
    await Deno.link(join(p.root, ".git/config"), join(p.root, "src/hl-git.txt"));
    const gitConfig = await Deno.readFile(join(p.root, ".git/config"));
    for (
      const [rel, base] of [["src/hl-out.txt", sha256("victim\n")], [
        "src/hl-git.txt",
        sha256(gitConfig),
      ]]
    ) {
      const b = await before(p);
      const out = assertApplied(
        await applyFile(p, await writeArtifact(p, change(nonce, rel, "agent text\n", base))),
      );
      assert.equal(out.written, true);
      assert.equal(await Deno.readTextFile(join(p.root, rel)), "agent text\n");
      // Only the proposal's own name and the ledger state changed: the other link keeps its bytes.
      const s = join(p.root, ".agentteams");
      assertOnlyChanged(
        b.tree,
        await snapshot(p),
        new Set([
          join(p.root, rel),
          join(s, "proposal-ledger.jsonl"),
          join(s, "proposal-ledger.head"),
          join(s, "anchors.json"),
          join(s, "dispatches.jsonl"),
        ]),
      );
    }
    assert.equal(await Deno.readTextFile(join(p.outside, "victim.txt")), "victim\n");
    assert.deepEqual(await Deno.readFile(join(p.root, ".git/config")), gitConfig);
    assert.equal((await Deno.lstat(join(p.outside, "victim.txt"))).nlink, 1);
  });
});

Deno.test("names the kernel or the ledger cannot take are refused with a typed code and a row", async (t) => {
  await withProject(setup("names"), async (p) => {
    const nonce = await dispatch(p, "worker");
    const exp = { agent: "worker", attempts: 1 } as const;
    await t.step("a path segment longer than NAME_MAX", async () => {
      await expectRefusal(p, change(nonce, "src/" + "n".repeat(300), "x\n"), "PATH_INVALID", exp);
    });
    await t.step(
      "a path longer than PATH_MAX below the root is refused, not half-applied",
      async () => {
        // 2040 new directories: every check passes on a first look (the first one is simply
        // missing), so an implementation that meets the limit only while creating them leaves
        // directories behind and a write-ahead `apply-proposal` row for a write that never happened.
        try {
          await expectRefusal(
            p,
            change(nonce, "src/" + "d/".repeat(2040) + "x", "x\n"),
            "PATH_INVALID",
            exp,
          );
          assert.equal(await exists(join(p.root, "src/d")), false, "directories were left behind");
        } finally {
          // Whatever happened, later steps should not walk 2040 levels in every snapshot.
          await Deno.remove(join(p.root, "src/d"), { recursive: true }).catch(() => {});
        }
      },
    );
    await t.step("a path with a lone surrogate is refused before any use", async () => {
      // A lone surrogate has no UTF-8 form: the file system would see U+FFFD (another name than
      // the one checked), and the ledger cannot encode the row canonically.
      await expectRefusal(
        p,
        `{"kind": "change-proposal", "dispatch": "${nonce}", "path": "src/\\ud800.txt", ` +
          `"base_sha256": "absent", "content": "x", "rationale": "r"}`,
        "PATH_INVALID",
        exp,
      );
    });
    await t.step("a rationale with a lone surrogate is refused before any use", async () => {
      await expectRefusal(
        p,
        `{"kind": "change-proposal", "dispatch": "${nonce}", "path": "src/r.txt", ` +
          `"base_sha256": "absent", "content": "x", "rationale": "why \\udc00"}`,
        "ARTIFACT_INVALID",
        exp,
      );
    });
  });
});
