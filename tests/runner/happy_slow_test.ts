/**
 * The runner's happy paths through queue mode, against one real runner (started with the flags
 * `agentteams permissions serve` prints) in a real git project, commands confined by real bwrap:
 * `dispatch` prints a nonce that works and that no status file shows in clear; `apply`, `run` and
 * `ledger verify` print what direct mode (`--direct`) prints, `--json` in the same shape, exit
 * codes passed through; two waiting CLIs each get their own result; and `dispatch` works under
 * the narrow flags `agentteams permissions dispatch` prints, which grant no read of a secret key.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256 } from "../_helpers/mod.ts";
import { jsonOut, shScript, withWorld, type World } from "../e2e/_run_helpers.ts";
import { change } from "../proposals/_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import {
  allowList,
  allText,
  grantCovers,
  handRequest,
  openAs,
  permissionsArgs,
  resultOf,
  runnerBrief,
  sleep,
  verifyDirect,
  withRunner,
} from "./_runner_helpers.ts";
import { runDeno } from "../_helpers/mod.ts";

/** A change proposal file (outside the project) for `rel`, whose current text is `old`. */
async function proposal(w: World, nonce: string, rel: string, old: string, content: string) {
  const file = join(w.scratch, `proposal-${rel.replaceAll("/", "_")}-${content.length}.json`);
  await Deno.writeTextFile(file, JSON.stringify(change(nonce, rel, content, sha256(old))));
  return file;
}

/** The keys of an object, sorted (the `--json` shape). */
function shape(v: Record<string, unknown>): string[] {
  return Object.keys(v).sort();
}

/** stdout with the values that differ from run to run (ids, digests, times) masked. */
function masked(s: string): string {
  return s.replace(/[0-9a-f]{12,64}/g, "<hex>").replace(/\d{4}-\d\d-\d\dT[0-9:.+Z-]+/g, "<time>")
    .replace(/\b\d+ ms\b/g, "<n> ms");
}

