/**
 * Probe 22c, finding C3 (tests/probe/PROBE_22C_REPORT.md): the operator's emergency stop, signed
 * from a subdirectory the agent sessions can write, landed in a project of the session's making.
 *
 * Without `--project`, every command takes the nearest directory holding `.agentteams/`, a brief or
 * `.git` as its project. Under the switch the sessions may write `src/` (and every folder the deny
 * rules leave out), so they may put any of those there: an empty `src/.git` file, a
 * `src/agentteams.json`, a `src/.agentteams/`. The operator, whose shell is in `src/`, then runs
 * `agentteams decision sign --action '*' --verdict HALT --ed25519`: it said `signed HALT for *`,
 * wrote `src/references/security-decisions.log.csv` (which the session may delete), and the
 * project itself went on (a dispatch was issued). Now a project found inside another project that
 * is under the switch is refused (`PROJECT_AMBIGUOUS`, exit 2, nothing written), naming both; with
 * `--project` the operator says which one is meant.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { OPERATOR_SETTINGS } from "../runner/_runner_helpers.ts";

const BRIEF = JSON.stringify({
  write_policy: "orchestrator-only",
  privilege_profile: "confined",
  agent_policies: { worker: { write_scopes: ["src/"] } },
}) + "\n";

const HALT = ["decision", "sign", "--action", "*", "--verdict", "HALT", "--ed25519"];

async function project(prefix: string): Promise<Sandbox & { cli: typeof runCli }> {
  const sb = await sandbox(prefix);
  const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
  const cli: typeof runCli = (args, opts) => runCli(args, { env, ...opts });
  Deno.writeTextFileSync(join(sb.project, "agentteams.jsonc"), BRIEF);
  Deno.mkdirSync(join(sb.project, ".claude"));
  Deno.writeTextFileSync(join(sb.project, ".claude", "settings.json"), OPERATOR_SETTINGS);
  Deno.mkdirSync(join(sb.project, "src"));
  Deno.writeTextFileSync(join(sb.project, "src", "a.txt"), "a\n");
  const k = await cli(["keys", "init"], { cwd: sb.project });
  assert.equal(k.code, 0, k.stderr);
  return { ...sb, cli };
}

const PLANTS: [string, (src: string) => void][] = [
  ["an empty src/.git file", (src) => Deno.writeTextFileSync(join(src, ".git"), "")],
  ["a src/agentteams.json", (src) => Deno.writeTextFileSync(join(src, "agentteams.json"), "{}")],
  ["a src/.agentteams/ folder", (src) => Deno.mkdirSync(join(src, ".agentteams"))],
];

for (const [what, plant] of PLANTS) {
  Deno.test(`probe 22c: with ${what} planted by a session, the operator's HALT from src/ is refused (PROJECT_AMBIGUOUS), nothing written; at the top it stops the project`, async () => {
    const sb = await project("p22c-subdir");
    try {
      const src = join(sb.project, "src");
      plant(src);
      const before = await snapshotTree(sb.dir);
      const r = await sb.cli([...HALT, "--evidence", "stop"], { cwd: src });
      assertCliRefused(r, "decision sign", "PROJECT_AMBIGUOUS", 2);
      assert.match(r.stderr, new RegExp(`--project ${sb.project.replaceAll("/", "\\/")}\\b`));
      assertSameTree(before, await snapshotTree(sb.dir));
      // Any other command from there too (the gate, which would read the session's own log).
      const g = await sb.cli(["gate", "delete:src/a.txt"], { cwd: src });
      assertCliRefused(g, "gate", "PROJECT_AMBIGUOUS", 2);
      assertSameTree(before, await snapshotTree(sb.dir));
      // The operator who names the project stops it.
      const ok = await sb.cli([...HALT, "--evidence", "stop", "--project", sb.project], {
        cwd: src,
      });
      assert.equal(ok.code, 0, ok.stderr);
      const d = await sb.cli(["dispatch", "--agent", "worker", "--direct"], { cwd: sb.project });
      assertCliRefused(d, "dispatch", "HALTED");
    } finally {
      await sb.dispose();
    }
  });
}

Deno.test("probe 22c: a subproject inside a project that is not under the switch is still its own project", async () => {
  const sb = await sandbox("p22c-subdir-plain");
  try {
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    Deno.writeTextFileSync(join(sb.project, "agentteams.json"), '{"agent_policies": {}}');
    const sub = join(sb.project, "sub");
    Deno.mkdirSync(sub);
    Deno.writeTextFileSync(
      join(sub, "agentteams.jsonc"),
      '{"agent_policies": {"w": {"write_scopes": ["x/"]}}}',
    );
    assert.equal((await runCli(["keys", "init"], { env, cwd: sub })).code, 0);
    const d = await runCli(["dispatch", "--agent", "w"], { env, cwd: sub });
    assert.equal(d.code, 0, d.stderr);
  } finally {
    await sb.dispose();
  }
});
