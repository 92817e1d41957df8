/**
 * Requests a session can put into the queue that the runner must refuse, against one real runner:
 * a symlink to a valid request, a half-written file, an unknown kind, an extra field, a file over
 * 1 MiB, a FIFO, a directory (each refused REQUEST_INVALID, with one `runner-request-refused` row,
 * never acted on, the loop still serving after), names that are no request id (left alone, never
 * served), the tool-server channel's refusals (no via_agent; another agent's nonce and an unknown
 * nonce answered with the one identical message), and a confined command that tries to read a
 * request waiting in the queue (the folder is hidden from it).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertSameTree } from "../_helpers/assert.ts";
import { useCount, withWorld, type World } from "../e2e/_run_helpers.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";

import {
  type HandRequest,
  handRequest,
  ignoredByState,
  type MadeRequest,
  makeRequest,
  mcpRunnerBrief,
  names,
  openAs,
  present,
  projectState,
  queuedPath,
  requestId,
  resultCode,
  resultOf,
  resultPath,
  type Runner,
  runnerBrief,
  until,
  verifyDirect,
  withRunner,
} from "./_runner_helpers.ts";

/** The clear body of a result (for one the runner could not seal: no reply key was readable). */
function clearBody(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

/** The error code of a result, opened when sealed, else from its clear body. */
async function codeOf(w: World, req: HandRequest, text: string): Promise<string | null> {
  const body = clearBody(text);
  if (body.seal === null) {
    assert.equal(body.ok, false, text);
    return String((body.error as Record<string, unknown>).code);
  }
  return resultCode(await openAs(w, req, text));
}

/** A valid verify-ledger request, served: the loop is still up. */
async function stillServing(w: World, r: Runner): Promise<void> {
  const req = await handRequest(w, { kind: "verify-ledger" });
  const opened = await openAs(w, req, await resultOf(w, req.id));
  assert.equal(opened.body.ok, true, JSON.stringify(opened.body));
  assert.equal(opened.body.kind, "verify-ledger");
  let exited = false;
  r.exited.then(() => exited = true);
  await Promise.resolve();
  assert.equal(exited, false, r.stderr());
}

/**
 * Writes a bad request with `put` (which returns its hand request), waits for its result, and
 * asserts: REQUEST_INVALID, exactly one new ledger row (`runner-request-refused` naming the id
 * and the code), no `runner-request` row, the file gone from the queue, nothing else changed,
 * the loop still serving.
 */
async function assertRefusedRequest(
  w: World,
  r: Runner,
  what: string,
  put: () => Promise<HandRequest>,
): Promise<void> {
  const before = projectState(w);
  const rows = w.rows().length;
  const req = await put();
  const text = await resultOf(w, req.id);
  assert.equal(await codeOf(w, req, text), "REQUEST_INVALID", `${what}: ${text}`);
  const added = w.rows().slice(rows);
  assert.deepEqual(
    added.map((x) => [x.action, x.id, x.error]),
    [["runner-request-refused", req.id, "REQUEST_INVALID"]],
    `${what}: ${JSON.stringify(added)}`,
  );
  assert.equal(present(req.path), false, `${what}: still queued`);
  // The claimed entry goes just after the result is published.
  await until(() => names(queuePaths(w.project).claimed).length === 0, `${what}: left claimed`);
  assertSameTree(before, projectState(w), what);
  await stillServing(w, r);
}

function brief(p: Parameters<typeof runnerBrief>[0]) {
  return runnerBrief(p, [
    { prefix: ["cat"], args: ["\\.agentteams-queue/(mcp-)?requests/[0-9a-f]{32}\\.json"] },
  ]);
}

/** {@link brief} where `worker` acts through its MCP server (an `mcp_grants` entry). */
function mcpBrief(p: Parameters<typeof runnerBrief>[0]) {
  return { ...brief(p), mcp_grants: mcpRunnerBrief(p).mcp_grants };
}

/** {@link brief} where `other` may call the runner's MCP server's `run_command`. */
function otherMcpBrief(p: Parameters<typeof runnerBrief>[0]) {
  return { ...brief(p), mcp_grants: { other: { tools: ["run_command"] } } };
}

/** A request handle for a path the test fills itself (its bytes, if any, from `m`). */
function at(w: World, m: MadeRequest, channel: "orchestrator" | "mcp" = "orchestrator") {
  return { id: m.id, pair: m.pair, sha256: m.sha256, path: queuedPath(w, m.id, channel) };
}

Deno.test("the runner refuses bad requests one by one and keeps serving", async (t) => {
  await withWorld("rq-envelope", { brief }, async (w) => {
    const q = queuePaths(w.project);
    await withRunner(w, async (runner) => {
      await t.step(
        "a request replaced by a symlink to a valid request elsewhere: refused, never served",
        async () => {
          const valid = await makeRequest(w, { kind: "verify-ledger" });
          const outside = join(w.scratch, "valid-request.json");
          Deno.writeFileSync(outside, valid.bytes);
          await assertRefusedRequest(w, runner, "symlink", () => {
            const h = at(w, valid);
            Deno.symlinkSync(outside, h.path);
            return Promise.resolve(h);
          });
          assert.deepEqual(Deno.readFileSync(outside), valid.bytes, "the link's target changed");
          assert.ok(!w.rows().some((x) => x.action === "runner-request" && x.id === valid.id));
        },
      );

      await t.step(
        "a request that is a hard link (to a file the session may not read): refused unread",
        async () => {
          const valid = await makeRequest(w, { kind: "verify-ledger" });
          const outside = join(w.scratch, "linked-request.json");
          Deno.writeFileSync(outside, valid.bytes);
          await assertRefusedRequest(w, runner, "hard link", () => {
            const h = at(w, valid);
            Deno.linkSync(outside, h.path);
            return Promise.resolve(h);
          });
          // Never read, so never served; the other name is untouched.
          assert.deepEqual(Deno.readFileSync(outside), valid.bytes, "the linked file changed");
          assert.equal(Deno.statSync(outside).nlink, 1, "the queue's name is gone");
          assert.ok(!w.rows().some((x) => x.action === "runner-request" && x.id === valid.id));
        },
      );

      await t.step(
        "a half-written request under its final name: REQUEST_INVALID, never acted on",
        async () => {
          const whole = await makeRequest(w, { kind: "verify-ledger" });
          const half = whole.bytes.slice(0, Math.floor(whole.bytes.length / 2));
          await assertRefusedRequest(
            w,
            runner,
            "half-written",
            () => handRequest(w, half, { id: whole.id, direct: true }),
          );
        },
      );

      await t.step("an unknown kind: REQUEST_INVALID (sealed to its waiter)", async () => {
        await assertRefusedRequest(
          w,
          runner,
          "unknown kind",
          () => handRequest(w, { kind: "delete-everything", agent: "worker" }),
        );
      });

      await t.step("an extra field: REQUEST_INVALID", async () => {
        await assertRefusedRequest(
          w,
          runner,
          "extra field",
          () => handRequest(w, { kind: "verify-ledger", root: "/" }),
        );
        await assertRefusedRequest(
          w,
          runner,
          "extra field in issue-dispatch",
          () => handRequest(w, { kind: "issue-dispatch", agent: "worker", uses: 1000 }),
        );
      });

      await t.step("a file over 1 MiB: REQUEST_INVALID, not read", async () => {
        await assertRefusedRequest(
          w,
          runner,
          "over 1 MiB",
          () => handRequest(w, { kind: "verify-ledger", pad: "x".repeat(1024 * 1024) }),
        );
      });

      await t.step(
        "a FIFO under a request's name: REQUEST_INVALID, the loop not blocked",
        async () => {
          const m = await makeRequest(w, { kind: "verify-ledger" });
          await assertRefusedRequest(w, runner, "FIFO", () => {
            const h = at(w, m);
            // No -m: GNU mkfifo then chmods the path, which the runner may have claimed already.
            const r = new Deno.Command("/usr/bin/mkfifo", { args: [h.path] })
              .outputSync();
            assert.ok(r.success, "mkfifo");
            return Promise.resolve(h);
          });
        },
      );

      await t.step(
        "a directory under a request's name: recorded once, left where it stands (never moved " +
          "into .agentteams/, probe 22c C1), no result, the runner serving on",
        async () => {
          const m = await makeRequest(w, { kind: "verify-ledger" });
          const rows = w.rows().length;
          const h = at(w, m);
          Deno.mkdirSync(h.path);
          Deno.writeFileSync(join(h.path, "inner.json"), m.bytes);
          const name = `${m.id}.json`;
          const refused = () =>
            w.rows().slice(rows).filter((r) =>
              r.action === "runner-request-refused" && String(r.reason ?? "").includes(name)
            );
          await until(() => refused().length > 0, "a runner-request-refused row naming it");
          await stillServing(w, runner);
          assert.equal(refused().length, 1, JSON.stringify(refused()));
          assert.equal(Deno.lstatSync(h.path).isDirectory, true, "the directory was moved");
          assert.deepEqual(Deno.readFileSync(join(h.path, "inner.json")), m.bytes);
          assert.equal(present(resultPath(w, m.id)), false, "a result was published for it");
          assert.deepEqual(names(queuePaths(w.project).claimed), []);
          Deno.removeSync(h.path, { recursive: true });
        },
      );

      await t.step(
        "a non-empty directory in acks/ or under a result's name does not stop the runner's sweep",
        async () => {
          const id = requestId();
          Deno.mkdirSync(join(q.acks, id));
          Deno.writeFileSync(join(q.acks, id, "x"), new Uint8Array([1]));
          const rid = requestId();
          Deno.mkdirSync(resultPath(w, rid));
          Deno.writeFileSync(join(resultPath(w, rid), "x"), new Uint8Array([1]));
          Deno.writeFileSync(join(q.acks, rid), new Uint8Array());
          await stillServing(w, runner);
          await stillServing(w, runner);
        },
      );

      await t.step(
        "names that are no request id are left alone, never served, recorded once",
        async () => {
          const m = await makeRequest(w, { kind: "verify-ledger" });
          const bad = [
            m.id.toUpperCase() + ".json",
            m.id.slice(1) + ".json",
            m.id + "0.json",
            m.id,
            m.id + ".json.tmp",
            "." + m.id + ".tmp",
            "x.json",
            "../" + "escape.json",
          ].filter((n) => !n.includes("/"));
          // Counted before the names appear: the runner may wake and record some of them while
          // the rest are still being written.
          const rows = w.rows().length;
          for (const n of bad) Deno.writeFileSync(join(q.requests, n), m.bytes);
          const before = projectState(w);
          // A valid request queued after them is served: the loop read the folder with them in it.
          await stillServing(w, runner);
          await stillServing(w, runner);
          // Each stray name (not the client's temporary `.<id>.tmp`) is recorded once, first.
          const strays = bad.filter((n) => n !== `.${m.id}.tmp`);
          assert.deepEqual(
            w.rows().slice(rows).map((x) => x.action),
            [...strays.map(() => "runner-request-refused"), "runner-request", "runner-request"],
          );
          assert.deepEqual(
            w.rows().slice(rows, rows + strays.length).map((x) => x.error),
            strays.map(() => "REQUEST_INVALID"),
          );
          for (const n of bad) {
            assert.deepEqual(Deno.readFileSync(join(q.requests, n)), m.bytes, `${n} was touched`);
            Deno.removeSync(join(q.requests, n));
          }
          assert.equal(present(resultPath(w, m.id)), false, "a result for a bad name");
          assertSameTree(
            before,
            projectState(w),
            "bad names",
          );
        },
      );

      await t.step("the orchestrator's channel refuses via_agent", async () => {
        const nonce = await w.dispatch();
        await assertRefusedRequest(
          w,
          runner,
          "via_agent on the orchestrator channel",
          () =>
            handRequest(w, {
              kind: "run-request",
              artifact: { kind: "command-request", dispatch: nonce, argv: ["true"], purpose: "p" },
              via_agent: "worker",
            }),
        );
      });
    });
    await verifyDirect(w);
  });
});

Deno.test("the tool-server channel: via_agent required; another agent's nonce and an unknown nonce get the identical answer", async (t) => {
  await withWorld("rq-mcp", { brief: mcpBrief }, async (w) => {
    await withRunner(w, async (runner) => {
      const run = (dispatch: string, extra: Record<string, unknown> = {}) => ({
        kind: "run-request",
        artifact: { kind: "command-request", dispatch, argv: ["true"], purpose: "mcp test" },
        ...extra,
      });
      const workerNonce = await w.dispatch("worker");
      const otherNonce = await w.dispatch("other");

      await t.step("a tool-server request without via_agent: REQUEST_INVALID", async () => {
        await assertRefusedRequest(
          w,
          runner,
          "no via_agent",
          () => handRequest(w, run(workerNonce), { channel: "mcp" }),
        );
        await assertRefusedRequest(
          w,
          runner,
          "another kind on the tool-server channel",
          () => handRequest(w, { kind: "issue-dispatch", agent: "worker" }, { channel: "mcp" }),
        );
      });

      await t.step(
        "another agent's nonce and an unknown nonce: one code, one message; nothing ran",
        async () => {
          const errors: Record<string, unknown>[] = [];
          for (const dispatch of [otherNonce, requestId()]) {
            // The dispatch store may note the attempt; it spends no use.
            const dispatches = join(w.project, ".agentteams", "dispatches.jsonl");
            const state = () =>
              snapshotTreeSync(
                [w.project, w.home, w.keyDir],
                (p) => p === dispatches || ignoredByState(w)(p),
              );
            const before = state();
            const uses = useCount(w.project);
            const req = await handRequest(w, run(dispatch, { via_agent: "worker" }), {
              channel: "mcp",
            });
            const opened = await openAs(w, req, await resultOf(w, req.id));
            assert.equal(opened.body.ok, false, JSON.stringify(opened.body));
            errors.push(opened.body.error as Record<string, unknown>);
            assert.ok(
              !w.rows().some((x) => x.action === "run-request-start"),
              "a command started",
            );
            assertSameTree(before, state(), `nonce ${dispatch}`);
            assert.equal(useCount(w.project), uses, "a use was spent");
          }
          assert.equal(
            errors[0].message,
            "the dispatch does not authorize this request for this agent",
          );
          assert.deepEqual(errors[0], errors[1], "the two refusals tell the nonces apart");
        },
      );

      await t.step("the worker's own nonce through the tool-server channel runs", async () => {
        const req = await handRequest(w, run(workerNonce, { via_agent: "worker" }), {
          channel: "mcp",
        });
        const opened = await openAs(w, req, await resultOf(w, req.id));
        assert.equal(opened.body.ok, true, JSON.stringify(opened.body));
        assert.equal(opened.body.exit, 0);
      });
    });
    await verifyDirect(w);
  });
});

Deno.test("a confined command cannot read a request waiting in the queue (the folder is hidden)", async () => {
  await withWorld("rq-hidden", { brief: otherMcpBrief }, async (w) => {
    // A runner made the folders; while it is stopped, two requests are queued: the reader first
    // (its name sorts first, so it is served while the other still waits). The tool-server
    // channel's is `other`'s, which acts through its MCP server.
    const [first, others] = await withRunner(
      w,
      async () => [await w.dispatch(), await w.dispatch("other")],
    );
    const waiting = await makeRequest(w, {
      kind: "run-request",
      artifact: { kind: "command-request", dispatch: others, argv: ["true"], purpose: "p" },
      via_agent: "other",
    }, {
      id: "f" + requestId().slice(1),
      channel: "mcp",
    });
    Deno.writeFileSync(queuedPath(w, waiting.id, "mcp"), waiting.bytes);
    const mcpWaiting = join(".agentteams-queue/mcp-requests", `${waiting.id}.json`);
    const also = await makeRequest(w, { kind: "verify-ledger" }, {
      id: "e" + requestId().slice(1),
    });
    Deno.writeFileSync(queuedPath(w, also.id), also.bytes);
    const orchWaiting = join(".agentteams-queue/requests", `${also.id}.json`);
    const readers: HandRequest[] = [];
    for (const [i, target] of [mcpWaiting, orchWaiting].entries()) {
      readers.push(
        await handRequest(w, {
          kind: "run-request",
          artifact: {
            kind: "command-request",
            dispatch: first,
            argv: ["cat", target],
            purpose: "read",
          },
        }, { id: `0${i}` + requestId().slice(2) }),
      );
    }
    // Git sees the queue folder as ignored: the command's snapshot is unaffected by it.

    await withRunner(w, async () => {
      for (const reader of readers) {
        const opened = await openAs(w, reader, await resultOf(w, reader.id));
        assert.equal(opened.body.ok, true, JSON.stringify(opened.body));
        const result = opened.body.result as Record<string, unknown>;
        assert.notEqual(
          opened.body.exit,
          0,
          `cat read the queued request: ${JSON.stringify(result)}`,
        );
        assert.equal(result.ran, true, JSON.stringify(result));
        const out = `${result.stdout}${result.stderr}`;
        assert.ok(!out.includes("verify-ledger"), out);
        assert.ok(!out.includes(waiting.id) || !out.includes("reply_key"), out);
        assert.ok(!out.includes("reply_key"), out);
      }
      // The waiting requests were served after, as usual.
      for (const m of [waiting, also]) {
        const h = { id: m.id, pair: m.pair, sha256: m.sha256, path: "" };
        assert.equal((await openAs(w, h, await resultOf(w, m.id))).body.ok, true);
      }
    });
    await verifyDirect(w);
  });
});
