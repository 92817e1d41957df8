/**
 * docs/ci.md's jobs without the action, run as written (issue 23 item 1: "a test that drives the
 * user's path as written in the docs"): the GitHub steps (each `run:` with GitHub's
 * `bash -eo pipefail`, `$GITHUB_ENV` carried, `if:` judged, `uses:` steps left to GitHub) and the
 * GitLab job's `script` (one shell with errexit, as GitLab runs it), against a project under the
 * switch with the ledger key only in the environment. The checkout of agentteams the snippets
 * name (`agentteams/`, `/opt/agentteams`) is this repository.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { baseChildEnv, DENO, REPO_ROOT, runCli, type Sandbox } from "../_helpers/mod.ts";
import { compliantClaude, withSandbox, writeFiles } from "./_team.ts";

const BRIEF = JSON.stringify({
  write_policy: "orchestrator-only",
  privilege_profile: "confined",
  agent_policies: { worker: { write_scopes: ["src/"] } },
}) + "\n";

/** The YAML blocks of docs/ci.md, parsed, in order. */
function blocks(): unknown[] {
  const text = Deno.readTextFileSync(join(REPO_ROOT, "docs", "ci.md"));
  return text.split("```yaml\n").slice(1).map((b) => parse(b.split("```")[0]));
}

async function ledgerProject(sb: Sandbox): Promise<string> {
  writeFiles(sb.project, { ...compliantClaude(), "agentteams.jsonc": BRIEF });
  const env = { ...sb.env, AGENTTEAMS_BROAD_OK: "1" };
  assert.equal((await runCli(["keys", "init"], { env })).code, 0);
  const d = await runCli(["dispatch", "--agent", "worker", "--project", sb.project, "--direct"], {
    env,
  });
  assert.equal(d.code, 0, d.stderr);
  return Deno.readTextFileSync(join(sb.keyDir, "proposal-ledger.key"));
}

/** The runner's environment: its own HOME (no key dir), deno on PATH, the job's variables. */
function runnerEnv(sb: Sandbox, extra: Record<string, string>): Record<string, string> {
  const home = join(sb.dir, "ci-home");
  Deno.mkdirSync(home, { recursive: true });
  return {
    ...baseChildEnv(),
    PATH: `${join(DENO, "..")}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    ...extra,
  };
}

async function bash(script: string, cwd: string, env: Record<string, string>) {
  const r = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-eo", "pipefail", "-c", script],
    cwd,
    clearEnv: true,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

interface GhStep {
  name: string;
  if?: string;
  uses?: string;
  env?: Record<string, string>;
  run?: string;
}

/** Runs docs/ci.md's GitHub steps without the action; the job's result and the steps' log. */
async function githubJob(sb: Sandbox, key: string): Promise<{ ok: boolean; log: string }> {
  const steps = blocks()[1] as GhStep[];
  assert.ok(Array.isArray(steps) && steps.length === 4, "the GitHub snippet's four steps");
  // The checkout of agentteams the snippet names.
  Deno.symlinkSync(REPO_ROOT, join(sb.project, "agentteams"));
  const githubEnv = join(sb.dir, "github-env");
  Deno.writeTextFileSync(githubEnv, "");
  let failed = false;
  let log = "";
  for (const s of steps) {
    const jobEnv: Record<string, string> = {};
    for (const l of Deno.readTextFileSync(githubEnv).split("\n")) {
      const i = l.indexOf("=");
      if (i > 0) jobEnv[l.slice(0, i)] = l.slice(i + 1);
    }
    const cond = s.if ?? "success()";
    const m = /^env\.([A-Z_]+) != '([^']*)'$/.exec(cond);
    const runs = cond === "always()" ||
      (!failed && (cond === "success()" || (m !== null && jobEnv[m[1]] !== m[2])));
    if (!runs || s.uses !== undefined || s.run === undefined) continue;
    const env: Record<string, string> = { ...runnerEnv(sb, jobEnv), GITHUB_ENV: githubEnv };
    for (const [k, v] of Object.entries(s.env ?? {})) {
      env[k] = v.replace("${{ secrets.AGENTTEAMS_PROPOSAL_LEDGER_KEY }}", key);
    }
    const r = await bash(s.run, sb.project, env);
    log += `## ${s.name} (${r.code})\n${r.out}\n`;
    if (r.code !== 0) failed = true;
  }
  return { ok: !failed, log };
}

/** Runs docs/ci.md's GitLab job's script (its before_script is the install, done here). */
async function gitlabJob(sb: Sandbox, key: string) {
  const job =
    (blocks()[2] as Record<string, { variables: Record<string, string>; script: string[] }>)[
      "agentteams-audit"
    ];
  const script = job.script.map((l) => l.replaceAll("/opt/agentteams", REPO_ROOT)).join("\n");
  return await bash(
    script,
    sb.project,
    runnerEnv(sb, {
      ...job.variables,
      CI_PROJECT_DIR: sb.project,
      AGENTTEAMS_PROPOSAL_LEDGER_KEY: key,
    }),
  );
}

Deno.test("docs/ci.md's GitHub steps without the action pass under the switch with the key only in the environment, and fail on a write tool", async () => {
  await withSandbox("ci-docs-github", async (sb) => {
    const key = await ledgerProject(sb);
    const ok = await githubJob(sb, key);
    assert.equal(ok.ok, true, ok.log);
    assert.match(ok.log, /## Verify the ledger \(0\)\nok: /, ok.log);
    assert.doesNotMatch(ok.log, /## Fail on audit errors/);
    Deno.removeSync(join(sb.project, "agentteams"));
    writeFiles(sb.project, {
      ".claude/agents/writer.md": "---\nname: writer\ndescription: d\ntools: Read, Edit\n---\n" +
        "## Write Policy: Return Proposals, Never Write\n",
    });
    const bad = await githubJob(sb, key.trimEnd());
    assert.equal(bad.ok, false, bad.log);
    // The ledger was verified before the job failed on the audit.
    assert.match(
      bad.log,
      /## Verify the ledger \(0\)[\s\S]*## Fail on audit errors \(1\)/,
      bad.log,
    );
  });
});

Deno.test("docs/ci.md's GitLab job passes under the switch with the key only in the environment, and fails on a write tool after verifying the ledger", async () => {
  await withSandbox("ci-docs-gitlab", async (sb) => {
    const key = await ledgerProject(sb);
    const ok = await gitlabJob(sb, key);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /^ok: /m);
    assert.equal(Deno.readTextFileSync(join(sb.project, "audit.exit")).trim(), "0");
    writeFiles(sb.project, {
      ".claude/agents/writer.md": "---\nname: writer\ndescription: d\ntools: Read, Edit\n---\n" +
        "## Write Policy: Return Proposals, Never Write\n",
    });
    const bad = await gitlabJob(sb, key);
    assert.equal(bad.code, 1, bad.out);
    assert.equal(Deno.readTextFileSync(join(sb.project, "audit.exit")).trim(), "1");
    assert.match(bad.out, /^ok: /m, "the ledger verified before the job failed");
    const sarif = JSON.parse(Deno.readTextFileSync(join(sb.project, "agentteams-audit.sarif")));
    assert.ok(sarif.runs[0].results.some((r: { ruleId: string }) => r.ruleId === "TOOL_WRITE"));
  });
});
