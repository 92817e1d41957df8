/**
 * The network allowlist end to end with the real bubblewrap, the real forwarder and the real
 * proxy: a command in its own network namespace reaches an allowed name through the proxy and
 * nothing else. Local servers only.
 */
import assert from "node:assert/strict";
import { parseNetworkRules } from "../../lib/policy/network_rules.ts";
import { startNetProxy } from "../../lib/sandbox/net_proxy.ts";
import { forwarderArgv, proxyEnv, SANDBOX_PROXY_SOCKET } from "../../lib/sandbox/net_forwarder.ts";
import { commandFilter } from "../../lib/sandbox/seccomp.ts";
import { BWRAP_BASE_MOUNTS, bwrapIsolationFlags } from "../../lib/sandbox/bwrap.ts";

const BWRAP = "/usr/bin/bwrap";
const PERL = "/usr/bin/perl";
const CURL = "/usr/bin/curl";

for (const p of [BWRAP, PERL, CURL, "/usr/bin/getent"]) {
  Deno.statSync(p); // fails loudly when a program the test needs is missing
}

async function inSandbox(
  hostSock: string,
  command: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.entries(proxyEnv()).flatMap(([k, v]) => ["--setenv", k, v]);
  // The namespaces and hardening every confined run gets (no network shared), and its mounts.
  const argv = [
    ...bwrapIsolationFlags(false),
    ...BWRAP_BASE_MOUNTS,
    "--tmpfs",
    "/run",
    "--clearenv",
    "--setenv",
    "PATH",
    "/usr/bin:/bin",
    ...env,
    "--bind",
    hostSock,
    SANDBOX_PROXY_SOCKET,
    "--",
    ...forwarderArgv(
      PERL,
      Deno.build.arch,
      commandFilter(Deno.build.arch, { network: false }),
      SANDBOX_PROXY_SOCKET,
      command,
    ),
  ];
  const out = await new Deno.Command(BWRAP, { args: argv, stdout: "piped", stderr: "piped" })
    .output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("network allowlist (live, bwrap): allowed names pass, everything else fails", async () => {
  const dir = await Deno.makeTempDir();
  const seen: string[] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      seen.push(new URL(req.url).pathname);
      return new Response("hello through the proxy\n");
    },
  );
  const other = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      seen.push("other:" + new URL(req.url).pathname);
      return new Response("should not be reached\n");
    },
  );
  const port = server.addr.port;
  const otherPort = other.addr.port;
  const parsed = parseNetworkRules([`localhost:${port}`]);
  assert.ok(parsed.ok);
  const sock = `${dir}/proxy.sock`;
  const proxy = await startNetProxy({
    socketPath: sock,
    rules: parsed.ok ? parsed.rules : [],
    perl: PERL,
  });
  try {
    // Through the proxy, as an HTTP request and as a CONNECT tunnel.
    const plain = await inSandbox(sock, [CURL, "-sSf", `http://localhost:${port}/plain`]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, "hello through the proxy\n");
    const tunnel = await inSandbox(sock, [CURL, "-sSf", "-p", `http://localhost:${port}/tunnel`]);
    assert.equal(tunnel.code, 0, tunnel.stderr);
    assert.equal(tunnel.stdout, "hello through the proxy\n");

    // Refused by the proxy: another name, a raw address, a port the rule does not name.
    const refusedCases = [
      [CURL, "-sSf", `http://not-listed.invalid:${port}/a`],
      [CURL, "-sSf", `http://127.0.0.1:${port}/b`],
      [CURL, "-sSf", "-p", `http://localhost:${otherPort}/c`],
      [CURL, "-sSf", "-p", `http://[::1]:${port}/d`],
    ];
    for (const c of refusedCases) {
      const r = await inSandbox(sock, c);
      assert.notEqual(r.code, 0, c.join(" "));
    }
    // Direct: no route out of the namespace, and no DNS.
    const direct = await inSandbox(sock, [
      CURL,
      "-sS",
      "--noproxy",
      "*",
      `http://127.0.0.1:${port}/e`,
    ]);
    assert.notEqual(direct.code, 0);
    const dns = await inSandbox(sock, ["/usr/bin/getent", "hosts", "registry.npmjs.org"]);
    assert.notEqual(dns.code, 0);

    assert.deepEqual(seen, ["/plain", "/tunnel"]);
    assert.deepEqual(proxy.refused, [
      `not-listed.invalid:${port}`,
      `127.0.0.1:${port}`,
      `localhost:${otherPort}`,
      `[::1]:${port}`,
    ]);
  } finally {
    await proxy.close();
    ac.abort();
    await server.finished;
    await other.finished;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("network allowlist (live, bwrap): a proxy that dies mid-run fails the command's connections", async () => {
  const dir = await Deno.makeTempDir();
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    () => new Response("x"),
  );
  const port = server.addr.port;
  const parsed = parseNetworkRules([`localhost:${port}`]);
  assert.ok(parsed.ok);
  const sock = `${dir}/proxy.sock`;
  const proxy = await startNetProxy({
    socketPath: sock,
    rules: parsed.ok ? parsed.rules : [],
    perl: PERL,
  });
  await proxy.close();
  try {
    const r = await inSandbox(sock, [
      CURL,
      "-sSf",
      "--max-time",
      "10",
      `http://localhost:${port}/`,
    ]);
    assert.notEqual(r.code, 0);
    const direct = await inSandbox(sock, [
      CURL,
      "-sS",
      "--noproxy",
      "*",
      "--max-time",
      "10",
      `http://127.0.0.1:${port}/`,
    ]);
    assert.notEqual(direct.code, 0);
  } finally {
    ac.abort();
    await server.finished;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("network allowlist (live, bwrap): the command gets no Unix socket and cannot trace the forwarder", async () => {
  const dir = await Deno.makeTempDir();
  const sock = `${dir}/proxy.sock`;
  const proxy = await startNetProxy({ socketPath: sock, rules: [], perl: PERL });
  try {
    // The forwarder itself reached the socket (it answers 403 for an unlisted name) ...
    const viaForwarder = await inSandbox(sock, [
      CURL,
      "-sS",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "http://x.invalid/",
    ]);
    assert.equal(viaForwarder.stdout, "403", viaForwarder.stderr);
    // ... but the command may not make a Unix socket (the proxy's, or any host one) ...
    const unix = await inSandbox(sock, [
      PERL,
      "-MSocket",
      "-e",
      "socket(my $s, AF_UNIX, SOCK_STREAM, 0) ? exit 0 : ($!{EACCES} ? exit 7 : exit 8)",
    ]);
    assert.equal(unix.code, 7, unix.stderr);
    // ... nor reopen the forwarder's descriptors (its listener, a socket to the proxy) through
    // /proc or read its memory: it is the command's child, and not dumpable.
    const trace = await inSandbox(sock, [
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
    await proxy.close();
    await Deno.remove(dir, { recursive: true });
  }
});
