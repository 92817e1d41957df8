/**
 * Shared bits of the issue 26 probe's staged tests (tests/probe/PROBE_26_REPORT.md): a brief whose
 * `stager` stages every change and deletion through its MCP server, and the runner served in
 * process through its own `serveClaimed`.
 *
 * @module
 */
import { join } from "node:path";
import { completePolicy } from "../../lib/acts/session.ts";
import { loadLedgerKey, runnerSealPair } from "../../lib/crypto/keys.ts";
import type { JsonObject } from "../../lib/pycompat/canonical.ts";
import { type RunnerState, serveClaimed, type Served } from "../../lib/runner/serve_one.ts";
import { stagedDir } from "../../lib/runner/staged.ts";
import { lazyBackend } from "../../lib/sandbox/backend_choice_io.ts";
import { snapshotTreeSync, type TreeSnapshot } from "../_helpers/mod.ts";
import type { World } from "../e2e/_run_helpers.ts";
import { makeRequest, runnerBrief } from "../runner/_runner_helpers.ts";

/** `stager` stages every change and deletion through its MCP server (`approval: "staged"`). */
export function stagerBrief(p: Parameters<typeof runnerBrief>[0]): JsonObject {
  const b = runnerBrief(p) as { agent_policies: JsonObject; confined_programs: JsonObject };
  return {
    ...b,
    agent_policies: {
      ...b.agent_policies,
      stager: { write_scopes: ["src/"], commands: [{ prefix: ["true"] }] },
    },
    confined_programs: {
      ...b.confined_programs,
      stager: (b.confined_programs as Record<string, JsonObject>).worker,
    },
    mcp_grants: { stager: { tools: ["write_file", "delete_file"], approval: "staged" } },
  } as JsonObject;
}

/** The runner in process over world `w` (its brief completed, the world's key dir). */
export async function runnerOf(w: World): Promise<RunnerState> {
  const env: Record<string, string> = { ...w.env, PATH: "/usr/bin:/bin" };
  const policy = await completePolicy(w.project, join(w.project, "agentteams.jsonc"), env);
  return {
    root: w.project,
    env,
    home: env.HOME,
    key: loadLedgerKey({ env, mode: "runner" }),
    seal: await runnerSealPair(env),
    policy,
    backend: lazyBackend(policy, { unconfined: false, runner: true }),
    now: () => new Date(),
  };
}

/** Serves one request written by hand (its body) on `channel`, as the runner claims it. */
export async function serve(
  s: RunnerState,
  w: World,
  body: Record<string, unknown>,
  channel: "orchestrator" | "mcp" = "orchestrator",
): Promise<Served> {
  const m = await makeRequest(w, body, { channel });
  const path = join(w.dir, `${m.id}.json`);
  Deno.writeFileSync(path, m.bytes);
  return await serveClaimed(s, path, m.id, channel);
}

/** A change proposal of a new file at `path`. */
export const change = (nonce: string, path: string): JsonObject => ({
  kind: "change-proposal",
  dispatch: nonce,
  path,
  base_sha256: "absent",
  content: "staged\n",
  rationale: "probe 26",
});

/** The tool-server request staging `artifact` for `stager`. */
export const stageOf = (artifact: JsonObject): JsonObject => ({
  kind: "stage-proposal",
  artifact,
  via_agent: "stager",
});

/** The project, home and key dir without the ledger, its head and the dispatch store. */
export function tree(w: World): TreeSnapshot {
  const moving = ["proposal-ledger.jsonl", "proposal-ledger.head", "dispatches.jsonl"]
    .map((n) => join(w.project, ".agentteams", n));
  return snapshotTreeSync([w.project, w.home, w.keyDir], (p) => moving.includes(p));
}

/** The names in `.agentteams/staged/`, sorted (none when it is missing). */
export const staged = (w: World): string[] => {
  try {
    return [...Deno.readDirSync(stagedDir(w.project))].map((e) => e.name).sort();
  } catch {
    return [];
  }
};
