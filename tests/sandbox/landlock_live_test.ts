/**
 * The exec allowlist, live: real bwrap, the kernel's Landlock (the probe must find it: a machine
 * without it fails these tests, never skips them). A program the entry does not declare is
 * refused whichever way it is reached: on the read-only system paths, written by the command
 * into its write root, or `exec`ed by a declared interpreter; a declared one runs, also through a
 * link into an exec path. Bad input: a link inside an exec directory to an undeclared program,
 * an exec path that is a link (retargeted after the plan), a write root swapped for a link where
 * bwrap binds by path (0.6 to 0.9). And the 0.6/0.7 shape: without `--disable-userns` the
 * seccomp filter refuses a nested user namespace, with a control that makes one.
 */

import assert from "node:assert/strict";
import { SandboxError } from "../../lib/errors.ts";
import {
  bwrapArgv,
  confineArgv,
  makePrivateTmpdir,
  removeMaskPoints,
  removePrivateTmpdir,
} from "../../lib/sandbox/mod.ts";
import { loaderCandidates, type SandboxHost } from "../../lib/sandbox/mod.ts";
import { guardedArgv } from "../../lib/sandbox/exec_guard.ts";
import { commandFilter } from "../../lib/sandbox/seccomp.ts";
import {
  type Fixture,
  lexists,
  makeFixture,
  outsideRoots,
  planFor,
  requireProgram,
  runConfined,
  type RunOptions,
  sh,
  spawnCommand,
  TEST_BWRAP,
  TEST_PROGRAMS,
  testHost,
} from "./_helpers.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";

/** The host as probed; these tests need Landlock and say so when it is missing. */
function host(): SandboxHost {
  requireProgram(TEST_BWRAP);
  requireProgram("/usr/bin/perl");
  const h = testHost();
  if (h.landlock.abi < 1) {
    throw new Error(`these tests need the kernel's Landlock: ${h.landlock.reason}`);
  }
  return h;
}

const SH = "/usr/bin/dash"; // /bin/sh's real program here
const PERL = "/usr/bin/perl";

/** A fixture with `tools/` (outside the project) set up first; nothing outside the roots changes. */
async function withTools(
  setup: (fx: Fixture, tools: string) => void,
  body: (fx: Fixture, tools: string) => Promise<void>,
  remade: readonly string[] = [],
): Promise<void> {
  const fx = makeFixture();
  try {
    const tools = `${fx.base}/tools`;
    Deno.mkdirSync(tools);
    setup(fx, tools);
    // Leaves out what the test itself removes and makes again (its identity changes).
    const roots = outsideRoots(fx);
    const skip = (p: string) => roots(p) || remade.some((r) => p === `${fx.base}/${r}`);
    const before = snapshotTreeSync(fx.base, skip);
    await body(fx, tools);
    assertSameTree(before, snapshotTreeSync(fx.base, skip));
  } finally {
    fx.cleanup();
  }
}

function withExec(exec: string[], h: SandboxHost, more: RunOptions = {}): RunOptions {
  return { ...more, extra: { host: h, agent: { exec, write: ["build"] }, ...more.extra } };
}

Deno.test("landlock live: a declared program runs; an undeclared one on the read-only system paths is refused (EACCES); without Landlock the same run reaches it", async () => {
  const h = host();
  await withTools(() => {}, async (fx) => {
    const r = await runConfined(
      fx,
      sh("/usr/bin/id -u && /usr/bin/ls / >/dev/null && echo listed; echo rc=$?"),
      withExec([SH, "/usr/bin/id"], h),
    );
    assert.equal(r.plan.execAllowlist?.kind, "landlock");
    assert.match(r.stdout, /^[0-9]+\nrc=126\n$/, r.stdout + r.stderr);
    assert.match(r.stderr, /\/usr\/bin\/ls: Permission denied/);
    // Control: the kernel without Landlock (the probe's answer), the same entry: ls runs.
    const off = await runConfined(
      fx,
      sh("/usr/bin/ls / >/dev/null && echo listed"),
      withExec([SH, "/usr/bin/id"], { ...h, landlock: { abi: 0, reason: "simulated" } }),
    );
    assert.deepEqual(off.plan.execAllowlist, { kind: "top-level-only", reason: "simulated" });
    assert.equal(off.stdout, "listed\n", off.stderr);
  });
});

