/**
 * The network allowlist's proxy: an HTTP proxy on a Unix socket, outside the sandbox, that lets a
 * confined command reach only the names its command entry lists (`network: [...]`). The command
 * runs in a network namespace of its own with no route out; the socket is bound into the sandbox
 * and a forwarder there (`net_forwarder.ts`) turns it into the `HTTP_PROXY` address.
 *
 * Two request forms, one request a connection: `CONNECT host:port` (TLS and anything else, piped
 * once allowed) and an absolute-form `http://` request (re-sent in origin form with
 * `Connection: close`). What a request may do is decided here, by pure functions
 * (`decideProxyHead`: `parseProxyHead`, then `hostAllowed`); the very name decided is the one
 * dialled. The sockets are a Perl child's (`PROXY_SCRIPT`, core modules only): the tool itself
 * holds no network permission (Deno asks `--allow-net=unix:PATH` even of a Unix socket, and the
 * tool's permission lines never carry `--allow-net`). The child reads each connection's head (at
 * most 16 KiB, within 10 s), asks this process over its stdin and stdout, and either answers what
 * it is told or dials the decided `host:port` and copies bytes both ways. A refused name gets a
 * 403 and is recorded (`refused`, for the run's ledger row); a malformed head a 400; more than 64
 * connections at once a 503.
 *
 * @example
 * ```ts
 * import { decideProxyHead } from "./net_proxy.ts";
 * import { parseNetworkRules } from "../policy/network_rules.ts";
 * import assert from "node:assert/strict";
 * const p = parseNetworkRules(["a.example"]);
 * assert.ok(p.ok);
 * const rules = p.ok ? p.rules : [];
 * assert.equal(decideProxyHead("CONNECT a.example:443 HTTP/1.1\r\n\r\n", rules).allow, true);
 * const no = decideProxyHead("CONNECT b.example:443 HTTP/1.1\r\n\r\n", rules);
 * assert.ok(!no.allow && no.refused === "b.example:443");
 * ```
 * @module
 */
import { hostAllowed, type NetworkRule, normalizeHost } from "../policy/network_rules.ts";

/** The largest request head the proxy reads. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** Connections served at once; more are answered 503. */
export const MAX_CONNECTIONS = 64;
/** Refused names kept for the ledger row (the first ones, each once). */
export const MAX_REFUSED_RECORDED = 64;
/** How long a client may take to send its request head, in seconds. */
export const HEAD_TIMEOUT_S = 10;

/** A parsed request head: where it goes and what to send there first. */
export type ProxyTarget =
  | {
    readonly ok: true;
    readonly kind: "connect" | "http";
    readonly host: string;
    readonly port: number;
    /** Bytes to send upstream before piping (the rewritten head for `http`, nothing for CONNECT). */
    readonly upstreamHead: string;
  }
  | { readonly ok: false; readonly status: 400 | 405; readonly why: string };

const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);

/**
 * Reads a request head (the text up to the blank line) into a target. Pure.
 *
 * @example
 * ```ts
 * import { parseProxyHead } from "./net_proxy.ts";
 * import assert from "node:assert/strict";
 * const t = parseProxyHead("CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n");
 * assert.ok(t.ok && t.kind === "connect" && t.host === "a.example" && t.port === 443);
 * const h = parseProxyHead("GET http://b.example:8080/x?y HTTP/1.1\r\nHost: b.example\r\n\r\n");
 * assert.ok(h.ok && h.kind === "http" && h.upstreamHead.startsWith("GET /x?y HTTP/1.1\r\n"));
 * assert.equal(parseProxyHead("GET /x HTTP/1.1\r\n\r\n").ok, false);
 * ```
 */
