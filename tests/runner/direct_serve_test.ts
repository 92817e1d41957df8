/**
 * Operator direct-write grants as the runner serves them, in process through its own
 * `loadDirectGrants` and `serveClaimed` on real files: a grant made by `issueDirectGrant` (the
 * `mcp grant issue` work) under the world's HOME is loaded (its `direct-grants-loaded` row), a
 * tool-server change under it is written as `apply-direct` (the change's fields plus `grant`),
 * a deletion under it is staged, the count survives a restart (from the verified ledger), and
 * a nonce issued through the queue for the granted agent lives 4 h with 10 uses. Each of these
 * is refused with its code and writes nothing: writes past `max_writes`, a grant expired while
 * serving, a 25-use nonce (the channel's one answer). Each of these activates no grant, so the
 * change is staged, never written: the brief's `approval: "direct"` without a grant file, a
 * grants file that is a link, group-writable or inside the project, a gate edited since
 * signing, an unknown key, an expired grant.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { completePolicy } from "../../lib/acts/session.ts";
import { derToPem } from "../../lib/crypto/ed25519.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { loadLedgerKey, runnerSealPair } from "../../lib/crypto/keys.ts";
import { issueDispatch } from "../../lib/ledger/dispatch.ts";
import { parsePolicy } from "../../lib/policy/parse.ts";
import type { Policy } from "../../lib/policy/types.ts";
import { lazyBackend } from "../../lib/sandbox/backend_choice_io.ts";
import { issueDirectGrant, listDirectGrants } from "../../lib/runner/direct_grants_issue.ts";
import {
  type DirectGrantState,
  loadDirectGrants,
  type LoadedDirectGrants,
} from "../../lib/runner/direct_grants_load.ts";
import { MCP_NONCE_MESSAGE, type RunnerState, serveClaimed } from "../../lib/runner/serve_one.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { type JsonObject, readDispatchStore, withWorld, type World } from "../e2e/_run_helpers.ts";
import { ignoredByState, makeRequest, runnerBrief, verifyDirect } from "./_runner_helpers.ts";

const SEED = Uint8Array.from({ length: 32 }, (_, i) => 101 + i);
const PRIVATE_PEM = derToPem(
  new Uint8Array([...Uint8Array.fromHex("302e020100300506032b657004220420"), ...SEED]),
  "PRIVATE KEY",
);

/** `worker` asks for direct writes under `src/` (a `docs` gate bounds it); `other` for none. */
function brief(p: Parameters<typeof runnerBrief>[0]): JsonObject {
  const b = runnerBrief(p);
  return {
    ...b,
    proposal_gates: { docs: { glob: "docs/*", argv: ["true"] } },
    mcp_grants: {
      worker: { tools: ["write_file", "delete_file", "request_status"], approval: "direct" },
      other: { tools: ["write_file"], approval: "direct" },
    },
  };
}

/** The project, home and key dir as they stand, without what serving anything moves. */
function state(w: World) {
  const dispatches = join(w.project, ".agentteams", "dispatches.jsonl");
  const ignored = ignoredByState(w);
  return snapshotTreeSync([w.project, w.home, w.keyDir], (p) => p === dispatches || ignored(p));
}