Deno.test("landlock live: a program the command writes into its write root (an ELF copy, a #! script) is refused, and runs nothing", async () => {
  const h = host();
  await withTools(() => {}, async (fx) => {
    const copy = "open(my $i, '<', '/usr/bin/id') or die; binmode $i; local $/; my $b = <$i>; " +
      "open(my $o, '>', 'build/myid') or die; print $o $b; close $o; chmod 0755, 'build/myid'; " +
      "open(my $s, '>', 'build/run.sh') or die; print $s \"#!/bin/sh\\necho ran > build/marker\\n\"; " +
      "close $s; chmod 0755, 'build/run.sh';";
    const r = await runConfined(
      fx,
      sh(`${PERL} -e "$1" && ./build/myid; echo id=$?; ./build/run.sh; echo sh=$?`).concat([
        "x",
        copy,
      ]),
      withExec([SH, PERL], h),
    );
    assert.equal(r.stdout, "id=126\nsh=126\n", r.stderr);
    assert.match(r.stderr, /build\/myid: Permission denied/);
    assert.match(r.stderr, /build\/run\.sh: Permission denied/);
    assert.ok(
      Deno.statSync(`${fx.project}/build/myid`).isFile,
      "the copy was written (the test is real)",
    );
    assert.throws(() => Deno.statSync(`${fx.project}/build/marker`), Deno.errors.NotFound);
  });
});

Deno.test("landlock live: a declared interpreter's exec of an undeclared program is refused (perl exec, sh exec)", async () => {
  const h = host();
  await withTools(() => {}, async (fx) => {
    const r = await runConfined(
      fx,
      [PERL, "-e", 'exec("/usr/bin/id") or print "refused: $!\\n"; print "after\\n";'],
      withExec([PERL], h),
    );
    assert.equal(r.stdout, "refused: Permission denied\nafter\n", r.stderr);
    const s = await runConfined(fx, sh("exec /usr/bin/uname"), withExec([SH], h));
    assert.equal(s.code, 126, s.stderr);
    assert.equal(s.stdout, "");
    // The declared one, exec'd the same way, runs.
    const ok = await runConfined(
      fx,
      [PERL, "-e", 'exec("/usr/bin/id", "-u") or print "refused: $!\\n";'],
      withExec([PERL, "/usr/bin/id"], h),
    );
    assert.match(ok.stdout, /^[0-9]+\n$/, ok.stderr);
  });
});

Deno.test("landlock live: a program path that is a link into an exec path runs; a link inside an exec directory to an undeclared program is refused", async () => {
  const h = host();
  await withTools((fx, tools) => {
    Deno.copyFileSync("/usr/bin/true", `${tools}/mytool`);
    Deno.chmodSync(`${tools}/mytool`, 0o755);
    Deno.symlinkSync("/usr/bin/id", `${tools}/evil`);
    Deno.symlinkSync(`${tools}/mytool`, `${fx.project}/build/toollink`);
  }, async (fx, tools) => {
    // argv[0] through a link in the write root: its real path lies in the exec directory.
    const r = await runConfined(fx, [`${fx.project}/build/toollink`], withExec([tools], h));
    assert.equal(r.code, 0, r.stderr);
    const s = await runConfined(
      fx,
      sh(`${tools}/mytool && echo tool-ran; ${tools}/evil; echo evil=$?`),
      withExec([SH, tools], h),
    );
    assert.equal(s.stdout, "tool-ran\nevil=126\n", s.stderr);
    assert.match(s.stderr, /evil: Permission denied/);
  });
});

