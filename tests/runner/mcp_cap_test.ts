/**
 * The tool-server channel caps a command's timeout (120 s in the runner): a command whose entry
 * allows far more is stopped at the cap, recorded as a timeout. Served in process through the
 * runner's own `serveClaimed`, with the cap lowered to 1 s so the test need not wait two minutes;
 * the same command on the orchestrator's channel (another agent's: an agent listed in
 * `mcp_grants` acts through its MCP server only) runs to its end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { MCP_TIMEOUT_CAP_S } from "../../lib/queue/queued_request.ts";
import { serveClaimed } from "../../lib/runner/serve_one.ts";
import { type JsonObject, withWorld } from "../e2e/_run_helpers.ts";
import { makeRequest, mcpRunnerBrief } from "./_runner_helpers.ts";
import { inProcessRunner } from "./_runner_helpers.ts";

Deno.test("the tool-server channel stops a command at its cap; the orchestrator's runs it out", async () => {
  assert.equal(MCP_TIMEOUT_CAP_S, 120);
  await withWorld("rq-mcp-cap", {
    // `sleep N` under the entry's default timeout (600 s); `worker` acts through its MCP server,
    // `other` (the same command allowed) through the orchestrator's channel.
    brief: (p) => {
      const b = mcpRunnerBrief(p) as { agent_policies: Record<string, JsonObject> } & JsonObject;
      return {
        ...b,
        agent_policies: {
          ...b.agent_policies,
          other: { write_scopes: ["src/"], commands: [{ prefix: ["sleep"], args: ["[0-9]"] }] },
        },
      };
    },
  }, async (w) => {
    const state = await inProcessRunner(w, { mcpTimeoutCapS: 1 });
    // Issued with the store's own primitive: the brief says orchestrator-only, and no runner runs.
    const nonces = {
      mcp: await w.dispatchBeforeBriefChanged("worker"),
      orchestrator: await w.dispatchBeforeBriefChanged("other"),
    };
    const serve = async (channel: "mcp" | "orchestrator") => {
      const m = await makeRequest(w, {
        kind: "run-request",
        artifact: {
          kind: "command-request",
          dispatch: nonces[channel],
          argv: ["sleep", "2"],
          purpose: "outlive the cap",
        },
        ...(channel === "mcp" ? { via_agent: "worker" } : { dry_run: false }),
      }, { channel });
      const path = join(w.dir, `${m.id}.json`);
      Deno.writeFileSync(path, m.bytes);
      return await serveClaimed(state, path, m.id, channel);
    };
    const capped = await serve("mcp");
    assert.equal(capped.body.ok, false);
    assert.equal(capped.body.error?.code, "TIMEOUT", JSON.stringify(capped.body.error));
    assert.equal(capped.body.exit, 3);
    assert.match(String(capped.body.error?.message), /1-second timeout/);
    assert.equal(w.rows().at(-1)?.action, "run-request-timeout");
    const full = await serve("orchestrator");
    assert.equal(full.body.ok, true, JSON.stringify(full.body.error));
    assert.equal(full.body.exit, 0);
    assert.equal(w.rows().at(-1)?.action, "run-request");
  });
});
