/**
 * Probe 22, finding Q6: a trust root written through a hard link. The deny rules name paths; a
 * hard link is another path to the same file. The session links
 * `references/security-decisions.log.csv` (holding the operator's emergency stop) to `src/d.csv`,
 * which no rule names, and truncates it there, in place: the HALT is gone from the file the
 * operator's path names, and every act proceeds. The same for the brief (`agentteams.json`, to
 * `src/b.json`). A trust root with more than one name is never read.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertSameTree } from "../_helpers/assert.ts";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";

const BRIEF = JSON.stringify({
  privilege_profile: "confined",
  agent_policies: { worker: { write_scopes: ["src/"] } },
});

Deno.test("probe Q6: a decision log with a second name (a hard link) is not read: the HALT it held still stops", async () => {
  const sb = await sandbox("probe-q6");
  try {
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    await Deno.writeTextFile(join(sb.project, "agentteams.json"), BRIEF);
    await Deno.mkdir(join(sb.project, "src"));
    const P = ["--project", sb.project];
    const halt = await runCli(
      ["decision", "sign", ...P, "--action", "*", "--verdict", "HALT", "--ed25519"],
      { env },
    );
    assert.equal(halt.code, 0, halt.stderr);
    const d0 = await runCli(["dispatch", "--agent", "worker", ...P], { env });
    assert.match(d0.stderr, /refused: HALTED/);
    // The session: a second name for the log, and the log cut to its header through it.
    const log = join(sb.project, "references", "security-decisions.log.csv");
    const header = (await Deno.readTextFile(log)).split("\n")[0] + "\n";
    await Deno.link(log, join(sb.project, "src", "d.csv"));
    await Deno.writeTextFile(join(sb.project, "src", "d.csv"), header);
    const before = await snapshotTree(sb.dir);
    const d = await runCli(["dispatch", "--agent", "worker", ...P], { env });
    assert.equal(d.code, 1, `the stop was lifted: ${d.stdout}${d.stderr}`);
    assert.match(d.stderr, /refused: [A-Z_]+: .*security-decisions\.log\.csv.* 2 names/);
    assertSameTree(before, await snapshotTree(sb.dir), "a refused dispatch writes nothing");
  } finally {
    await sb.dispose();
  }
});

Deno.test("probe Q6: a brief with a second name (a hard link) is not read", async () => {
  const sb = await sandbox("probe-q6-brief");
  try {
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const brief = join(sb.project, "agentteams.json");
    await Deno.writeTextFile(brief, BRIEF);
    await Deno.mkdir(join(sb.project, "src"));
    await Deno.link(brief, join(sb.project, "src", "b.json"));
    await Deno.writeTextFile(
      join(sb.project, "src", "b.json"),
      JSON.stringify({ agent_policies: { worker: { write_scopes: ["src/", "lib/"] } } }),
    );
    const before = await snapshotTree(sb.dir);
    const d = await runCli(["dispatch", "--agent", "worker", "--project", sb.project], { env });
    assert.equal(d.code, 1, `the session's brief was read: ${d.stdout}${d.stderr}`);
    assert.match(d.stderr, /agentteams\.json.* 2 names/);
    assertSameTree(before, await snapshotTree(sb.dir), "a refused dispatch writes nothing");
  } finally {
    await sb.dispose();
  }
});
