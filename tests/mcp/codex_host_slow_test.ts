/**
 * A real host wired to `agentteams mcp readfs`: Codex (npm `@openai/codex`, test-only, in the
 * tests' lockfile) with `mcp_servers.agentteams_readfs` set to the exact line `agentteams
 * permissions mcp readfs --root .` prints, and a model provider that is a local stand-in (this
 * test's own Responses-API server, no network beyond 127.0.0.1). The stand-in's first answer is a
 * tool call: Codex's `exec` runs `tools.mcp__agentteams_readfs__read_file({path})`, so Codex starts
 * the server, initializes it, calls the tool over stdio and hands the result back to the "model"
 * in its next request, where the test finds the file's sha256. A second call, for a path in the
 * control plane, comes back as the server's tool error. Nothing in the project is written.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { permissionsLine, serverEnv, snapshot } from "./_client.ts";
import { fileTempDir } from "../_helpers/mod.ts";

const CODEX = "npm:@openai/codex@0.171.0";
const LOCK = new URL("../deno.lock", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

type Ev = Record<string, unknown>;

function sse(events: Ev[]): Response {
  return new Response(
    events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""),
    {
      headers: { "content-type": "text/event-stream" },
    },
  );
}

function completed(id: string): Ev {
  return {
    type: "response.completed",
    response: {
      id,
      usage: {
        input_tokens: 1,
        input_tokens_details: null,
        output_tokens: 1,
        output_tokens_details: null,
        total_tokens: 2,
      },
    },
  };
}

/** The stand-in model: a tool call through `exec` first, then a plain answer. */
function standIn(script: string) {
  const bodies: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = JSON.parse(await req.text()) as Record<string, unknown>;
    bodies.push(body);
    const n = bodies.length;
    if (n === 1) {
      return sse([
        { type: "response.created", response: { id: "r1" } },
        {
          type: "response.output_item.done",
          output_index: 0,
          item: {
            type: "custom_tool_call",
            id: "ctc1",
            call_id: "call1",
            name: "exec",
            input: script,
          },
        },
        completed("r1"),
      ]);
    }
    return sse([
      { type: "response.created", response: { id: `r${n}` } },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: {
          type: "message",
          role: "assistant",
          id: `m${n}`,
          content: [{ type: "output_text", text: "done" }],
        },
      },
      completed(`r${n}`),
    ]);
  });
  return { bodies, url: `http://127.0.0.1:${server.addr.port}/v1`, close: () => server.shutdown() };
}

/** The tool outputs Codex handed back to the model. */
function toolOutputs(bodies: readonly Record<string, unknown>[]): string {
  const out: string[] = [];
  for (const b of bodies) {
    for (const item of (b.input ?? []) as Record<string, unknown>[]) {
      if (item.type === "custom_tool_call_output") out.push(JSON.stringify(item.output));
    }
  }
  return out.join("\n");
}

async function codexReads(
  script: string,
): Promise<{ outputs: string; first: string; log: string }> {
  const base = fileTempDir("mcp-codex");
  const project = `${base}/proj`;
  for (const d of [project, `${project}/.agentteams`, `${base}/home`, `${base}/codex-home`]) {
    Deno.mkdirSync(d, { recursive: true });
  }
  Deno.writeTextFileSync(`${project}/a.txt`, "hello codex\n");
  Deno.writeTextFileSync(`${project}/.agentteams/proposal-ledger.jsonl`, "ledger\n");
  const env = serverEnv(`${base}/home`);
  const line = await permissionsLine(["mcp", "readfs", "--root", "."], project, env);
  const before = snapshot(project);
  const model = standIn(script);
  try {
    const toml = (v: string) => JSON.stringify(v);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `--config=${CONFIG}`,
        `--lock=${LOCK}`,
        CODEX,
        "exec",
        "--skip-git-repo-check",
        "-c",
        "model_provider=standin",
        "-c",
        `model_providers.standin={name="standin",base_url=${toml(model.url)},wire_api="responses"}`,
        "-c",
        `mcp_servers.agentteams_readfs={command=${toml(line[0])},args=[${
          line.slice(1).map(toml).join(",")
        }]}`,
        "read a.txt",
      ],
      cwd: project,
      env: {
        HOME: `${base}/home`,
        CODEX_HOME: `${base}/codex-home`,
        PATH: "/usr/bin:/bin",
        // Deno's own cache (the npm packages are in it already); not the temp HOME's.
        DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(180_000),
    }).output();
    const log = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, log);
    assert.equal(snapshot(project), before, "something wrote in the project");
    return {
      outputs: toolOutputs(model.bodies),
      first: JSON.stringify(model.bodies[0] ?? {}),
      log,
    };
  } finally {
    await model.close();
  }
}

Deno.test("codex, a real host, runs agentteams mcp readfs from its mcp_servers line and reads through it", async () => {
  const { outputs, first, log } = await codexReads(
    'const r = await tools.mcp__agentteams_readfs__read_file({path: "a.txt"}); text(r);',
  );
  // The server's instructions reached the model's prompt: Codex initialized it.
  assert.ok(first.includes("mcp__agentteams_readfs"), "Codex offered no agentteams_readfs tools");
  const sha = createHash("sha256").update("hello codex\n").digest("hex");
  assert.ok(outputs.includes(sha), `the read's sha256 did not come back: ${outputs}\n${log}`);
  assert.ok(outputs.includes("hello codex"), outputs);
});

Deno.test("codex, a real host: a control-plane path comes back as the server's tool error", async () => {
  const { outputs, log } = await codexReads(
    'const r = await tools.mcp__agentteams_readfs__read_file({path: ".agentteams/proposal-ledger.jsonl"}); text(r);',
  );
  assert.ok(outputs.includes("CONTROL_PLANE"), `${outputs}\n${log}`);
  assert.ok(!outputs.includes("ledger\\\\n") && !outputs.includes('"ledger'), outputs);
});
