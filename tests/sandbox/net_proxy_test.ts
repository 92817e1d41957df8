import assert from "node:assert/strict";
import { parseNetworkRules } from "../../lib/policy/network_rules.ts";
import { answerLine, parseProxyHead, startNetProxy } from "../../lib/sandbox/net_proxy.ts";

const PERL = "/usr/bin/perl";

const enc = new TextEncoder();
const dec = new TextDecoder();

function rulesOf(list: string[]) {
  const p = parseNetworkRules(list);
  if (!p.ok) throw new Error(p.problem);
  return p.rules;
}

async function readAll(conn: Deno.Conn): Promise<string> {
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(65536);
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
  }
  return dec.decode(new Uint8Array(chunks.flatMap((c) => [...c])));
}

async function readUntil(conn: Deno.Conn, marker: string): Promise<string> {
  let text = "";
  const buf = new Uint8Array(4096);
  while (!text.includes(marker)) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += dec.decode(buf.subarray(0, n));
  }
  return text;
}

/** A TCP echo server on 127.0.0.1 and an HTTP server, both local. */
async function withWorld(
  fn: (
    w: { echoPort: number; httpPort: number; sock: string; seen: string[]; echoed: () => number },
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const echo = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const echoPort = (echo.addr as Deno.NetAddr).port;
  let echoConns = 0;
  const echoing = (async () => {
    for await (const c of echo) {
      echoConns++;
      (async () => {
        const b = new Uint8Array(1024);
        for (;;) {
          const n = await c.read(b).catch(() => null);
          if (n === null) break;
          await c.write(b.subarray(0, n));
        }
        try {
          c.close();
        } catch { /* closed */ }
      })();
    }
  })();
  const seen: string[] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      seen.push(`${req.method} ${new URL(req.url).pathname} host=${req.headers.get("host")}`);
      return new Response("hello from upstream\n");
    },
  );
  const httpPort = server.addr.port;
  try {
    await fn({ echoPort, httpPort, sock: `${dir}/proxy.sock`, seen, echoed: () => echoConns });
  } finally {
    echo.close();
    ac.abort();
    await server.finished;
    await echoing.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("net proxy: CONNECT to an allowed name and port is piped both ways", async () => {
  await withWorld(async ({ echoPort, sock }) => {
    const proxy = await startNetProxy({
      socketPath: sock,
      rules: rulesOf([`localhost:${echoPort}`]),
      perl: PERL,
    });
    const c = await Deno.connect({ transport: "unix", path: sock });
    await c.write(enc.encode(`CONNECT localhost:${echoPort} HTTP/1.1\r\nHost: x\r\n\r\n`));
    const head = await readUntil(c, "\r\n\r\n");
    assert.match(head, /^HTTP\/1\.1 200 /);
    await c.write(enc.encode("ping-through"));
    assert.equal(await readUntil(c, "ping-through"), "ping-through");
    c.close();
    await proxy.close();
    assert.deepEqual(proxy.refused, []);
  });
});

Deno.test("net proxy: plain http:// is re-sent in origin form with the URL's host", async () => {
  await withWorld(async ({ httpPort, sock, seen }) => {
    const proxy = await startNetProxy({
      socketPath: sock,
      rules: rulesOf([`localhost:${httpPort}`]),
      perl: PERL,
    });
    const c = await Deno.connect({ transport: "unix", path: sock });
    await c.write(
      enc.encode(
        `GET http://localhost:${httpPort}/a/b?c=1 HTTP/1.1\r\nHost: evil.example\r\n` +
          `Proxy-Authorization: x\r\nKeep-Alive: 5\r\n\r\n`,
      ),
    );
    const text = await readAll(c);
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.match(text, /hello from upstream/);
    assert.deepEqual(seen, [`GET /a/b host=localhost:${httpPort}`]);
    await proxy.close();
  });
});

Deno.test("net proxy: refused names, addresses and ports get 403, are recorded, never dialled", async () => {
  await withWorld(async ({ echoPort, httpPort, sock, seen, echoed }) => {
    const proxy = await startNetProxy({
      socketPath: sock,
      rules: rulesOf([`localhost:${echoPort}`]),
      perl: PERL,
    });
    const attempts = [
      `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n\r\n`,
      `CONNECT [::1]:${echoPort} HTTP/1.1\r\n\r\n`,
      `CONNECT localhost:${httpPort} HTTP/1.1\r\n\r\n`,
      `CONNECT other.example:${echoPort} HTTP/1.1\r\n\r\n`,
      `GET http://127.0.0.1:${httpPort}/ HTTP/1.1\r\n\r\n`,
      `GET http://0x7f000001:${httpPort}/ HTTP/1.1\r\n\r\n`,
      `GET http://localhost:${httpPort}/ HTTP/1.1\r\n\r\n`,
    ];
    for (const a of attempts) {
      const c = await Deno.connect({ transport: "unix", path: sock });
      await c.write(enc.encode(a));
      const text = await readAll(c);
      assert.match(text, /^HTTP\/1\.1 403 /, a);
      assert.match(text, /network rules do not allow/, a);
    }
    await proxy.close();
    assert.equal(echoed(), 0);
    assert.deepEqual(seen, []);
    assert.deepEqual(proxy.refused, [
      `127.0.0.1:${echoPort}`,
      `[::1]:${echoPort}`,
      `localhost:${httpPort}`,
      `other.example:${echoPort}`,
      `127.0.0.1:${httpPort}`,
    ]);
  });
});

Deno.test("net proxy: malformed heads get 400/405 and nothing is dialled", async () => {
  await withWorld(async ({ echoPort, sock, echoed }) => {
    const proxy = await startNetProxy({
      socketPath: sock,
      rules: rulesOf([`localhost:${echoPort}`]),
      perl: PERL,
    });
    const cases: [string, RegExp][] = [
      ["GET /x HTTP/1.1\r\n\r\n", /^HTTP\/1\.1 400 /],
      [`GET https://localhost:${echoPort}/ HTTP/1.1\r\n\r\n`, /^HTTP\/1\.1 405 /],
      [`GET http://u:p@localhost:${echoPort}/ HTTP/1.1\r\n\r\n`, /^HTTP\/1\.1 400 /],
      ["CONNECT localhost HTTP/1.1\r\n\r\n", /^HTTP\/1\.1 400 /],
      ["CONNECT localhost:99999 HTTP/1.1\r\n\r\n", /^HTTP\/1\.1 400 /],
      ["garbage\r\n\r\n", /^HTTP\/1\.1 400 /],
      ["X".repeat(20000), /^HTTP\/1\.1 400 /],
    ];
    for (const [a, want] of cases) {
      const c = await Deno.connect({ transport: "unix", path: sock });
      await c.write(enc.encode(a)).catch(() => 0);
      assert.match(await readAll(c), want, a.slice(0, 40));
    }
    await proxy.close();
    assert.equal(echoed(), 0);
  });
});

Deno.test("net proxy: closing ends open tunnels and the socket stops answering", async () => {
  await withWorld(async ({ echoPort, sock }) => {
    const proxy = await startNetProxy({
      socketPath: sock,
      rules: rulesOf([`localhost:${echoPort}`]),
      perl: PERL,
    });
    const c = await Deno.connect({ transport: "unix", path: sock });
    await c.write(enc.encode(`CONNECT localhost:${echoPort} HTTP/1.1\r\n\r\n`));
    assert.match(await readUntil(c, "\r\n\r\n"), /^HTTP\/1\.1 200 /);
    await proxy.close();
    assert.equal(await readAll(c), "");
    c.close();
    await assert.rejects(() => Deno.connect({ transport: "unix", path: sock }));
  });
});

Deno.test("answerLine: a malformed line from the proxy's process is answered 400, never allowed", () => {
  const seen: string[] = [];
  for (const line of ["", "Q", "Q x 00", "A 1 h 1", "Q 1 zz", "Q 1 47 extra"]) {
    assert.match(answerLine(line, [], (w) => seen.push(w)), /^D /, line);
  }
  assert.deepEqual(seen, []);
});

Deno.test("parseProxyHead drops hop-by-hop headers and pins the Host to the URL", () => {
  const t = parseProxyHead(
    "POST http://a.example/p HTTP/1.0\r\nHost: b.example\r\nConnection: keep-alive\r\n" +
      "Content-Length: 3\r\n\r\n",
  );
  assert.ok(t.ok);
  if (t.ok) {
    assert.equal(
      t.upstreamHead,
      "POST /p HTTP/1.0\r\nHost: a.example\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
    );
  }
});
