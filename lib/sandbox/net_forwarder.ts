/**
 * The network allowlist's forwarder: the piece inside the sandbox. A command under
 * `network: [...]` runs in a network namespace of its own, where only loopback exists; the proxy
 * (`net_proxy.ts`) listens outside on a Unix socket in the run's private TMPDIR, which the sandbox
 * sees at the same path (`proxySocketIn`). Programs speak to an
 * HTTP proxy over TCP, so before the command starts, a few lines of Perl (core modules only)
 * listen on `127.0.0.1:FORWARD_PORT` inside the namespace, fork a server that copies each
 * connection to the socket, and exec the command. The listener is bound before the exec, so the
 * command's first connection is never refused for being early; the server ends with the
 * sandbox's PID namespace.
 *
 * The forwarder decides nothing: every request still goes through the proxy's rules. It only
 * moves bytes between a loopback port no one outside the namespace can reach and the socket.
 *
 * @example
 * ```ts
 * import { FORWARD_PORT, forwarderArgv, proxyEnv } from "./net_forwarder.ts";
 * import assert from "node:assert/strict";
 * const argv = forwarderArgv("/usr/bin/perl", "x86_64", new Uint8Array(0), "/t/n.sock", ["/bin/true"]);
 * assert.equal(argv[3], String(FORWARD_PORT));
 * assert.equal(proxyEnv().HTTPS_PROXY, `http://127.0.0.1:${FORWARD_PORT}`);
 * ```
 * @module
 */
import { SandboxError } from "../errors.ts";

/** The loopback port the forwarder listens on inside the sandbox's own network namespace. */
export const FORWARD_PORT = 3128;

/**
 * Where the proxy's socket lives: inside the run's private TMPDIR, which the sandbox binds at the
 * same path by the descriptor the exec guard checked (a directory swapped for a link is refused),
 * so the socket needs no mount of its own and no path outside that directory is ever bound. The
 * command may remove it, which only cuts its own network.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { proxySocketIn } from "./net_forwarder.ts";
 * assert.equal(proxySocketIn("/tmp/agentteams-run-x"), "/tmp/agentteams-run-x/.agentteams-net.sock");
 * ```
 */
export function proxySocketIn(tmpdir: string): string {
  return `${tmpdir}/.agentteams-net.sock`;
}

/**
 * The forwarder (argv after `-e`: the port, the socket, then the command). The server side
 * closes its standard streams, so a command's output ends when the command's does.
 */
export const NET_FORWARDER_SCRIPT: string = [
  "use strict; use IO::Socket::INET; use IO::Socket::UNIX; use IO::Select; use Socket;",
  "my ($port, $sock, $prctl, $seccomp, $hex, @cmd) = @ARGV;",
  "my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 128,",
  "  ReuseAddr => 1, Proto => 'tcp')",
  '  or die "agentteams network forwarder: cannot listen on 127.0.0.1:$port: $!\\n";',
  // Not dumpable, set before the fork so the server is never dumpable, not even for an instant:
  // the command (whose child the server is) can neither ptrace it nor reopen its descriptors, so
  // it cannot borrow the Unix sockets the server may still make. The command's exec makes this
  // process dumpable again.
  "syscall($prctl + 0, 4, 0) == 0",
  '  or die "agentteams network forwarder: cannot make the forwarder undumpable: $!\\n";',
  "my $pid = fork();",
  'die "agentteams network forwarder: fork: $!\\n" unless defined $pid;',
  "if ($pid == 0) {",
  "  open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');",
  "  $SIG{CHLD} = 'IGNORE';",
  "  while (1) {",
  "    my $c = $l->accept or next;",
  "    my $k = fork();",
  "    if (defined $k && $k == 0) {",
  "      close($l);",
  "      my $u = IO::Socket::UNIX->new(Peer => $sock, Type => SOCK_STREAM) or exit 1;",
  "      my $s = IO::Select->new($c, $u); my %open = ($c => 1, $u => 1); my $buf;",
  "      while (%open) {",
  "        for my $r ($s->can_read) {",
  "          my $to = $r == $c ? $u : $c;",
  "          my $n = sysread($r, $buf, 65536);",
  "          if (!$n) { $s->remove($r); delete $open{$r}; shutdown($to, 1); next; }",
  "          my $off = 0;",
  "          while ($off < $n) { my $w = syswrite($to, $buf, $n - $off, $off); exit 0 unless $w; $off += $w; }",
  "        }",
  "      }",
  "      exit 0;",
  "    }",
  "    close($c);",
  "  }",
  "}",
  "close($l);",
  // The command's own filter, stacked on the sandbox's: no Unix socket (seccomp.ts), as for any
  // command without network. The sandbox's filter let this process reach the proxy's socket.
  "my $bpf = pack('H*', $hex);",
  "my $fprog = pack('S x![P] P', length($bpf) / 8, $bpf);",
  "syscall($seccomp + 0, 1, 0, $fprog) == 0",
  '  or die "agentteams network forwarder: cannot install the command\'s seccomp filter: $!\\n";',
  'exec { $cmd[0] } @cmd or die "agentteams network forwarder: $cmd[0]: $!\\n";',
].join("\n");

