/**
 * First contact (issue 14, item 10): a misspelt artifact field gets a "did you mean" hint line
 * below the refusal, through the real CLI; the refusal itself stays zod's first issue.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initKeys } from "../../lib/crypto/keys.ts";
import { runCli, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { workerProject } from "../_helpers/git.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { didYouMean } from "../../lib/text/suggest.ts";

Deno.test("a misspelt artifact field: ARTIFACT_INVALID with a hint naming the field it meant; nothing written", async () => {
  const sb = await sandbox("artifact-hint");
  try {
    await workerProject(sb.project, sb.home);
    await initKeys({ env: sb.env });
    const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
    const nonce = "0123456789abcdef0123456789abcdef";
    const req = join(sb.dir, "r.json");
    await Deno.writeTextFile(
      req,
      JSON.stringify({
        kind: "command-request",
        dispatch: nonce,
        argv: ["true"],
        purpose: "p",
        expected_write: [],
      }),
    );
    const prop = join(sb.dir, "p.json");
    await Deno.writeTextFile(
      prop,
      JSON.stringify({
        kind: "change-proposal",
        dispatch: nonce,
        path: "src/b.txt",
        base_sha: "absent",
        content: "x\n",
        rationale: "r",
      }),
    );
    const before = await snapshotTree(join(sb.project, "src"));
    const r = await runCli(["run", req, "--project", sb.project], { env });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /refused: ARTIFACT_INVALID: unknown field "expected_write" \(did you mean "expected_writes"\?\)/,
    );
    assert.match(r.stderr, /^ {2}hint: did you mean "expected_writes"\?$/m);
    const a = await runCli(["apply", prop, "--project", sb.project], { env });
    assert.equal(a.code, 1);
    assert.match(a.stderr, /refused: ARTIFACT_INVALID: /);
    assert.match(a.stderr, /^ {2}hint: did you mean "base_sha256"\?$/m);
    assertSameTree(before, await snapshotTree(join(sb.project, "src")), "after the refusals");
  } finally {
    await sb.dispose();
  }
});

Deno.test("didYouMean: the one known word the input starts (4+ characters), never an ambiguous one", () => {
  assert.equal(didYouMean("base_sha", ["base_sha256", "content"]), "base_sha256");
  assert.equal(didYouMean("bas", ["base_sha256"]), null);
  assert.equal(didYouMean("write", ["write_scopes", "write_policy"]), null);
});
