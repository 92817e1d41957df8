/**
 * Shared bits of the issue 26 probe's staged tests (tests/probe/PROBE_26_REPORT.md): a brief whose
 * `stager` stages every change and deletion through its MCP server, and the runner served in
 * process through its own `serveClaimed`.
 *
 * @module
 */
import { join } from "node:path";
import type { JsonObject } from "../../lib/pycompat/canonical.ts";
import { stagedDir } from "../../lib/runner/staged.ts";
import { snapshotTreeSync, type TreeSnapshot } from "../_helpers/mod.ts";
import type { World } from "../e2e/_run_helpers.ts";

/** `stager` stages every change and deletion through its MCP server; the runner in process. */
export {
  inProcessRunner as runnerOf,
  serveWritten as serve,
  stagerBrief,
} from "../runner/_runner_helpers.ts";

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

/**
 * The project, home and key dir without the ledger, its head (and the anchors file beside it)
 * and the dispatch store.
 */
export function tree(w: World): TreeSnapshot {
  const moving = [
    "proposal-ledger.jsonl",
    "proposal-ledger.head",
    "anchors.json",
    "dispatches.jsonl",
  ]
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
