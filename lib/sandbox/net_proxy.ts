/**
 * The network allowlist's proxy: an HTTP proxy on a Unix socket, outside the sandbox, that lets a
 * confined command reach only the names its command entry lists (`network: [...]`). The command
 * runs in a network namespace of its own with no route out; the socket is bound into the sandbox
 * and a forwarder there (`net_forwarder.ts`) turns it into the `HTTP_PROXY` address.
 *
 * Two request forms, one request a connection: `CONNECT host:port` (TLS and anything else, piped
 * once allowed) and an absolute-form `http://` request (re-sent in origin form with
 * `Connection: close`). The host a request names is decided by `hostAllowed` and the very name
 * decided is the one dialled, so what was checked is what is reached. A refused name gets a 403
 * and is recorded (`refused`, for the run's ledger row); a malformed head gets a 400. The proxy
 * never reads more than 16 KiB of head and never serves more than 64 connections at once.
 *
 * @example
 * ```ts ignore
 * // Needs a Unix socket and a server to reach; tests/sandbox/net_proxy_test.ts runs it.
 * import { startNetProxy } from "./net_proxy.ts";
 * const proxy = startNetProxy({ socketPath: "/tmp/p.sock", rules: [] });
 * await proxy.close();
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
/** How long a client may take to send its request head. */
export const HEAD_TIMEOUT_MS = 10_000;

/** One upstream connection, as the proxy uses it: bytes in, bytes out, a half close. */
export interface Upstream {
  /** The next bytes from upstream, `null` at its end. */
  read(buf: Uint8Array): Promise<number | null>;
  /** Writes some bytes upstream, resolving with how many. */
  write(bytes: Uint8Array): Promise<number>;
  /** No more bytes go upstream. */
  closeWrite(): Promise<void>;
  /** Ends the connection. */
  close(): void;
}

/** Dials an allowed `host:port`; rejects when it cannot be reached. */
export type Dial = (host: string, port: number) => Promise<Upstream>;

/** What the proxy needs. */
export interface NetProxyOptions {
  /** Where to listen (a new Unix socket; the caller owns its folder). */
  readonly socketPath: string;
  /** The command entry's parsed rules. */
  readonly rules: readonly NetworkRule[];
  /** Dials an allowed name: `perlDial` (the tool itself has no network permission). */
  readonly dial: Dial;
}

/** A running proxy. */
export interface NetProxy {
  /** `host:port` of each refused request, first ones first, each once. */
  readonly refused: readonly string[];
  /** Stops listening and closes every connection; resolves when all are done. */
  close(): Promise<void>;
}

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

const encoder = new TextEncoder();

function reply(status: number, reason: string, body: string): Uint8Array {
  return encoder.encode(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\n` +
      `Content-Length: ${encoder.encode(body).length}\r\nConnection: close\r\n\r\n${body}`,
  );
}

async function writeAll(conn: Upstream, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

/** Reads up to the blank line; returns the head and what came after it, or null. */
async function readHead(
  conn: Deno.Conn,
): Promise<{ head: string; rest: Uint8Array } | null> {
  const buf = new Uint8Array(MAX_HEAD_BYTES);
  let len = 0;
  while (len < buf.length) {
    const n = await conn.read(buf.subarray(len));
    if (n === null) return null;
    const from = Math.max(0, len - 3);
    len += n;
    for (let i = from; i + 3 < len; i++) {
      if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) {
        return {
          head: new TextDecoder("latin1").decode(buf.subarray(0, i + 4)),
          rest: buf.slice(i + 4, len),
        };
      }
    }
  }
  return null;
}

async function pump(from: Upstream, to: Upstream): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) break;
      await writeAll(to, buf.subarray(0, n));
    }
  } catch {
    // a reset on either side ends this direction
  }
  try {
    await to.closeWrite();
  } catch {
    // already closed
  }
}

function closeQuietly(c: Upstream | null): void {
  try {
    c?.close();
  } catch {
    // already closed
  }
}

/**
 * Starts the proxy on `socketPath`. See the module doc for what it allows.
 *
 * @example
 * ```ts ignore
 * // A live proxy; tests/sandbox/net_proxy_test.ts drives it with real servers.
 * import { startNetProxy } from "./net_proxy.ts";
 * const p = startNetProxy({ socketPath: "/tmp/x.sock", rules: [] });
 * await p.close();
 * ```
 */
export function startNetProxy(opts: NetProxyOptions): NetProxy {
  const dial = opts.dial;
  const listener = Deno.listen({ transport: "unix", path: opts.socketPath });
  const refused: string[] = [];
  const live = new Set<Upstream>();
  const tasks = new Set<Promise<void>>();
  let closing = false;

  const record = (what: string) => {
    if (refused.length < MAX_REFUSED_RECORDED && !refused.includes(what)) refused.push(what);
  };

  const serve = async (client: Deno.Conn): Promise<void> => {
    let upstream: Upstream | null = null;
    const timer = setTimeout(() => closeQuietly(client), HEAD_TIMEOUT_MS);
    try {
      if (live.size > MAX_CONNECTIONS) {
        await writeAll(
          client,
          reply(503, "Service Unavailable", "agentteams: too many connections\n"),
        );
        return;
      }
      const got = await readHead(client);
      clearTimeout(timer);
      if (got === null) {
        await writeAll(client, reply(400, "Bad Request", "agentteams: no complete request head\n"));
        return;
      }
      const target = parseProxyHead(got.head);
      if (!target.ok) {
        const reason = target.status === 400 ? "Bad Request" : "Method Not Allowed";
        await writeAll(client, reply(target.status, reason, `agentteams: ${target.why}\n`));
        return;
      }
      const where = `${target.host}:${target.port}`;
      const name = normalizeHost(target.host);
      if (name === null || !hostAllowed(opts.rules, name, target.port)) {
        record(where);
        await writeAll(
          client,
          reply(
            403,
            "Forbidden",
            `agentteams: the command's network rules do not allow ${where}\n`,
          ),
        );
        return;
      }
      try {
        upstream = await dial(name, target.port);
      } catch {
        await writeAll(client, reply(502, "Bad Gateway", `agentteams: could not reach ${where}\n`));
        return;
      }
      live.add(upstream);
      if (target.kind === "connect") {
        await writeAll(client, encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
      } else {
        await writeAll(upstream, encoder.encode(target.upstreamHead));
      }
      if (got.rest.length > 0) await writeAll(upstream, got.rest);
      await Promise.all([pump(client, upstream), pump(upstream, client)]);
    } catch {
      // the client or upstream went away mid-request: nothing to answer
    } finally {
      clearTimeout(timer);
      if (upstream) live.delete(upstream);
      closeQuietly(upstream);
      closeQuietly(client);
      live.delete(client);
    }
  };

  const accepting = (async () => {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        return;
      }
      if (closing) {
        closeQuietly(conn);
        return;
      }
      live.add(conn);
      const t = serve(conn);
      tasks.add(t);
      t.finally(() => tasks.delete(t));
    }
  })();

  return {
    refused,
    async close(): Promise<void> {
      closing = true;
      try {
        listener.close();
      } catch {
        // already closed
      }
      for (const c of live) closeQuietly(c);
      await accepting;
      await Promise.allSettled([...tasks]);
    },
  };
}

