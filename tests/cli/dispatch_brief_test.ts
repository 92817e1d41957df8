/**
 * `dispatch` reads the brief (issue 14, item 7): a nonce is issued only to an agent the brief
 * names; an unknown agent (`UNKNOWN_AGENT`, with the nearest name), a missing brief and a broken
 * one are refused with nothing written, through the real CLI and the library alike. And every
 * command, without `--project`, works on the project found by the one discovery rule: from `src/`
 * of a repository, its top, with no `src/.agentteams/` made.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initKeys } from "../../lib/crypto/keys.ts";
import { issueDispatch } from "../../lib/mod.ts";
import { DispatchError, PolicyError } from "../../lib/errors.ts";
import { refusals, runCli, type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { GIT, gitEnv, sh } from "../_helpers/git.ts";
import type { Ctx } from "../../lib/cli/command_spec.ts";

const BRIEF = JSON.stringify({
  agent_policies: {
    worker: { write_scopes: ["src/"] },
    reviewer: { write_scopes: ["docs/"] },
  },
});

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

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

Deno.test("dispatch for an agent the brief does not name: UNKNOWN_AGENT (exit 1) with a did-you-mean, no store or ledger row, no state dir", async () => {
  await withKeys("dispatch-unknown", async (sb) => {
    Deno.writeTextFileSync(join(sb.project, "agentteams.json"), BRIEF);
    const before = await snapshotTree(sb.dir);
    const typo = await runCli(["dispatch", "--agent", "wroker", "--project", sb.project], {
      env: sb.env,
    });
    const r = assertCliRefused(typo, "dispatch", "UNKNOWN_AGENT", 1);
    assert.match(r.reason, /did you mean "worker"\?/);
    assert.match(r.reason, /agentteams\.json/);
    assert.equal(typo.stdout, "");
    // No near name: no guess, but the brief's agents are listed.
    const ghost = await runCli(
      ["dispatch", "--agent", "ghost", "--project", sb.project, "--json"],
      { env: sb.env },
    );
    assert.equal(ghost.code, 1);
    const e = JSON.parse(ghost.stdout).error as { code: string; message: string; family: string };
    assert.equal(e.code, "UNKNOWN_AGENT");
    assert.equal(e.family, "dispatch");
    assert.doesNotMatch(e.message, /did you mean/);
    assert.match(e.message, /reviewer, worker/);
    // An own-property trap is no agent either.
    assertCliRefused(
      await runCli(["dispatch", "--agent", "constructor", "--project", sb.project], {
        env: sb.env,
      }),
      "dispatch",
      "UNKNOWN_AGENT",
    );
    assertSameTree(before, await snapshotTree(sb.dir));
    assert.equal(exists(join(sb.project, ".agentteams")), false);
    // The agent the brief names gets its nonce.
    const ok = await runCli(["dispatch", "--agent", "worker", "--project", sb.project], {
      env: sb.env,
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout.trim(), /^[0-9a-f]{32}$/);
    const store = Deno.readTextFileSync(join(sb.project, ".agentteams", "dispatches.jsonl"));
    assert.equal(store.trim().split("\n").length, 1);
    assert.match(store, /"agent": "worker"/);
  });
});

Deno.test("dispatch with no brief, a broken brief, or a --brief that does not exist: refused with the brief's code, nothing written", async () => {
  await withKeys("dispatch-nobrief", async (sb) => {
    const run = (...extra: string[]) =>
      runCli(["dispatch", "--agent", "worker", "--project", sb.project, ...extra], {
        env: sb.env,
      });
    let before = await snapshotTree(sb.dir);
    const none = assertCliRefused(await run(), "dispatch", "BRIEF_NOT_FOUND");
    assert.match(none.reason, /agentteams\.jsonc or agentteams\.json/);
    assertSameTree(before, await snapshotTree(sb.dir));

    const cases: [string, string][] = [
      ['{"agent_policies": {"worker": {"write_scopes": ["src/"]}', "BRIEF_SYNTAX"],
      ['{"agent_polices": {"worker": {"write_scopes": ["src/"]}}}', "BRIEF_UNKNOWN_KEY"],
      ['{"agent_policies": {"worker": {"write_scopes": 7}}}', "BRIEF_INVALID"],
    ];
    for (const [text, code] of cases) {
      Deno.writeTextFileSync(join(sb.project, "agentteams.json"), text);
      before = await snapshotTree(sb.dir);
      assertCliRefused(await run(), "dispatch", code);
      assertSameTree(before, await snapshotTree(sb.dir), code);
    }
    // A symlinked brief is unreadable, never followed.
    Deno.removeSync(join(sb.project, "agentteams.json"));
    Deno.writeTextFileSync(join(sb.dir, "real.json"), BRIEF);
    Deno.symlinkSync(join(sb.dir, "real.json"), join(sb.project, "agentteams.json"));
    before = await snapshotTree(sb.dir);
    assertCliRefused(await run(), "dispatch", "BRIEF_UNREADABLE");
    assertCliRefused(
      await run("--brief", join(sb.dir, "missing.json")),
      "dispatch",
      "BRIEF_NOT_FOUND",
    );
    assertSameTree(before, await snapshotTree(sb.dir));
    assert.equal(exists(join(sb.project, ".agentteams")), false);
    // --brief outside the project names the agents as well.
    const ok = await run("--brief", join(sb.dir, "real.json"));
    assert.equal(ok.code, 0, ok.stderr);
  });
});

Deno.test("the library's issueDispatch applies the same rule: UNKNOWN_AGENT, a missing brief refused, nothing written", async () => {
  await withKeys("dispatch-lib", async (sb) => {
    const key = new Uint8Array(32).fill(4);
    await assertRefusal(
      () => issueDispatch(sb.project, "worker", { key }),
      "BRIEF_NOT_FOUND",
      PolicyError,
    );
    Deno.writeTextFileSync(join(sb.project, "agentteams.json"), BRIEF);
    const e = await assertRefusal(
      () => issueDispatch(sb.project, "reviewr", { key }),
      "UNKNOWN_AGENT",
      DispatchError,
    );
    assert.match(e.message, /did you mean "reviewer"\?/);
    assert.deepEqual(e.details.agents, ["reviewer", "worker"]);
    assert.equal(exists(join(sb.project, ".agentteams")), false);
    assert.match(await issueDispatch(sb.project, "reviewer", { key }), /^[0-9a-f]{32}$/);
  });
});

Deno.test("without --project, from src/ of a git repository: every command works on the repository's top; no src/.agentteams is made", async () => {
  await withKeys("dispatch-subdir", async (sb) => {
    const top = sb.project;
    const src = join(top, "src");
    Deno.mkdirSync(join(src, "deep"), { recursive: true });
    await sh(top, GIT, ["init", "-q", "."], gitEnv(sb.home));
    const here = (cwd: string, args: string[]) => runCli(args, { env: sb.env, cwd });

    // No brief yet: the refusal names the top's brief, and nothing is made anywhere.
    const before = await snapshotTree(sb.dir);
    const none = assertCliRefused(
      await here(src, ["dispatch", "--agent", "worker"]),
      "dispatch",
      "BRIEF_NOT_FOUND",
    );
    assert.ok(none.reason.includes(top) && !none.reason.includes(src), none.reason);
    assertSameTree(before, await snapshotTree(sb.dir));

    Deno.writeTextFileSync(join(top, "agentteams.json"), BRIEF);
    const d = await here(join(src, "deep"), ["dispatch", "--agent", "worker"]);
    assert.equal(d.code, 0, d.stderr);
    assert.equal(exists(join(top, ".agentteams", "dispatches.jsonl")), true);
    assert.equal(exists(join(src, ".agentteams")), false);
    assert.equal(exists(join(src, "deep", ".agentteams")), false);

    const v = await here(src, ["ledger", "verify", "--json"]);
    assert.equal(v.code, 0, v.stderr);
    assert.equal(JSON.parse(v.stdout).rows, 1);
    const s = await here(src, ["ledger", "show", "--json"]);
    assert.equal(s.code, 0, s.stderr);
    assert.equal(JSON.parse(s.stdout).rows[0].action, "issue-dispatch");
    // `permissions` names the same project on the line it prints.
    const p = await here(src, ["permissions", "ledger", "show", "--json"]);
    assert.equal(p.code, 0, p.stderr);
    const exec = JSON.parse(p.stdout).exec as string[];
    assert.equal(exec[exec.indexOf("--project") + 1], top);
    assert.equal(exists(join(src, ".agentteams")), false);
    assert.equal(refusals(d.stderr).length, 0);
  });
});

Deno.test("without --project and outside git: the nearest directory holding a brief or .agentteams/ is the project", async () => {
  await withKeys("dispatch-nearest", async (sb) => {
    // A subproject with its own brief, below a directory with another one.
    const outer = sb.project;
    const sub = join(outer, "sub");
    Deno.mkdirSync(join(sub, "x"), { recursive: true });
    Deno.writeTextFileSync(join(outer, "agentteams.json"), BRIEF);
    Deno.writeTextFileSync(
      join(sub, "agentteams.jsonc"),
      '{ // the subproject\n "agent_policies": {"sub-worker": {"write_scopes": ["x/"]}} }',
    );
    const d = await runCli(["dispatch", "--agent", "sub-worker"], {
      env: sb.env,
      cwd: join(sub, "x"),
    });
    assert.equal(d.code, 0, d.stderr);
    assert.equal(exists(join(sub, ".agentteams", "dispatches.jsonl")), true);
    assert.equal(exists(join(outer, ".agentteams")), false);
    assert.equal(exists(join(sub, "x", ".agentteams")), false);
    // The outer brief's agent is not the subproject's.
    assertCliRefused(
      await runCli(["dispatch", "--agent", "worker"], { env: sb.env, cwd: join(sub, "x") }),
      "dispatch",
      "UNKNOWN_AGENT",
    );
    // A directory that holds only state (no brief, no git) is a project too.
    const state = join(sb.dir, "state-only");
    Deno.mkdirSync(join(state, "a", "b"), { recursive: true });
    Deno.renameSync(join(sub, ".agentteams"), join(state, ".agentteams"));
    const v = await runCli(["ledger", "show", "--json"], { env: sb.env, cwd: join(state, "a") });
    assert.equal(v.code, 0, v.stderr);
    assert.equal(JSON.parse(v.stdout).rows.length, 1);
  });
});

Deno.test("dispatch's and permissions' needs name --brief as one path (never its characters), and the default brief through the project", async () => {
  const { findCommand } = await import("../../lib/cli/commands.ts");
  const ctx = (name: string, brief?: string): Ctx => ({
    name,
    parsed: { flags: brief === undefined ? {} : { brief }, positionals: {} },
    env: { HOME: "/home/op", AGENTTEAMS_KEY_DIR: "/home/op/keys" },
    project: "/work/p",
    json: false,
    now: () => new Date(),
    note: () => {},
  });
  const dispatch = findCommand(["dispatch"])!.spec;
  const withFlag = await dispatch.needs(ctx("dispatch", "/etc/team/brief.jsonc"));
  assert.ok(withFlag.read.includes("/etc/team/brief.jsonc"), withFlag.read.join(" "));
  assert.ok(!withFlag.read.includes("/"), withFlag.read.join(" "));
  assert.ok((await dispatch.needs(ctx("dispatch"))).read.includes("/work/p"));
  // `permissions --brief B ...` read B itself, not "/", "e", "t", "c", ...
  const { briefFlagReads } = await import("../../lib/cli/needs.ts");
  assert.deepEqual(briefFlagReads(ctx("permissions", "/etc/team/brief.jsonc")), [
    "/etc/team/brief.jsonc",
  ]);
  assert.deepEqual(briefFlagReads(ctx("permissions")), []);
});
