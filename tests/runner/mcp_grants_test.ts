/**
 * The tool-server channel's proposals: `stage-proposal` is carried by that channel only, with its
 * `via_agent`; the brief's `mcp_grants` decide each tool (no entry, no tool; a change is direct
 * only under `approval: "direct"`; a deletion is always staged); served in process through the
 * runner's own `serveClaimed`, a refusal of the grant is recorded before anything else, and a
 * staged folder that is a link is refused before any row names a record in it, nothing written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { QueueError } from "../../lib/errors.ts";
import { parseRequest } from "../../lib/queue/queued_request.ts";
import { mcpDecision } from "../../lib/runner/orchestrator.ts";
import { serveClaimed } from "../../lib/runner/serve_one.ts";
import { stagedDir } from "../../lib/runner/staged.ts";
import { assertRefusal } from "../_helpers/assert.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { makeRequest, mcpRunnerBrief } from "./_runner_helpers.ts";
import { inProcessRunner } from "./_runner_helpers.ts";

const KEY = btoa("k".repeat(32));
const change = { kind: "stage-proposal", artifact: { kind: "change-proposal" } };
const deletion = { kind: "stage-proposal", artifact: { kind: "delete-proposal" } };
const command = { kind: "run-request", artifact: { kind: "command-request" } };

Deno.test("stage-proposal: the tool-server channel's, with via_agent; never the orchestrator's", () => {
  const body = { kind: "stage-proposal", artifact: { kind: "change-proposal" }, reply_key: KEY };
  assert.equal(parseRequest({ ...body, via_agent: "worker" }, "mcp").kind, "stage-proposal");
  const e = assertRefusal(
    () => parseRequest({ ...body, via_agent: "worker" }, "orchestrator"),
    "REQUEST_INVALID",
    QueueError,
  );
  assert.match(e.message, /tool-server channel only/);
  assertRefusal(() => parseRequest(body, "mcp"), "REQUEST_INVALID", QueueError);
  assertRefusal(
    () => parseRequest({ ...body, via_agent: "Bad Slug" }, "mcp"),
    "REQUEST_INVALID",
    QueueError,
  );
});

Deno.test("mcp_grants decide each tool: no entry no tool; direct for changes only", () => {
  const grants = {
    direct: { tools: ["write_file", "delete_file", "run_command"], approval: "direct" as const },
    staged: { tools: ["write_file"], approval: "staged" as const },
  };
  assert.deepEqual(mcpDecision(grants, "direct", change), {
    tool: "write_file",
    approval: "direct",
  });
  assert.deepEqual(mcpDecision(grants, "direct", deletion), {
    tool: "delete_file",
    approval: "staged",
  });
  assert.deepEqual(mcpDecision(grants, "direct", command), {
    tool: "run_command",
    approval: null,
  });
  assert.deepEqual(mcpDecision(grants, "staged", change), {
    tool: "write_file",
    approval: "staged",
  });
  for (
    const [agent, req, re] of [
      ["staged", deletion, /does not list delete_file/],
      ["staged", command, /does not list run_command/],
      ["nobody", change, /no mcp_grants entry/],
      // Names an object carries by inheritance are no entry.
      ["constructor", change, /no mcp_grants entry/],
      ["__proto__", command, /no mcp_grants entry/],
    ] as const
  ) {
    const e = assertRefusal(() => mcpDecision(grants, agent, req), "TOOL_NOT_GRANTED", QueueError);
    assert.match(e.message, re);
  }
  assertRefusal(() => mcpDecision(undefined, "direct", change), "TOOL_NOT_GRANTED", QueueError);
  assertRefusal(
    () => mcpDecision(grants, "direct", { kind: "stage-proposal", artifact: { kind: "x" } }),
    "REQUEST_INVALID",
    QueueError,
  );
});

Deno.test("served in process: a grant refused first; a linked staged folder refused, nothing written", async () => {
  await withWorld("rq-mcp-grants", { brief: (p) => mcpRunnerBrief(p) }, async (w) => {
    const state = await inProcessRunner(w);
    const nonce = await w.dispatchBeforeBriefChanged("worker");
    const serve = async (viaAgent: string, artifact: Record<string, unknown>) => {
      const m = await makeRequest(w, { kind: "stage-proposal", artifact, via_agent: viaAgent }, {
        channel: "mcp",
      });
      const path = join(w.dir, `${m.id}.json`);
      Deno.writeFileSync(path, m.bytes);
      return await serveClaimed(state, path, m.id, "mcp");
    };
    const deletion = {
      kind: "delete-proposal",
      dispatch: nonce,
      path: "src/a.txt",
      base_sha256: sha256Hex("hello\n"),
      rationale: "remove",
    };

    // `other` has no grant: refused before the request is named, its nonce never looked up.
    const refused = await serve("other", deletion);
    assert.equal(refused.body.error?.code, "TOOL_NOT_GRANTED");
    assert.equal(w.rows().at(-1)?.action, "runner-request-refused");
    assert.equal(w.rows().at(-1)?.error, "TOOL_NOT_GRANTED");

    // The staged folder a link to a folder outside the project.
    const outside = join(w.scratch, "elsewhere");
    Deno.mkdirSync(outside);
    Deno.symlinkSync(outside, stagedDir(w.project));
    const rows = w.rows().length;
    const linked = await serve("worker", deletion);
    assert.equal(linked.body.ok, false);
    assert.equal(linked.body.error?.code, "QUEUE_UNSAFE_PATH", JSON.stringify(linked.body));
    assert.deepEqual([...Deno.readDirSync(outside)], []);
    assert.ok(!w.rows().slice(rows).some((x) => x.action === "stage-proposal"));
    assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");

    // Once a real folder: staged there.
    Deno.removeSync(stagedDir(w.project));
    const staged = await serve("worker", deletion);
    assert.equal(staged.body.ok, true, JSON.stringify(staged.body.error));
    const sid = String((staged.body.result as Record<string, unknown>).sid);
    assert.ok(Deno.lstatSync(join(stagedDir(w.project), `${sid}.json`)).isFile);
    assert.equal(w.rows().at(-1)?.action, "stage-proposal");
  });
});
