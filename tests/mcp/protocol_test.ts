/**
 * What no real client sends, sent as raw bytes to a real `agentteams mcp readfs` process (and to
 * the framing functions): malformed JSON, a batch, a reused id, a notification with an id, an
 * unknown method, a call before initialize, an over-long line, invalid UTF-8, stdin closed in the
 * middle of a call. Each is answered with its JSON-RPC code and the server keeps serving.
 */
import assert from "node:assert/strict";
import { classifyLine, IdWindow, MAX_LINE_BYTES, readLines } from "../../lib/mcp/jsonrpc.ts";
import { argsProblem, PROTOCOL_VERSIONS } from "../../lib/mcp/server.ts";
import { initLines, permissionsLine, raw, serverEnv } from "./_client.ts";
import { fileTempDir } from "../_helpers/mod.ts";

function tempRoot(): { root: string; home: string } {
  const base = fileTempDir("mcp-proto");
  Deno.mkdirSync(`${base}/proj/src`, { recursive: true });
  Deno.mkdirSync(`${base}/home`);
  Deno.writeTextFileSync(`${base}/proj/src/a.txt`, "alpha\n");
  return { root: `${base}/proj`, home: `${base}/home` };
}

const line = (o: unknown): string => JSON.stringify(o) + "\n";
const callLine = (id: number | string, path = "src/a.txt"): string =>
  line({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "read_file", arguments: { path } },
  });

Deno.test("classifyLine: every shape", () => {
  const cases: [string, string, number | null][] = [
    ["{", "invalid", -32700],
    ["[]", "invalid", -32600],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', "invalid", -32600],
    ["7", "invalid", -32600],
    ['{"id":1,"method":"ping"}', "invalid", -32600],
    ['{"jsonrpc":"1.0","id":1,"method":"ping"}', "invalid", -32600],
    ['{"jsonrpc":"2.0","id":null,"method":"ping"}', "invalid", -32600],
    ['{"jsonrpc":"2.0","id":1.5,"method":"ping"}', "invalid", -32600],
    ['{"jsonrpc":"2.0","id":{},"method":"ping"}', "invalid", -32600],
    ['{"jsonrpc":"2.0","id":1,"method":7}', "invalid", -32600],
    ['{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}', "invalid", -32602],
    ['{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}', "invalid", -32600],
    ['{"jsonrpc":"2.0","id":1,"result":{}}', "response", null],
    ['{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}', "notification", null],
    ['{"jsonrpc":"2.0","id":"a","method":"ping"}', "request", null],
  ];
  for (const [text, kind, code] of cases) {
    const m = classifyLine(text);
    assert.equal(m.kind, kind, text);
    if (m.kind === "invalid") assert.equal(m.code, code, text);
  }
});

Deno.test('IdWindow: a reuse is refused, memory is bounded, 1 and "1" differ', () => {
  const w = new IdWindow(3);
  assert.equal(w.use(1), true);
  assert.equal(w.use("1"), true);
  assert.equal(w.use(1), false);
  for (let i = 2; i < 10; i++) assert.equal(w.use(i), true);
  // 1 fell out of the window.
  assert.equal(w.use(1), true);
});

Deno.test("readLines: CRLF, a line over the cap dropped as it arrives, invalid UTF-8", async () => {
  const over = "x".repeat(MAX_LINE_BYTES + 10);
  const parts = [
    "a\r\nb",
    "c\n",
    over.slice(0, 500_000),
    over.slice(500_000) + "\n",
    "\xff\n",
    "d",
  ];
  const enc = new TextEncoder();
  const bytes = parts.map((p) => p === "\xff\n" ? new Uint8Array([0xff, 10]) : enc.encode(p));
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (const b of bytes) c.enqueue(b);
      c.close();
    },
  });
  const got = [];
  for await (const l of readLines(stream)) got.push(l);
  assert.deepEqual(got, [{ text: "a" }, { text: "bc" }, { tooLong: true }, { notUtf8: true }, {
    text: "d",
  }]);
});

Deno.test("argsProblem: unknown, missing, mistyped, too long", () => {
  const spec = {
    path: { type: "string", description: "", required: true, max: 3 },
    n: { type: "integer", description: "", min: 1, max: 2 },
  } as const;
  assert.equal(argsProblem(spec, { path: "a" }), null);
  assert.match(argsProblem(spec, {}) ?? "", /path is required/);
  assert.match(argsProblem(spec, { path: "abcd" }) ?? "", /longer than 3/);
  assert.match(argsProblem(spec, { path: "a", x: 1 }) ?? "", /unknown argument "x"/);
  assert.match(argsProblem(spec, { path: "a", n: 3 }) ?? "", /at most 2/);
  assert.match(argsProblem(spec, { path: "a", n: 1.5 }) ?? "", /integer/);
});