/** `__NR_prctl` and `__NR_seccomp` by `Deno.build.arch`. */
const NR: Readonly<Record<string, { prctl: number; seccomp: number }>> = {
  x86_64: { prctl: 157, seccomp: 317 },
  aarch64: { prctl: 167, seccomp: 277 },
};

/**
 * The argv that starts the forwarder inside the sandbox and then the command, under
 * `commandFilter` (the filter without Unix sockets, seccomp.ts) stacked by the forwarder.
 *
 * @throws {SandboxError} `CONFINED_INVALID` for an architecture it has no numbers for.
 * @example
 * ```ts
 * import { forwarderArgv } from "./net_forwarder.ts";
 * import assert from "node:assert/strict";
 * const argv = forwarderArgv("/usr/bin/perl", "x86_64", new Uint8Array(8), "/s", ["/bin/true"]);
 * assert.deepEqual(argv.slice(0, 2), ["/usr/bin/perl", "-e"]);
 * assert.deepEqual(argv.slice(3), ["3128", "/s", "157", "317", "0000000000000000", "/bin/true"]);
 * ```
 */
export function forwarderArgv(
  perl: string,
  arch: string,
  commandFilter: Uint8Array,
  socketInSandbox: string,
  command: readonly string[],
): string[] {
  const nr = Object.hasOwn(NR, arch) ? NR[arch] : undefined;
  if (nr === undefined) {
    throw new SandboxError(
      "CONFINED_INVALID",
      `no network forwarder for the ${arch} architecture: a network allowlist cannot be kept here`,
    );
  }
  const hex = Array.from(commandFilter, (b) => b.toString(16).padStart(2, "0")).join("");
  return [
    perl,
    "-e",
    NET_FORWARDER_SCRIPT,
    String(FORWARD_PORT),
    socketInSandbox,
    String(nr.prctl),
    String(nr.seccomp),
    hex,
    ...command,
  ];
}

/**
 * The variables that point a command at the forwarder: both spellings, as curl, npm, pip, git and
 * Deno each read one or the other. `NO_PROXY` is emptied so no name bypasses the proxy (a direct
 * connection would fail anyway: the namespace has no route out).
 *
 * @example
 * ```ts
 * import { proxyEnv } from "./net_forwarder.ts";
 * import assert from "node:assert/strict";
 * assert.equal(proxyEnv().http_proxy, "http://127.0.0.1:3128");
 * assert.equal(proxyEnv().NO_PROXY, "");
 * ```
 */
export function proxyEnv(): Readonly<Record<string, string>> {
  const url = `http://127.0.0.1:${FORWARD_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: "",
    no_proxy: "",
  };
}
