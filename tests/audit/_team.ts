/**
 * Building sample teams for the audit's tests: a compliant team under the switch, and writing
 * files into a project.
 */
import { dirname, join } from "node:path";
import { runCli, type RunResult, type Sandbox, sandbox, snapshotTree } from "../_helpers/mod.ts";
import { assertCliRefused, assertSameTree } from "../_helpers/assert.ts";

/** The non-orchestrator section heading line. */
export const SECTION = "## Write Policy: Return Proposals, Never Write";
/** The orchestrator's. */
export const ORCH = "## Write Policy: Applying Proposals";

/** The fenced non-orchestrator section (as the generator writes it). */
export const FENCED =
  `<!-- AGENTTEAMS:BEGIN write_policy v=1 -->\n${SECTION}\n\nReturn proposals.\n` +
  "<!-- AGENTTEAMS:END write_policy -->\n";

/** The Claude settings with every deny rule. */
export const SETTINGS = JSON.stringify(
  {
    permissions: {
      deny: [
        "Read(~/.config/agentteams/keys/**)",
        "Read(.agentteams/**)",
        "Read(.agentteams-queue/**)",
        "Edit(.agentteams/**)",
        "Edit(.agentteams-status/**)",
      ],
    },
  },
  null,
  2,
) + "\n";

/** Writes `files` (relative path → text) under `root`. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    const p = join(root, rel);
    Deno.mkdirSync(dirname(p), { recursive: true });
    Deno.writeTextFileSync(p, text);
  }
}

/** The brief with the switch on (optionally limited to `frameworks`). */
export function switchBrief(frameworks?: string[]): string {
  const b: Record<string, unknown> = {
    write_policy: "orchestrator-only",
    privilege_profile: "confined",
  };
  if (frameworks !== undefined) b.write_policy_frameworks = frameworks;
  return JSON.stringify(b) + "\n";
}

/** A compliant Claude team: orchestrator, one reader, the settings. */
export function compliantClaude(): Record<string, string> {
  return {
    ".claude/agents/orchestrator.md":
      `---\nname: orchestrator\ndescription: Leads\ntools: Read, Edit, Bash, Task\n---\n${ORCH}\n`,
    ".claude/agents/reviewer.md":
      `---\nname: reviewer\ndescription: Reviews\ntools: Read, Grep, Glob\n---\nReview.\n\n${FENCED}`,
    ".claude/settings.json": SETTINGS,
  };
}

/** Runs `fn` in a fresh sandbox (HOME, key dir, project), removed afterwards. */
export async function withSandbox(
  prefix: string,
  fn: (sb: Sandbox) => Promise<void>,
): Promise<void> {
  const sb = await sandbox(prefix);
  try {
    await fn(sb);
  } finally {
    await sb.dispose();
  }
}

/**
 * The environment an audit of a sandbox runs in: the operator's, with the key dir at its default
 * under HOME (nothing there: an audit reads no key), broad project paths allowed on purpose.
 */
export function auditEnv(sb: Sandbox): Record<string, string> {
  const { AGENTTEAMS_KEY_DIR: _elsewhere, ...underHome } = sb.env;
  return { ...underHome, AGENTTEAMS_BROAD_OK: "1" };
}

/**
 * Runs `agentteams audit --project P --strict [P/NAMED...]` on `files` and the brief with the
 * switch on, written into a fresh sandbox, as the operator whose key dir is at its default under
 * HOME (broad project paths allowed). With `refused`, asserts the `AR_WRITE_POLICY` refusal
 * (exit 1) and that nothing in the sandbox changed. The run's output is returned.
 */
export async function auditStrict(
  prefix: string,
  files: Record<string, string>,
  opts: { named?: readonly string[]; refused: boolean },
): Promise<RunResult> {
  const sb = await sandbox(prefix);
  try {
    writeFiles(sb.project, { ...files, "agentteams.jsonc": switchBrief() });
    const named = (opts.named ?? []).map((n) => `${sb.project}/${n}`);
    const before = await snapshotTree(sb.dir);
    const r = await runCli(["audit", "--project", sb.project, "--strict", ...named], {
      env: auditEnv(sb),
    });
    if (opts.refused) {
      assertCliRefused(r, "audit", "AR_WRITE_POLICY", 1);
      assertSameTree(before, await snapshotTree(sb.dir));
    }
    return r;
  } finally {
    await sb.dispose();
  }
}
