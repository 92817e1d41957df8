/**
 * The network allowlist end to end with the real bubblewrap, through the runs' own path
 * (`prepareRun`, `executeRun`: the plan, the proxy, the forwarder, the exec guard and the stacked
 * filter): a command in its own network namespace reaches an allowed name through the proxy and
 * nothing else. Local servers only.
 */
import assert from "node:assert/strict";
import { parseNetworkRules } from "../../lib/policy/network_rules.ts";
import { executeRun, prepareRun } from "../../lib/sandbox/confined_run.ts";
import { makePrivateTmpdir, removePrivateTmpdir } from "../../lib/sandbox/run_dir.ts";
import { type Fixture, lexists, makeFixture, requireProgram } from "./_helpers.ts";

const CURL = "/usr/bin/curl";
const PERL = "/usr/bin/perl";
for (const p of ["/usr/bin/bwrap", PERL, CURL, "/usr/bin/getent", "/usr/bin/pkill"]) {
  requireProgram(p);
}

const dec = new TextDecoder();

/** Runs `argv` as a run under `network: rules` gets it; `during` runs while it does. */
async function inSandbox(
  fx: Fixture,
  rules: string[],
  argv: string[],
  during?: (socket: string) => Promise<void>,
): Promise<{ code: number; stdout: string; stderr: string; refused: readonly string[] | null }> {
  const parsed = parseNetworkRules(rules);
  assert.ok(parsed.ok);
  const tmpdir = makePrivateTmpdir();
  try {
    const prepared = prepareRun({
      project: fx.project,
      home: fx.home,
      tmpdir,
      backend: "bwrap",
      agent: { exec: ["/usr/bin", "/bin"], write: ["build"] },
      cwd: ".",
      argv,
      env: { PATH: "/usr/bin:/bin", HOME: fx.home, LANG: "C" },
      network: false,
      networkAllow: parsed.ok ? parsed.rules : [],
      protectedPaths: [],
      hiddenDirs: [fx.keyDir],
      controlPlane: { git: [] },
      timeoutMs: 60_000,
    });
    assert.ok(prepared.proxy !== null);
    const running = executeRun(prepared);
    if (during !== undefined && prepared.proxy !== null) await during(prepared.proxy.socket);
    const r = await running;
    return {
      code: r.exit ?? -1,
      stdout: dec.decode(r.stdout),
      stderr: dec.decode(r.stderr),
      refused: r.networkRefused,
    };
  } finally {
    removePrivateTmpdir(tmpdir);
  }
}

