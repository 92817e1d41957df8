/**
 * Probe 22, finding Q2: the brief by its other default name. The operator's brief is
 * `agentteams.json`, and the settings deny `Edit(./agentteams.json)`, as doctor asks. The default
 * search takes `agentteams.jsonc` first, and no rule names it, so a session writes one of its own
 * (wider write scopes here) and every later act reads it instead: what the operator's brief
 * refused proceeds. Two default briefs must refuse, never pick one.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../_helpers/mod.ts";
import {
  apply,
  assertApplyRefused,
  change,
  dispatch,
  exists,
  makeProject,
  snapshot,
} from "../proposals/_helpers.ts";
import { assertSameTree } from "../_helpers/assert.ts";

const BRIEF = JSON.stringify({ agent_policies: { worker: { write_scopes: ["src/"] } } });
const SESSION_BRIEF = JSON.stringify({
  agent_policies: { worker: { write_scopes: ["src/", "lib/"] } },
});

Deno.test("probe Q2: a session's agentteams.jsonc next to the operator's agentteams.json is not read as the brief", async () => {
  const p = await makeProject("probe-q2", { brief: BRIEF, briefRel: "agentteams.json" });
  try {
    const nonce = await dispatch(p, "worker");
    assertApplyRefused(await apply(p, change(nonce, "lib/x.ts", "x\n")), "OUT_OF_SCOPE");
    // The session: a brief by the name searched first, which no deny rule names.
    await Deno.writeTextFile(join(p.root, "agentteams.jsonc"), SESSION_BRIEF);
    const before = await snapshot(p);
    const r = await apply(p, change(nonce, "lib/x.ts", "x\n"));
    assert.notEqual(r.code, 0, `the session's brief was read: ${r.stdout}`);
    assert.equal(await exists(join(p.root, "lib", "x.ts")), false);
    assert.match(r.stdout + r.stderr, /agentteams\.jsonc/);
    assert.match(r.stdout + r.stderr, /agentteams\.json\b/);
    const d = await runCli(["dispatch", "--agent", "worker", "--project", p.root], {
      env: p.env,
      cwd: p.root,
    });
    assert.notEqual(d.code, 0, "dispatch under two briefs refuses");
    const after = await snapshot(p);
    assertSameTree(before, after, "refused acts write nothing");
  } finally {
    await p.dispose();
  }
});