/**
 * The dialer (argv after `-e`: host, port): connects (IPv4 or IPv6, as the resolver answers),
 * writes one byte on stdout (`Y` connected, `N` not), then copies stdin to the connection and the
 * connection to stdout until both ends are done. Core Perl modules only.
 */
export const DIAL_SCRIPT: string = [
  "use strict; use IO::Socket::IP; use IO::Select;",
  "my ($host, $port) = @ARGV;",
  "my $s = IO::Socket::IP->new(PeerHost => $host, PeerPort => $port, Proto => 'tcp', Timeout => 30)",
  "  or do { syswrite(STDOUT, 'N'); exit 2 };",
  "syswrite(STDOUT, 'Y');",
  "my $sel = IO::Select->new(\\*STDIN, $s); my %open = (0 => 1, 1 => 1); my $buf;",
  "while (%open) {",
  "  for my $r ($sel->can_read) {",
  "    my ($to, $k) = $r == $s ? (\\*STDOUT, 1) : ($s, 0);",
  "    my $n = sysread($r, $buf, 65536);",
  "    if (!$n) { $sel->remove($r); delete $open{$k}; $k ? close(STDOUT) : shutdown($s, 1); next; }",
  "    my $off = 0;",
  "    while ($off < $n) { my $w = syswrite($to, $buf, $n - $off, $off); exit 0 unless $w; $off += $w; }",
  "  }",
  "}",
].join("\n");

/**
 * A {@link Dial} that connects through a Perl child (`DIAL_SCRIPT`): the tool itself is never
 * granted network access (its permission lines have no `--allow-net`), and Perl is a host program
 * it already runs. The child resolves and connects to exactly the name the proxy decided on.
 *
 * @example
 * ```ts ignore
 * // Spawns perl and connects; tests/sandbox/net_proxy_test.ts runs it against local servers.
 * import { perlDial } from "./net_proxy.ts";
 * const up = await perlDial("/usr/bin/perl")("localhost", 8080);
 * up.close();
 * ```
 */
export function perlDial(perl: string): Dial {
  return async (host, port) => {
    const child = new Deno.Command(perl, {
      args: ["-e", DIAL_SCRIPT, host, String(port)],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env: { PERL_BADLANG: "0" },
    }).spawn();
    child.status.catch(() => {});
    const reader = child.stdout.getReader();
    const writer = child.stdin.getWriter();
    let left: Uint8Array = new Uint8Array(0);
    const kill = () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // already ended
      }
    };
    const first = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (first.done || first.value.length === 0 || first.value[0] !== 0x59) {
      kill();
      throw new Error(`could not connect to ${host}:${port}`);
    }
    left = first.value.subarray(1);
    return {
      async read(buf: Uint8Array): Promise<number | null> {
        while (left.length === 0) {
          const r = await reader.read();
          if (r.done) return null;
          left = r.value;
        }
        const n = Math.min(buf.length, left.length);
        buf.set(left.subarray(0, n));
        left = left.subarray(n);
        return n;
      },
      async write(bytes: Uint8Array): Promise<number> {
        await writer.write(bytes.slice());
        return bytes.length;
      },
      async closeWrite(): Promise<void> {
        await writer.close().catch(() => {});
      },
      close(): void {
        kill();
        reader.cancel().catch(() => {});
        writer.abort().catch(() => {});
      },
    };
  };
}
