/**
 * Staged proposals on the orchestrator's channel (FORMATS.md §2.2, §2.3, §2.5), served in process
 * through the runner's own `serveClaimed`: a change and a deletion staged over the tool-server
 * channel, then approved (`apply-staged`: the file written or removed, the `apply-staged` row of
 * FORMATS §1.2, no dispatch use counted, the record removed), rejected (`reject-staged`, its
 * reason), listed (oldest first; a record that does not verify listed as malformed; an expired
 * one purged with `expire-staged`) and shown. Every refusal of an approval (a record edited, its
 * MAC broken; re-MAC'd with another content or kind; a link, FIFO or directory in its place; its
 * base changed since staging; expired; a sid unknown, malformed, applied already; the request on
 * the tool-server channel) is asserted by its code, the tree unchanged and only the refusal's rows
 * added. The orchestrator's channel refuses an artifact of an agent listed in `mcp_grants`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { canonical, type JsonObject } from "../../lib/pycompat/canonical.ts";
import type { RunnerState, Served } from "../../lib/runner/serve_one.ts";
import { stagedDir, stagedRecord, writeStaged } from "../../lib/runner/staged.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { useCount, withWorld, type World } from "../e2e/_run_helpers.ts";
import {
  inProcessRunner as runnerOf,
  serveWritten as serve,
  stagerBrief as stagedBrief,
  verifyDirect,
} from "./_runner_helpers.ts";

const resultOf = (r: Served) => r.body.result as JsonObject;

/** Stages `artifact` for `stager` over the tool-server channel; returns the sid. */
async function stage(s: RunnerState, w: World, artifact: JsonObject): Promise<string> {
  const r = await serve(s, w, { kind: "stage-proposal", artifact, via_agent: "stager" }, "mcp");
  assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
  assert.equal(resultOf(r).staged, true);
  return String(resultOf(r).sid);
}

const recordPath = (w: World, sid: string) => join(stagedDir(w.project), `${sid}.json`);

/**
 * The project, home and key dir without the ledger and its head (checked row by row; the anchors
 * file beside it), and, with
 * `attempts`, the dispatch store (an artifact's nonce counts an attempt before its refusal).
 */
function tree(w: World, attempts = false) {
  const moving = [
    "proposal-ledger.jsonl",
    "proposal-ledger.head",
    "anchors.json",
    ...(attempts ? ["dispatches.jsonl"] : []),
  ].map((n) => join(w.project, ".agentteams", n));
  return snapshotTreeSync([w.project, w.home, w.keyDir], (p) => moving.includes(p));
}

/**
 * Serves `body` and asserts it was refused with `code`, nothing written, and only `rows` (the
 * actions) appended; returns the refusal's rows.
 */
