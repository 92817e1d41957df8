/**
 * Which files the hosts load, against the audit (issue 22, item 2): the Copilot CLI 1.0.102's own
 * discovery (`tests/testdata/hosts/discovery/copilot-cli.json`, what its `customAgentsDiscoverJson`
 * returned on each tree) walks `.github/agents/` and `.claude/agents/` into subfolders
 * (`node_modules` included), loads a README with a front matter, and each parent's folders up to
 * the repository's root. Each tree is rebuilt and audited under the flags `permissions audit`
 * prints: every file the host loaded (each one with every tool) must be named with an error. A
 * `.claude/agents/` file with no `name` (Claude Code skips it, the Copilot CLI loads it) fails too.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { baseChildEnv, runCli, type Sandbox } from "../_helpers/mod.ts";
import { GIT, gitEnv, sh } from "../_helpers/git.ts";
import { switchBrief, withSandbox } from "./_team.ts";

interface Case {
  why: string;
  start?: string;
  git?: string;
  home?: string;
  emptyGit?: string;
  files: string[];
  links?: Record<string, string>;
  loaded: string[];
}

const RECORD = JSON.parse(
  Deno.readTextFileSync(new URL("../testdata/hosts/discovery/copilot-cli.json", import.meta.url)),
) as { host: string; cases: Case[] };

const AGENT = "---\ndescription: d\n---\nbody\n";

/** `audit --project P` under exactly the flags `permissions audit` prints. */
async function narrowAudit(project: string, env: Record<string, string>) {
  const p = await runCli(["permissions", "audit", "--project", project], {
    env: { ...env, AGENTTEAMS_BROAD_OK: "1" },
  });
  assert.equal(p.code, 0, p.stderr);
  const argv = p.stdout.trim().split(" ");
  const r = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    clearEnv: true,
    env: { ...baseChildEnv(), ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, stdout: new TextDecoder().decode(r.stdout) };
}

/** The file blocks of a text report: each file's path line and its finding lines. */
function blocks(stdout: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let at: string | null = null;
  for (const line of stdout.split("\n")) {
    if (line === "" || line.startsWith("audit: ")) continue;
    if (!line.startsWith(" ")) {
      at = line;
      out.set(at, []);
    } else if (at !== null) out.get(at)!.push(line);
  }
  return out;
}

async function build(sb: Sandbox, c: Case): Promise<string> {
  const tree = join(sb.dir, "tree");
  for (const rel of c.files) {
    const abs = join(tree, rel);
    Deno.mkdirSync(dirname(abs), { recursive: true });
    Deno.writeTextFileSync(abs, AGENT);
  }
  Deno.writeTextFileSync(join(sb.dir, "outside.md"), AGENT);
  for (const [rel, target] of Object.entries(c.links ?? {})) {
    Deno.symlinkSync(join(sb.dir, "outside.md"), join(tree, rel));
    assert.equal(target, "../outside.md");
  }
  if (c.git !== undefined) {
    const g = join(tree, c.git === "." ? "" : c.git);
    Deno.mkdirSync(g, { recursive: true });
    await sh(g, GIT, ["init", "-q"], gitEnv(sb.home));
  }
  if (c.emptyGit !== undefined) Deno.mkdirSync(join(tree, c.emptyGit, ".git"), { recursive: true });
  const project = join(tree, c.start ?? "");
  Deno.mkdirSync(project, { recursive: true });
  Deno.writeTextFileSync(join(project, "agentteams.jsonc"), switchBrief());
  return project;
}

for (const c of RECORD.cases) {
  Deno.test(`discovery (${RECORD.host}): ${c.why}: every file it loads is named with an error`, async () => {
    await withSandbox("audit-discovery", async (sb) => {
      const project = await build(sb, c);
      const tree = join(sb.dir, "tree");
      const home = c.home === undefined ? sb.home : join(tree, c.home);
      const r = await narrowAudit(project, { ...sb.env, HOME: home });
      assert.equal(r.code, 1, r.stdout);
      const found = blocks(r.stdout);
      for (const rel of c.loaded) {
        const abs = join(tree, rel);
        const shown = abs.startsWith(`${project}/`) ? abs.slice(project.length + 1) : abs;
        const lines = found.get(shown);
        assert.ok(
          lines !== undefined,
          `${shown} (loaded by ${RECORD.host}) is not audited:\n${r.stdout}`,
        );
        assert.ok(lines.some((l) => / error /.test(l)), `${shown} has no error:\n${r.stdout}`);
      }
    });
  });
}
