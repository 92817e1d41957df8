/**
 * Operator direct-write grants end to end: `agentteams mcp grant issue` signs one into the
 * operator's folder (refusing scopes that are not the brief's and limits out of range, writing
 * nothing then), `mcp grant list` shows it valid, a real `agentteams serve` (launched with the
 * flags `permissions serve` prints) loads it at its start (its `direct-grants-loaded` row and log
 * line), a nonce `dispatch` gets for the granted agent, through the queue or the operator's
 * `--direct`, lives 4 h with 10 uses (another agent's 24 h and 25),
 * a tool-server change is written as `apply-direct`, the next one past `max_writes` is refused
 * (`DIRECT_GRANT_SPENT`, nothing written), and the grants file changed while the runner serves
 * stops it (`RUNNER_PIN_CHANGED`, said in its status).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { derToPem } from "../../lib/crypto/ed25519.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { type JsonObject, jsonOut, readDispatchStore, withWorld } from "../e2e/_run_helpers.ts";
import {
  handRequest,
  mcpRunnerBrief,
  openAs,
  resultCode,
  resultOf,
  startRunner,
  underPrinted,
  until,
  verifyDirect,
} from "./_runner_helpers.ts";

const SEED = Uint8Array.from({ length: 32 }, (_, i) => 201 - i);
const PRIVATE_PEM = derToPem(
  new Uint8Array([...Uint8Array.fromHex("302e020100300506032b657004220420"), ...SEED]),
  "PRIVATE KEY",
);

function brief(p: Parameters<typeof mcpRunnerBrief>[0]): JsonObject {
  return { ...mcpRunnerBrief(p), proposal_gates: { docs: { glob: "docs/*", argv: ["true"] } } };
}

Deno.test("direct grants: issued by mcp grant issue, honoured by a real serve, pinned", async (t) => {
  await withWorld("direct-e2e", { brief }, async (w) => {
    const keyFile = join(w.scratch, "operator.pem");
    Deno.writeTextFileSync(keyFile, PRIVATE_PEM);
    Deno.chmodSync(keyFile, 0o600);
    const P = ["--project", w.project];
    const issue = (...extra: string[]) =>
      w.cli(["mcp", "grant", "issue", "--agent", "worker", "--key", keyFile, ...P, ...extra]);
    const grantsDir = join(w.home, ".config", "agentteams", "mcp-grants");

    await t.step(
      "mcp grant issue refuses scopes not the brief's and limits out of range",
      async () => {
        const before = snapshotTreeSync([w.home, w.project]);
        for (
          const [args, re] of [
            [["--scope", "lib/"], /--scope must name exactly agent worker's write scopes/],
            [["--scope", "src/", "--max-writes", "501"], /--max-writes must be .* 1 to 500/],
            [["--scope", "src/", "--max-writes", "0"], /--max-writes must be .* 1 to 500/],
            [["--scope", "src/", "--days", "31"], /--days must be .* 1 to 30/],
          ] as const
        ) {
          const r = await issue(...args);
          assert.equal(r.code, 2, r.stderr);
          assert.match(r.stderr, re);
        }
        const other = await w.cli([
          "mcp",
          "grant",
          "issue",
          "--agent",
          "other",
          "--key",
          keyFile,
          "--scope",
          "src/",
          ...P,
        ]);
        assert.equal(other.code, 1, other.stderr);
        assert.match(other.stderr, /DIRECT_GRANT_INVALID: .*mcp_grants\.other does not ask/);
        assertSameTree(before, snapshotTreeSync([w.home, w.project]), "refused issues");
      },
    );

    let grantId = "";
    await t.step("mcp grant issue writes the grant and the verify key; list shows it", async () => {
      const r = await issue("--scope", "src/", "--max-writes", "1", "--days", "1", "--json");
      assert.equal(r.code, 0, r.stderr);
      const out = jsonOut(r);
      grantId = String(out.grant_id);
      assert.match(grantId, /^MG-[0-9a-f]{12}$/);
      assert.deepEqual(out.write_scopes, ["src/"]);
      assert.equal(out.verify_key_written, true);
      assert.equal(Deno.statSync(grantsDir).mode! & 0o777, 0o700);
      const list = await w.cli(["mcp", "grant", "list", ...P]);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, new RegExp(`"${grantId}" "worker": valid \\(max 1 writes`));
    });

    await t.step(
      "the operator's dispatch --direct: 4 h and 10 uses for the granted agent only",
      async () => {
        for (const [agent, uses] of [["worker", 10], ["other", 25]] as const) {
          // Under the flags `permissions dispatch` prints: they grant the grants folders' reads.
          const words = ["dispatch", "--agent", agent, "--direct", ...P];
          const r = await (await underPrinted(w, words)).done;
          assert.equal(r.code, 0, r.stderr);
          const rec = readDispatchStore(w.project).filter((x) => x.agent === agent).at(-1)!;
          assert.equal(rec.max_uses, uses, agent);
        }
      },
    );

    const runner = await startRunner(w);
    let stopped = false;
    try {
      await t.step("the runner loads it at start: its row and its log line", async () => {
        await until(() => runner.stderr().includes("direct grants:"), "the grants line");
        assert.match(runner.stderr(), new RegExp(`${grantId} lets worker write directly`));
        const row = w.rows().find((x) => x.action === "direct-grants-loaded");
        assert.deepEqual(row?.active, [grantId]);
        assert.deepEqual(row?.problems, []);
        assert.ok(!("agent" in (row ?? {})));
      });

      let nonce = "";
      await t.step(
        "dispatch through the queue: the granted agent's nonce, 4 h and 10 uses",
        async () => {
          nonce = await w.dispatch("worker");
          const rec = readDispatchStore(w.project).filter((x) => x.agent === "worker").at(-1)!;
          assert.equal(rec.max_uses, 10);
          assert.ok(Date.parse(String(rec.expires)) - Date.now() <= 4 * 3_600_000 + 1000);
        },
      );

      const change = (path: string) => ({
        kind: "stage-proposal",
        via_agent: "worker",
        artifact: {
          kind: "change-proposal",
          dispatch: nonce,
          path,
          content: `${path}\n`,
          base_sha256: "absent",
          rationale: "direct",
        },
      });

      await t.step("a change on the tool-server channel: written as apply-direct", async () => {
        const req = await handRequest(w, change("src/direct.txt"), { channel: "mcp" });
        const o = await openAs(w, req, await resultOf(w, req.id));
        assert.equal(resultCode(o), null, JSON.stringify(o.body.error));
        assert.equal(Deno.readTextFileSync(join(w.project, "src/direct.txt")), "src/direct.txt\n");
        const row = w.rows().filter((x) => x.action === "apply-direct").at(-1);
        assert.equal(row?.grant, grantId);
        assert.equal(row?.new, sha256Hex("src/direct.txt\n"));
      });

      await t.step("past max_writes: DIRECT_GRANT_SPENT, nothing written", async () => {
        const req = await handRequest(w, change("src/second.txt"), { channel: "mcp" });
        const o = await openAs(w, req, await resultOf(w, req.id));
        assert.equal(resultCode(o), "DIRECT_GRANT_SPENT");
        assert.throws(() => Deno.statSync(join(w.project, "src/second.txt")), Deno.errors.NotFound);
        assert.equal(w.rows().at(-1)?.action, "apply-direct-refused");
      });

      await t.step("the grants file changed while serving: the runner stops", async () => {
        const again = await issue("--scope", "src/", "--replace");
        assert.equal(again.code, 0, again.stderr);
        const status = await runner.exited;
        stopped = true;
        assert.notEqual(status.code, 0);
        assert.match(runner.stderr(), /RUNNER_PIN_CHANGED/);
        assert.match(runner.stderr(), /direct-write grants file/);
        const stop = JSON.parse(Deno.readTextFileSync(queuePaths(w.project).runnerJson));
        assert.equal(stop.stopped?.code, "RUNNER_PIN_CHANGED");
      });
    } finally {
      if (!stopped) await runner.kill9();
    }
    await verifyDirect(w);
  });
});
