/**
 * Probe 22, finding Q3: the triad's ledgers written through a `references` link a session made.
 * With no `references/` yet (none is shipped), a session makes `references` a symlink to a folder
 * of its own. The operator's `decision sign --action '*' --verdict HALT` (the emergency stop) then
 * wrote the HALT into the session's folder, where the session deletes it, and every act proceeds
 * again. The triad's ledgers are never written or read through a link.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertSameTree } from "../_helpers/assert.ts";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";

const SWITCH_BRIEF = JSON.stringify({
  write_policy: "orchestrator-only",
  privilege_profile: "confined",
  agent_policies: { worker: { write_scopes: ["src/"] } },
});

Deno.test("probe Q3: the operator's HALT is never written into a session's folder through a references link", async () => {
  const sb = await sandbox("probe-q3");
  try {
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    await Deno.writeTextFile(join(sb.project, "agentteams.json"), SWITCH_BRIEF);
    // The session's move: its own folder, and `references` a link to it.
    await Deno.mkdir(join(sb.project, "evil"));
    await Deno.symlink("evil", join(sb.project, "references"));
    const before = await snapshotTree(sb.dir);
    const P = ["--project", sb.project];
    const halt = await runCli(
      ["decision", "sign", ...P, "--action", "*", "--verdict", "HALT", "--ed25519"],
      { env },
    );
    assert.deepEqual(
      [...Deno.readDirSync(join(sb.project, "evil"))].map((e) => e.name),
      [],
      "the HALT went into the session's folder",
    );
    assert.equal(halt.code, 1, halt.stderr);
    assert.match(halt.stderr, /references is a symlink/);
    const w = await runCli([
      "waiver",
      "issue",
      ...P,
      "--id",
      "W-1",
      "--action",
      "deploy",
      "--expires",
      "2099-01-01T00:00:00Z",
      "--max-uses",
      "1",
      "--approver",
      "security",
      "--ticket",
      "T",
      "--reason",
      "r",
      "--ed25519",
    ], { env });
    assert.equal(w.code, 1, w.stderr);
    assertSameTree(before, await snapshotTree(sb.dir), "nothing written through the link");
    // A log the session put behind the link is not read either: the gate refuses.
    await Deno.writeTextFile(
      join(sb.project, "evil", "security-decisions.log.csv"),
      "date,plan_slug,step,decision,status,conditions,conditions_verified,evidence,owner\n",
    );
    const g = await runCli(["gate", "deploy", ...P], { env });
    assert.equal(g.code, 1, g.stderr);
    assert.match(g.stderr, /references is a symlink/);
  } finally {
    await sb.dispose();
  }
});
