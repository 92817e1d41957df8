/**
 * The runner opens each request sealed to its key, and refuses, unread and recorded, one sealed
 * to another key, a cut box, a box replayed under another id or moved to the other channel, and
 * the plain form: served in process through the runner's own `serveClaimed`. Nothing is acted
 * on (the file the proposal would write is unchanged, no apply row, the nonce not spent: the
 * genuine request, served last, writes).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { generateSealPair } from "../../lib/crypto/x25519.ts";
import { sealRequest } from "../../lib/queue/request_seal.ts";
import { serveClaimed } from "../../lib/runner/serve_one.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { makeRequest, requestId, runnerBrief } from "./_runner_helpers.ts";
import { inProcessRunner } from "./_runner_helpers.ts";

Deno.test("served in process: a foreign, cut, replayed, moved or plain request is refused with its code; nothing acts", async () => {
  await withWorld("rq-sealed", { brief: (p) => runnerBrief(p) }, async (w) => {
    const state = await inProcessRunner(w);
    const nonce = await w.dispatchBeforeBriefChanged("worker");
    const target = join(w.project, "src/a.txt");
    const before = Deno.readFileSync(target);
    const request = {
      kind: "apply-proposal",
      dry_run: false,
      artifact: {
        kind: "change-proposal",
        dispatch: nonce,
        path: "src/a.txt",
        content: "changed\n",
        base_sha256: sha256Hex(before),
        rationale: "through the queue",
      },
    };
    const serveBytes = async (bytes: Uint8Array, id: string, channel: "orchestrator" | "mcp") => {
      const path = join(w.dir, `${id}.json`);
      Deno.writeFileSync(path, bytes);
      return await serveClaimed(state, path, id, channel);
    };
    const genuine = await makeRequest(w, request);
    const sealed = JSON.parse(new TextDecoder().decode(genuine.bytes)) as Record<string, string>;
    const box = sealed.box;
    const enc = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
    const toOther = await sealRequest(request, {
      waiter: await generateSealPair(),
      runnerPublic: (await generateSealPair()).publicRaw,
      id: genuine.id,
      channel: "orchestrator",
    });
    const cases: [string, Uint8Array, string, "orchestrator" | "mcp", string][] = [
      ["sealed to another key", toOther, genuine.id, "orchestrator", "REQUEST_WRONG_KEY"],
      [
        "a truncated box",
        enc({ ...sealed, box: box.slice(0, box.length - 8) }),
        genuine.id,
        "orchestrator",
        "REQUEST_SEAL_BROKEN",
      ],
      [
        "the file cut in half",
        genuine.bytes.slice(0, genuine.bytes.length >> 1),
        genuine.id,
        "orchestrator",
        "REQUEST_INVALID",
      ],
      [
        "replayed under another id",
        genuine.bytes,
        requestId(),
        "orchestrator",
        "REQUEST_SEAL_BROKEN",
      ],
      ["moved to the other channel", genuine.bytes, genuine.id, "mcp", "REQUEST_SEAL_BROKEN"],
      [
        "the plain form",
        (await makeRequest(w, request, { plain: true })).bytes,
        genuine.id,
        "orchestrator",
        "REQUEST_NOT_SEALED",
      ],
    ];
    for (const [what, bytes, id, channel, code] of cases) {
      const rows = w.rows().length;
      const served = await serveBytes(bytes, id, channel);
      assert.equal(served.body.ok, false, what);
      assert.equal(served.body.error?.code, code, `${what}: ${JSON.stringify(served.body.error)}`);
      const added = w.rows().slice(rows);
      assert.deepEqual(
        added.map((r) => [r.action, r.error]),
        [["runner-request-refused", code]],
        what,
      );
      assert.deepEqual(Deno.readFileSync(target), before, `${what}: the file changed`);
    }
    const acted = (r: Record<string, unknown>) =>
      ["apply-proposal", "runner-request", "use", "attempt"].includes(String(r.action));
    assert.deepEqual(w.rows().filter(acted), [], "a refused request was acted on");
    // The genuine request under its own name: served, so its nonce was not spent above.
    const ok = await serveBytes(genuine.bytes, genuine.id, "orchestrator");
    assert.equal(ok.body.ok, true, JSON.stringify(ok.body.error));
    assert.equal(Deno.readTextFileSync(target), "changed\n");
    assert.ok(w.rows().some((r) => r.action === "apply-proposal"), "the apply row is named so");
  });
});