Deno.test("landlock live: an exec path that is a link is allowed at its target as planned; retargeted after the plan, it widens nothing", async () => {
  const h = host();
  await withTools((fx, tools) => {
    Deno.copyFileSync("/usr/bin/true", `${tools}/mytool`);
    Deno.chmodSync(`${tools}/mytool`, 0o755);
    Deno.mkdirSync(`${fx.base}/other`);
    Deno.copyFileSync("/usr/bin/true", `${fx.base}/other/othertool`);
    Deno.chmodSync(`${fx.base}/other/othertool`, 0o755);
    Deno.symlinkSync(tools, `${fx.base}/toolslink`);
  }, async (fx, tools) => {
    const link = `${fx.base}/toolslink`;
    const tmpdir = makePrivateTmpdir();
    try {
      const plan = planFor(
        fx,
        sh(`${link}/mytool && echo via-link; ${link}/othertool; echo o=$?`),
        tmpdir,
        {
          extra: { host: h, agent: { exec: [SH, link], write: ["build"] } },
        },
      );
      const rules = plan.execAllowlist?.kind === "landlock" ? plan.execAllowlist.rules : [];
      assert.ok(rules.some((r) => r.path === tools), "the rule names the link's target");
      assert.ok(!rules.some((r) => r.path === link));
      const first = await spawnCommand(confineArgv(plan, "bwrap", TEST_PROGRAMS));
      assert.equal(first.stdout, "via-link\no=127\n", first.stderr);
      // The link now points at a directory the plan never allowed.
      Deno.removeSync(link);
      Deno.symlinkSync(`${fx.base}/other`, link);
      const second = await spawnCommand(confineArgv(plan, "bwrap", TEST_PROGRAMS));
      assert.equal(second.stdout, "o=126\n", second.stderr);
      assert.match(second.stderr, /othertool: Permission denied/);
      removeMaskPoints(plan);
    } finally {
      removePrivateTmpdir(tmpdir);
    }
  }, ["toolslink"]);
});

Deno.test("bwrap without --bind-fd (0.6 to 0.9): a write root swapped for a link after the plan is refused inside the sandbox before the command runs, nothing written", async () => {
  const h = host();
  await withTools((fx) => {
    // The link's target holds what the plan binds read-only below the root (its nested .GIT).
    Deno.mkdirSync(`${fx.base}/elsewhere/sub/.GIT`, { recursive: true });
    Deno.writeTextFileSync(`${fx.base}/elsewhere/sub/.GIT/config`, "");
  }, async (fx) => {
    const tmpdir = makePrivateTmpdir();
    const build = `${fx.project}/build`;
    try {
      const old: SandboxHost = { ...h, bwrap: { ...h.bwrap, bindFd: false } };
      const plan = planFor(fx, sh("echo pwned > build/pwn; echo wrote"), tmpdir, {
        extra: { host: old, agent: { exec: [SH], write: ["build"] } },
      });
      const cmd = confineArgv(plan, "bwrap", TEST_PROGRAMS);
      assert.ok(!cmd.args.includes("--bind-fd") && cmd.args.includes("--bind"));
      Deno.renameSync(build, `${build}.orig`);
      // A relative link: bwrap (binding by path) resolves it inside the new root and mounts.
      Deno.symlinkSync("../elsewhere", build);
      try {
        const r = await spawnCommand(cmd);
        assert.notEqual(r.code, 0);
        assert.equal(r.stdout, "", "the command never ran");
        assert.match(r.stderr, /build is not the directory that was checked; refused/);
        assert.deepEqual(
          [...Deno.readDirSync(`${fx.base}/elsewhere`)].map((e) => e.name),
          ["sub"],
          "nothing written where the link points",
        );
        // Control: the same bwrap argv without the inner guard writes through the link.
        const p = TEST_PROGRAMS;
        const [program, ...args] = guardedArgv(
          p,
          commandFilter(p.arch, { network: false }),
          bwrapArgv({ ...plan, bwrap: p.bwrap }),
          [],
        );
        const leak = await spawnCommand({ program, args, env: cmd.env, cwd: cmd.cwd });
        assert.equal(leak.stdout, "wrote\n", leak.stderr);
        assert.equal(Deno.readTextFileSync(`${fx.base}/elsewhere/pwn`), "pwned\n");
        Deno.removeSync(`${fx.base}/elsewhere/pwn`);
      } finally {
        Deno.removeSync(build);
        Deno.renameSync(`${build}.orig`, build);
      }
      // Control: the root as planned, the same argv writes.
      const ok = await spawnCommand(cmd);
      assert.equal(ok.stdout, "wrote\n", ok.stderr);
      Deno.removeSync(`${build}/pwn`);
      removeMaskPoints(plan);
    } finally {
      removePrivateTmpdir(tmpdir);
    }
  });
});

