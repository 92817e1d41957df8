/**
 * The library's `issueDispatch` takes the earlier tool's limits (issue 14, item 18): `maxUses` and
 * `ttlHours` narrow the spec's 25 uses within 24 hours, never widen them; a refused one writes
 * nothing.
 */
import assert from "node:assert/strict";
import { applyProposal, DispatchError, issueDispatch } from "../../lib/mod.ts";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("issueDispatch: maxUses and ttlHours narrow the dispatch; beyond the caps they are BAD_LIMITS, writing nothing", async () => {
  const root = Deno.makeTempDirSync({ prefix: "at-lib-limits-" });
  try {
    Deno.writeTextFileSync(
      `${root}/agentteams.json`,
      JSON.stringify({ agent_policies: { worker: { write_scopes: ["docs/"] } } }),
    );
    const key = new Uint8Array(32).fill(4);
    const env = { HOME: Deno.makeTempDirSync(), PATH: "/usr/bin:/bin" };
    for (
      const bad of [{ maxUses: 26 }, { maxUses: 0 }, { maxUses: 1.5 }, { ttlHours: 25 }, {
        ttlHours: 0,
      }]
    ) {
      await assertRefusal(
        () => issueDispatch(root, "worker", { key, ...bad }),
        "BAD_LIMITS",
        DispatchError,
      );
    }
    assert.throws(
      () => Deno.lstatSync(`${root}/.agentteams/proposal-ledger.jsonl`),
      Deno.errors.NotFound,
    );
    const dispatch = await issueDispatch(root, "worker", { key, maxUses: 2, ttlHours: 1 });
    const store = Deno.readTextFileSync(`${root}/.agentteams/dispatches.jsonl`).trim().split("\n");
    const row = JSON.parse(store[0]) as { max_uses: number; expires: string };
    assert.equal(row.max_uses, 2);
    const left = Date.parse(row.expires) - Date.now();
    assert.ok(left > 55 * 60_000 && left <= 60 * 60_000, row.expires);
    // Two uses, then the dispatch is spent.
    for (const n of [1, 2]) {
      const r = await applyProposal({
        kind: "change-proposal",
        dispatch,
        path: `docs/${n}.md`,
        base_sha256: "absent",
        content: `${n}\n`,
        rationale: "limits",
      }, { root, key, env });
      assert.equal(r.written, true);
    }
    await assertRefusal(
      () =>
        applyProposal({
          kind: "change-proposal",
          dispatch,
          path: "docs/3.md",
          base_sha256: "absent",
          content: "3\n",
          rationale: "limits",
        }, { root, key, env }),
      "DISPATCH_EXHAUSTED",
    );
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
