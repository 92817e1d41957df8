/**
 * Issue 22, item 3: the orchestrator channel's `issue-dispatch` is open to any session that can
 * write the queue. An agent the brief marks `"dispatch": "operator"` gets no nonce through the
 * runner (`DISPATCH_OPERATOR_ONLY`, nothing issued: the dispatch store unchanged), through the CLI
 * in queue mode and through a request written straight into `requests/`; the operator issues one
 * with `dispatch --direct` (the key, outside every session), and that nonce then acts through the
 * queue. An agent without the mark is dispatched through the queue as before. The runner runs
 * under the flags `permissions serve` prints, its commands confined by real bwrap.
 */
import assert from "node:assert/strict";
import { readDispatchStore, withWorld, type World } from "../e2e/_run_helpers.ts";
import {
  handRequest,
  openAs,
  resultCode,
  resultOf,
  runnerBrief,
  withRunner,
} from "./_runner_helpers.ts";
import type { JsonObject } from "../e2e/_run_helpers.ts";

function brief(p: Parameters<typeof runnerBrief>[0]): JsonObject {
  const b = runnerBrief(p);
  const agents = b.agent_policies as Record<string, JsonObject>;
  agents.other = { ...agents.other, dispatch: "operator" };
  return b;
}

function refusedCode(stderr: string): string | null {
  return /refused: ([A-Z_]+):/.exec(stderr)?.[1] ?? null;
}

const storeRows = (w: World) => readDispatchStore(w.project).length;

Deno.test('runner: an agent marked "dispatch": "operator" gets no nonce through the queue; the operator\'s --direct one acts through it', async () => {
  await withWorld("rq-dispatch-operator", { brief }, async (w) => {
    await withRunner(w, async () => {
      const P = ["--project", w.project];
      const before = storeRows(w);
      const q = await w.cli(["dispatch", "--agent", "other", ...P]);
      assert.equal(q.code, 1, q.stdout + q.stderr);
      assert.equal(refusedCode(q.stderr), "DISPATCH_OPERATOR_ONLY", q.stderr);
      assert.match(q.stderr, /agentteams dispatch --agent other --direct/);
      assert.equal(q.stdout.trim(), "", "a nonce was printed");
      assert.equal(storeRows(w), before, "a nonce was issued");
      // A request written into requests/ by hand (any session that can write the queue).
      const h = await handRequest(w, { kind: "issue-dispatch", agent: "other" });
      const opened = await openAs(w, h, await resultOf(w, h.id));
      assert.equal(resultCode(opened), "DISPATCH_OPERATOR_ONLY", JSON.stringify(opened.body));
      assert.equal(opened.secret, null, "the refusal carried a secret");
      assert.equal(storeRows(w), before, "a nonce was issued by hand");
      // An agent without the mark: dispatched through the queue as before.
      assert.match(await w.dispatch("worker"), /^[0-9a-f]{32}$/);
      // The operator's own dispatch, outside every session, with the key: it acts through the
      // queue like any other nonce.
      const d = await w.cli(["dispatch", "--agent", "other", "--direct", ...P]);
      assert.equal(d.code, 0, d.stderr);
      const nonce = d.stdout.trim();
      assert.match(nonce, /^[0-9a-f]{32}$/);
      const r = await w.run({ argv: ["true"], purpose: "operator's nonce" }, { nonce });
      assert.equal(r.code, 0, r.stderr);
    });
  });
});
