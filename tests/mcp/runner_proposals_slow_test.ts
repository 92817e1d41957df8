/**
 * Change and deletion proposals through `agentteams mcp runner`'s `write_file` and `delete_file`,
 * driven by the official MCP SDK client and launched by the line `agentteams permissions mcp
 * runner` prints, served by a real `agentteams serve` through the act pipeline, with the brief's
 * `mcp_grants` deciding: a change under `approval: "direct"` but no operator grant staged, not
 * written (the brief alone never makes a write direct: tests/runner/direct_grants_slow_test.ts has
 * the grant); a bad nonce, another agent's nonce, a path outside the agent's scope and a tool the
 * agent's grant lacks refused with the runner's code, nothing written; a change under
 * `approval: "staged"` and a deletion (never direct) checked and staged as a MAC'd record, the
 * file untouched.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { canonical } from "../../lib/pycompat/canonical.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { MCP_NONCE_MESSAGE } from "../../lib/runner/serve_one.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { stagedDir } from "../../lib/runner/staged.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { type JsonObject, withWorld, type World } from "../e2e/_run_helpers.ts";
import { ignoredByState, runnerBrief, withRunner, worldEnv } from "../runner/_runner_helpers.ts";
import { connect, type Connected, permissionsLine, textOf } from "./_client.ts";

type Call = { content?: unknown; isError?: boolean; structuredContent?: Record<string, unknown> };

async function call(c: Connected, name: string, args: Record<string, unknown>): Promise<Call> {
  return await c.client.callTool({ name, arguments: args }, undefined, {
    timeout: 300_000,
  }) as Call;
}

/** `worker` direct, `stager` staged, `other` may only run commands. */
function brief(p: Parameters<typeof runnerBrief>[0]): JsonObject {
  const b = runnerBrief(p) as {
    agent_policies: JsonObject;
    confined_programs: JsonObject;
  } & JsonObject;
  return {
    ...b,
    agent_policies: {
      ...b.agent_policies,
      stager: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] },
    },
    confined_programs: { ...b.confined_programs, stager: b.confined_programs.worker },
    mcp_grants: {
      worker: {
        tools: ["write_file", "delete_file", "run_command", "request_status"],
        approval: "direct",
      },
      stager: { tools: ["write_file", "delete_file", "request_status"], approval: "staged" },
      other: { tools: ["run_command"] },
    },
  };
}

const result = (r: Call) => r.structuredContent?.result as Record<string, unknown>;

/** The project as it stands, without what serving a refused request may move. */
function state(w: World) {
  const dispatches = join(w.project, ".agentteams", "dispatches.jsonl");
  // Acks the runner is checking pass through here whatever it serves.
  const acks = queuePaths(w.project).ackClaimed + "/";
  const ignored = ignoredByState(w);
  return snapshotTreeSync(
    [w.project, w.home, w.keyDir],
    (p) => p === dispatches || p.startsWith(acks) || ignored(p),
  );
}

/** Asserts the call was refused with `code` and that it wrote nothing: no file, no act row. */
async function refusedCall(
  w: World,
  what: string,
  code: string,
  run: () => Promise<Call>,
): Promise<string> {
  const before = state(w);
  const rows = w.rows().length;
  const r = await run();
  assert.equal(r.isError, true, `${what}: ${textOf(r)}`);
  assert.ok(textOf(r).startsWith(`${code}: `), `${what}: ${textOf(r)}`);
  assertSameTree(before, state(w), what);
  const acts = w.rows().slice(rows).filter((x) =>
    ["apply-proposal", "delete-proposal", "stage-proposal"].includes(String(x.action))
  );
  assert.deepEqual(acts, [], `${what}: an act was recorded`);
  return textOf(r);
}