function serve(seen: string[]): { port: number; stop: () => Promise<void> } {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      seen.push(new URL(req.url).pathname);
      return new Response("hello through the proxy\n");
    },
  );
  return {
    port: server.addr.port,
    stop: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

Deno.test("network allowlist (live, bwrap): allowed names pass, everything else fails", async () => {
  const fx = makeFixture();
  const seen: string[] = [];
  const a = serve(seen);
  const b = serve(seen);
  try {
    const rules = [`localhost:${a.port}`];
    // Through the proxy, as an HTTP request and as a CONNECT tunnel.
    const plain = await inSandbox(fx, rules, [CURL, "-sSf", `http://localhost:${a.port}/plain`]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, "hello through the proxy\n");
    assert.deepEqual(plain.refused, []);
    const tunnel = await inSandbox(fx, rules, [CURL, "-sSf", "-p", `http://localhost:${a.port}/t`]);
    assert.equal(tunnel.code, 0, tunnel.stderr);
    assert.equal(tunnel.stdout, "hello through the proxy\n");

    // Refused by the proxy (and recorded): another name, a raw address, a port the rule does not
    // name, IPv6.
    const cases: [string[], string][] = [
      [[CURL, "-sSf", `http://not-listed.invalid:${a.port}/a`], `not-listed.invalid:${a.port}`],
      [[CURL, "-sSf", `http://127.0.0.1:${a.port}/b`], `127.0.0.1:${a.port}`],
      [[CURL, "-sSf", "-p", `http://localhost:${b.port}/c`], `localhost:${b.port}`],
      [[CURL, "-sSf", "-p", `http://[::1]:${a.port}/d`], `[::1]:${a.port}`],
    ];
    for (const [argv, where] of cases) {
      const r = await inSandbox(fx, rules, argv);
      assert.notEqual(r.code, 0, argv.join(" "));
      assert.deepEqual(r.refused, [where]);
    }
    // Direct: no route out of the namespace, and no DNS.
    const direct = await inSandbox(fx, rules, [
      CURL,
      "-sS",
      "--noproxy",
      "*",
      `http://127.0.0.1:${a.port}/e`,
    ]);
    assert.notEqual(direct.code, 0);
    const dns = await inSandbox(fx, rules, ["/usr/bin/getent", "hosts", "registry.npmjs.org"]);
    assert.notEqual(dns.code, 0);
    assert.deepEqual(seen, ["/plain", "/t"]);
  } finally {
    await a.stop();
    await b.stop();
    fx.cleanup();
  }
});

Deno.test("network allowlist (live, bwrap): a proxy that dies mid-run fails the command's connections", async () => {
  const fx = makeFixture();
  const seen: string[] = [];
  const a = serve(seen);
  try {
    const go = `${fx.base}/go`;
    const started = `${fx.project}/build/started`;
    // The command says it started (so the proxy is up), then waits for the test's go-file, made
    // once the proxy is dead.
    const script = `: > build/started; while [ ! -e ${go} ]; do sleep 0.05; done; ` +
      `${CURL} -sSf --max-time 10 http://localhost:${a.port}/late; echo "curl=$?"; ` +
      `${CURL} -sS --noproxy '*' --max-time 10 http://127.0.0.1:${a.port}/direct; echo "direct=$?"`;
    const r = await inSandbox(
      fx,
      [`localhost:${a.port}`],
      ["/bin/sh", "-c", script],
      async (socket) => {
        for (let i = 0; i < 400 && !lexists(started); i++) {
          await new Promise((ok) => setTimeout(ok, 25));
        }
        // The proxy's process is the Perl child running the proxy's script on this run's socket
        // (bwrap's own command line names the socket too, for the forwarder: not that one).
        for (let i = 0; i < 200; i++) {
          const k = await new Deno.Command("/usr/bin/pkill", {
            args: ["-KILL", "-f", `network proxy: cannot listen on .* ${socket} `],
          })
            .output();
          if (k.code === 0) break;
          await new Promise((ok) => setTimeout(ok, 25));
        }
        Deno.writeTextFileSync(go, "");
      },
    );
    assert.ok(lexists(started), "the command never started");
    assert.match(r.stdout, /curl=[1-9]/);
    assert.match(r.stdout, /direct=[1-9]/);
    assert.deepEqual(seen, []);
  } finally {
    await a.stop();
    fx.cleanup();
  }
});

Deno.test("network allowlist (live, bwrap): the command gets no Unix socket and cannot trace the forwarder", async () => {
  const fx = makeFixture();
  try {
    // The forwarder itself reached the socket (the proxy answers 403 for an unlisted name) ...
    const via = await inSandbox(fx, [], [
      CURL,
      "-sS",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "http://x.invalid/",
    ]);
    assert.equal(via.stdout, "403", via.stderr);
    // ... but the command may not make a Unix socket (the proxy's, or any host one) ...
    const unix = await inSandbox(fx, [], [
      PERL,
      "-MSocket",
      "-e",
      "socket(my $s, AF_UNIX, SOCK_STREAM, 0) ? exit 0 : ($!{EACCES} ? exit 7 : exit 8)",
    ]);
    assert.equal(unix.code, 7, unix.stderr);
    // ... nor reopen the forwarder's descriptors (its listener, a socket to the proxy) through
    // /proc or read its memory: it is the command's child, and not dumpable.
    const trace = await inSandbox(fx, [], [
      PERL,
      "-e",
      'opendir(my $d, "/proc") or exit 9; my $n = 0; my $bad = 0;' +
      "for my $p (grep { /^[0-9]+$/ && $_ != $$ } readdir($d)) {" +
      '  open(my $st, "<", "/proc/$p/stat") or next; my @f = split / /, <$st>;' +
      "  next unless $f[3] == $$; $n++;" +
      '  $bad++ if open(my $m, "<", "/proc/$p/mem");' +
      '  if (opendir(my $fd, "/proc/$p/fd")) { for my $f (grep { /^[0-9]+$/ } readdir($fd)) {' +
      '    $bad++ if defined readlink("/proc/$p/fd/$f"); $bad++ if open(my $h, "<", "/proc/$p/fd/$f"); } } }' +
      "exit($n == 0 ? 5 : $bad ? 6 : 0)",
    ]);
    assert.equal(trace.code, 0, trace.stderr);
  } finally {
    fx.cleanup();
  }
});

Deno.test("a network list on any backend but bwrap is refused before anything is made", () => {
  const fx = makeFixture();
  try {
    const parsed = parseNetworkRules(["registry.npmjs.org"]);
    assert.ok(parsed.ok);
    for (const backend of ["seatbelt", "unconfined-opt-out"] as const) {
      const tmpdir = makePrivateTmpdir();
      try {
        assert.throws(
          () =>
            prepareRun({
              project: fx.project,
              home: fx.home,
              tmpdir,
              backend,
              agent: { exec: ["/usr/bin"], write: ["build"] },
              cwd: ".",
              argv: [CURL, "https://registry.npmjs.org/"],
              env: { PATH: "/usr/bin:/bin" },
              network: false,
              networkAllow: parsed.ok ? parsed.rules : [],
              protectedPaths: [],
              hiddenDirs: [fx.keyDir],
              controlPlane: { git: [] },
              timeoutMs: 1000,
            }),
          (e: unknown) =>
            e instanceof Error && "code" in e && e.code === "NETWORK_LIST_UNSUPPORTED" &&
            e.message.includes("registry.npmjs.org"),
        );
        assert.deepEqual([...Deno.readDirSync(tmpdir)], [], backend);
      } finally {
        removePrivateTmpdir(tmpdir);
      }
    }
  } finally {
    fx.cleanup();
  }
});
