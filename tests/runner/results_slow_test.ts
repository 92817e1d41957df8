/**
 * Results a session forges, edits or replays: the waiting CLI refuses each RESULT_NOT_AUTHENTIC
 * (exit 1), takes nothing from it and acknowledges nothing. A result sealed by another X25519 key
 * for a request the runner never served; a stolen earlier result relabelled for a pending
 * request; a real result with `exit` flipped or a byte of `result` changed; a real result copied
 * to another waiter's id (as is, and relabelled). The untouched result then opens (the controls).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { withWorld, type World } from "../e2e/_run_helpers.ts";
import { generateSealPair, unb64 } from "../../lib/crypto/x25519.ts";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { resultText } from "../../lib/queue/result.ts";
import { ticketOf } from "../../lib/queue/client.ts";
import {
  cliWithStdin,
  handRequest,
  isLivenessWrite,
  names,
  present,
  resultPath,
  runnerBrief,
  sleep,
  spawnCli,
  startRunner,
  until,
  verifyDirect,
  withRunner,
} from "./_runner_helpers.ts";

/**
 * A run request queued by hand, with the `ID TICKET` line `agentteams submit` would print for it
 * (the ticket made by lib's own ticketOf from the request's reply pair).
 */
async function queued(w: World, artifact: string): Promise<{ id: string; line: string }> {
  const h = await handRequest(w, {
    kind: "run-request",
    artifact: JSON.parse(Deno.readTextFileSync(artifact)),
    dry_run: false,
  });
  const ticket = await ticketOf({ id: h.id, pair: h.pair, requestSha256: h.sha256 });
  return { id: h.id, line: `${h.id} ${ticket}` };
}

/** `agentteams submit FILE`: the `ID TICKET` line. */
async function submit(w: World, file: string): Promise<{ id: string; line: string }> {
  const r = await w.cli(["submit", file, "--project", w.project]);
  assert.equal(r.code, 0, r.stderr);
  const line = r.stdout.trim();
  const m = /^([0-9a-f]{32}) at1\.\S+$/.exec(line);
  assert.ok(m !== null, line);
  return { id: m[1], line };
}

/** `agentteams wait - ` with the submit line on stdin. */
function wait(w: World, line: string) {
  return cliWithStdin(w, ["wait", "-", "--project", w.project, "--timeout", "20"], line + "\n");
}

/** The world's state a refused wait must leave as it was (acks and results included). */
function state(w: World) {
  return snapshotTreeSync([w.project, w.home, w.keyDir], isLivenessWrite);
}

/** Writes a file whole (a temp file renamed), so a polling waiter never reads half of it. */
function putAtomically(w: World, path: string, text: string): void {
  const tmp = join(w.scratch, "forged.tmp");
  Deno.writeTextFileSync(tmp, text);
  Deno.renameSync(tmp, path);
}

/** Rewrites a result file's JSON with `edit`. */
function editResult(path: string, edit: (v: Record<string, unknown>) => void): void {
  const v = JSON.parse(Deno.readTextFileSync(path)) as Record<string, unknown>;
  edit(v);
  Deno.writeTextFileSync(path, JSON.stringify(v) + "\n");
}

/** Asserts a finished wait (or waiting CLI) refused RESULT_NOT_AUTHENTIC and left `before`. */
function assertNotAuthentic(
  w: World,
  r: Awaited<ReturnType<typeof wait>>,
  command: string,
  before: ReturnType<typeof state>,
  what: string,
): void {
  assertCliRefused(r, command, "RESULT_NOT_AUTHENTIC", 1);
  assert.equal(r.stdout, "", `${what}: it printed a result`);
  assertSameTree(before, state(w), what);
}

Deno.test("a waiter refuses results that are edited or replayed to it; the real one opens", async (t) => {
  await withWorld("rq-results", { brief: runnerBrief }, async (w) => {
    await withRunner(w, async () => {
      const nonce = await w.dispatch();
      const a = await w.artifact({ argv: ["echo", "first"] }, nonce);
      const b = await w.artifact({ argv: ["echo", "second"] }, nonce);
      const A = await queued(w, a);
      const B = await queued(w, b);
      await until(() => present(resultPath(w, A.id)) && present(resultPath(w, B.id)), "results");
      const realA = Deno.readFileSync(resultPath(w, A.id));
      const realB = Deno.readFileSync(resultPath(w, B.id));
      const restore = () => {
        Deno.writeFileSync(resultPath(w, A.id), realA);
        Deno.writeFileSync(resultPath(w, B.id), realB);
      };

      const tampered: [string, (v: Record<string, unknown>) => void][] = [
        ["exit flipped", (v) => v.exit = 1],
        ["a byte of `result` changed", (v) => {
          const r = v.result as Record<string, unknown>;
          r.stdout = String(r.stdout).replace("first", "firsT");
        }],
        ["a byte of the sealed box flipped", (v) => {
          const seal = v.seal as Record<string, string>;
          const box = unb64(seal.box) as Uint8Array;
          box[box.length - 1] ^= 1;
          seal.box = btoa(String.fromCharCode(...box));
        }],
      ];
      for (const [what, edit] of tampered) {
        await t.step(`a result with ${what}: not authentic`, async () => {
          editResult(resultPath(w, A.id), edit);
          const before = state(w);
          assertNotAuthentic(w, await wait(w, A.line), "wait", before, what);
          restore();
        });
      }

      await t.step(
        "A's result replayed to B (as is, and relabelled with B's id and digest): not authentic",
        async () => {
          Deno.writeFileSync(resultPath(w, B.id), realA);
          let before = state(w);
          assertNotAuthentic(w, await wait(w, B.line), "wait", before, "replayed as is");
          const bBody = JSON.parse(new TextDecoder().decode(realB)) as Record<string, unknown>;
          editResult(resultPath(w, B.id), (v) => {
            v.id = bBody.id;
            v.request_sha256 = bBody.request_sha256;
          });
          before = state(w);
          assertNotAuthentic(w, await wait(w, B.line), "wait", before, "replayed relabelled");
          restore();
        },
      );

      await t.step("the real results open, each for its own waiter", async () => {
        const ra = await wait(w, A.line);
        const rb = await wait(w, B.line);
        assert.equal(ra.code, 0, ra.stderr);
        assert.equal(rb.code, 0, rb.stderr);
        assert.equal((JSON.parse(ra.stdout) as { stdout: string }).stdout, "first\n");
        assert.equal((JSON.parse(rb.stdout) as { stdout: string }).stdout, "second\n");
        // Acknowledged: the runner deletes them.
        await until(() => !present(resultPath(w, A.id)) && !present(resultPath(w, B.id)), "sweep");
      });
    });
    await verifyDirect(w);
  });
});

