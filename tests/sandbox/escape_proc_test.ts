/**
 * Escape suite, processes and network: live bwrap. The network is unshared unless the entry says
 * `network: true`; background processes die with the sandbox; `/proc` shows only the sandbox's
 * processes; `--new-session` stops TIOCSTI into the caller's terminal.
 */

import {
  bwrapArgv,
  confineArgv,
  makePrivateTmpdir,
  removePrivateTmpdir,
} from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";
import {
  ignoring,
  lexists,
  makeFixture,
  planFor,
  requireProgram,
  runConfined,
  runSync,
  sh,
  withUnchangedOutside,
} from "./_helpers.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";

const TCP_PERL = "use IO::Socket::INET; my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', " +
  "PeerPort => $ARGV[0], Proto => 'tcp', Timeout => 5); print($s ? \"perl-connected\\n\" : " +
  '"perl-failed $!\\n");';

async function withListener<T>(fn: (listener: Deno.TcpListener, port: number) => Promise<T>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    return await fn(listener, (listener.addr as Deno.NetAddr).port);
  } finally {
    listener.close();
  }
}

Deno.test("escape: no TCP to a listener on the host's 127.0.0.1 (bash /dev/tcp, perl)", async () => {
  requireProgram("/usr/bin/bash");
  requireProgram("/usr/bin/perl");
  await withUnchangedOutside(async (fx) => {
    await withListener(async (_listener, port) => {
      const r = await runConfined(fx, [
        "/usr/bin/bash",
        "-c",
        `exec 3<>/dev/tcp/127.0.0.1/${port} && echo bash-connected; ` +
        `/usr/bin/perl -e "$1" ${port}`,
        "tcp",
        TCP_PERL,
      ]);
      assert.ok(!r.stdout.includes("bash-connected"), `bash connected: ${r.stdout}`);
      assert.ok(r.stdout.includes("perl-failed"), `perl must fail: ${r.stdout}`);
      assert.ok(!r.stdout.includes("perl-connected"), r.stdout);
      assert.ok(/Connection refused|Network is unreachable/.test(r.stderr), r.stderr);
    });
  });
});

