/**
 * Staged proposals end to end: an agent stages a change and a deletion through
 * `agentteams mcp runner` (the official MCP SDK client, launched by the line `agentteams
 * permissions mcp runner` prints), a real `agentteams serve` keeps them, and the orchestrator
 * lists, shows, approves and rejects them with `agentteams staged ...` run under the line
 * `agentteams permissions staged ...` prints: the file written (its gate re-run) or removed,
 * the ledger rows FORMATS.md §1.2 gives (`apply-staged`, `reject-staged`, `expire-staged`), no
 * dispatch use spent. Refused, each with its code and nothing written (the tree unchanged, only
 * the refusal's rows added): a record edited (its MAC broken), re-MAC'd with another content or
 * kind, swapped for a link, a FIFO or a directory, its base changed since staging, a HALT on its
 * write since staging, a sid unknown or malformed, an approval repeated, an `apply-staged` sent
 * on the tool-server channel.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { loadLedgerKey } from "../../lib/crypto/keys.ts";
import { canonical } from "../../lib/pycompat/canonical.ts";
import { stagedDir, stagedRecord, writeStaged } from "../../lib/runner/staged.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { type JsonObject, useCount, withWorld, type World } from "../e2e/_run_helpers.ts";
import {
  handRequest,
  ignoredByState,
  openAs,
  resultOf,
  runnerBrief,
  underPrinted,
  verifyDirect,
  withRunner,
  worldEnv,
} from "../runner/_runner_helpers.ts";
import { connect, type Connected, permissionsLine, textOf } from "./_client.ts";

type Call = { content?: unknown; isError?: boolean; structuredContent?: Record<string, unknown> };

async function call(c: Connected, name: string, args: Record<string, unknown>): Promise<Call> {
  return await c.client.callTool({ name, arguments: args }, undefined, {
    timeout: 300_000,
  }) as Call;
}

/** `stager` stages every proposal through its MCP server; `src/gated/` passes a gate first. */
function brief(p: Parameters<typeof runnerBrief>[0]): JsonObject {
  const b = runnerBrief(p) as { agent_policies: JsonObject; confined_programs: JsonObject };
  return {
    ...b,
    agent_policies: {
      ...b.agent_policies,
      stager: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] },
    },
    confined_programs: {
      ...b.confined_programs,
      stager: (b.confined_programs as Record<string, JsonObject>).worker,
    },
    proposal_gates: {
      has_ok: { glob: "src/gated/*", argv: ["/usr/bin/grep", "-q", "ok", "{file}"] },
    },
    mcp_grants: { stager: { tools: ["write_file", "delete_file"], approval: "staged" } },
  } as JsonObject;
}

/** `agentteams staged <words...> --project P --json [extra]` under its printed permission line. */
async function staged(w: World, words: string[], extra: string[] = []) {
  // What the line is printed for stays one shell word each (the test splits it on spaces).
  const printed = await underPrinted(w, ["staged", ...words, "--project", w.project], "", [
    "--json",
    ...extra,
  ]);
  const r = await printed.done;
  const out = r.stdout.trim() === "" ? {} : JSON.parse(r.stdout) as Record<string, unknown>;
  return { ...r, out };
}

/** The project as it stands, without what serving any request moves. */
function state(w: World) {
  return snapshotTreeSync([w.project, w.home, w.keyDir], ignoredByState(w));
}

/** Runs `staged words...`, asserting the refusal `code`, nothing written, only `rows` added. */
async function refusedStaged(
  w: World,
  what: string,
  words: string[],
  code: string,
  rows: string[],
) {
  const before = state(w);
  const count = w.rows().length;
  const r = await staged(w, words);
  assert.equal(r.code, 1, `${what}: ${r.stdout} ${r.stderr}`);
  assert.equal(
    (r.out.error as Record<string, unknown> | undefined)?.code,
    code,
    `${what}: ${r.stdout}`,
  );
  assertSameTree(before, state(w), what);
  const added = w.rows().slice(count);
  assert.deepEqual(added.map((x) => x.action), rows, what);
  return added;
}

