/**
 * The earlier tool's users (issue 23 item 10): `--issue-dispatch --agent A --project P` took no
 * brief. Under that spelling, with no brief named and none at the project's default names, the
 * nonce is issued as the earlier tool issued it (the bare nonce on stdout), with one warning line
 * on stderr saying the agent was not checked against a brief. Everywhere else a brief is still
 * required, and nothing is written when it is refused: the new spelling, a `--description` that
 * names a missing brief, a brief that does not name the agent, a brief that cannot be read, and
 * the switch (`write_policy: orchestrator-only` queues for a runner).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initKeys } from "../../lib/crypto/keys.ts";
import { runCli, type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { decisionSignArgs } from "../authz/_fixtures.ts";

/** A sandbox with keys made (the key dir is outside the project). */
async function withKeys(name: string, fn: (sb: Sandbox) => Promise<void>): Promise<void> {
  const sb = await sandbox(name);
  try {
    await initKeys({ env: sb.env });
    await fn(sb);
  } finally {
    await sb.dispose();
  }
}

/** The project's ledger rows. */
function rows(sb: Sandbox): Record<string, unknown>[] {
  const text = Deno.readTextFileSync(join(sb.project, ".agentteams", "proposal-ledger.jsonl"));
  return text.trimEnd().split("\n").map((l) => JSON.parse(l));
}

Deno.test("--issue-dispatch with no brief: issued as the earlier tool did (the bare nonce), one warning line; the ledger verifies", async () => {
  await withKeys("earlier-dispatch", async (sb) => {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const r = await runCli(["--issue-dispatch", "--agent", "worker", "--project", sb.project], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^[0-9a-f]{32}\n$/);
    const warnings = r.stderr.split("\n").filter((l) => l.includes("warning"));
    assert.deepEqual(warnings, [
      `agentteams dispatch: warning: no brief in ${sb.project} (agentteams.jsonc, ` +
      "agentteams.json): 'worker' was not checked against a brief, as the earlier " +
      "--issue-dispatch did not check it; add a brief whose agent_policies name it",
    ]);
    assert.deepEqual(
      rows(sb).map((row) => [row.action, row.agent]),
      [["issue-dispatch", "worker"]],
    );
    const v = await runCli(["--verify-proposal-ledger", "--project", sb.project], { env });
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /^Proposal ledger: OK$/m);
    // With a brief that names the agent: checked, and no warning.
    await Deno.writeTextFile(
      join(sb.project, "agentteams.json"),
      JSON.stringify({ agent_policies: { worker: {} } }),
    );
    const named = await runCli(
      ["--issue-dispatch", "--agent", "worker", "--project", sb.project],
      { env },
    );
    assert.equal(named.code, 0, named.stderr);
    assert.doesNotMatch(named.stderr, /warning/);
  });
});

Deno.test("a brief is still required everywhere else: the new spelling, --description naming a missing brief, an agent the brief does not name, an unreadable brief, the switch; nothing issued", async () => {
  await withKeys("earlier-dispatch-refused", async (sb) => {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const cases: { name: string; setup?: () => Promise<void>; argv: string[]; code: RegExp }[] = [
      {
        name: "the new spelling",
        argv: ["dispatch", "--agent", "worker", "--project", sb.project],
        code: /agentteams dispatch: refused: BRIEF_NOT_FOUND: /,
      },
      {
        name: "--description naming a missing brief",
        argv: [
          "--issue-dispatch",
          "--agent",
          "worker",
          "--project",
          sb.project,
          "--description",
          join(sb.dir, "missing.json"),
        ],
        code: /^\[issue-dispatch\] refused: BRIEF_NOT_FOUND: /m,
      },
      {
        name: "a brief that does not name the agent",
        setup: () =>
          Deno.writeTextFile(
            join(sb.project, "agentteams.json"),
            JSON.stringify({ agent_policies: { reviewer: {} } }),
          ),
        argv: ["--issue-dispatch", "--agent", "worker", "--project", sb.project],
        code: /^\[issue-dispatch\] refused: UNKNOWN_AGENT: /m,
      },
      {
        name: "a brief that cannot be read (a dangling link)",
        setup: async () => {
          await Deno.remove(join(sb.project, "agentteams.json"));
          await Deno.symlink(join(sb.dir, "nowhere.jsonc"), join(sb.project, "agentteams.jsonc"));
        },
        argv: [
          "--issue-dispatch",
          "--agent",
          "worker",
          "--project",
          sb.project,
          "--wait-timeout",
          "1",
        ],
        code: /^\[issue-dispatch\] refused: (BRIEF_UNREADABLE|NO_RUNNER): /m,
      },
      {
        name: "under the switch, no runner",
        setup: async () => {
          await Deno.remove(join(sb.project, "agentteams.jsonc"));
          await Deno.writeTextFile(
            join(sb.project, "agentteams.json"),
            JSON.stringify({
              write_policy: "orchestrator-only",
              privilege_profile: "confined",
              agent_policies: { reviewer: {} },
            }),
          );
        },
        argv: [
          "--issue-dispatch",
          "--agent",
          "worker",
          "--project",
          sb.project,
          "--wait-timeout",
          "1",
        ],
        code: /^\[issue-dispatch\] refused: NO_RUNNER: /m,
      },
    ];
    for (const c of cases) {
      await c.setup?.();
      const state = join(sb.project, ".agentteams");
      await Deno.mkdir(state, { recursive: true });
      const before = await snapshotTree(state);
      const r = await runCli(c.argv, { env });
      assert.equal(r.code, 1, `${c.name}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, c.code, c.name);
      assert.doesNotMatch(r.stderr, /warning: no brief/, c.name);
      assert.equal(r.stdout, "", c.name);
      assertSameTree(before, await snapshotTree(state), `${c.name}: the state dir changed`);
    }
  });
});

Deno.test("--issue-dispatch with no brief is still stopped by the emergency stop (a HALT on '*'), writing no dispatch", async () => {
  await withKeys("earlier-dispatch-halt", async (sb) => {
    const env = {
      ...sb.env,
      AGENTTEAMS_BROAD_OK: "1",
      AGENTTEAMS_DECISION_SIGNING_KEY: "dk",
    };
    const h = await runCli(decisionSignArgs(sb.project, "*", "HALT"), { env });
    assert.equal(h.code, 0, h.stderr);
    const before = await snapshotTree(sb.project);
    const r = await runCli(["--issue-dispatch", "--agent", "worker", "--project", sb.project], {
      env,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /refused: HALTED: .*emergency stop/);
    assert.equal(r.stdout, "");
    const after = await snapshotTree(sb.project);
    const stores = (t: Map<string, unknown>) =>
      [...t].filter(([k]) => k.includes("dispatch")).map(([k, v]) => [k, JSON.stringify(v)]);
    assert.deepEqual(stores(after), stores(before), "no dispatch store line written");
  });
});
