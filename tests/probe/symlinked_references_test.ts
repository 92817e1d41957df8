/**
 * Probe 22, finding Q1: `references/` reached through a symlink a session planted. The settings
 * deny `Edit(./references/**)` and `Edit(./.claude/**)` (as doctor asks), so under the switch the
 * project's verify-key store and roster count as trusted. But `references/` is none of the files
 * those rules name: when it does not exist yet (none is shipped), a session can make it a symlink
 * to a folder of its own, write its own verify key, roster and signed clearance there, and the
 * operator's gate (and every act: the runner's deletion clearance) reads them through the link.
 * The trust roots must be read only where a session cannot write: a link on the way makes them
 * untrusted.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { installedSigner } from "../authz/_fixtures.ts";
import { signDecisionRow } from "../../lib/authz/decisions.ts";

const SWITCH_BRIEF = JSON.stringify({
  write_policy: "orchestrator-only",
  privilege_profile: "confined",
  agent_policies: { worker: { write_scopes: ["src/"] } },
});

const SETTINGS = JSON.stringify({
  permissions: {
    deny: [
      "Read(./.agentteams/**)",
      "Edit(./.agentteams/**)",
      "Edit(./.agentteams-status/**)",
      "Edit(./references/**)",
      "Edit(./.claude/**)",
      "Edit(./.git/config)",
      "Edit(./.mcp.json)",
      "Edit(./agentteams.jsonc)",
      "Edit(./agentteams.json)",
    ],
  },
  // Claude's sandbox, which makes the rules bind Bash too (probe 22c C6).
  sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false },
});

Deno.test("probe Q1: a symlinked references/ planted by a session is not a trusted store (its key signs no clearance)", async () => {
  const sb = await sandbox("probe-q1");
  try {
    assert.equal((await runCli(["keys", "init"], { env: sb.env })).code, 0);
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    await Deno.writeTextFile(join(sb.project, "agentteams.json"), SWITCH_BRIEF);
    await Deno.mkdir(join(sb.project, ".claude"));
    await Deno.writeTextFile(join(sb.project, ".claude", "settings.json"), SETTINGS);
    const P = ["--project", sb.project];
    // The operator's gate refuses with no clearance at all.
    assertCliRefused(
      await runCli(["gate", "delete:old.txt", ...P], { env }),
      "gate",
      "NO_CLEARANCE",
    );
    // The session: its own key and a signed PASS, made in a folder of its own (allowed: no rule
    // names it), then `references` made a link to it (the name itself is no path the rules deny).
    const scratch = join(sb.dir, "scratch");
    await Deno.mkdir(scratch);
    const agent = await installedSigner(scratch);
    await signDecisionRow(scratch, { action: "delete:old.txt", verdict: "PASS" }, {
      env: {},
      now: new Date(),
      signer: agent,
    });
    await Deno.rename(join(scratch, "references"), join(sb.project, "evil"));
    await Deno.symlink("evil", join(sb.project, "references"));
    const before = await snapshotTree(sb.dir);
    const g = await runCli(["gate", "delete:old.txt", ...P], { env });
    assert.notEqual(g.code, 0, `the session's own clearance was accepted: ${g.stdout}${g.stderr}`);
    // Refused twice over: the decision log is never read through the link (Q3, lib/authz/csv.ts),
    // and the store behind it is not trusted (each such root named on stderr).
    assertCliRefused(g, "gate", "SYMLINK");
    assert.match(g.stderr, /authorized-verify-keys is reached through .*references, which is a/);
    assert.match(g.stderr, /security-approvers.txt is reached through .*references, which is a/);
    const c = await runCli(["clearance", "check", "delete:old.txt", ...P], { env });
    assert.notEqual(c.code, 0, `the session's own clearance was accepted: ${c.stdout}`);
    assertSameTree(before, await snapshotTree(sb.dir), "the checks write nothing");
  } finally {
    await sb.dispose();
  }
});

Deno.test("probe Q1: the trust decision itself leaves out a store reached through a link", async () => {
  const sb = await sandbox("probe-q1-trust");
  try {
    const { trustFor } = await import("../../lib/authz/trust.ts");
    await Deno.mkdir(join(sb.project, ".claude"));
    await Deno.writeTextFile(join(sb.project, ".claude", "settings.json"), SETTINGS);
    const denied = await trustFor(sb.project, sb.env, true);
    assert.deepEqual(denied.untrusted, [], "a real (or missing) references/ under the rules");
    await Deno.mkdir(join(sb.project, "evil"));
    await Deno.symlink("evil", join(sb.project, "references"));
    const linked = await trustFor(sb.project, sb.env, true);
    assert.equal(linked.untrusted.length, 2);
    for (const u of linked.untrusted) assert.match(u, /is reached through .*references/);
  } finally {
    await sb.dispose();
  }
});