async function refused(
  s: RunnerState,
  w: World,
  what: string,
  body: Record<string, unknown>,
  code: string,
  rows: string[],
  channel: "orchestrator" | "mcp" = "orchestrator",
  attempts = false,
): Promise<Record<string, unknown>[]> {
  const before = tree(w, attempts);
  const count = w.rows().length;
  const r = await serve(s, w, body, channel);
  assert.equal(r.body.ok, false, `${what}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.error?.code, code, `${what}: ${JSON.stringify(r.body.error)}`);
  assertSameTree(before, tree(w, attempts), what);
  const added = w.rows().slice(count);
  assert.deepEqual(added.map((x) => x.action), rows, what);
  return added;
}

const keysOf = (row: Record<string, unknown>) => Object.keys(row).sort();

Deno.test("staged proposals: approved, rejected, listed and shown on the orchestrator's channel", async (t) => {
  await withWorld("rq-staged", { brief: stagedBrief }, async (w) => {
    const s = await runnerOf(w);
    const nonce = await w.dispatchBeforeBriefChanged("stager");
    const hello = sha256Hex("hello\n");
    const change = (path: string, content: string): JsonObject => ({
      kind: "change-proposal",
      dispatch: nonce,
      path,
      base_sha256: "absent",
      content,
      rationale: "  the staged test  ",
    });

    await t.step("a staged change approved: written, apply-staged, nothing counted", async () => {
      const sid = await stage(s, w, change("src/new.txt", "approved\n"));
      assert.throws(() => Deno.statSync(join(w.project, "src/new.txt")), Deno.errors.NotFound);
      const uses = useCount(w.project);
      const rows = w.rows().length;
      const r = await serve(s, w, { kind: "apply-staged", sid });
      assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
      assert.deepEqual(resultOf(r), {
        agent: "stager",
        path: "src/new.txt",
        base_sha256: "absent",
        new_sha256: sha256Hex("approved\n"),
        gates: [],
        written: true,
        sid,
      });
      assert.equal(Deno.readTextFileSync(join(w.project, "src/new.txt")), "approved\n");
      assert.throws(() => Deno.lstatSync(recordPath(w, sid)), Deno.errors.NotFound);
      assert.equal(useCount(w.project), uses, "a staged approval counts nothing");
      const added = w.rows().slice(rows);
      assert.deepEqual(added.map((x) => x.action), ["runner-request", "apply-staged"]);
      const row = added[1];
      // FORMATS.md §1.2: agent, path, base, new, bytes, gates, rationale (no dispatch, no sid).
      assert.deepEqual(keysOf(row), [
        "action",
        "agent",
        "base",
        "bytes",
        "gates",
        "mac",
        "new",
        "path",
        "prev",
        "rationale",
        "time",
      ]);
      assert.equal(row.agent, "stager");
      assert.equal(row.base, "absent");
      assert.equal(row.new, sha256Hex("approved\n"));
      assert.equal(row.bytes, "approved\n".length);
      assert.equal(row.rationale, "the staged test");
    });

    await t.step("a staged deletion approved: removed, its apply-staged row", async () => {
      const sid = await stage(s, w, {
        kind: "delete-proposal",
        dispatch: nonce,
        path: "src/a.txt",
        base_sha256: hello,
        rationale: "remove a",
      });
      assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");
      const r = await serve(s, w, { kind: "apply-staged", sid });
      assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
      assert.equal(resultOf(r).new_sha256, null);
      assert.throws(() => Deno.lstatSync(join(w.project, "src/a.txt")), Deno.errors.NotFound);
      const row = w.rows().at(-1)!;
      assert.equal(row.action, "apply-staged");
      assert.deepEqual(keysOf(row), [
        "action",
        "agent",
        "base",
        "mac",
        "path",
        "prev",
        "rationale",
        "time",
      ]);
      assert.equal(row.base, hello);
    });

    await t.step("rejected: a reject-staged row with its reason; nothing written", async () => {
      const sid = await stage(s, w, change("src/rejected.txt", "no\n"));
      const before = tree(w);
      const r = await serve(s, w, {
        kind: "reject-staged",
        sid,
        reason: "  not this way " + "x".repeat(400),
      });
      assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
      assert.deepEqual(resultOf(r), {
        sid,
        agent: "stager",
        path: "src/rejected.txt",
        rejected: true,
      });
      const row = w.rows().at(-1)!;
      assert.equal(row.action, "reject-staged");
      assert.deepEqual(keysOf(row), [
        "action",
        "agent",
        "mac",
        "path",
        "prev",
        "reason",
        "sid",
        "time",
      ]);
      assert.equal(row.reason, ("not this way " + "x".repeat(400)).slice(0, 300));
      assert.equal(row.sid, sid);
      assert.throws(() => Deno.lstatSync(recordPath(w, sid)), Deno.errors.NotFound);
      assert.throws(() => Deno.statSync(join(w.project, "src/rejected.txt")), Deno.errors.NotFound);
      // Only the record went.
      const after = tree(w);
      assert.equal(before.size - 1, after.size);
      // Gone: rejected once.
      await refused(
        s,
        w,
        "rejected twice",
        { kind: "reject-staged", sid, reason: "again" },
        "STAGED_UNKNOWN",
        ["runner-request"],
      );
    });

    await t.step(
      "listed oldest first; shown in full; malformed listed; expired purged",
      async () => {
        const older = await stage(s, w, change("src/older.txt", "older\n"));
        const newer = await stage(s, w, change("src/newer.txt", "newer\n"));
        Deno.utimeSync(recordPath(w, older), new Date(1_000_000), new Date(1_000_000));
        const broken = "b".repeat(32);
        Deno.writeTextFileSync(recordPath(w, broken), "{not json");
        const expired = stagedRecord({
          sid: "e".repeat(32),
          agent: "stager",
          artifact: { ...change("src/expired.txt", "late\n") },
          plan: { path: "src/expired.txt", new_sha256: sha256Hex("late\n"), gates: [] },
          now: new Date(Date.now() - 25 * 3600_000),
        }, s.key.hmac);
        writeStaged(w.project, expired);
        const rows = w.rows().length;
        const r = await serve(s, w, { kind: "list-staged" });
        assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
        const listed = resultOf(r).staged as JsonObject[];
        const real = listed.filter((x) => x.malformed !== true);
        assert.deepEqual(real.map((x) => x.sid), [older, newer]);
        assert.deepEqual(Object.keys(real[0]), [
          "sid",
          "agent",
          "kind",
          "path",
          "bytes",
          "content_sha256",
          "gates",
          "expires",
        ]);
        assert.equal(real[0].content_sha256, sha256Hex("older\n"));
        assert.deepEqual(listed.filter((x) => x.malformed === true), [{
          sid: broken,
          malformed: true,
        }]);
        const added = w.rows().slice(rows);
        assert.deepEqual(added.map((x) => x.action), ["runner-request", "expire-staged"]);
        assert.deepEqual(
          [added[1].agent, added[1].path, added[1].sid],
          ["stager", "src/expired.txt", "e".repeat(32)],
        );
        assert.deepEqual(keysOf(added[1]), [
          "action",
          "agent",
          "mac",
          "path",
          "prev",
          "sid",
          "time",
        ]);
        assert.throws(() => Deno.lstatSync(recordPath(w, "e".repeat(32))), Deno.errors.NotFound);

        const shown = await serve(s, w, { kind: "show-staged", sid: newer });
        assert.equal(shown.body.ok, true, JSON.stringify(shown.body.error));
        assert.deepEqual(
          JSON.parse(JSON.stringify(resultOf(shown))),
          JSON.parse(Deno.readTextFileSync(recordPath(w, newer))),
        );
        assert.equal((resultOf(shown).artifact as JsonObject).content, "newer\n");

        // A record that does not verify is cleared by rejecting it; its row names nothing it says.
        const rj = await serve(s, w, { kind: "reject-staged", sid: broken, reason: "junk" });
        assert.equal(rj.body.ok, true, JSON.stringify(rj.body.error));
        assert.deepEqual(resultOf(rj), { sid: broken, agent: "?", path: "?", rejected: true });
        assert.deepEqual([w.rows().at(-1)?.action, w.rows().at(-1)?.agent], ["reject-staged", "?"]);
        assert.throws(() => Deno.lstatSync(recordPath(w, broken)), Deno.errors.NotFound);
        // A link in a record's place: the entry removed, never what it points to.
        const target = join(w.scratch, "kept.json");
        Deno.writeTextFileSync(target, Deno.readTextFileSync(recordPath(w, older)));
        Deno.removeSync(recordPath(w, older));
        Deno.symlinkSync(target, recordPath(w, older));
        const listedLink = resultOf(await serve(s, w, { kind: "list-staged" }));
        assert.deepEqual(
          (listedLink.staged as JsonObject[]).find((x) => x.sid === older),
          { sid: older, malformed: true },
        );
        assert.equal(
          (await serve(s, w, { kind: "reject-staged", sid: older, reason: "link" })).body.ok,
          true,
        );
        assert.throws(() => Deno.lstatSync(recordPath(w, older)), Deno.errors.NotFound);
        assert.ok(Deno.lstatSync(target).isFile, "the link's target was removed");
        // A directory in a record's place is not removed.
        const dir = "a".repeat(32);
        Deno.mkdirSync(recordPath(w, dir));
        const rd = await serve(s, w, { kind: "reject-staged", sid: dir, reason: "dir" });
        assert.equal(rd.body.error?.code, "STAGED_UNSAFE");
        Deno.removeSync(recordPath(w, dir));
        for (const sid of [newer]) {
          assert.equal(
            (await serve(s, w, { kind: "reject-staged", sid, reason: "tidy" })).body.ok,
            true,
          );
        }
        const empty = await serve(s, w, { kind: "list-staged" });
        assert.deepEqual(resultOf(empty), { staged: [] });
      },
    );

    await t.step("an approval refused, each by its code, nothing written", async () => {
      const file = (sid: string) => recordPath(w, sid);
      const record = (sid: string) => JSON.parse(Deno.readTextFileSync(file(sid))) as JsonObject;
      const remac = (r: JsonObject): JsonObject => {
        const { mac: _m, ...body } = r;
        return { ...body, mac: s.key.hmac.hex(canonical(body)) };
      };
      const refusedApply = (what: string, sid: string, code: string) =>
        refused(s, w, what, { kind: "apply-staged", sid }, code, [
          "runner-request",
          "apply-staged-refused",
        ]);

      // Edited: its content changed, the MAC left as it was.
      const edited = await stage(s, w, change("src/edited.txt", "as staged\n"));
      const e = record(edited);
      Deno.writeTextFileSync(
        file(edited),
        JSON.stringify({ ...e, artifact: { ...(e.artifact as JsonObject), content: "evil\n" } }),
      );
      const [, row] = await refusedApply("an edited record", edited, "STAGED_TAMPERED");
      assert.equal(row.agent, "?", "an unverified record names no agent");
      assert.equal(row.code, "STAGED_TAMPERED");

      // Re-MAC'd (by the key holder only) with a content its hash does not match, or another
      // kind than its artifact's: refused all the same.
      const content = await stage(s, w, change("src/content.txt", "as staged\n"));
      const c = record(content);
      Deno.writeTextFileSync(
        file(content),
        JSON.stringify(
          remac({ ...c, artifact: { ...(c.artifact as JsonObject), content: "x\n" } }),
        ),
      );
      await refusedApply("its content changed", content, "STAGED_MISMATCH");
      const kind = await stage(s, w, change("src/kind.txt", "as staged\n"));
      Deno.writeTextFileSync(
        file(kind),
        JSON.stringify(remac({ ...record(kind), kind: "delete-proposal" })),
      );
      await refusedApply("a record of another kind", kind, "STAGED_MISMATCH");

      // Swapped for a link (to a record that would verify), a FIFO, a directory.
      const linked = await stage(s, w, change("src/linked.txt", "as staged\n"));
      const outside = join(w.scratch, "record.json");
      Deno.renameSync(file(linked), outside);
      Deno.symlinkSync(outside, file(linked));
      await refusedApply("a link in its place", linked, "STAGED_UNSAFE");
      Deno.removeSync(file(linked));
      new Deno.Command("mkfifo", { args: [file(linked)] }).outputSync();
      assert.ok(Deno.lstatSync(file(linked)).isFifo);
      await refusedApply("a FIFO in its place", linked, "STAGED_UNSAFE");
      Deno.removeSync(file(linked));
      Deno.mkdirSync(file(linked));
      await refusedApply("a directory in its place", linked, "STAGED_UNSAFE");
      Deno.removeSync(file(linked));
      assert.throws(() => Deno.statSync(join(w.project, "src/linked.txt")), Deno.errors.NotFound);

      // The base changed since staging: the checks run against the tree as it is now.
      Deno.writeTextFileSync(join(w.project, "src/based.txt"), "one\n");
      const based = await stage(s, w, {
        kind: "change-proposal",
        dispatch: nonce,
        path: "src/based.txt",
        base_sha256: sha256Hex("one\n"),
        content: "three\n",
        rationale: "based",
      });
      Deno.writeTextFileSync(join(w.project, "src/based.txt"), "two\n");
      const [, stale] = await refusedApply("the base changed", based, "STALE_BASE");
      assert.equal(stale.agent, "stager", "the verified record's agent");
      assert.ok(Deno.lstatSync(file(based)).isFile, "a refused approval keeps its record");

      // Expired (made by the key holder with a clock a day back): refused, kept for the list.
      const old = stagedRecord({
        sid: "d".repeat(32),
        agent: "stager",
        artifact: change("src/old.txt", "old\n"),
        plan: { path: "src/old.txt", new_sha256: sha256Hex("old\n"), gates: [] },
        now: new Date(Date.now() - 25 * 3600_000),
      }, s.key.hmac);
      writeStaged(w.project, old);
      await refusedApply("expired", "d".repeat(32), "STAGED_EXPIRED");

      // Unknown, malformed, and approved twice.
      await refusedApply("an unknown sid", "c".repeat(32), "STAGED_UNKNOWN");
      await refused(
        s,
        w,
        "a malformed sid",
        { kind: "apply-staged", sid: "../../README" },
        "REQUEST_INVALID",
        ["runner-request-refused"],
      );
      const twice = await stage(s, w, change("src/twice.txt", "once\n"));
      assert.equal((await serve(s, w, { kind: "apply-staged", sid: twice })).body.ok, true);
      await refusedApply("approved twice", twice, "STAGED_UNKNOWN");
      assert.equal(Deno.readTextFileSync(join(w.project, "src/twice.txt")), "once\n");

      // The tool-server channel may not approve.
      const mine = await stage(s, w, change("src/mine.txt", "self-approved\n"));
      await refused(
        s,
        w,
        "apply-staged on the tool-server channel",
        { kind: "apply-staged", sid: mine, via_agent: "stager" },
        "REQUEST_INVALID",
        ["runner-request-refused"],
        "mcp",
      );
      await refused(
        s,
        w,
        "apply-staged on the tool-server channel, no via_agent",
        { kind: "apply-staged", sid: mine },
        "REQUEST_INVALID",
        ["runner-request-refused"],
        "mcp",
      );
      assert.throws(() => Deno.statSync(join(w.project, "src/mine.txt")), Deno.errors.NotFound);

      // The staged folder itself swapped for a link (to a copy of it): nothing read through it.
      const aside = join(w.scratch, "staged-aside");
      Deno.renameSync(stagedDir(w.project), aside);
      Deno.symlinkSync(aside, stagedDir(w.project));
      await refusedApply("the staged folder a link", mine, "STAGED_UNSAFE");
      await refused(s, w, "listed through a link", { kind: "list-staged" }, "STAGED_UNSAFE", [
        "runner-request",
      ]);
      Deno.removeSync(stagedDir(w.project));
      Deno.renameSync(aside, stagedDir(w.project));
    });

    await t.step("the orchestrator's channel refuses an agent listed in mcp_grants", async () => {
      // Its nonce is issued there (the orchestrator dispatches every agent)...
      const d = await serve(s, w, { kind: "issue-dispatch", agent: "stager" });
      assert.equal(d.body.ok, true, JSON.stringify(d.body.error));
      // ...but its artifacts are served on its MCP server's channel only.
      const uses = useCount(w.project);
      const applied = await refused(
        s,
        w,
        "apply-proposal",
        {
          kind: "apply-proposal",
          artifact: change("src/direct.txt", "around the grant\n"),
          dry_run: false,
        },
        "MCP_ONLY_AGENT",
        ["runner-request", "apply-proposal-refused"],
        "orchestrator",
        true,
      );
      assert.equal(applied[1].agent, "stager");
      const ran = await refused(
        s,
        w,
        "run-request",
        {
          kind: "run-request",
          artifact: { kind: "command-request", dispatch: nonce, argv: ["true"], purpose: "p" },
          dry_run: false,
        },
        "MCP_ONLY_AGENT",
        ["runner-request", "run-request-refused"],
        "orchestrator",
        true,
      );
      assert.equal(ran[1].agent, "stager");
      assert.equal(useCount(w.project), uses);
      // An agent without a grant is served there as ever.
      const worker = await w.dispatchBeforeBriefChanged("worker");
      const ok = await serve(s, w, {
        kind: "run-request",
        artifact: { kind: "command-request", dispatch: worker, argv: ["true"], purpose: "p" },
        dry_run: true,
      });
      assert.equal(ok.body.ok, true, JSON.stringify(ok.body.error));
    });
    await verifyDirect(w);
  });
});