Deno.test("direct grants served in process: written under a grant, refused or staged without one", async (t) => {
  await withWorld("direct-serve", { brief }, async (w) => {
    const env: Record<string, string> = { ...w.env, PATH: "/usr/bin:/bin" };
    const briefPath = join(w.project, "agentteams.jsonc");
    const policy = await completePolicy(w.project, briefPath, env);
    const key = loadLedgerKey({ env, mode: "runner" });
    const seal = await runnerSealPair(env);
    let clock = () => new Date();
    const runner = (direct: DirectGrantState | undefined, p: Policy = policy): RunnerState => ({
      root: w.project,
      env,
      home: w.home,
      key,
      seal,
      policy: p,
      backend: lazyBackend(p, { unconfined: false, runner: true }),
      now: () => clock(),
      ...(direct !== undefined ? { direct } : {}),
    });
    const load = (p: Policy = policy, home = w.home, now = clock) =>
      loadDirectGrants({ root: w.project, home, policy: p, key, now });
    const serve = async (
      s: RunnerState,
      body: Record<string, unknown>,
      channel: "mcp" | "orchestrator" = "mcp",
    ) => {
      const m = await makeRequest(w, body, { channel });
      const path = join(w.dir, `${m.id}.json`);
      Deno.writeFileSync(path, m.bytes);
      return await serveClaimed(s, path, m.id, channel);
    };
    const change = (dispatch: string, path: string, content: string) => ({
      kind: "stage-proposal",
      via_agent: "worker",
      artifact: {
        kind: "change-proposal",
        dispatch,
        path,
        content,
        base_sha256: "absent",
        rationale: `write ${path}`,
      },
    });
    const directNonce = async (agent = "worker") =>
      (await issueDispatch(w.project, key.hmac, agent, { ttlHours: 4, maxUses: 10, now: clock }))
        .nonce;
    const result = (r: Awaited<ReturnType<typeof serve>>) =>
      r.body.result as Record<string, unknown>;
    /** Serves a change that must be staged, not written: the file stays absent. */
    const staged = async (s: RunnerState, path: string) => {
      const r = await serve(s, change(await directNonce(), path, "staged\n"));
      assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
      assert.equal(result(r).staged, true);
      assert.equal(result(r).written, false);
      assert.ok(!w.rows().some((x) => x.action === "apply-direct" && x.path === path));
      assert.throws(() => Deno.statSync(join(w.project, path)), Deno.errors.NotFound);
    };
    /** Serves a request that must be refused with `code`, nothing written. */
    const refused = async (s: RunnerState, body: Record<string, unknown>, code: string) => {
      const before = state(w);
      const rows = w.rows().length;
      const r = await serve(s, body);
      assert.equal(r.body.ok, false, JSON.stringify(r.body.result));
      assert.equal(r.body.error?.code, code, JSON.stringify(r.body.error));
      assertSameTree(before, state(w), code);
      const acts = w.rows().slice(rows).map((x) => String(x.action));
      assert.ok(!acts.includes("apply-direct") && !acts.includes("stage-proposal"), acts.join());
      return { r, rows: w.rows().slice(rows) };
    };

    await t.step("approval direct in the brief, no grant file: staged (fail closed)", async () => {
      const loaded = await load();
      assert.equal(loaded.row, null);
      assert.equal(loaded.state.active.byAgent.size, 0);
      await staged(runner(loaded.state), "src/no-grant.txt");
    });

    const issueOpts = {
      root: w.project,
      home: w.home,
      policy,
      agent: "worker",
      scopes: ["src/"],
      privatePem: PRIVATE_PEM,
      days: 1,
      maxWrites: 2,
      now: new Date(),
    };
    await t.step(
      "issue refuses a grants folder the runner would refuse; nothing written",
      async () => {
        const dir = join(w.home, ".config", "agentteams", "mcp-grants");
        Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
        Deno.chmodSync(dir, 0o755);
        const before = state(w);
        const e = await issueDirectGrant(issueOpts).then(() => null, (e) => e);
        assert.equal(e?.code, "DIRECT_GRANTS_UNSAFE", String(e));
        assert.match(e.message, /must be 0700|mode 0755/);
        assertSameTree(before, state(w), "issue into a 0755 folder");
        Deno.chmodSync(dir, 0o700);
      },
    );
    const issued = await issueDirectGrant(issueOpts);
    const grantId = String(issued.record.grant_id);
    const file = issued.file;
    const pem = Deno.readTextFileSync(issued.verifyKey.path);
    assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);

    await t.step(
      "a second grant for the agent: refused unless --replace; nothing written",
      async () => {
        const before = Deno.readTextFileSync(file);
        const e = await issueDirectGrant(issueOpts).then(() => null, (e) => e);
        assert.equal(e?.code, "DIRECT_GRANT_INVALID", String(e));
        assert.match(e.message, /more than one grant for worker.*--replace drops it/);
        assert.equal(Deno.readTextFileSync(file), before);
        const e2 = await issueDirectGrant({
          ...issueOpts,
          replace: true,
          keyId: String(issued.record.key_id),
          privatePem: derToPem(
            new Uint8Array([
              ...Uint8Array.fromHex("302e020100300506032b657004220420"),
              ...SEED.map((b) => b ^ 1),
            ]),
            "PRIVATE KEY",
          ),
        }).then(() => null, (e) => e);
        assert.equal(e2?.code, "USAGE", String(e2));
        assert.match(e2.message, /holds another key than the one given/);
        // Put back the one the steps below use.
        Deno.writeTextFileSync(file, before);
      },
    );

    let loaded: LoadedDirectGrants;
    await t.step("loaded: the direct-grants-loaded row, no agent in it", async () => {
      loaded = await load();
      assert.deepEqual(loaded.row, {
        action: "direct-grants-loaded",
        active: [grantId],
        key_fingerprints: [sha256Hex(pem)],
        problems: [],
      });
      assert.equal(loaded.sha256, sha256Hex(Deno.readFileSync(file)));
    });

    await t.step(
      "a queued dispatch for the granted agent: 4 h, 10 uses; others 24 h, 25",
      async () => {
        for (const [agent, uses, hours] of [["worker", 10, 4], ["other", 25, 24]] as const) {
          const r = await serve(
            runner(loaded.state),
            { kind: "issue-dispatch", agent },
            "orchestrator",
          );
          assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
          const row = readDispatchStore(w.project).filter((x) => x.agent === agent).at(-1)!;
          assert.equal(row.max_uses, uses);
          const left = Date.parse(String(row.expires)) - Date.now();
          assert.ok(
            left > (hours - 0.1) * 3_600_000 && left <= hours * 3_600_000 + 1000,
            String(left),
          );
        }
      },
    );

    await t.step(
      "a change under the grant: written, its apply-direct row names the grant",
      async () => {
        const s = runner(loaded.state);
        const r = await serve(s, change(await directNonce(), "src/direct.txt", "direct\n"));
        assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
        assert.equal(result(r).written, true);
        assert.equal(result(r).staged, false);
        assert.equal(result(r).grant, grantId);
        assert.equal(Deno.readTextFileSync(join(w.project, "src/direct.txt")), "direct\n");
        const row = w.rows().at(-1)!;
        const { mac: _m, prev: _p, time: _t, dispatch: _d, ...body } = row;
        assert.deepEqual(body, {
          action: "apply-direct",
          agent: "worker",
          path: "src/direct.txt",
          base: "absent",
          new: sha256Hex("direct\n"),
          bytes: 7,
          gates: [],
          rationale: "write src/direct.txt",
          grant: grantId,
        });
        assert.equal(loaded.state.writes.get(grantId), 1);
      },
    );

    await t.step("a deletion under the grant: staged, the file stays", async () => {
      const r = await serve(runner(loaded.state), {
        kind: "stage-proposal",
        via_agent: "worker",
        artifact: {
          kind: "delete-proposal",
          dispatch: await directNonce(),
          path: "src/a.txt",
          base_sha256: sha256Hex("hello\n"),
          rationale: "remove a",
        },
      });
      assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
      assert.equal(result(r).staged, true);
      assert.equal(Deno.readTextFileSync(join(w.project, "src/a.txt")), "hello\n");
      assert.equal(w.rows().at(-1)?.action, "stage-proposal");
    });

    await t.step("a nonce of 25 uses for the granted agent: the channel's one answer", async () => {
      const wide = (await issueDispatch(w.project, key.hmac, "worker")).nonce;
      const { r, rows } = await refused(
        runner(loaded.state),
        change(wide, "src/wide.txt", "x\n"),
        "AGENT_MISMATCH",
      );
      assert.equal(r.body.error?.message, MCP_NONCE_MESSAGE);
      assert.equal(rows.at(-1)?.action, "apply-direct-refused");
      assert.match(String(rows.at(-1)?.reason), /over a direct agent's 10/);
    });

    await t.step("writes past max_writes: DIRECT_GRANT_SPENT, nothing written", async () => {
      const s = runner(loaded.state);
      const r = await serve(s, change(await directNonce(), "src/second.txt", "2\n"));
      assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
      const { rows } = await refused(
        s,
        change(await directNonce(), "src/third.txt", "3\n"),
        "DIRECT_GRANT_SPENT",
      );
      assert.equal(rows.at(-1)?.action, "apply-direct-refused");
      // A runner started again counts them from the ledger: still spent.
      const again = await load();
      assert.equal(again.state.writes.get(grantId), 2);
      await refused(
        runner(again.state),
        change(await directNonce(), "src/third.txt", "3\n"),
        "DIRECT_GRANT_SPENT",
      );
    });

    await t.step(
      "the grant expired while serving: DIRECT_GRANT_EXPIRED, nothing written",
      async () => {
        const fresh = await load();
        fresh.state.writes.clear();
        clock = () => new Date(Date.now() + 2 * 86_400_000);
        try {
          await refused(
            runner(fresh.state),
            change(await directNonce(), "src/late.txt", "late\n"),
            "DIRECT_GRANT_EXPIRED",
          );
        } finally {
          clock = () => new Date();
        }
        // Loaded after its expiry: not active at all.
        const later = await load(policy, w.home, () => new Date(Date.now() + 2 * 86_400_000));
        assert.match(String(later.row?.problems), /DIRECT_GRANT_EXPIRED/);
        assert.equal(later.state.active.byAgent.size, 0);
      },
    );

    /** Loads under the world with `setup` applied (undone after), and expects no grant. */
    const inactive = async (what: string, re: RegExp, got: () => Promise<LoadedDirectGrants>) => {
      const l = await got();
      assert.equal(l.state.active.byAgent.size, 0, what);
      assert.deepEqual(l.row?.active, [], what);
      const problem = String((l.row?.problems as string[])[0]);
      assert.match(problem, re, `${what}: ${problem}`);
      await staged(runner(l.state), `src/${what.replaceAll(/[^a-z]/g, "-")}.txt`);
    };

    await t.step("a gate edited since signing: no grant, staged", async () => {
      const b = JSON.parse(Deno.readTextFileSync(briefPath));
      b.proposal_gates.docs.argv = ["false"];
      const edited = parsePolicy(JSON.stringify(b), {
        briefPath,
        projectRoot: w.project,
        briefSha256: "0".repeat(64),
      });
      await inactive(
        "gate edited",
        /DIRECT_GRANT_INVALID: .*gates no longer matches/,
        () => load(edited),
      );
    });

    await t.step("the grants file a link: DIRECT_GRANTS_UNSAFE, staged", async () => {
      const real = join(w.scratch, "grants.json");
      Deno.renameSync(file, real);
      Deno.symlinkSync(real, file);
      try {
        await inactive("link", /DIRECT_GRANTS_UNSAFE: .*symlink/, () => load());
      } finally {
        Deno.removeSync(file);
        Deno.renameSync(real, file);
      }
    });

    await t.step("the grants file group-writable: DIRECT_GRANTS_UNSAFE, staged", async () => {
      Deno.chmodSync(file, 0o620);
      try {
        await inactive("group writable", /DIRECT_GRANTS_UNSAFE: .*has mode 0620/, () => load());
      } finally {
        Deno.chmodSync(file, 0o600);
      }
    });

    await t.step("the grants file inside the project: DIRECT_GRANTS_UNSAFE, staged", async () => {
      const home = join(w.project, "home");
      const inside = file.replace(w.home, home);
      const keys = issued.verifyKey.path.replace(w.home, home);
      for (const [from, to] of [[file, inside], [issued.verifyKey.path, keys]]) {
        Deno.mkdirSync(to.slice(0, to.lastIndexOf("/")), { recursive: true, mode: 0o700 });
        Deno.copyFileSync(from, to);
        Deno.chmodSync(to, 0o600);
      }
      try {
        await inactive(
          "inside project",
          /DIRECT_GRANTS_UNSAFE: .*inside the project/,
          () => load(policy, home),
        );
      } finally {
        Deno.removeSync(home, { recursive: true });
      }
    });

    await t.step("the grant edited after signing (more writes): no grant, staged", async () => {
      const before = Deno.readTextFileSync(file);
      const records = JSON.parse(before);
      records[0].max_writes = 500;
      Deno.writeTextFileSync(file, JSON.stringify(records));
      try {
        await inactive("edited", /DIRECT_GRANT_INVALID: .*signature doesn't verify/, () => load());
      } finally {
        Deno.writeTextFileSync(file, before);
      }
    });

    await t.step(
      "the grants file not a JSON list: DIRECT_GRANT_INVALID, staged; list refuses",
      async () => {
        const before = Deno.readTextFileSync(file);
        Deno.writeTextFileSync(file, '{"grant_id": "G-1"}');
        try {
          await inactive(
            "not a list",
            /DIRECT_GRANT_INVALID: .*must hold a JSON list/,
            () => load(),
          );
          const e = await listDirectGrants({
            root: w.project,
            home: w.home,
            policy,
            now: new Date(),
          })
            .then(() => null, (e) => e);
          assert.equal(e?.code, "DIRECT_GRANT_INVALID", String(e));
        } finally {
          Deno.writeTextFileSync(file, before);
        }
      },
    );

    await t.step("its verify key gone: no grant, staged", async () => {
      const aside = join(w.scratch, "key.pem");
      Deno.renameSync(issued.verifyKey.path, aside);
      try {
        await inactive("unknown key", /can't be verified: no operator verify key/, () => load());
      } finally {
        Deno.renameSync(aside, issued.verifyKey.path);
      }
    });
    await verifyDirect(w);
  });
});
