/**
 * `agentteams apply` with `"write_scopes": ["src"]` where `src` is a directory: the CLI warns on
 * stderr that the scope names a file only (suggesting `"src/"`), and the `OUT_OF_SCOPE` refusal
 * of `src/a.txt` says the same; nothing is written (every byte outside the ledger state is
 * unchanged, one refusal row, the ledger verifies).
 */
import assert from "node:assert/strict";
import { change, dispatch, expectRefusal, makeProject, sha256, withProject } from "./_helpers.ts";

const BRIEF = `{
  "agent_policies": { "worker": { "write_scopes": ["src", "docs/"] } },
}
`;

const HINT = 'the scope "src" names the file src only; write "src/" for the directory';

Deno.test("apply: OUT_OF_SCOPE below a literal scope naming a directory says to write src/; the lint warned; nothing written", async () => {
  await withProject(
    makeProject("litscope", { brief: BRIEF, files: { "src/a.txt": "hello\n" } }),
    async (p) => {
      const nonce = await dispatch(p, "worker");
      const { run, row } = await expectRefusal(
        p,
        change(nonce, "src/a.txt", "x\n", sha256("hello\n")),
        "OUT_OF_SCOPE",
        { agent: "worker", attempts: 1 },
      );
      const refusal = run.stderr.split("\n").find((l) => l.includes("refused: OUT_OF_SCOPE"));
      assert.ok(refusal?.includes(`(${HINT})`), run.stderr);
      assert.ok(String(row?.reason).includes(HINT), JSON.stringify(row));
      // (The lint's line, not the broad-launch one: either may come first.)
      const warning = run.stderr.split("\n").find((l) => l.includes("warning: agentteams.jsonc"));
      assert.ok(warning !== undefined, `no lint warning on stderr:\n${run.stderr}`);
      assert.match(warning, /^agentteams apply: warning: agentteams\.jsonc:2:\d+: /);
      assert.ok(warning.includes("agent_policies.worker.write_scopes[0]"), warning);
      assert.ok(warning.includes(HINT), warning);
      assert.equal(await Deno.readTextFile(`${p.root}/src/a.txt`), "hello\n");
    },
  );
});