Deno.test("mcp runner: change and deletion proposals served by a real agentteams serve", async (t) => {
  await withWorld("mcp-proposals", { brief }, async (w) => {
    const env = worldEnv(w);
    const server = async (agent: string) =>
      await connect(
        await permissionsLine(["mcp", "runner", "--agent", agent], w.project, env),
        w.project,
        env,
      );
    const worker = await server("worker");
    const stager = await server("stager");
    const other = await server("other");
    const key = loadLedgerKey({ env: w.env, mode: "direct" });
    try {
      await withRunner(w, async () => {
        const nonce = await w.dispatch("worker");
        const otherNonce = await w.dispatch("other");
        const base = sha256Hex("hello\n");
        const assertStaged = (r: Call, kind: string, path: string) => {
          assert.equal(r.isError, undefined, textOf(r));
          const res = result(r);
          assert.equal(res.staged, true);
          assert.equal(res.written, false);
          assert.equal(res.kind, kind);
          assert.equal(res.path, path);
          const sid = String(res.sid);
          assert.match(sid, /^[0-9a-f]{32}$/);
          const file = join(stagedDir(w.project), `${sid}.json`);
          assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
          assert.equal(Deno.statSync(stagedDir(w.project)).mode! & 0o777, 0o700);
          const record = JSON.parse(Deno.readTextFileSync(file)) as Record<string, unknown>;
          const { mac, ...body } = record;
          assert.ok(key.hmac.verify(canonical(body), String(mac)), "bad MAC");
          assert.equal(record.agent, res.agent);
          assert.ok(!("dispatch" in (record.artifact as object)), "the nonce was stored");
          const row = w.rows().filter((x) => x.action === "stage-proposal").at(-1);
          assert.equal(row?.sid, sid);
          assert.equal(row?.kind, kind);
          return record;
        };

        await t.step(
          "write_file under approval direct without an operator grant: staged, not written",
          async () => {
            // The brief alone never makes a write direct (lib/runner/direct_grants.ts): with no
            // grant signed by the operator, the change waits for the orchestrator.
            const r = await call(worker, "write_file", {
              dispatch: nonce,
              path: "src/new.txt",
              base_sha256: "absent",
              content: "made through mcp\n",
              rationale: "the mcp proposals test",
            });
            const record = assertStaged(r, "change-proposal", "src/new.txt");
            assert.equal(record.content_sha256, sha256Hex("made through mcp\n"));
            assert.equal(result(r).agent, "worker");
            assert.throws(
              () => Deno.statSync(join(w.project, "src/new.txt")),
              Deno.errors.NotFound,
            );
            assert.ok(!JSON.stringify(r).includes(nonce), "the nonce came back");
            assert.ok(!w.rows().some((x) => x.action === "apply-proposal"));
            assert.ok(!w.rows().some((x) => x.action === "apply-direct"));
          },
        );

        await t.step("dry_run: every check, nothing written and nothing staged", async () => {
          const rows = w.rows().length;
          const before = state(w);
          const change = await call(worker, "write_file", {
            dispatch: nonce,
            path: "src/dry.txt",
            base_sha256: "absent",
            content: "dry\n",
            rationale: "dry run",
            dry_run: true,
          });
          assert.equal(change.isError, undefined, textOf(change));
          assert.equal(result(change).written, false);
          const deletion = await call(worker, "delete_file", {
            dispatch: nonce,
            path: "src/a.txt",
            base_sha256: base,
            rationale: "dry run",
            dry_run: true,
          });
          assert.equal(deletion.isError, undefined, textOf(deletion));
          assert.equal(result(deletion).staged, false);
          assert.equal(result(deletion).written, false);
          assertSameTree(before, state(w), "dry runs");
          assert.deepEqual(
            w.rows().slice(rows).map((x) => x.action),
            ["runner-request", "runner-request"],
          );
        });

        await t.step("a bad nonce: the channel's one answer, nothing written", async () => {
          const args = (dispatch: string) => ({
            dispatch,
            path: "src/bad.txt",
            base_sha256: "absent",
            content: "x\n",
            rationale: "bad nonce",
          });
          const unknown = await refusedCall(
            w,
            "unknown nonce",
            "AGENT_MISMATCH",
            () => call(worker, "write_file", args("f".repeat(32))),
          );
          const another = await refusedCall(
            w,
            "another agent's nonce",
            "AGENT_MISMATCH",
            () => call(worker, "write_file", args(otherNonce)),
          );
          const malformed = await refusedCall(
            w,
            "a malformed nonce",
            "AGENT_MISMATCH",
            () => call(worker, "write_file", args("not-a-nonce")),
          );
          assert.equal(unknown, `AGENT_MISMATCH: ${MCP_NONCE_MESSAGE}`);
          assert.equal(another, unknown);
          assert.equal(malformed, unknown);
          assert.ok(!another.includes(otherNonce));
        });

        await t.step(
          "a path outside the agent's scope: OUT_OF_SCOPE, nothing written",
          async () => {
            await refusedCall(
              w,
              "out of scope",
              "OUT_OF_SCOPE",
              () =>
                call(worker, "write_file", {
                  dispatch: nonce,
                  path: "README.md",
                  base_sha256: sha256Hex("hello\n"),
                  content: "taken over\n",
                  rationale: "outside src/",
                }),
            );
            assert.equal(Deno.readTextFileSync(join(w.project, "README.md")), "hello\n");
            await refusedCall(
              w,
              "the control plane",
              "CONTROL_PLANE",
              () =>
                call(worker, "write_file", {
                  dispatch: nonce,
                  path: ".agentteams/x",
                  base_sha256: "absent",
                  content: "x\n",
                  rationale: "the plane",
                }),
            );
          },
        );

        await t.step("a tool the agent's mcp_grants lacks: TOOL_NOT_GRANTED", async () => {
          const text = await refusedCall(
            w,
            "not granted",
            "TOOL_NOT_GRANTED",
            () =>
              call(other, "write_file", {
                dispatch: otherNonce,
                path: "src/other.txt",
                base_sha256: "absent",
                content: "x\n",
                rationale: "no grant",
              }),
          );
          assert.match(text, /other's mcp_grants entry does not list write_file/);
          await refusedCall(
            w,
            "not granted (deletion)",
            "TOOL_NOT_GRANTED",
            () =>
              call(other, "delete_file", {
                dispatch: otherNonce,
                path: "src/a.txt",
                base_sha256: base,
                rationale: "no grant",
              }),
          );
          assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");
        });

        await t.step("a deletion: checked and staged, never direct; the file stays", async () => {
          const r = await call(worker, "delete_file", {
            dispatch: nonce,
            path: "src/a.txt",
            base_sha256: base,
            rationale: "remove a",
          });
          const record = assertStaged(r, "delete-proposal", "src/a.txt");
          assert.equal(record.content_sha256, null);
          assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");
          assert.ok(!w.rows().some((x) => x.action === "delete-proposal"));
        });

        await t.step("a deletion with a stale base: refused, nothing staged", async () => {
          const staged = [...Deno.readDirSync(stagedDir(w.project))].length;
          await refusedCall(w, "stale base", "STALE_BASE", () =>
            call(worker, "delete_file", {
              dispatch: nonce,
              path: "src/a.txt",
              base_sha256: "0".repeat(64),
              rationale: "stale",
            }));
          assert.equal([...Deno.readDirSync(stagedDir(w.project))].length, staged);
          assert.equal(w.rows().at(-1)?.action, "stage-proposal-refused");
        });

        await t.step("write_file under approval staged: staged, not written", async () => {
          const stagerNonce = await w.dispatch("stager");
          const r = await call(stager, "write_file", {
            dispatch: stagerNonce,
            path: "src/staged.txt",
            base_sha256: "absent",
            content: "waits for approval\n",
            rationale: "staged change",
          });
          const record = assertStaged(r, "change-proposal", "src/staged.txt");
          assert.equal(record.content_sha256, sha256Hex("waits for approval\n"));
          assert.equal(record.bytes, "waits for approval\n".length);
          assert.equal(
            (record.artifact as Record<string, unknown>).content,
            "waits for approval\n",
          );
          assert.throws(
            () => Deno.statSync(join(w.project, "src/staged.txt")),
            Deno.errors.NotFound,
          );
        });
        await w.verifyOk();
      });
    } finally {
      await worker.close();
      await stager.close();
      await other.close();
    }
  });
});
