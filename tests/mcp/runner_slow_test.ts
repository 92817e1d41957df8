/**
 * `agentteams mcp runner --agent worker`, driven by the official MCP SDK client over stdio and
 * launched by the exact line `agentteams permissions mcp runner` prints, against a real
 * `agentteams serve` (started with its own printed line): a command request served and its
 * authenticated result returned; a refusal relayed with the runner's code; another agent's nonce
 * refused as the runner refuses it; the nonce never echoed; the runner absent and stopped: a
 * clear tool error each time, and the server keeps serving.
 */
import assert from "node:assert/strict";
import { withWorld } from "../e2e/_run_helpers.ts";
import { mcpRunnerBrief, startRunner, withRunner, worldEnv } from "../runner/_runner_helpers.ts";
import { connect, type Connected, permissionsLine, textOf } from "./_client.ts";

type Call = { content?: unknown; isError?: boolean; structuredContent?: Record<string, unknown> };

async function call(c: Connected, name: string, args: Record<string, unknown>): Promise<Call> {
  return await c.client.callTool({ name, arguments: args }, undefined, {
    timeout: 300_000,
  }) as Call;
}

Deno.test("mcp runner: one agent's tool calls served by a real agentteams serve", async (t) => {
  await withWorld("mcp-runner", { brief: mcpRunnerBrief }, async (w) => {
    const env = worldEnv(w);
    const argv = await permissionsLine(["mcp", "runner", "--agent", "worker"], w.project, env);
    await t.step("its permission line reads no key: only the runner's public key file", () => {
      const read = (argv.find((a) => a.startsWith("--allow-read=")) ?? "").split("=")[1].split(",");
      assert.ok(!read.includes(w.keyDir), read.join(","));
      const inKeyDir = read.filter((p) => p.startsWith(w.keyDir));
      assert.deepEqual(inKeyDir, [`${w.keyDir}/runner-x25519.pub.pem`]);
      const write = (argv.find((a) => a.startsWith("--allow-write=")) ?? "").split("=")[1];
      assert.equal(write, `${w.project}/.agentteams-queue`);
      assert.ok(!argv.some((a) => a.startsWith("--allow-run") || a.startsWith("--allow-net")));
    });
    const c = await connect(argv, w.project, env);
    try {
      await t.step("tools/list", async () => {
        const { tools } = await c.client.listTools() as { tools: { name: string }[] };
        assert.deepEqual(tools.map((x) => x.name), [
          "write_file",
          "delete_file",
          "run_command",
          "request_status",
        ]);
      });
      await t.step("the runner absent: NO_RUNNER as a tool error, quickly", async () => {
        // No runner has ever started here: there is no queue.
        const r = await call(c, "run_command", {
          dispatch: "0".repeat(32),
          argv: ["true"],
          purpose: "absent",
        });
        assert.equal(r.isError, true);
        assert.match(textOf(r), /^NO_RUNNER: there is no queue/);
      });
      await withRunner(w, async () => {
        const nonce = await w.dispatch("worker");
        const otherNonce = await w.dispatch("other");
        await t.step(
          "run_command: served, the runner's authenticated result returned",
          async () => {
            const r = await call(c, "run_command", {
              dispatch: nonce,
              argv: ["echo", "hello-mcp"],
              purpose: "the mcp runner test",
            });
            assert.equal(r.isError, undefined, textOf(r));
            const result = r.structuredContent?.result as Record<string, unknown>;
            assert.equal(result.exit, 0);
            assert.equal(result.stdout, "hello-mcp\n");
            assert.equal(result.agent, "worker");
            assert.ok(!JSON.stringify(r).includes(nonce), "the nonce came back in the result");
            const rows = w.rows().filter((x) =>
              (x as { action?: string }).action === "run-request"
            );
            assert.equal(rows.length, 1, "no run-request row in the ledger");
            assert.equal((rows[0] as { agent?: string }).agent, "worker");
          },
        );
        await t.step("a command off the allowlist: the runner's refusal, relayed", async () => {
          const r = await call(c, "run_command", {
            dispatch: nonce,
            argv: ["rm", "-rf", "src"],
            purpose: "x",
          });
          assert.equal(r.isError, true);
          assert.match(textOf(r), /^[A-Z_]+: /);
          assert.ok(!textOf(r).includes(nonce));
          assert.ok(Deno.statSync(`${w.project}/src/a.txt`).isFile);
        });
        await t.step(
          "another agent's nonce: refused as the runner refuses an unknown one",
          async () => {
            const a = await call(c, "run_command", {
              dispatch: otherNonce,
              argv: ["true"],
              purpose: "x",
            });
            const b = await call(c, "run_command", {
              dispatch: "f".repeat(32),
              argv: ["true"],
              purpose: "x",
            });
            assert.equal(a.isError, true);
            assert.equal(textOf(a), textOf(b));
            assert.ok(!textOf(a).includes(otherNonce));
          },
        );
        await t.step("request_status of an id this server never queued", async () => {
          const r = await call(c, "request_status", { request: "a".repeat(32) });
          assert.equal(r.isError, true);
          assert.match(textOf(r), /^REQUEST_NOT_QUEUED: /);
        });
      });
      await t.step(
        "the runner stopped: the queue is left, nobody serves; a clear tool error",
        async () => {
          const r = await call(c, "run_command", {
            dispatch: "0".repeat(32),
            argv: ["true"],
            purpose: "stopped",
            wait_s: 2,
          });
          assert.equal(r.isError, true);
          assert.match(textOf(r), /^(RUNNER_STOPPED|RUNNER_UNAVAILABLE): /);
        },
      );
      await t.step("the runner stopping in the middle of a call", async () => {
        const runner = await startRunner(w);
        const nonce = await w.dispatch("worker");
        const pending = call(c, "run_command", {
          dispatch: nonce,
          argv: ["sleep", "3"],
          purpose: "stopping mid-call",
          wait_s: 30,
        });
        await new Promise((r) => setTimeout(r, 500));
        await runner.stop();
        const r = await pending;
        // Either the runner finished the command before it stopped, or the call says it stopped.
        if (r.isError === true) assert.match(textOf(r), /^(RUNNER_STOPPED|RUNNER_UNAVAILABLE): /);
        else assert.equal((r.structuredContent?.result as { exit: number }).exit, 0);
      });
      await t.step("still serving", async () => {
        assert.deepEqual(await c.client.ping(), {});
      });
    } finally {
      await c.close();
    }
  });
});
