/**
 * The runner's public key where a session reads it (issue 22): a serving runner publishes it in
 * `.agentteams-status/`; a queue-mode CLI that cannot read the key dir (as inside a sandboxed
 * session, whose settings deny reading it) takes it from there and its request is served; a key
 * a session planted there (as the status folder renamed away, the file written and the folder
 * renamed back leave it) is put back by the runner and recorded, and a waiter that sealed to the planted key is refused
 * (REQUEST_WRONG_KEY), never served.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generateSealPair, sealPairToPem } from "../../lib/crypto/x25519.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { PUBLISHED_KEY_NAME } from "../../lib/queue/runner_key.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { sealRequest } from "../../lib/queue/request_seal.ts";
import { requestId, resultOf, runnerBrief, until, withRunner } from "./_runner_helpers.ts";

Deno.test("the published key: a CLI without the key dir is served; a planted key is put back, recorded, and refused", async () => {
  await withWorld("rq-runner-key", { brief: (p) => runnerBrief(p) }, async (w) => {
    const q = queuePaths(w.project);
    const published = join(q.status, PUBLISHED_KEY_NAME);
    const own = Deno.readTextFileSync(join(w.keyDir, PUBLISHED_KEY_NAME));
    await withRunner(w, async (runner) => {
      assert.equal(Deno.readTextFileSync(published), own, "the runner published its key");
      assert.equal(Deno.lstatSync(published).mode! & 0o777, 0o644);
      // The key dir out of reach, as in a sandboxed session: the published key serves.
      const noKeys = { AGENTTEAMS_KEY_DIR: join(w.dir, "masked-key-dir") };
      const verified = await w.cli(
        ["ledger", "verify", "--project", w.project, "--wait-timeout", "60"],
        { env: noKeys },
      );
      assert.equal(verified.code, 0, verified.stderr);

      // A session's plant: what renaming the status folder away, writing the key there and
      // renaming it back leaves (written in place here: a runner that sees its folder gone in
      // the window stops, QUEUE_UNSAFE_PATH, which is not what this test is about).
      const fake = await generateSealPair();
      const planted = (await sealPairToPem(fake)).publicPem;
      Deno.writeTextFileSync(published, planted);
      // A waiter that read it in the window sealed its request to the planted key: the runner
      // refuses it unread (and the session, which holds the planted key's private half, could
      // read that request: docs/runner.md says so).
      const id = requestId();
      const bytes = await sealRequest({ kind: "verify-ledger" }, {
        waiter: await generateSealPair(),
        runnerPublic: fake.publicRaw,
        id,
        channel: "orchestrator",
      });
      Deno.writeFileSync(join(w.scratch, "r.json"), bytes);
      Deno.renameSync(join(w.scratch, "r.json"), join(q.requests, `${id}.json`));
      await resultOf(w, id);
      const refused = w.rows().filter((r) => r.id === id);
      assert.deepEqual(refused.map((r) => [r.action, r.error]), [[
        "runner-request-refused",
        "REQUEST_WRONG_KEY",
      ]]);
      await until(
        () => w.rows().some((r) => r.action === "runner-key-republished"),
        "the runner's row for the planted key",
      );
      await until(() => Deno.readTextFileSync(published) === own, "the runner's key put back");
      await until(
        () => /was not this runner's public key; published it again/.test(runner.stderr()),
        "the runner's line for the planted key",
      );
      const after = await w.cli(
        ["ledger", "verify", "--project", w.project, "--wait-timeout", "60"],
        { env: noKeys },
      );
      assert.equal(after.code, 0, after.stderr);
    });
  });
});