Deno.test("control: with network: true the same connect reaches the listener", async () => {
  await withUnchangedOutside(async (fx) => {
    await withListener(async (listener, port) => {
      const r = await runConfined(
        fx,
        ["/usr/bin/bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port} && echo bash-connected`],
        { network: true },
      );
      assert.ok(r.plan.network, "plan shares the network");
      assert.ok(r.stdout.includes("bash-connected"), `control must connect: ${r.stderr}`);
      // The handshake completed before bash printed, so the connection is already queued.
      const conn = await listener.accept();
      assert.ok(conn.remoteAddr.transport === "tcp", "the listener got the control connection");
      conn.close();
    });
  });
});

const UNIX_PERL = "use IO::Socket::UNIX; my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]); " +
  'print($s ? "unix-connected\\n" : "unix-failed $!\\n");';

/** A Unix socket listener on the host (an ssh-agent, a user bus, docker.sock stand-in). */
async function withUnixListener<T>(fn: (path: string) => Promise<T>): Promise<T> {
  const dir = Deno.makeTempDirSync({ prefix: "at-unix-" });
  const path = `${dir}/agent.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  try {
    return await fn(path);
  } finally {
    listener.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("escape: without network no Unix socket can be made, so a host socket's owner gets no orders (seccomp: EACCES); a stream socketpair still works, a datagram one does not", async () => {
  requireProgram("/usr/bin/perl");
  await withUnchangedOutside(async (fx) => {
    await withUnixListener(async (path) => {
      const r = await runConfined(fx, [
        "/usr/bin/bash",
        "-c",
        '/usr/bin/perl -e "$1" "$2"; /usr/bin/perl -e "use Socket; ' +
        'socketpair(my \\$a, my \\$b, AF_UNIX, SOCK_STREAM, 0) ? print \\"pair-ok\\n\\" : ' +
        'print \\"pair-failed \\$!\\n\\"; ' +
        'socketpair(my \\$c, my \\$d, AF_UNIX, SOCK_DGRAM, 0) ? print \\"dgram-ok\\n\\" : ' +
        'print \\"dgram-refused \\$!\\n\\""',
        "unix",
        UNIX_PERL,
        path,
      ]);
      assert.ok(r.stdout.includes("unix-failed Permission denied"), `must be refused: ${r.stdout}`);
      assert.ok(!r.stdout.includes("unix-connected"), r.stdout);
      assert.ok(r.stdout.includes("pair-ok"), `socketpair must work: ${r.stdout} ${r.stderr}`);
      // A datagram pair could sendto any host datagram socket by path (journald, /dev/log).
      assert.ok(r.stdout.includes("dgram-refused Permission denied"), r.stdout);
    });
  });
});

Deno.test("control: with network: true the same Unix connect reaches the socket", async () => {
  await withUnchangedOutside(async (fx) => {
    await withUnixListener(async (path) => {
      const r = await runConfined(fx, ["/usr/bin/perl", "-e", UNIX_PERL, path], {
        network: true,
      });
      assert.ok(
        r.stdout.includes("unix-connected"),
        `control must connect: ${r.stdout} ${r.stderr}`,
      );
    });
  });
});

Deno.test("escape: a descriptor the caller left open (fd 7, a directory outside) never reaches the command; without the guard it would", async () => {
  requireProgram("/usr/bin/sh");
  await withUnchangedOutside((fx) => {
    const probe = [
      "/usr/bin/sh",
      "-c",
      "if [ -e /proc/self/fd/7 ]; then echo fd7-open; ls /proc/self/fd/7/; else echo fd7-closed; fi",
    ];
    const tmpdir = makePrivateTmpdir();
    try {
      const cmd = confineArgv(planFor(fx, probe, tmpdir), "bwrap");
      // A caller that leaves fd 7 open on the fixture's base dir (which holds the hidden key dir).
      const leak = (argv: string[]) =>
        runSync("/usr/bin/sh", ["-c", 'exec 7<"$0"; exec "$@"', fx.base, ...argv], {
          cwd: cmd.cwd,
          env: cmd.env,
        });
      const guarded = leak([cmd.program, ...cmd.args]);
      assert.deepEqual(guarded.stdout.trim(), "fd7-closed", guarded.stderr);
      // The control: bwrap started directly passes the descriptor on.
      const bare = leak(cmd.args.slice(5));
      assert.ok(
        bare.stdout.includes("fd7-open"),
        `control must leak: ${bare.stdout} ${bare.stderr}`,
      );
    } finally {
      removePrivateTmpdir(tmpdir);
    }
  });
});

Deno.test("escape: no DNS and no route to the resolver; only lo exists", async () => {
  requireProgram("/usr/bin/getent");
  await withUnchangedOutside(async (fx) => {
    const resolv = (() => {
      try {
        return Deno.readTextFileSync("/etc/resolv.conf");
      } catch {
        return "";
      }
    })();
    const ns = /^nameserver\s+(\d+\.\d+\.\d+\.\d+)/m.exec(resolv)?.[1] ?? "1.1.1.1";
    const udp = "use IO::Socket::INET; my $s = IO::Socket::INET->new(PeerAddr => $ARGV[0], " +
      "PeerPort => 53, Proto => 'udp') or do { print \"udp-failed $!\\n\"; exit 0 }; " +
      'if (defined $s->send("x")) { print "udp-sent\\n" } else { print "udp-failed $!\\n" }';
    // Control on the host: sending a datagram toward the resolver needs no answer, only a route.
    // It is asserted whenever the host has an interface besides lo (otherwise there is no route
    // to withhold, and the only-lo check below is the whole test).
    const hostIfaces = Deno.readTextFileSync("/proc/net/dev").split("\n")
      .filter((l) => /^\s*[^\s:]+:/.test(l)).map((l) => l.trim().split(":")[0]);
    const host = runSync("/usr/bin/perl", ["-e", udp, ns]);
    if (hostIfaces.some((i) => i !== "lo")) {
      assert.ok(
        host.stdout.includes("udp-sent"),
        `control: the host reaches ${ns}: ${host.stdout}`,
      );
    } else {
      console.log("host has only lo: the UDP control is not applicable");
    }
    const r = await runConfined(
      fx,
      sh(
        `getent hosts example.com; echo getent=$?; /usr/bin/perl -e '${udp}' ${ns}; ` +
          "cat /proc/net/dev",
      ),
    );
    assert.ok(/getent=[1-9]/.test(r.stdout), `getent must fail: ${r.stdout}`);
    assert.ok(r.stdout.includes("udp-failed"), `no route inside: ${r.stdout}`);
    const ifaces = r.stdout.split("\n").filter((l) => /^\s*[^\s:]+:/.test(l)).map((l) =>
      l.trim().split(":")[0]
    );
    assert.ok(ifaces.length === 1 && ifaces[0] === "lo", `only lo: ${ifaces.join(",")}`);
  });
});

function processesWith(token: string): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`);
      if (cmd.includes(token)) pids.push(Number(e.name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

const tick = () => new Promise((ok) => setTimeout(ok, 50));

async function untilGone(token: string): Promise<number[]> {
  // Bounded wait (30 s) for processes that were told to finish or were killed: it ends as soon as
  // three reads in a row find none (a process in the middle of exec can be missed by one read).
  let empty = 0;
  for (let i = 0; i < 600 && empty < 3; i++) {
    empty = processesWith(token).length === 0 ? empty + 1 : 0;
    if (empty < 3) await tick();
  }
  return processesWith(token);
}

async function untilExist(paths: string[]): Promise<boolean> {
  for (let i = 0; i < 600 && !paths.every(lexists); i++) await tick();
  return paths.every(lexists);
}

Deno.test("escape: background and setsid processes die with the sandbox", async () => {
  requireProgram("/usr/bin/setsid");
  requireProgram("/usr/bin/nohup");
  const fx = makeFixture();
  try {
    const before = snapshotTreeSync(
      fx.base,
      ignoring(fx, `${fx.base}/control`, `${fx.base}/go-control`, `${fx.base}/go`),
    );
    // Each background process waits for a GO file the test creates only after the run has
    // ended, then writes its marker: a survivor would write it, a killed process cannot.
    const background = (dir: string, go: string, token: string) => {
      const wait = (m: string) =>
        `while [ ! -e ${go} ]; do sleep 0.05; done; echo late > ${dir}/${m}`;
      // Their output goes to /dev/null, so a survivor cannot hold the run's pipes open.
      const quiet = ">/dev/null 2>&1";
      return `sh -c '${wait("late1")}' ${token}-a ${quiet} & ` +
        `nohup sh -c '${wait("late2")}' ${token}-b ${quiet} & ` +
        `setsid sh -c '${wait("late3")}' ${token}-c ${quiet} & echo started > ${dir}/started`;
    };
    const marks = ["late1", "late2", "late3"];
    const token = `bgtoken${crypto.randomUUID().replaceAll("-", "")}`;
    try {
      // Control, unconfined: the three processes survive the command and write their markers.
      const cdir = `${fx.base}/control`;
      Deno.mkdirSync(cdir);
      await new Deno.Command("/bin/sh", {
        args: ["-c", background(cdir, `${fx.base}/go-control`, token + "c")],
        stdout: "null",
        stderr: "null",
      }).output();
      // They wait for GO, so they are alive until it exists: the detector must see them.
      let seen = 0;
      for (let i = 0; i < 600 && seen === 0; i++) {
        seen = processesWith(token + "c").length;
        if (seen === 0) await tick();
      }
      assert.ok(seen > 0, "control: the detector sees the survivors");
      Deno.writeTextFileSync(`${fx.base}/go-control`, "");
      assert.ok(
        await untilExist(marks.map((m) => `${cdir}/${m}`)),
        "control: survivors wrote markers",
      );
      assert.ok((await untilGone(token + "c")).length === 0, "control processes finished");

      // Confined: the sandbox's end kills them before GO exists.
      // Waiting on the sandbox's exit (not its pipes): a surviving namespace would keep the
      // pipes open until GO exists, which the test creates only afterwards.
      await runConfined(
        fx,
        sh(background(`${fx.project}/build`, `${fx.base}/go`, token + "s")),
        { discardOutput: true },
      );
      assert.ok(lexists(`${fx.project}/build/started`), "the command ran");
      // bwrap's outer process reports the command's exit (through an eventfd) before the
      // namespace's init has exited and the kernel has killed the rest, so for a moment after
      // bwrap returns they may still be running (a known gap: the runner should wait for the
      // namespace to end). They must be gone without GO, on their own: a survivor never is.
      const left = await untilGone(token + "s");
      assert.ok(left.length === 0, `processes outlived the sandbox: ${left.join(",")}`);
      Deno.writeTextFileSync(`${fx.base}/go`, "");
      for (const m of marks) {
        assert.ok(!lexists(`${fx.project}/build/${m}`), `${m} was written after the run`);
      }
    } finally {
      // Whatever failed above, release every waiter and kill what this test started.
      for (const go of ["go-control", "go"]) Deno.writeTextFileSync(`${fx.base}/${go}`, "");
      for (const pid of processesWith(token)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    assertSameTree(
      before,
      snapshotTreeSync(
        fx.base,
        ignoring(fx, `${fx.base}/control`, `${fx.base}/go-control`, `${fx.base}/go`),
      ),
    );
  } finally {
    fx.cleanup();
  }
});

Deno.test("escape: /proc shows only the sandbox's own processes", async () => {
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh(
        `ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; echo; cat /proc/1/comm; ` +
          `kill -0 ${Deno.pid} && echo host-visible || echo host-hidden`,
      ),
    );
    const [pidLine, init, vis] = r.stdout.trim().split("\n");
    const pids = pidLine.trim().split(/\s+/).map(Number);
    assert.ok(pids.length > 0 && pids.length <= 6, `few processes: ${pidLine}`);
    assert.ok(pids.every((p) => p < 20), `only namespace PIDs: ${pidLine}`);
    assert.ok(!pids.includes(Deno.pid), "the test's own PID is not visible");
    assert.ok(init === "bwrap", `PID 1 is the sandbox's init, got ${init}`);
    assert.ok(vis === "host-hidden", vis);
  });
});

function shellQuote(s: string): string {
  return "'" + s.replaceAll("'", "'\\''") + "'";
}

const TIOCSTI_PERL = 'my $c = "x"; if (ioctl(STDIN, 0x5412, $c)) { print "TIOCSTI-OK\\n" } ' +
  'else { printf "TIOCSTI-FAILED %d %s\\n", $!+0, $! }';

Deno.test("escape: TIOCSTI into the terminal fails under --new-session", async () => {
  requireProgram("/usr/bin/script");
  requireProgram("/usr/bin/perl");
  await withUnchangedOutside((fx) => {
    const tmp = makePrivateTmpdir();
    const plan = planFor(fx, ["/usr/bin/perl", "-e", TIOCSTI_PERL], tmp);
    const argv = bwrapArgv({ ...plan, bwrap: "/usr/bin/bwrap" });
    assert.ok(argv.includes("--new-session"), "the confined argv uses --new-session");
    try {
      const inPty = (args: string[]) =>
        runSync("/usr/bin/script", ["-qec", args.map(shellQuote).join(" "), "/dev/null"]);
      const confined = inPty(argv);
      assert.ok(
        confined.stdout.includes("TIOCSTI-FAILED 1 "),
        `must fail (EPERM): ${confined.stdout}`,
      );
      assert.ok(!confined.stdout.includes("TIOCSTI-OK"), confined.stdout);
      const legacy = (() => {
        try {
          return Deno.readTextFileSync("/proc/sys/dev/tty/legacy_tiocsti").trim();
        } catch {
          return "1";
        }
      })();
      // Control: without --new-session the same ioctl succeeds (where the kernel allows TIOCSTI).
      const control = inPty(argv.filter((a) => a !== "--new-session"));
      if (legacy === "1") {
        assert.ok(control.stdout.includes("TIOCSTI-OK"), `control must succeed: ${control.stdout}`);
      } else {
        console.log(`TIOCSTI disabled by the kernel (legacy_tiocsti=${legacy}): control not run`);
      }
    } finally {
      Deno.removeSync(tmp, { recursive: true });
    }
  });
});

Deno.test("escape: host processes cannot be signalled; no capabilities, no nested userns", async () => {
  requireProgram("/usr/bin/unshare");
  await withUnchangedOutside(async (fx) => {
    const r = await runConfined(
      fx,
      sh(
        `kill -0 ${Deno.pid}; echo kill=$?; kill -0 ${Deno.ppid}; echo killp=$?; ` +
          "/usr/bin/unshare -U /bin/true; echo userns=$?; " +
          "grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status",
      ),
    );
    assert.ok(/kill=[1-9]/.test(r.stdout) && /killp=[1-9]/.test(r.stdout), r.stdout);
    assert.ok(/userns=[1-9]/.test(r.stdout), `no nested user namespace: ${r.stdout}`);
    const caps = r.stdout.split("\n").filter((l) => l.startsWith("Cap"));
    assert.ok(caps.length === 3, r.stdout);
    assert.ok(caps.every((l) => /:\s+0{16}$/.test(l)), `no capabilities: ${caps.join(" | ")}`);
  });
});

Deno.test("escape: the runner's environment never reaches the command (--clearenv)", async () => {
  const fx = makeFixture();
  const tmp = makePrivateTmpdir();
  try {
    const plan = planFor(fx, ["/usr/bin/env"], tmp);
    const argv = bwrapArgv({ ...plan, bwrap: "/usr/bin/bwrap" });
    // Spawned WITHOUT clearEnv: bwrap inherits a key and DENO_ variables, and must drop them.
    const out = await new Deno.Command(argv[0], {
      args: argv.slice(1),
      env: { AGENTTEAMS_PROPOSAL_LEDGER_KEY: fx.secret, DENO_DIR: "/x", GH_TOKEN: fx.secret },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const seen = new TextDecoder().decode(out.stdout).trim().split("\n").sort();
    // bwrap itself sets PWD to the --chdir directory; nothing else is added.
    const want = [...plan.env.map(([k, v]) => `${k}=${v}`), `PWD=${plan.cwd}`].sort();
    assert.deepEqual(seen, want);
    assert.ok(!seen.join("\n").includes(fx.secret), "no secret");
  } finally {
    Deno.removeSync(tmp, { recursive: true });
    fx.cleanup();
  }
});
