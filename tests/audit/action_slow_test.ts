/**
 * `action.yml` run as written (tests/audit/_action.ts runs its composite steps the way a GitHub
 * runner does) against a project under `"write_policy": "orchestrator-only"` with the ledger key
 * only in the job's environment, as a CI secret gives it (issue 23 items 1 and 2):
 *
 * - the ledger step verifies (no runner in CI: `--direct`), with the key file's text with or
 *   without its newline; a tampered ledger or a wrong key fails the job;
 * - each form of the `directories` input (the project, each framework's agent folder, a file,
 *   several) audits the files there as from the team's root; a folder with no agent file fails
 *   the job unless `allow-empty`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, type Sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { corpusText } from "./_corpus.ts";
import { compliantClaude, withSandbox, writeFiles } from "./_team.ts";
import { jobLog, runAction } from "./_action.ts";

/** The brief under the switch, naming the agent the ledger's dispatch is for. */
const BRIEF = JSON.stringify({
  write_policy: "orchestrator-only",
  privilege_profile: "confined",
  agent_policies: { worker: { write_scopes: ["src/"] } },
}) + "\n";

/** A compliant team in every framework's folder. */
function team(): Record<string, string> {
  return {
    ...compliantClaude(),
    ".github/agents/helper.agent.md": corpusText("copilot/copilot-clean.agent.md"),
    ".codex/agents/reader.toml": corpusText("codex/clean.toml"),
    "recipes/reader.yaml": corpusText("goose/clean-readfs.yaml"),
    "agentteams.jsonc": BRIEF,
  };
}

/** A project under the switch with a ledger (one dispatch, made with the key file). */
async function projectWithLedger(sb: Sandbox): Promise<string> {
  writeFiles(sb.project, team());
  const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
  const k = await runCli(["keys", "init"], { env });
  assert.equal(k.code, 0, k.stderr);
  const d = await runCli(["dispatch", "--agent", "worker", "--project", sb.project, "--direct"], {
    env,
  });
  assert.equal(d.code, 0, d.stderr);
  return Deno.readTextFileSync(join(sb.keyDir, "proposal-ledger.key"));
}

/** The CI job's environment: a runner's HOME with no key dir, the key from a secret only. */
function ciEnv(sb: Sandbox, key: string | null): Record<string, string> {
  const home = join(sb.dir, "ci-home");
  Deno.mkdirSync(home, { recursive: true });
  return key === null ? { HOME: home } : { HOME: home, AGENTTEAMS_PROPOSAL_LEDGER_KEY: key };
}

async function job(sb: Sandbox, inputs: Record<string, string>, env: Record<string, string>) {
  const temp = join(sb.dir, `runner-temp-${crypto.randomUUID()}`);
  Deno.mkdirSync(temp);
  return await runAction({ workspace: sb.project, temp, inputs, jobEnv: env });
}

Deno.test("action.yml under the switch: the ledger step verifies with the key only in the environment (the key file's text with or without its newline)", async () => {
  await withSandbox("action-ledger", async (sb) => {
    const key = await projectWithLedger(sb);
    assert.ok(key.endsWith("\n"));
    const before = await snapshotTree(sb.project);
    for (const secret of [key, key.trimEnd()]) {
      const j = await job(sb, { "verify-ledger": "true" }, ciEnv(sb, secret));
      assert.equal(j.ok, true, jobLog(j));
      assert.deepEqual(j.steps.map((s) => [s.name, s.code]), [
        ["Install Deno", 0],
        ["Audit the agent files (no key)", 0],
        ["Verify the ledger", 0],
        ["Fail on audit errors", null],
      ]);
      assert.match(j.steps[2].stdout, /^ok: \d+ rows? verif/m, jobLog(j));
      assert.equal(j.outputs["audit-exit"], "0");
      const sarif = JSON.parse(Deno.readTextFileSync(join(sb.project, j.outputs["sarif-file"])));
      assert.equal(sarif.version, "2.1.0");
      Deno.removeSync(join(sb.project, j.outputs["sarif-file"]));
    }
    // The steps wrote nothing but the SARIF log (removed above): no queue, no request.
    assertSameTree(before, await snapshotTree(sb.project));
  });
});

Deno.test("action.yml under the switch: a wrong key, no key, or a tampered ledger fails the ledger step and the job", async () => {
  await withSandbox("action-ledger-bad", async (sb) => {
    const key = await projectWithLedger(sb);
    const wrong = await job(sb, { "verify-ledger": "true" }, ciEnv(sb, "0".repeat(64)));
    assert.equal(wrong.ok, false, jobLog(wrong));
    assert.equal(wrong.steps[2].code, 1, jobLog(wrong));
    const none = await job(sb, { "verify-ledger": "true" }, ciEnv(sb, null));
    assert.equal(none.ok, false);
    assert.match(none.steps[2].stderr, /NO_KEY/, jobLog(none));
    const ledger = join(sb.project, ".agentteams", "proposal-ledger.jsonl");
    Deno.writeTextFileSync(ledger, Deno.readTextFileSync(ledger).replace("worker", "wOrker"));
    const tampered = await job(sb, { "verify-ledger": "true" }, ciEnv(sb, key));
    assert.equal(tampered.ok, false, jobLog(tampered));
    assert.equal(tampered.steps[2].code, 1, jobLog(tampered));
    // The same job without verify-ledger passes: the failure was the ledger step's.
    const skip = await job(sb, {}, ciEnv(sb, key));
    assert.equal(skip.ok, true, jobLog(skip));
    assert.equal(skip.steps[2].code, null);
  });
});