Deno.test("a waiting CLI refuses a result forged by the session for its pending request", async (t) => {
  await withWorld("rq-forged", { brief: runnerBrief }, async (w) => {
    const q = queuePaths(w.project);
    // One real result to steal, then the runner stops: requests now wait unserved.
    const stolen = await withRunner(w, async () => {
      const nonce = await w.dispatch();
      const s = await queued(w, await w.artifact({ argv: ["true"] }, nonce));
      await until(() => present(resultPath(w, s.id)), "a result");
      return Deno.readTextFileSync(resultPath(w, s.id));
    });

    /** Starts `ledger verify` in queue mode and returns it with its pending request. */
    const pendingVerify = async () => {
      const before = new Set(names(q.requests));
      const cli = spawnCli(w, ["ledger", "verify", "--project", w.project, "--wait-timeout", "60"]);
      let name = "";
      await until(() => {
        name = names(q.requests).find((n) => !before.has(n) && /^[0-9a-f]{32}\.json$/.test(n)) ??
          "";
        return name !== "";
      }, "the CLI's request");
      const bytes = Deno.readFileSync(join(q.requests, name));
      const req = JSON.parse(new TextDecoder().decode(bytes)) as { reply_key: string };
      const digest = (await crypto.subtle.digest("SHA-256", bytes.slice())) as ArrayBuffer;
      return {
        cli,
        id: name.slice(0, 32),
        replyKey: unb64(req.reply_key) as Uint8Array,
        sha: new Uint8Array(digest).toHex(),
      };
    };

    await t.step(
      "a box sealed with another X25519 key, right id and digest: not authentic",
      async () => {
        const p = await pendingVerify();
        const rows = w.rows().length;
        const text = await resultText(
          {
            v: 1,
            id: p.id,
            ok: true,
            kind: "verify-ledger",
            exit: 0,
            queue_wait_ms: 1,
            serve_ms: 1,
            request_sha256: p.sha,
            result: { ok: true, rows: 999_999, problems: [], notes: [] },
          },
          null,
          {
            runner: await generateSealPair(),
            replyKey: p.replyKey,
            hmac: new HmacKey(crypto.getRandomValues(new Uint8Array(32))),
          },
        );
        const before = state(w);
        putAtomically(w, resultPath(w, p.id), text);
        const r = await p.cli;
        assertCliRefused(r, "ledger verify", "RESULT_NOT_AUTHENTIC", 1);
        assert.doesNotMatch(r.stdout, /999999/);
        assert.equal(w.rows().length, rows);
        assert.deepEqual(names(q.acks), [], "the forged result was acknowledged");
        Deno.removeSync(resultPath(w, p.id));
        assertSameTree(before, state(w), "forged with another key");
      },
    );

    await t.step(
      "a stolen earlier result relabelled for the pending request: not authentic",
      async () => {
        const p = await pendingVerify();
        const v = JSON.parse(stolen) as Record<string, unknown>;
        v.id = p.id;
        v.request_sha256 = p.sha;
        v.kind = "verify-ledger";
        const before = state(w);
        putAtomically(w, resultPath(w, p.id), JSON.stringify(v) + "\n");
        const r = await p.cli;
        assertCliRefused(r, "ledger verify", "RESULT_NOT_AUTHENTIC", 1);
        assert.deepEqual(names(q.acks), []);
        Deno.removeSync(resultPath(w, p.id));
        assertSameTree(before, state(w), "stolen and relabelled");
      },
    );

    await t.step(
      "the same pending requests, once a runner starts, are served (the controls)",
      async () => {
        const runner = await startRunner(w);
        try {
          await until(
            () => names(q.requests).filter((n) => n.endsWith(".json")).length === 0,
            "served",
          );
          await sleep(100);
        } finally {
          assert.equal((await runner.stop()).code, 0, runner.stderr());
        }
      },
    );
    await verifyDirect(w);
  });
});

// Found by this battery: `submit` once declared no environment, so its needs (which find the key
// dir from HOME) refused every call with NO_KEY.
Deno.test({
  name: "submit then wait: the split round trip returns the run's result",
  fn: async () => {
    await withWorld("rq-submit", { brief: runnerBrief }, async (w) => {
      await withRunner(w, async () => {
        const nonce = await w.dispatch();
        const s = await submit(w, await w.artifact({ argv: ["echo", "split"] }, nonce));
        const r = await wait(w, s.line);
        assert.equal(r.code, 0, r.stderr);
        assert.equal((JSON.parse(r.stdout) as { stdout: string }).stdout, "split\n");
      });
      await verifyDirect(w);
    });
  },
});
