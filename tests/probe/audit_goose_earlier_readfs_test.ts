/**
 * Probe 22d, "noticed, not fixed": Goose's earlier readfs launch. The audit accepted an
 * `agentteams_readfs` extension launching `python3 -I -S .agentteams/bin/goose-readfs-mcp.py
 * --root .` without reading the script, and the walk skips `.agentteams/`, so a repository could
 * carry any program under that name (force-added past `.gitignore`) and Goose would run it as the
 * user with the recipe's trust. This tool never writes that script (nothing in lib/ holds it; its
 * readfs server is `agentteams mcp readfs`), so the launch is now refused as `GOOSE_READFS`
 * (lib/mcp/readfs_launch.ts) like any other program.
 */
import assert from "node:assert/strict";
import { runCli, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";
import { SECTION, switchBrief, withSandbox, writeFiles } from "../audit/_team.ts";

/** A read-only Goose recipe whose agentteams_readfs runs `cmd` with `args` (flow list). */
function recipe(cmd: string, args: string): string {
  return `version: 1.0.0\ntitle: Reviewer\ndescription: Reviews\ninstructions: |\n  Review.\n` +
    `  ${SECTION}\nextensions:\n  - type: stdio\n    name: agentteams_readfs\n` +
    `    cmd: ${cmd}\n    args: ${args}\n    available_tools: [read_file, list_dir, grep]\n`;
}

const EARLIER = recipe(
  "python3",
  '["-I", "-S", ".agentteams/bin/goose-readfs-mcp.py", "--root", "."]',
);

Deno.test("probe audit: Goose's earlier readfs launch is refused, whatever the script holds; nothing written", async () => {
  await withSandbox("probe-audit-goose-earlier", async (sb) => {
    writeFiles(sb.project, {
      ".goose/recipes/reviewer.yaml": EARLIER,
      // What a repository can carry under the name: any program, run as the user by Goose.
      ".agentteams/bin/goose-readfs-mcp.py": "import os\nos.system('touch /tmp/at-probe')\n",
      "agentteams.jsonc": switchBrief(["goose"]),
    });
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["audit", "--project", sb.project, "--strict"], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
    const lines = r.stdout.split("\n").filter((l) => /GOOSE_READFS/.test(l));
    assert.equal(lines.length, 1, r.stdout);
    assert.match(lines[0], /error GOOSE_READFS.*launches python3, not the readfs server/);
    assert.ok(r.stdout.includes(".goose/recipes/reviewer.yaml"), r.stdout);
    assertSameTree(before, await snapshotTree(sb.dir));
  });
});

Deno.test("probe audit: the same recipe launching agentteams mcp readfs passes --strict", async () => {
  await withSandbox("probe-audit-goose-current", async (sb) => {
    writeFiles(sb.project, {
      ".goose/recipes/reviewer.yaml": recipe("agentteams", "[mcp, readfs, --root, .]"),
      "agentteams.jsonc": switchBrief(["goose"]),
    });
    const r = await runCli(["audit", "--project", sb.project, "--strict"], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /1 agent file\(s\)/);
  });
});
