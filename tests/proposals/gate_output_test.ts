/**
 * First contact (issue 14, item 11): a failing gate's refusal names the proposal's path, never the
 * temporary copy's, and its output follows as lines, shown inert (no escape sequence reaches the
 * terminal), through the real CLI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../_helpers/mod.ts";
import {
  apply,
  assertApplyRefused,
  change,
  dispatch,
  makeProject,
  withProject,
  writeArtifact,
} from "./_helpers.ts";

Deno.test("a failing gate: the proposal's path in the refusal, its output as inert lines below it", async () => {
  let script = "";
  await withProject(
    makeProject("gate-output", {
      brief: (p) => {
        script = join(p.outside, "gate.sh");
        return JSON.stringify({
          agent_policies: { worker: { write_scopes: ["src/"] } },
          proposal_gates: { lint: { glob: "*.txt", argv: [script, "{file}"] } },
        });
      },
      files: { "src/readme.md": "x\n" },
    }),
    async (p) => {
      await Deno.writeTextFile(
        script,
        "#!/bin/sh\necho \"bad: $1\" >&2\nprintf 'second line\\033[31m\\n' >&2\nexit 3\n",
      );
      await Deno.chmod(script, 0o755);
      const nonce = await dispatch(p, "worker");
      const r = await apply(p, change(nonce, "src/new.txt", "hello\n"));
      assertApplyRefused(r, "GATE_FAILED");
      const lines = r.stderr.split("\n");
      const refusal = lines.find((l) => l.includes("refused: GATE_FAILED"));
      assert.ok(refusal !== undefined, r.stderr);
      assert.match(refusal, /gate 'lint' exited 3: bad: src\/new\.txt$/);
      assert.doesNotMatch(r.stderr, /agentteams-run|\/tmp\/.*new\.txt/);
      // Without --json: the gate's output as lines below the refusal, inert.
      const file = await writeArtifact(p, change(nonce, "src/new.txt", "hello\n"));
      const t = await runCli(["apply", file, "--project", p.root], { env: p.env, cwd: p.root });
      assert.equal(t.code, 1, t.stderr);
      assert.match(t.stderr, /^ {2}\| bad: src\/new\.txt$/m);
      assert.match(t.stderr, /^ {2}\| second line\\x1b\[31m$/m);
      assert.ok(!t.stderr.includes("\x1b"), t.stderr);
    },
  );
});