export function parseProxyHead(head: string): ProxyTarget {
  const lines = head.split("\r\n");
  const parts = lines[0].split(" ");
  if (parts.length !== 3 || !/^HTTP\/1\.[01]$/.test(parts[2])) {
    return { ok: false, status: 400, why: "not an HTTP/1.x request line" };
  }
  const [method, target, version] = parts;
  if (!/^[A-Z]{1,16}$/.test(method)) return { ok: false, status: 400, why: "bad method" };
  if (method === "CONNECT") {
    const m = /^([^:/\s]+|\[[^\]\s]+\]):([0-9]{1,5})$/.exec(target);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
      return { ok: false, status: 400, why: "CONNECT needs host:port" };
    }
    return { ok: true, kind: "connect", host: m[1], port: Number(m[2]), upstreamHead: "" };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { ok: false, status: 400, why: "a proxy request needs an absolute http:// URL" };
  }
  if (url.protocol !== "http:" || !target.toLowerCase().startsWith("http://")) {
    return { ok: false, status: 405, why: "only http:// is forwarded; use CONNECT for TLS" };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, status: 400, why: "a URL with credentials is not forwarded" };
  }
  const port = url.port === "" ? 80 : Number(url.port);
  const headers = lines.slice(1).filter((l) => l !== "");
  const kept: string[] = [];
  for (const line of headers) {
    const colon = line.indexOf(":");
    if (colon <= 0) return { ok: false, status: 400, why: "a malformed header line" };
    const name = line.slice(0, colon).trim().toLowerCase();
    if (HOP_HEADERS.has(name) || name === "host") continue;
    kept.push(line);
  }
  const upstreamHead = `${method} ${url.pathname}${url.search} ${version}\r\n` +
    `Host: ${url.host}\r\n` + kept.map((l) => l + "\r\n").join("") +
    "Connection: close\r\n\r\n";
  return { ok: true, kind: "http", host: url.hostname, port, upstreamHead };
}

/** What the proxy does with one request head. */
export type ProxyDecision =
  | {
    readonly allow: true;
    /** The name to dial (normalised) and its port. */
    readonly host: string;
    readonly port: number;
    /** Bytes for the client once upstream is reached (CONNECT's 200), and for upstream first. */
    readonly toClient: string;
    readonly toUpstream: string;
    /** What the client gets when upstream cannot be reached. */
    readonly unreachable: string;
  }
  | {
    readonly allow: false;
    /** The whole answer. */
    readonly response: string;
    /** `host:port` when a rule refused it (recorded), else absent (a malformed head). */
    readonly refused?: string;
  };