Deno.test("bwrap without --disable-userns (0.6, 0.7): the seccomp filter refuses a nested user namespace; the same run without the filter's rule makes one", async () => {
  const h = host();
  requireProgram("/usr/bin/unshare");
  await withTools(() => {}, async (fx) => {
    const old: SandboxHost = { ...h, bwrap: { ...h.bwrap, disableUserns: false } };
    const script = "/usr/bin/unshare -U /usr/bin/true && echo nested; echo rc=$?";
    const opts = withExec([SH, "/usr/bin/unshare", "/usr/bin/true"], old);
    const r = await runConfined(fx, sh(script), opts);
    assert.equal(r.stdout, "rc=1\n", r.stderr);
    assert.match(r.stderr, /unshare.*Operation not permitted/);
    // Control: the same plan, with a filter that lacks the rule (as if nothing covered for the
    // missing flag): the nested namespace is made.
    const tmpdir = makePrivateTmpdir();
    try {
      const plan = planFor(fx, sh(script), tmpdir, opts);
      const cmd = confineArgv(plan, "bwrap", TEST_PROGRAMS);
      assert.ok(!cmd.args.includes("--disable-userns"));
      const p = TEST_PROGRAMS;
      const bw = cmd.args.slice(cmd.args.indexOf(p.bwrap));
      const [program, ...args] = guardedArgv(
        p,
        commandFilter(p.arch, { network: false }),
        bw,
        old.bwrap.bindFd ? plan.pins ?? [] : [],
      );
      const c = await spawnCommand({ program, args, env: cmd.env, cwd: cmd.cwd });
      assert.equal(c.stdout, "nested\nrc=0\n", c.stderr);
      assert.deepEqual(bwrapArgv({ ...plan, bwrap: p.bwrap }).includes("--disable-userns"), false);
      removeMaskPoints(plan);
    } finally {
      removePrivateTmpdir(tmpdir);
    }
  });
});

Deno.test("landlock plan: one rule per exec path that exists and per ELF interpreter here, by real path and identity; a missing exec path gets none", async () => {
  const h = host();
  await withTools(() => {}, (fx, tools) => {
    const tmpdir = makePrivateTmpdir();
    try {
      const plan = planFor(fx, ["/bin/true"], tmpdir, {
        extra: {
          host: h,
          agent: { exec: ["/bin/true", tools, `${tools}/absent`], write: ["build"] },
        },
      });
      assert.equal(plan.execAllowlist?.kind, "landlock");
      const rules = plan.execAllowlist?.kind === "landlock" ? plan.execAllowlist.rules : [];
      const loaders = loaderCandidates(Deno.build.arch).filter((l) => lexists(l)).map((l) =>
        Deno.realPathSync(l)
      );
      assert.ok(loaders.length >= 1, "this machine's ELF interpreter is among the candidates");
      assert.deepEqual(rules.map((r) => r.path), [
        Deno.realPathSync("/bin/true"),
        tools,
        ...loaders,
      ]);
      for (const r of rules) {
        const st = Deno.statSync(r.path);
        assert.deepEqual([r.dev, r.ino], [st.dev, st.ino], r.path);
      }
      assert.deepEqual(plan.bwrapFeatures, h.bwrap);
    } finally {
      removePrivateTmpdir(tmpdir);
    }
    return Promise.resolve();
  });
});

