/**
 * The library surface (`lib/mod.ts`), as an embedding program uses it: in its own process, with
 * the key found through the environment, against a real git repository. Its acts go through the
 * same recorded sequence as the CLI's: a refusal while the session loads (an unconfined run the
 * brief does not allow) is recorded as the CLI records it.
 */
import assert from "node:assert/strict";
import { workerProject } from "../_helpers/git.ts";

const deno = Deno.execPath();
const mod = new URL("../../lib/mod.ts", import.meta.url).href;
const dec = new TextDecoder();

/**
 * The embedding program: every call, a refused unconfined run and a refused proposal, each result
 * printed as JSON.
 */
const PROGRAM = `
import * as at from ${JSON.stringify(mod)};
const root = Deno.args[0];
const out = {};
const nonce = await at.issueDispatch(root, "worker");
out.agent = await at.agentFor(root, nonce);
const policy = await at.loadPolicy(root + "/agentteams.json", { projectRoot: root });
out.agents = Object.keys(policy.agents);
// confine: false against a brief without the opt-out: refused (recorded as the CLI records it,
// agent "?", no attempt counted).
const store = () => Deno.readTextFileSync(root + "/.agentteams/dispatches.jsonl");
const ledger = () => Deno.readTextFileSync(root + "/.agentteams/proposal-ledger.jsonl");
const [ledgerBefore, storeBefore] = [ledger(), store()];
try {
  await at.runRequest(
    { kind: "command-request", dispatch: nonce, argv: ["true"], purpose: "lib" },
    { root, policy: { ...policy, allowUnconfinedRuns: false }, confine: false },
  );
  out.unconfined = null;
} catch (e) {
  out.unconfined = e instanceof at.AgentTeamsError ? e.code : String(e);
}
out.unconfinedStore = store() === storeBefore;
out.unconfinedRows = ledger().slice(ledgerBefore.length).trim().split("\\n").map((l) => {
  const r = JSON.parse(l);
  return [r.action, r.agent, r.code];
});
const run = await at.runRequest(
  { kind: "command-request", dispatch: nonce, argv: ["true"], purpose: "lib" },
  { root, policy, confine: false },
);
out.run = { exit: run.exit, ran: run.ran, undeclared: run.undeclared_writes, backend: run.backend };
const base = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode("old\\n")));
const applied = await at.applyProposal({
  kind: "change-proposal", dispatch: nonce, path: "src/a.txt", base_sha256: base.toHex(),
  content: "new\\n", rationale: "lib",
}, { root, policy });
out.applied = applied.path;
try {
  await at.applyProposal({
    kind: "change-proposal", dispatch: nonce, path: ".git/hooks/pre-commit", base_sha256: "absent",
    content: "#!/bin/sh\\n", rationale: "lib",
  }, { root, policy });
  out.refused = null;
} catch (e) {
  out.refused = e instanceof at.AgentTeamsError ? e.code : String(e);
}
out.recorded = (await at.record(root, { action: "note", text: "from the library" })).count;
const report = await at.verifyLedger(root);
out.verify = { ok: report.ok, rows: report.rows };
console.log(JSON.stringify(out));
`;

Deno.test("lib/mod.ts: dispatch, policy, run, apply, a refusal, record and verify in an embedding program", async () => {
  const work = Deno.makeTempDirSync({ prefix: "agentteams-lib-" });
  try {
    const root = `${work}/p`;
    await workerProject(root, `${work}/home`);
    const program = `${work}/embed.ts`;
    Deno.writeTextFileSync(program, PROGRAM);
    const out = await new Deno.Command(deno, {
      args: ["run", "--allow-all", "--no-check", "--no-config", program, root],
      env: {
        HOME: `${work}/home`,
        PATH: "/usr/bin:/bin",
        AGENTTEAMS_PROPOSAL_LEDGER_KEY: "library-test-key",
      },
      clearEnv: true,
    }).output();
    assert.equal(out.code, 0, dec.decode(out.stderr));
    const r = JSON.parse(dec.decode(out.stdout));
    assert.equal(r.agent, "worker");
    assert.equal(r.unconfined, "UNCONFINED_NOT_ALLOWED");
    assert.equal(r.unconfinedStore, true, "the refused unconfined run counted an attempt");
    assert.deepEqual(r.unconfinedRows, [["run-request-refused", "?", "UNCONFINED_NOT_ALLOWED"]]);
    assert.deepEqual(r.agents, ["worker"]);
    assert.deepEqual(r.run, {
      exit: 0,
      ran: true,
      undeclared: [],
      backend: "unconfined-opt-out",
    });
    assert.equal(r.applied, "src/a.txt");
    assert.equal(Deno.readTextFileSync(`${root}/src/a.txt`), "new\n");
    assert.equal(r.refused, "CONTROL_PLANE");
    assert.throws(() => Deno.lstatSync(`${root}/.git/hooks/pre-commit`), Deno.errors.NotFound);
    assert.deepEqual(r.verify, { ok: true, rows: r.recorded });
  } finally {
    Deno.removeSync(work, { recursive: true });
  }
});