Deno.test("mcp readfs over raw stdio: malformed input is answered, the server keeps serving", async () => {
  const { root, home } = tempRoot();
  const env = serverEnv(home);
  const argv = await permissionsLine(["mcp", "readfs"], root, env);
  const p = raw(argv, root, env);
  // Before initialize: tools are refused, ping is answered.
  await p.send(callLine("early") + line({ jsonrpc: "2.0", id: "p0", method: "ping" }));
  const [early, ping0] = await p.read(2);
  assert.equal((early.error as { code: number }).code, -32600);
  assert.deepEqual(ping0.result, {});
  await p.send(initLines(1));
  const [init] = await p.read(1);
  assert.equal((init.result as { protocolVersion: string }).protocolVersion, "2025-11-25");
  const sends = [
    "{not json\n",
    line([{ jsonrpc: "2.0", id: 2, method: "ping" }]),
    line({ jsonrpc: "2.0", id: 3, method: "notifications/initialized" }),
    line({ jsonrpc: "2.0", id: 4, method: "resources/list" }),
    line({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "nope" } }),
    callLine(6),
    callLine(6),
    line({
      jsonrpc: "2.0",
      id: 7,
      method: "initialize",
      params: { protocolVersion: "2025-11-25" },
    }),
    "\n",
    line({ jsonrpc: "2.0", id: 8, result: {} }),
    line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 6 } }),
    "x".repeat(MAX_LINE_BYTES + 1) + "\n",
    callLine(9),
  ];
  await p.send(sends.join(""));
  const got = await p.read(10);
  const codes = got.map((m) => m.error === undefined ? "ok" : (m.error as { code: number }).code);
  assert.deepEqual(codes, [
    -32700,
    -32600,
    -32600,
    -32601,
    -32602,
    "ok",
    -32600,
    -32600,
    -32700,
    "ok",
  ]);
  assert.deepEqual(got.map((m) => m.id), [null, null, 3, 4, 5, 6, 6, 7, null, 9]);
  assert.match((got[6].error as { message: string }).message, /used already/);
  assert.match((got[4].error as { message: string }).message, /unknown tool "nope"/);
  await p.closeIn();
  assert.equal((await p.status()).code, 0);
});

Deno.test("mcp readfs: an older protocol revision is kept, an unknown one answered with the newest", async () => {
  const { root, home } = tempRoot();
  const env = serverEnv(home);
  const argv = await permissionsLine(["mcp", "readfs"], root, env);
  for (
    const [asked, want] of [["2025-03-26", "2025-03-26"], ["1999-01-01", PROTOCOL_VERSIONS[0]]]
  ) {
    const p = raw(argv, root, env);
    await p.send(line({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: "r", version: "1" } },
    }));
    const [r] = await p.read(1);
    assert.equal((r.result as { protocolVersion: string }).protocolVersion, want);
    await p.closeIn();
    assert.equal((await p.status()).code, 0);
  }
});

Deno.test("mcp readfs: stdin closed in the middle of calls: each is answered, then a clean exit", async () => {
  const { root, home } = tempRoot();
  for (let i = 0; i < 200; i++) {
    Deno.writeTextFileSync(`${root}/src/f${i}.txt`, "needle\n".repeat(50));
  }
  const env = serverEnv(home);
  const p = raw(await permissionsLine(["mcp", "readfs"], root, env), root, env);
  const grep = line({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "grep", arguments: { pattern: "needle" } },
  });
  // The last line is cut mid-message: it is read as what it is, not JSON.
  await p.send(initLines(1) + grep + callLine(3) + '{"jsonrpc":"2.0","id":4,"meth');
  await p.closeIn();
  const got = await p.read(4);
  assert.equal(got[1].id, 2);
  const matches =
    (got[1].result as { structuredContent: { matches: unknown[]; truncated: boolean } })
      .structuredContent;
  assert.equal(matches.matches.length, 500);
  assert.equal(matches.truncated, true);
  assert.equal(got[2].id, 3);
  assert.equal((got[3].error as { code: number }).code, -32700);
  assert.equal((await p.status()).code, 0);
});