function reply(status: number, reason: string, body: string): string {
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

/** The answer to a connection over {@link MAX_CONNECTIONS}. */
export const BUSY_RESPONSE: string = reply(
  503,
  "Service Unavailable",
  "agentteams: too many connections\n",
);

/**
 * Decides one request head (the bytes up to and including the blank line, as Latin-1 text; an
 * incomplete head is refused 400). Pure.
 *
 * @example
 * ```ts
 * import { decideProxyHead } from "./net_proxy.ts";
 * import assert from "node:assert/strict";
 * const d = decideProxyHead("GET http://x.example/ HTTP/1.1\r\n\r\n", []);
 * assert.ok(!d.allow && d.response.startsWith("HTTP/1.1 403 ") && d.refused === "x.example:80");
 * assert.ok(!decideProxyHead("GET http://x.example/ HTTP/1.1\r\n", []).allow);
 * ```
 */
export function decideProxyHead(head: string, rules: readonly NetworkRule[]): ProxyDecision {
  if (!head.endsWith("\r\n\r\n")) {
    return {
      allow: false,
      response: reply(400, "Bad Request", "agentteams: no complete request head\n"),
    };
  }
  const target = parseProxyHead(head);
  if (!target.ok) {
    const reason = target.status === 400 ? "Bad Request" : "Method Not Allowed";
    return { allow: false, response: reply(target.status, reason, `agentteams: ${target.why}\n`) };
  }
  const where = `${target.host}:${target.port}`;
  const name = normalizeHost(target.host);
  if (name === null || !hostAllowed(rules, name, target.port)) {
    return {
      allow: false,
      refused: where,
      response: reply(
        403,
        "Forbidden",
        `agentteams: the command's network rules do not allow ${where}\n`,
      ),
    };
  }
  return {
    allow: true,
    host: name,
    port: target.port,
    toClient: target.kind === "connect" ? "HTTP/1.1 200 Connection Established\r\n\r\n" : "",
    toUpstream: target.upstreamHead,
    unreachable: reply(502, "Bad Gateway", `agentteams: could not reach ${where}\n`),
  };
}

/**
 * The proxy's sockets (argv after `-e`: the socket path, the head cap, the head timeout, the
 * connection cap, the 503 answer in hex). Protocol on its stdout and stdin, one line each way a
 * connection: `Q <id> <hex head>` out; `A <id> <host> <port> <hex to client> <hex to upstream>
 * <hex if unreachable>` or `D <id> <hex answer>` in. `R` is printed once it listens. At the end
 * of stdin it ends, with every connection it forked.
 */
export const PROXY_SCRIPT: string = [
  "use strict; use IO::Socket::UNIX; use IO::Socket::IP; use IO::Select; use Socket;",
  "use POSIX ':sys_wait_h';",
  "my ($path, $cap, $timeout, $maxconn, $busy) = @ARGV;",
  "setpgrp(0, 0);",
  "my $l = IO::Socket::UNIX->new(Local => $path, Type => SOCK_STREAM, Listen => 128)",
  '  or die "agentteams network proxy: cannot listen on $path: $!\\n";',
  '$| = 1; STDOUT->autoflush(1); print "R\\n";',
  "my %kids; my $id = 0; my $in = IO::Select->new(\\*STDIN, $l);",
  "sub reap { while ((my $k = waitpid(-1, WNOHANG)) > 0) { delete $kids{$k} } }",
  "sub pipe2 { my ($a, $b) = @_; my $s = IO::Select->new($a, $b); my %open = ($a => 1, $b => 1); my $buf;",
  "  while (%open) { for my $r ($s->can_read) { my $to = $r == $a ? $b : $a;",
  "    my $n = sysread($r, $buf, 65536);",
  "    if (!$n) { $s->remove($r); delete $open{$r}; shutdown($to, 1); next; }",
  "    my $off = 0; while ($off < $n) { my $w = syswrite($to, $buf, $n - $off, $off); return unless $w; $off += $w; } } } }",
  "sub stop { kill 'KILL', keys %kids; exit 0 }",
  "while (1) {",
  "  reap();",
  "  for my $r ($in->can_read) {",
  "    if ($r != $l) { my $line = <STDIN>; stop() unless defined $line; next; }",
  "    my $c = $l->accept or next;",
  "    if (keys(%kids) >= $maxconn) { syswrite($c, pack('H*', $busy)); close($c); next; }",
  "    my $head = ''; my $sel = IO::Select->new($c); my $end = time + $timeout;",
  '    while (length($head) < $cap && index($head, "\\r\\n\\r\\n") < 0) {',
  "      my $left = $end - time; last if $left <= 0 || !$sel->can_read($left);",
  "      my $n = sysread($c, $head, $cap - length($head), length($head)); last unless $n; }",
  "    my $rest = ''; my $at = index($head, \"\\r\\n\\r\\n\");",
  "    if ($at >= 0) { $rest = substr($head, $at + 4); $head = substr($head, 0, $at + 4); }",
  "    $id++; print 'Q ', $id, ' ', unpack('H*', $head), \"\\n\";",
  "    my $ans = <STDIN>; stop() unless defined $ans; chomp $ans;",
  "    my @f = split / /, $ans, -1;",
  "    if ($f[0] ne 'A' || $f[1] != $id) { syswrite($c, pack('H*', $f[2] // '')) if $f[0] eq 'D'; close($c); next; }",
  "    my $k = fork(); if (!defined $k) { close($c); next; }",
  "    if ($k) { $kids{$k} = 1; close($c); next; }",
  "    close($l); close(STDIN); open(STDIN, '<', '/dev/null');",
  "    my $u = IO::Socket::IP->new(PeerHost => $f[2], PeerPort => $f[3], Proto => 'tcp', Timeout => 30);",
  "    if (!$u) { syswrite($c, pack('H*', $f[6])); exit 0; }",
  "    syswrite($c, pack('H*', $f[4])) if $f[4] ne '';",
  "    my $up = pack('H*', $f[5]) . $rest; syswrite($u, $up) if length($up);",
  "    pipe2($c, $u); exit 0;",
  "  }",
  "}",
].join("\n");

/** What the proxy needs. */
export interface NetProxyOptions {
  /** Where to listen (a new Unix socket; the caller owns its folder). */
  readonly socketPath: string;
  /** The command entry's parsed rules. */
  readonly rules: readonly NetworkRule[];
  /** The Perl that runs {@link PROXY_SCRIPT}. */
  readonly perl: string;
}

/** A running proxy. */
export interface NetProxy {
  /** `host:port` of each refused request, first ones first, each once. */
  readonly refused: readonly string[];
  /** Stops listening and ends every connection; resolves when the proxy's process has ended. */
  close(): Promise<void>;
}

/** Text whose every character is one byte (ASCII, or a Latin-1 decoded head) as hex. */
const hex = (text: string): string =>
  Array.from(text, (c) => (c.charCodeAt(0) & 0xff).toString(16).padStart(2, "0")).join("");

const latin1 = (hexText: string): string => {
  let out = "";
  for (let i = 0; i + 1 < hexText.length; i += 2) {
    out += String.fromCharCode(parseInt(hexText.slice(i, i + 2), 16));
  }
  return out;
};

/**
 * The answer line for one `Q` line of {@link PROXY_SCRIPT}, recording a refused name. Pure but for
 * `record`.
 *
 * @example
 * ```ts
 * import { answerLine } from "./net_proxy.ts";
 * import assert from "node:assert/strict";
 * const seen: string[] = [];
 * assert.match(answerLine("Q 1 474554", [], (w) => seen.push(w)), /^D 1 [0-9a-f]+$/);
 * assert.deepEqual(seen, []);
 * ```
 */
export function answerLine(
  line: string,
  rules: readonly NetworkRule[],
  record: (where: string) => void,
): string {
  const [tag, id, headHex = ""] = line.split(" ");
  if (tag !== "Q" || !/^[0-9]+$/.test(id ?? "") || !/^[0-9a-f]*$/.test(headHex)) {
    return `D 0 ${hex(reply(400, "Bad Request", "agentteams: malformed\n"))}`;
  }
  const d = decideProxyHead(latin1(headHex), rules);
  if (!d.allow) {
    if (d.refused !== undefined) record(d.refused);
    return `D ${id} ${hex(d.response)}`;
  }
  return `A ${id} ${d.host} ${d.port} ${hex(d.toClient)} ${hex(d.toUpstream)} ${
    hex(d.unreachable)
  }`;
}

/**
 * Starts the proxy on `socketPath` (resolving once it listens). See the module doc.
 *
 * @throws {Error} when the proxy's process cannot listen there.
 * @example
 * ```ts ignore
 * // A live proxy; tests/sandbox/net_proxy_test.ts drives it with real servers.
 * import { startNetProxy } from "./net_proxy.ts";
 * const p = await startNetProxy({ socketPath: "/tmp/x.sock", rules: [], perl: "/usr/bin/perl" });
 * await p.close();
 * ```
 */
export async function startNetProxy(opts: NetProxyOptions): Promise<NetProxy> {
  const child = new Deno.Command(opts.perl, {
    args: [
      "-e",
      PROXY_SCRIPT,
      opts.socketPath,
      String(MAX_HEAD_BYTES),
      String(HEAD_TIMEOUT_S),
      String(MAX_CONNECTIONS),
      hex(BUSY_RESPONSE),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: { PERL_BADLANG: "0" },
  }).spawn();
  const refused: string[] = [];
  const record = (where: string) => {
    if (refused.length < MAX_REFUSED_RECORDED && !refused.includes(where)) refused.push(where);
  };
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const errText = new Response(child.stderr).text();
  let buffered = "";
  const nextLine = async (): Promise<string | null> => {
    for (;;) {
      const nl = buffered.indexOf("\n");
      if (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        return line;
      }
      const r = await lines.read();
      if (r.done) return null;
      buffered += r.value;
    }
  };
  const ready = await nextLine();
  if (ready !== "R") {
    await writer.close().catch(() => {});
    await child.status;
    throw new Error(`the network proxy did not start: ${(await errText).trim()}`);
  }
  const enc = new TextEncoder();
  const serving = (async () => {
    for (;;) {
      const line = await nextLine();
      if (line === null) return;
      await writer.write(enc.encode(answerLine(line, opts.rules, record) + "\n"));
    }
  })().catch(() => {});
  return {
    refused,
    async close(): Promise<void> {
      await writer.close().catch(() => {});
      await child.status;
      await serving;
      await errText.catch(() => "");
    },
  };
}
