/**
 * The surface of `lib/mcp/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { serveLines, writerSink } from "./jsonrpc.ts";
export { openRoot } from "./read_root.ts";
export { readfsTools } from "./readfs.ts";
export { READFS_LAUNCH, READFS_TOOLS, readfsLaunchProblem } from "./readfs_launch.ts";
export {
  RUNNER_MAP_VERSION,
  RUNNER_SERVER_NAME,
  runnerServerSha256,
  runnerTools,
} from "./runner.ts";
export { mcpHandler } from "./server.ts";
