/**
 * The queue's wording (issue 23 item 9), through the real CLI and runner: `serve --once` does not
 * say "stop with Ctrl-C" and ends with counts that add up (every request answered, served or
 * refused, and the names that were no request's), in the singular for one; `wait` takes
 * `--wait-timeout` as the acting commands do (its earlier `--timeout` stays an alias, not both at
 * once); an empty ticket and a garbage one are both usage errors (exit 2).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused } from "../_helpers/assert.ts";
import { withWorld, type World } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { serveSummary } from "../../lib/cli/serve_cmd.ts";
import {
  cliWithStdin,
  handRequest,
  runnerBrief,
  serveToEnd,
  startRunner,
} from "./_runner_helpers.ts";

async function foldersMade(w: World): Promise<void> {
  await w.dispatchBeforeBriefChanged("worker");
  const first = await startRunner(w);
  assert.equal((await first.stop()).code, 0, first.stderr());
}

Deno.test("serve --once: no 'stop with Ctrl-C'; its counts add up (served, refused, names not requests) and say 1 request", async (t) => {
  await withWorld("rq-words-once", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    await t.step("one request", async () => {
      await handRequest(w, { kind: "verify-ledger" });
      const r = await serveToEnd(w, {}, ["--once"]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /Ctrl-C/);
      assert.match(r.stderr, /serving what is queued now, then stopping/);
      assert.equal(
        r.stdout.trim(),
        "answered 1 request (1 served, 0 refused); 0 names not requests recorded; " +
          "0 interrupted requests reported",
      );
    });
    await t.step("a served one, a refused one and a stray name", async () => {
      await handRequest(w, { kind: "verify-ledger" });
      await handRequest(w, { kind: "rm -rf" });
      Deno.writeTextFileSync(join(queuePaths(w.project).requests, "notes.txt"), "x");
      const r = await serveToEnd(w, {}, ["--once"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout.trim(),
        "answered 2 requests (1 served, 1 refused); 1 name not a request recorded; " +
          "0 interrupted requests reported",
      );
    });
  });
});

Deno.test("serveSummary: counts in words, singular and plural", () => {
  assert.equal(
    serveSummary({ served: 0, refused: 0, strays: 2, interrupted: 1, stopped: "signal" }),
    "answered 0 requests (0 served, 0 refused); 2 names not requests recorded; " +
      "1 interrupted request reported",
  );
});

Deno.test("wait: an empty ticket and a garbage one are both usage errors (exit 2); --wait-timeout as the acting commands spell it, --timeout its alias, not both", async (t) => {
  await withWorld("rq-words-wait", { brief: runnerBrief }, async (w) => {
    await foldersMade(w);
    const id = "0123456789abcdef0123456789abcdef";
    const P = ["--project", w.project];
    const cases: [string, string[], string][] = [
      ["an empty stdin", ["wait", id, ...P], ""],
      ["a garbage ticket", ["wait", id, ...P], "garbage\n"],
      ["a garbage id", ["wait", "not-an-id", ...P], "at1.x.y.z\n"],
      ["another id's line", ["wait", id, ...P], `${"f".repeat(32)} at1.x\n`],
      ["both spellings", ["wait", id, ...P, "--timeout", "1", "--wait-timeout", "1"], "at1.x\n"],
    ];
    for (const [what, args, input] of cases) {
      await t.step(what, async () => {
        const r = await cliWithStdin(w, args, input);
        assertCliRefused(r, "wait", "USAGE", 2);
      });
    }
    await t.step(
      "--wait-timeout on wait: no runner answers, the request is withdrawn",
      async () => {
        const nonce = await w.dispatchBeforeBriefChanged("worker");
        const file = await w.artifact({ argv: ["true"] }, nonce);
        const s = await w.cli(["submit", file, ...P]);
        assert.equal(s.code, 0, s.stderr);
        const r = await cliWithStdin(w, ["wait", "-", ...P, "--wait-timeout", "1"], s.stdout);
        const refusal = assertCliRefused(r, "wait", "NO_RUNNER", 1);
        assert.match(refusal.reason, /within 1 s; request [0-9a-f]{32} was withdrawn/);
      },
    );
  });
});
