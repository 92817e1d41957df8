/**
 * The MCP conformance suite (npm `@modelcontextprotocol/conformance`, test-only) against both
 * servers. Its server mode speaks only Streamable HTTP (`--url`), and ours speak stdio, so a
 * test-only bridge below carries each POSTed JSON-RPC message to the server's stdin and its
 * answer back as `application/json`. The bridge adds nothing of its own beyond the transport:
 * a session id and 202 for notifications.
 *
 * The scenarios that apply to a server of tools with no resources, prompts, logging or sampling
 * (`server-initialize`, `ping`, `tools-list`) must pass. The rest test the suite's own fixture
 * tools (`test_simple_text`, …) or capabilities these servers do not declare; they are run too,
 * and their outcome is printed, not asserted. `dns-rebinding-protection` tests the HTTP layer,
 * which is the bridge's, not ours.
 */
import assert from "node:assert/strict";
import { withWorld } from "../e2e/_run_helpers.ts";
import { mcpRunnerBrief, worldEnv } from "../runner/_runner_helpers.ts";
import { permissionsLine, raw, serverEnv } from "./_client.ts";
import { fileTempDir } from "../_helpers/mod.ts";

const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.1.16";
const APPLIES = ["server-initialize", "ping", "tools-list"];
const LOCK = new URL("../deno.lock", import.meta.url).pathname;
// The project's config, so that the lockfile keeps its workspace entries whatever the cwd.
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** A Streamable-HTTP front for a stdio server: one message a POST, answered in order. */
function bridge(argv: readonly string[], cwd: string, env: Record<string, string>) {
  const p = raw(argv, cwd, env);
  let chain: Promise<unknown> = Promise.resolve();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (req.method === "DELETE") return new Response(null, { status: 200 });
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const answer = chain.then(async () => {
      const text = await req.text();
      const msg = JSON.parse(text) as { id?: unknown; method?: string };
      await p.send(text.replace(/\n/g, "") + "\n");
      if (msg.id === undefined || msg.method === undefined) {
        return new Response(null, { status: 202 });
      }
      const [out] = await p.read(1);
      return new Response(JSON.stringify(out), {
        headers: {
          "content-type": "application/json",
          ...(msg.method === "initialize" ? { "mcp-session-id": crypto.randomUUID() } : {}),
        },
      });
    });
    chain = answer.catch(() => {});
    return answer;
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    async close() {
      await server.shutdown();
      await p.closeIn();
      await p.status();
    },
  };
}

async function scenario(
  url: string,
  name: string,
  cwd: string,
): Promise<{ ok: boolean; out: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--config=${CONFIG}`,
      `--lock=${LOCK}`,
      CONFORMANCE,
      "server",
      "--url",
      url,
      "--scenario",
      name,
    ],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { ok: out.success, out: text };
}

/** Each scenario is a new client session: a new server process behind a new bridge. */
async function suite(
  launch: () => ReturnType<typeof bridge>,
  cwd: string,
  what: string,
): Promise<void> {
  const list = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `--config=${CONFIG}`, `--lock=${LOCK}`, CONFORMANCE, "list"],
    stdout: "piped",
  }).output();
  const text = new TextDecoder().decode(list.stdout);
  const serverPart = text.split("Client scenarios")[0];
  const names = [...serverPart.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((m) => m[1]);
  for (const n of APPLIES) assert.ok(names.includes(n), `the suite has no ${n}: ${text}`);
  const outcome: string[] = [];
  for (const name of names) {
    const b = launch();
    let r;
    try {
      r = await scenario(b.url, name, cwd);
    } finally {
      await b.close();
    }
    outcome.push(`${name}: ${r.ok ? "pass" : "fail"}`);
    if (APPLIES.includes(name)) assert.ok(r.ok, `${what}: ${name} failed:\n${r.out}`);
  }
  console.log(`conformance, ${what}: ${outcome.join(", ")}`);
}

Deno.test("conformance suite: mcp readfs passes every scenario that applies", async () => {
  const base = fileTempDir("mcp-conf");
  Deno.mkdirSync(`${base}/proj/src`, { recursive: true });
  Deno.mkdirSync(`${base}/home`);
  Deno.mkdirSync(`${base}/out`);
  Deno.writeTextFileSync(`${base}/proj/src/a.txt`, "a\n");
  const env = serverEnv(`${base}/home`);
  const argv = await permissionsLine(["mcp", "readfs"], `${base}/proj`, env);
  await suite(() => bridge(argv, `${base}/proj`, env), `${base}/out`, "readfs");
});

Deno.test("conformance suite: mcp runner passes every scenario that applies", async () => {
  await withWorld("mcp-conf", { brief: mcpRunnerBrief }, async (w) => {
    const env = worldEnv(w);
    const argv = await permissionsLine(["mcp", "runner", "--agent", "worker"], w.project, env);
    await suite(() => bridge(argv, w.project, env), w.scratch, "runner");
  });
});