Deno.test("landlock live: a program written into a memfd and exec'd through /proc/self/fd is refused (the filter: no executable memfd); without the filter's rule it runs", async () => {
  const h = host();
  // Perl's syscall: memfd_create("x", flags), the ELF copied in, exec through /proc/self/fd.
  const nr = Deno.build.arch === "aarch64" ? 279 : 319;
  const script = `my $n = "x"; my $fd = syscall(${nr}, $n, $ARGV[0] + 0); ` +
    'if ($fd < 0) { print "memfd refused: $!\\n"; exit 0 } open(my $o, ">&=", $fd) or die; ' +
    'open(my $i, "<", "/usr/bin/id") or die; binmode $i; binmode $o; local $/; my $b = <$i>; ' +
    'print $o $b; $o->flush; exec("/proc/self/fd/$fd", "-u") or print "exec refused: $!\\n";';
  await withTools(() => {}, async (fx) => {
    const opts = withExec([PERL], h);
    const r = await runConfined(fx, [PERL, "-e", script, "0"], opts);
    assert.equal(r.stdout, "memfd refused: Function not implemented\n", r.stderr);
    // A sealed memfd (MFD_NOEXEC_SEAL | MFD_CLOEXEC) is made, and cannot be executed.
    const sealed = await runConfined(fx, [PERL, "-e", script, "9"], opts);
    assert.equal(sealed.stdout, "exec refused: Permission denied\n", sealed.stderr);
    // Control: the same plan with a filter that lacks the rule runs the undeclared program.
    const tmpdir = makePrivateTmpdir();
    try {
      const plan = planFor(fx, [PERL, "-e", script, "0"], tmpdir, opts);
      const cmd = confineArgv(plan, "bwrap", TEST_PROGRAMS);
      const p = TEST_PROGRAMS;
      const [program, ...args] = guardedArgv(
        p,
        commandFilter(p.arch, { network: false, blockUserns: !h.bwrap.disableUserns }),
        cmd.args.slice(cmd.args.indexOf(p.bwrap)),
        h.bwrap.bindFd ? plan.pins ?? [] : [],
      );
      const c = await spawnCommand({ program, args, env: cmd.env, cwd: cmd.cwd });
      assert.match(c.stdout, /^[0-9]+\n$/, "Landlock alone lets the memfd run: " + c.stderr);
      removeMaskPoints(plan);
    } finally {
      removePrivateTmpdir(tmpdir);
    }
  });
});

Deno.test("landlock plan: a script whose #! interpreter lies under no exec path is refused before anything runs (CONFINED_INVALID, naming the directory to add); with it declared, it runs", async () => {
  const h = host();
  await withTools((_fx, tools) => {
    Deno.writeTextFileSync(`${tools}/tool.sh`, "#!/bin/sh\necho ran > build/marker\n");
    Deno.chmodSync(`${tools}/tool.sh`, 0o755);
  }, async (fx, tools) => {
    const e = await assertRejectsRefusal(
      () => runConfined(fx, [`${tools}/tool.sh`], withExec([tools], h)),
      "CONFINED_INVALID",
    );
    assert.match(e.message, /is a script run by \/usr\/bin\/dash.*add "\/usr\/bin"/);
    assert.throws(() => Deno.statSync(`${fx.project}/build/marker`), Deno.errors.NotFound);
    // Without Landlock only the top-level program is checked, as before.
    const off = await runConfined(
      fx,
      [`${tools}/tool.sh`],
      withExec([tools], {
        ...h,
        landlock: { abi: 0, reason: "simulated" },
      }),
    );
    assert.equal(off.code, 0, off.stderr);
    Deno.removeSync(`${fx.project}/build/marker`);
    const ok = await runConfined(fx, [`${tools}/tool.sh`], withExec([tools, "/bin/sh"], h));
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(Deno.readTextFileSync(`${fx.project}/build/marker`), "ran\n");
  });
});

async function assertRejectsRefusal(
  fn: () => Promise<unknown>,
  code: string,
): Promise<SandboxError> {
  try {
    await fn();
  } catch (e) {
    assert.ok(e instanceof SandboxError, String(e));
    assert.equal(e.code, code, e.message);
    return e;
  }
  throw new Error(`expected a ${code} refusal`);
}