/** The agent files an audit of `dirs` found, from the job's SARIF log. */
function filesAudited(sb: Sandbox, sarifRel: string): number {
  const log = JSON.parse(Deno.readTextFileSync(join(sb.project, sarifRel)));
  return log.runs[0].properties.files;
}

Deno.test("action.yml: each directories form audits the files there, judged from the team's root; a folder with none fails unless allow-empty", async () => {
  await withSandbox("action-dirs", async (sb) => {
    writeFiles(sb.project, team());
    Deno.mkdirSync(join(sb.project, "src"));
    const env = ciEnv(sb, null);
    const forms: [string, number][] = [
      [".", 5],
      [".claude/agents", 2],
      [".github/agents", 1],
      [".codex/agents", 1],
      ["recipes", 1],
      [".claude/agents/reviewer.md", 1],
      [".claude/agents .codex/agents", 3],
    ];
    for (const [dirs, files] of forms) {
      const j = await job(sb, { directories: dirs }, env);
      assert.equal(j.ok, true, `${dirs}: ${jobLog(j)}`);
      assert.equal(j.outputs["audit-exit"], "0", dirs);
      assert.equal(filesAudited(sb, j.outputs["sarif-file"]), files, dirs);
      assert.match(
        j.steps[1].stdout,
        new RegExp(`audit: ${files} agent file\\(s\\).*passes`),
        dirs,
      );
    }
    // A write tool in .claude/agents fails the job when that folder is named; findings name
    // the file as from the team's root.
    writeFiles(sb.project, {
      ".claude/agents/writer.md": "---\nname: writer\ndescription: d\ntools: Read, Edit\n---\n" +
        "## Write Policy: Return Proposals, Never Write\n",
    });
    const bad = await job(sb, { directories: ".claude/agents" }, env);
    assert.equal(bad.ok, false, jobLog(bad));
    assert.equal(bad.outputs["audit-exit"], "1");
    assert.match(bad.steps[1].stdout, /^\.claude\/agents\/writer\.md$/m, jobLog(bad));
    const log = JSON.parse(Deno.readTextFileSync(join(sb.project, bad.outputs["sarif-file"])));
    assert.ok(
      log.runs[0].results.some((
        r: {
          ruleId: string;
          locations: { physicalLocation: { artifactLocation: { uri: string } } }[];
        },
      ) =>
        r.ruleId === "TOOL_WRITE" &&
        r.locations[0].physicalLocation.artifactLocation.uri === ".claude/agents/writer.md"
      ),
    );
    // .github/agents is judged alone: the Claude file's error is not its.
    const other = await job(sb, { directories: ".github/agents" }, env);
    assert.equal(other.ok, true, jobLog(other));
    Deno.removeSync(join(sb.project, ".claude/agents/writer.md"));
    // No agent file there: the job fails, unless allow-empty says it is expected.
    const empty = await job(sb, { directories: "src" }, env);
    assert.equal(empty.ok, false, jobLog(empty));
    assert.equal(empty.outputs["audit-exit"], "1");
    assert.match(empty.steps[1].stdout, /0 agent file\(s\).*fails \(no agent files found/);
    const emptyLog = JSON.parse(
      Deno.readTextFileSync(join(sb.project, empty.outputs["sarif-file"])),
    );
    assert.equal(emptyLog.runs[0].invocations[0].executionSuccessful, false);
    const allowed = await job(sb, { directories: "src", "allow-empty": "true" }, env);
    assert.equal(allowed.ok, true, jobLog(allowed));
    // One named folder with none fails the job too, even when another has agent files.
    const mixed = await job(sb, { directories: ".claude/agents src" }, env);
    assert.equal(mixed.ok, false, jobLog(mixed));
    assert.match(mixed.steps[1].stdout, /fails \(no agent files found in src:/, jobLog(mixed));
    const mixedOk = await job(
      sb,
      { directories: ".claude/agents src", "allow-empty": "true" },
      env,
    );
    assert.equal(mixedOk.ok, true, jobLog(mixedOk));
    // strict without the switch fails on nothing found too.
    writeFiles(sb.project, { "agentteams.jsonc": "{}\n" });
    const off = await job(sb, { directories: "src" }, env);
    assert.equal(off.ok, true, jobLog(off));
    const strict = await job(sb, { directories: "src", strict: "true" }, env);
    assert.equal(strict.ok, false, jobLog(strict));
  });
});