Deno.test("runner happy paths: dispatch, apply, run, ledger verify through queue mode match direct mode", async (t) => {
  await withWorld("rq-happy", {
    brief: (p) => runnerBrief(p, [{ prefix: [join(p.scripts, "exit-seven")] }]),
    scripts: { "exit-seven": shScript("echo 'to stdout'\necho 'to stderr' >&2\nexit 7") },
    files: { "src/a.txt": "hello\n", "src/b.txt": "hello\n", "README.md": "r\n" },
  }, async (w) => {
    await withRunner(w, async () => {
      const P = ["--project", w.project];
      let nonce = "";

      await t.step(
        "dispatch in queue mode prints a valid nonce; a following apply with it works",
        async () => {
          nonce = await w.dispatch();
          const file = await proposal(w, nonce, "src/a.txt", "hello\n", "queued\n");
          const r = await w.cli(["apply", file, ...P]);
          assert.equal(r.code, 0, r.stderr);
          assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "queued\n");
          // The same kind of change in direct mode prints the same (ids and digests masked).
          const direct = await proposal(w, nonce, "src/b.txt", "hello\n", "direct\n");
          const d = await w.cli(["apply", direct, ...P, "--direct"]);
          assert.equal(d.code, 0, d.stderr);
          assert.equal(Deno.readTextFileSync(join(w.project, "src/b.txt")), "direct\n");
          assert.equal(
            masked(r.stdout.replaceAll("src/a.txt", "F")),
            masked(d.stdout.replaceAll("src/b.txt", "F")),
          );
          const rows = w.rows().map((x) => x.action);
          assert.ok(rows.includes("runner-request"), JSON.stringify(rows));
        },
      );

      await t.step("dispatch --json: the same shape as direct mode", async () => {
        const q = await w.cli(["dispatch", "--agent", "worker", ...P, "--json"]);
        const d = await w.cli(["dispatch", "--agent", "worker", ...P, "--json", "--direct"]);
        assert.equal(q.code, 0, q.stderr);
        assert.equal(d.code, 0, d.stderr);
        const qj = jsonOut(q);
        assert.deepEqual(shape(qj), shape(jsonOut(d)));
        assert.match(String(qj.nonce), /^[0-9a-f]{32}$/);
      });

      await t.step(
        "the nonce never shows in clear in the status folder: it travels inside the box",
        async () => {
          const req = await handRequest(w, { kind: "issue-dispatch", agent: "worker" });
          const text = await resultOf(w, req.id);
          const opened = await openAs(w, req, text);
          const secret = opened.secret?.nonce;
          assert.equal(typeof secret, "string");
          assert.match(secret as string, /^[0-9a-f]{32}$/);
          const status = allText(queuePaths(w.project).status);
          assert.ok(status.includes(req.id), "the result sits in the status folder");
          assert.ok(
            !status.includes(secret as string),
            "the nonce is in clear in the status folder",
          );
          assert.ok(!status.includes(nonce), "the CLI's nonce is in clear in the status folder");
          // The sealed nonce is a valid one: a run with it works.
          const run = await w.run({ argv: ["true"] }, { nonce: secret as string });
          assert.equal(run.code, 0, run.stderr);
        },
      );

      await t.step(
        "run: stdout passed through, exit codes passed through, same as direct",
        async () => {
          const q = await w.run({ argv: ["echo", "hello", "world"] }, { nonce });
          const d = await w.run({ argv: ["echo", "hello", "world"] }, {
            nonce,
            flags: ["--direct"],
          });
          assert.equal(q.code, 0, q.stderr);
          assert.equal(q.stdout, "hello world\n");
          assert.equal(q.stdout, d.stdout);
          const qf = await w.run({ argv: ["false"] }, { nonce });
          const df = await w.run({ argv: ["false"] }, { nonce, flags: ["--direct"] });
          assert.equal(qf.code, 1, qf.stderr);
          assert.equal(qf.code, df.code);
          assert.equal(qf.stdout, df.stdout);
          const seven = join(w.scripts, "exit-seven");
          const q7 = await w.run({ argv: [seven] }, { nonce });
          const d7 = await w.run({ argv: [seven] }, { nonce, flags: ["--direct"] });
          assert.equal(q7.code, 7, q7.stderr);
          assert.equal(d7.code, 7, d7.stderr);
          assert.equal(q7.stdout, "to stdout\n");
          assert.equal(q7.stdout, d7.stdout);
          assert.match(q7.stderr, /to stderr/);
          const qj = jsonOut(await w.run({ argv: ["echo", "j"] }, { nonce, flags: ["--json"] }));
          const dj = jsonOut(
            await w.run({ argv: ["echo", "j"] }, { nonce, flags: ["--json", "--direct"] }),
          );
          assert.deepEqual(shape(qj), shape(dj));
          assert.equal(qj.stdout, "j\n");
          assert.equal(qj.backend, "bwrap");
          assert.equal(qj.confined, true);
        },
      );

      await t.step("apply --json: the same shape as direct mode", async () => {
        const q = await proposal(w, nonce, "src/a.txt", "queued\n", "queued two\n");
        const d = await proposal(w, nonce, "src/b.txt", "direct\n", "direct two\n");
        const qr = await w.cli(["apply", q, ...P, "--json"]);
        const dr = await w.cli(["apply", d, ...P, "--json", "--direct"]);
        assert.equal(qr.code, 0, qr.stderr);
        assert.equal(dr.code, 0, dr.stderr);
        assert.deepEqual(shape(jsonOut(qr)), shape(jsonOut(dr)));
        assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "queued two\n");
      });

      await t.step("ledger verify: the same text and --json shape as direct", async () => {
        const q = await w.cli(["ledger", "verify", ...P]);
        const d = await w.cli(["ledger", "verify", ...P, "--direct"]);
        assert.equal(q.code, 0, q.stderr);
        assert.equal(d.code, 0, d.stderr);
        assert.match(q.stdout, /^ok: \d+ rows verify\n$/);
        assert.equal(masked(q.stdout).replace(/\d+/, "N"), masked(d.stdout).replace(/\d+/, "N"));
        const qj = jsonOut(await w.cli(["ledger", "verify", ...P, "--json"]));
        const dj = jsonOut(await w.cli(["ledger", "verify", ...P, "--json", "--direct"]));
        assert.deepEqual(shape(qj), shape(dj));
        assert.equal(qj.ok, true);
        assert.deepEqual(qj.problems, []);
      });

      await t.step(
        "a run that spans the runner's beat (and a request arriving meanwhile) is no undeclared write of the command",
        async () => {
          // The runner rewrites .agentteams-status/runner.json every 3 s, and sessions write
          // requests into .agentteams-queue/ at any time: neither is the command's doing.
          const slow = w.run({ argv: ["sleep", "4"] }, { nonce });
          await sleep(1500);
          const meanwhile = await w.run({ argv: ["true"] }, { nonce });
          const r = await slow;
          assert.equal(r.code, 0, r.stderr);
          assert.doesNotMatch(r.stderr, /UNDECLARED_WRITES/);
          assert.equal(meanwhile.code, 0, meanwhile.stderr);
        },
      );

      await t.step("two waiting CLIs at once each get their own result", async () => {
        const [a, b] = await Promise.all([
          w.run({ argv: ["echo", "first"] }, { nonce }),
          w.run({ argv: ["echo", "second", "one"] }, { nonce }),
        ]);
        assert.equal(a.code, 0, a.stderr);
        assert.equal(b.code, 0, b.stderr);
        assert.equal(a.stdout, "first\n");
        assert.equal(b.stdout, "second one\n");
      });

      await t.step(
        "dispatch under the flags `permissions dispatch` prints: no read of a secret key, and it works",
        async () => {
          const args = await permissionsArgs(w, [
            "dispatch",
            "--agent",
            "worker",
            "--project",
            w.project,
          ]);
          const reads = allowList(args, "read");
          assert.ok(reads.length > 0, args.join(" "));
          for (
            const secret of ["proposal-ledger.key", "runner-x25519.pem", "operator-ed25519.pem"]
          ) {
            const path = join(w.keyDir, secret);
            const covering = reads.filter((e) => grantCovers(e, path));
            assert.deepEqual(covering, [], `${path} is readable under ${args.join(" ")}`);
          }
          const inKeyDir = reads.filter((e) =>
            grantCovers(w.keyDir, e) || grantCovers(e, w.keyDir)
          );
          assert.deepEqual(inKeyDir, [join(w.keyDir, "runner-x25519.pub.pem")]);
          assert.deepEqual(allowList(args, "write").filter((e) => grantCovers(e, w.keyDir)), []);
          const out = await runDeno(args, { env: w.env, cwd: w.dir });
          const stderr = out.stderr;
          assert.equal(out.code, 0, stderr);
          const printed = out.stdout.trim();
          assert.match(printed, /^[0-9a-f]{32}$/);
          assert.doesNotMatch(stderr, /warning: launched with broad/);
          // The nonce works.
          const r = await w.run({ argv: ["true"] }, { nonce: printed });
          assert.equal(r.code, 0, r.stderr);
        },
      );
    });
    await verifyDirect(w);
  });
});