Deno.test("staged proposals: staged over MCP, approved and rejected with agentteams staged against a real serve", async (t) => {
  await withWorld("mcp-staged", { brief }, async (w) => {
    const env = worldEnv(w);
    const stager = await connect(
      await permissionsLine(["mcp", "runner", "--agent", "stager"], w.project, env),
      w.project,
      env,
    );
    const key = loadLedgerKey({ env: w.env, mode: "direct" });
    try {
      await withRunner(w, async () => {
        const nonce = await w.dispatch("stager");
        const stage = async (tool: string, args: Record<string, unknown>) => {
          const r = await call(stager, tool, { dispatch: nonce, rationale: "staged e2e", ...args });
          assert.equal(r.isError, undefined, textOf(r));
          const res = r.structuredContent?.result as Record<string, unknown>;
          assert.equal(res.staged, true, textOf(r));
          return String(res.sid);
        };
        const recordFile = (sid: string) => join(stagedDir(w.project), `${sid}.json`);

        await t.step("listed and shown: the staged change, content included", async () => {
          const sid = await stage("write_file", {
            path: "src/gated/new.txt",
            base_sha256: "absent",
            content: "ok, approved\n",
          });
          const list = await staged(w, ["list"]);
          assert.equal(list.code, 0, list.stderr);
          const listed = list.out.staged as Record<string, unknown>[];
          assert.equal(listed.length, 1);
          assert.equal(listed[0].sid, sid);
          assert.equal(listed[0].path, "src/gated/new.txt");
          assert.equal(listed[0].agent, "stager");
          const human = await (await underPrinted(w, ["staged", "list", "--project", w.project]))
            .done;
          assert.match(human.stdout, new RegExp(`^${sid}  change src/gated/new.txt for stager`));
          const shown = await staged(w, ["show", sid]);
          assert.equal(shown.code, 0, shown.stderr);
          const record = shown.out.record as Record<string, unknown>;
          assert.equal((record.artifact as Record<string, unknown>).content, "ok, approved\n");
          assert.ok(!JSON.stringify(record).includes(nonce), "the record kept the nonce");
        });

        await t.step(
          "approved: the gate re-run, the file written, apply-staged, no use spent",
          async () => {
            const [{ sid }] = (await staged(w, ["list"])).out.staged as { sid: string }[];
            const uses = useCount(w.project);
            const rows = w.rows().length;
            const r = await staged(w, ["apply", sid]);
            assert.equal(r.code, 0, r.stderr);
            assert.equal(r.out.written, true);
            assert.equal(r.out.sid, sid);
            assert.equal(
              Deno.readTextFileSync(join(w.project, "src/gated/new.txt")),
              "ok, approved\n",
            );
            assert.throws(() => Deno.lstatSync(recordFile(sid)), Deno.errors.NotFound);
            assert.equal(useCount(w.project), uses);
            const added = w.rows().slice(rows);
            assert.deepEqual(added.map((x) => x.action), ["runner-request", "apply-staged"]);
            const row = added[1];
            assert.deepEqual(
              [row.agent, row.path, row.base, row.new, row.bytes, row.rationale],
              [
                "stager",
                "src/gated/new.txt",
                "absent",
                sha256Hex("ok, approved\n"),
                13,
                "staged e2e",
              ],
            );
            // The approval ran the gate itself (confined), against the content as staged.
            const gates = row.gates as Record<string, unknown>[];
            assert.deepEqual(gates.map((g) => [g.gate, g.exit]), [["has_ok", 0]]);
            assert.ok(!("dispatch" in row) && !("sid" in row), JSON.stringify(row));
            const human = await (await underPrinted(w, ["staged", "list", "--project", w.project]))
              .done;
            assert.equal(human.stdout.trim(), "no staged proposals waiting");
          },
        );

        await t.step("a deletion approved: the file removed", async () => {
          const sid = await stage("delete_file", {
            path: "src/a.txt",
            base_sha256: sha256Hex("hello\n"),
          });
          assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");
          const r = await staged(w, ["apply", sid]);
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.out.new_sha256, null);
          assert.throws(() => Deno.lstatSync(join(w.project, "src/a.txt")), Deno.errors.NotFound);
          assert.equal(w.rows().at(-1)?.action, "apply-staged");
        });

        await t.step("rejected: reject-staged with its reason; nothing written", async () => {
          const sid = await stage("write_file", {
            path: "src/no.txt",
            base_sha256: "absent",
            content: "no\n",
          });
          const none = await staged(w, ["reject", sid]);
          assert.equal(none.code, 2, "a rejection needs its reason");
          const r = await staged(w, ["reject", sid], ["--reason", "  not this way  "]);
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.out.rejected, true);
          const row = w.rows().at(-1)!;
          assert.deepEqual(
            [row.action, row.agent, row.path, row.sid, row.reason],
            ["reject-staged", "stager", "src/no.txt", sid, "not this way"],
          );
          assert.throws(() => Deno.statSync(join(w.project, "src/no.txt")), Deno.errors.NotFound);
          assert.throws(() => Deno.lstatSync(recordFile(sid)), Deno.errors.NotFound);
        });

        await t.step("expired: purged by the list, an expire-staged row", async () => {
          const sid = "e".repeat(32);
          writeStaged(
            w.project,
            stagedRecord({
              sid,
              agent: "stager",
              artifact: {
                kind: "change-proposal",
                path: "src/late.txt",
                base_sha256: "absent",
                content: "late\n",
                rationale: "late",
              },
              plan: { path: "src/late.txt", new_sha256: sha256Hex("late\n"), gates: [] },
              now: new Date(Date.now() - 25 * 3600_000),
            }, key.hmac),
          );
          const applied = await staged(w, ["apply", sid]);
          assert.equal((applied.out.error as Record<string, unknown>).code, "STAGED_EXPIRED");
          const list = await staged(w, ["list"]);
          assert.deepEqual(list.out.staged, []);
          const row = w.rows().at(-1)!;
          assert.deepEqual(
            [row.action, row.agent, row.path, row.sid],
            ["expire-staged", "stager", "src/late.txt", sid],
          );
          assert.throws(() => Deno.lstatSync(recordFile(sid)), Deno.errors.NotFound);
        });

        await t.step("refused, each with its code, nothing written", async () => {
          const refusal = ["runner-request", "apply-staged-refused"];
          // Edited: the content changed on disk, the MAC not.
          const edited = await stage("write_file", {
            path: "src/edited.txt",
            base_sha256: "absent",
            content: "as staged\n",
          });
          const r = JSON.parse(Deno.readTextFileSync(recordFile(edited)));
          r.artifact.content = "not what was staged\n";
          Deno.writeTextFileSync(recordFile(edited), JSON.stringify(r));
          await refusedStaged(w, "an edited record", ["apply", edited], "STAGED_TAMPERED", refusal);

          // Re-MAC'd (the key holder only could) with another content, or another kind.
          const remac = (rec: Record<string, unknown>) => {
            const { mac: _mac, ...body } = rec;
            return JSON.stringify({ ...body, mac: key.hmac.hex(canonical(body as JsonObject)) });
          };
          const content = await stage("write_file", {
            path: "src/content.txt",
            base_sha256: "absent",
            content: "as staged\n",
          });
          const rc = JSON.parse(Deno.readTextFileSync(recordFile(content)));
          rc.artifact.content = "another content\n";
          Deno.writeTextFileSync(recordFile(content), remac(rc));
          await refusedStaged(w, "its content", ["apply", content], "STAGED_MISMATCH", refusal);
          const kind = await stage("write_file", {
            path: "src/kind.txt",
            base_sha256: "absent",
            content: "as staged\n",
          });
          const rk = JSON.parse(Deno.readTextFileSync(recordFile(kind)));
          Deno.writeTextFileSync(recordFile(kind), remac({ ...rk, kind: "delete-proposal" }));
          await refusedStaged(w, "another kind", ["apply", kind], "STAGED_MISMATCH", refusal);

          // Swapped for a link (to the record itself, moved), a FIFO, a directory.
          const swapped = await stage("write_file", {
            path: "src/swapped.txt",
            base_sha256: "absent",
            content: "as staged\n",
          });
          const moved = join(w.scratch, "moved.json");
          Deno.renameSync(recordFile(swapped), moved);
          Deno.symlinkSync(moved, recordFile(swapped));
          await refusedStaged(w, "a link", ["apply", swapped], "STAGED_UNSAFE", refusal);
          Deno.removeSync(recordFile(swapped));
          const fifo = await new Deno.Command("mkfifo", { args: [recordFile(swapped)] }).output();
          assert.equal(fifo.code, 0);
          await refusedStaged(w, "a FIFO", ["apply", swapped], "STAGED_UNSAFE", refusal);
          Deno.removeSync(recordFile(swapped));
          Deno.mkdirSync(recordFile(swapped));
          await refusedStaged(w, "a directory", ["apply", swapped], "STAGED_UNSAFE", refusal);
          Deno.removeSync(recordFile(swapped));
          assert.throws(
            () => Deno.statSync(join(w.project, "src/swapped.txt")),
            Deno.errors.NotFound,
          );

          // The base changed since staging.
          Deno.writeTextFileSync(join(w.project, "src/based.txt"), "one\n");
          const based = await stage("write_file", {
            path: "src/based.txt",
            base_sha256: sha256Hex("one\n"),
            content: "three\n",
          });
          Deno.writeTextFileSync(join(w.project, "src/based.txt"), "two\n");
          await refusedStaged(w, "the base changed", ["apply", based], "STALE_BASE", refusal);
          assert.equal(Deno.readTextFileSync(join(w.project, "src/based.txt")), "two\n");

          // A HALT on its write since staging.
          const halted = await stage("write_file", {
            path: "src/halted.txt",
            base_sha256: "absent",
            content: "stopped\n",
          });
          const halt = await w.cli([
            "decision",
            "sign",
            "--project",
            w.project,
            "--action",
            "write:src/halted.txt",
            "--verdict",
            "HALT",
          ], { env: { AGENTTEAMS_DECISION_SIGNING_KEY: "dk" } });
          assert.equal(halt.code, 0, halt.stderr);
          await refusedStaged(w, "a HALT since staging", ["apply", halted], "HALTED", refusal);

          // Unknown, applied twice, malformed (refused before anything is queued).
          await refusedStaged(w, "unknown", ["apply", "c".repeat(32)], "STAGED_UNKNOWN", refusal);
          const twice = await stage("write_file", {
            path: "src/twice.txt",
            base_sha256: "absent",
            content: "once\n",
          });
          assert.equal((await staged(w, ["apply", twice])).code, 0);
          await refusedStaged(w, "applied twice", ["apply", twice], "STAGED_UNKNOWN", refusal);
          await refusedStaged(w, "a malformed sid", ["apply", "../x"], "STAGED_ID_INVALID", []);

          // The tool-server channel cannot approve.
          const mine = await stage("write_file", {
            path: "src/mine.txt",
            base_sha256: "absent",
            content: "self-approved\n",
          });
          const before = state(w);
          const count = w.rows().length;
          const req = await handRequest(
            w,
            { kind: "apply-staged", sid: mine, via_agent: "stager" },
            {
              channel: "mcp",
            },
          );
          const opened = await openAs(w, req, await resultOf(w, req.id));
          assert.equal(opened.body.ok, false);
          assert.equal((opened.body.error as Record<string, unknown>).code, "REQUEST_INVALID");
          assertSameTree(before, state(w), "apply-staged on the tool-server channel");
          assert.deepEqual(w.rows().slice(count).map((x) => x.action), ["runner-request-refused"]);
          assert.throws(() => Deno.statSync(join(w.project, "src/mine.txt")), Deno.errors.NotFound);
        });
      });
    } finally {
      await stager.close();
    }
    await verifyDirect(w);
  });
});
