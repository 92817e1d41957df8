/**
 * The `agentteams_runner` MCP server: one agent's tools that turn a call into a request on the
 * runner's tool-server channel (`.agentteams-queue/mcp-requests/`, `lib/queue/`), each carrying
 * `via_agent` (the agent this server was started for), and answer with the runner's result once
 * it is opened and found authentic against the runner's public key. It holds no key: the
 * request is sealed to an ephemeral pair made per call (`lib/queue/client.ts`), and the only
 * file of the key dir it reads is the runner's public key.
 *
 * The nonce an agent gives (`dispatch`) goes into the request's artifact and nowhere else: no
 * result, error or log of this server repeats it. The runner decides everything (the nonce's
 * agent must be `via_agent`, the command's allowlist, the 120 s cap of this channel); a refusal
 * comes back as a tool error with the runner's code.
 *
 * Tools (the names `mcp_grants` grants, `MCP_RUNNER_TOOLS`): `write_file` (a change proposal)
 * and `delete_file` (a deletion proposal), each a `stage-proposal` request that the runner writes
 * at once (a change, only under the operator's signed direct-write grant:
 * lib/runner/direct_grants.ts) or stages for the orchestrator's approval;
 * `run_command` (a command request); `request_status` (the result of a request this server
 * queued, when the first wait ended before the runner answered). The server offers every tool;
 * the runner refuses one the agent's grant lacks (`TOOL_NOT_GRANTED`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runnerTools } from "./runner.ts";
 * const tools = runnerTools({ root: "/p", agent: "worker", runnerPublic: () => Promise.resolve(new Uint8Array(32)) });
 * assert.deepEqual(tools.map((t) => t.name), [
 *   "write_file",
 *   "delete_file",
 *   "run_command",
 *   "request_status",
 * ]);
 * ```
 * @module
 */
import { canonical, type JsonObject } from "../pycompat/canonical.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { McpError, QueueError } from "../errors.ts";
import { resultOrRefusal, submitRequest, type Submitted, waitForResult } from "../queue/client.ts";
import { isRequestId } from "../queue/queue_paths.ts";
import { MCP_TIMEOUT_CAP_S, REQUEST_GRACE_S } from "../queue/queued_request.ts";
import { type ArgSpec, inputSchemaOf, type Tool, type ToolResult } from "./server.ts";

/** The runner server's name: its MCP `serverInfo` name, and the `server` a direct grant binds. */
export const RUNNER_SERVER_NAME = "agentteams_runner";
/**
 * The version of the map from this server's tools to runner requests (`write_file` to a
 * `stage-proposal` of a change, ...): a direct-write grant binds it, so a map that changes what a
 * call becomes voids every grant signed for the old one.
 */
export const RUNNER_MAP_VERSION = 1;

/** How long `run_command` waits by default: the channel's command cap and the grace after it. */
export const DEFAULT_WAIT_S = MCP_TIMEOUT_CAP_S + REQUEST_GRACE_S;
/** The longest wait a call may ask for. */
export const MAX_WAIT_S = 600;
/** How many queued requests the server remembers for `request_status` (oldest dropped). */
export const MAX_REMEMBERED = 256;

const DISPATCH_ARG: Record<string, ArgSpec> = {
  dispatch: {
    type: "string",
    description: "your dispatch nonce (32 hex)",
    required: true,
    max: 64,
  },
};
const PATH_ARG: ArgSpec = {
  type: "string",
  description: "the file's project-relative path",
  required: true,
  max: 4096,
};
const BASE_ARG: ArgSpec = {
  type: "string",
  description: "the sha256 (64 hex) of the file as you read it; `absent` for a new file",
  required: true,
  max: 64,
};
const RATIONALE_ARG: ArgSpec = {
  type: "string",
  description: "why (recorded in the ledger)",
  required: true,
  max: 16384,
};
const DRY_RUN_ARG: ArgSpec = { type: "boolean", description: "check only; change nothing" };
const WAIT_ARG: ArgSpec = {
  type: "integer",
  description: `how long to wait for the result (default ${DEFAULT_WAIT_S} s)`,
  min: 1,
  max: MAX_WAIT_S,
};

/** An artifact of `kind` from a call's arguments: the named fields that are set. */
function artifactOf(
  kind: "change-proposal" | "delete-proposal" | "command-request",
  args: Readonly<Record<string, unknown>>,
  fields: readonly string[],
): Record<string, unknown> {
  const artifact: Record<string, unknown> = { kind };
  for (const k of fields) if (args[k] !== undefined) artifact[k] = args[k];
  return artifact;
}

/** What the runner server works with. */
export interface RunnerToolsOptions {
  /** The project root (the queue lies in it). */
  readonly root: string;
  /** The agent this server speaks for (`via_agent`). */
  readonly agent: string;
  /** The runner's public key (raw X25519), read when a result is to be opened. */
  readonly runnerPublic: () => Promise<Uint8Array>;
  /** The clock. */
  readonly now?: () => Date;
}

function answer(result: JsonObject, id: string): ToolResult {
  const lines = [`request: ${id}`];
  if (typeof result.path === "string") lines.push(`path: ${result.path}`);
  if (result.staged === true) {
    lines.push(`staged: ${result.sid} (written when the orchestrator approves it)`);
  } else if (typeof result.written === "boolean") lines.push(`written: ${result.written}`);
  if (typeof result.exit === "number") lines.push(`exit: ${result.exit}`);
  if (typeof result.ran === "boolean") lines.push(`ran: ${result.ran}`);
  for (const stream of ["stdout", "stderr"]) {
    const v = result[stream];
    if (typeof v === "string" && v !== "") lines.push(`${stream}:\n${v}`);
  }
  const writes = result.undeclared_writes;
  if (Array.isArray(writes) && writes.length > 0) {
    lines.push(`undeclared writes: ${writes.join(", ")}`);
  }
  return {
    content: [{ type: "text", text: lines.join("\n") }],
    structuredContent: { request: id, result },
  };
}

/**
 * The runner server's tools for one agent.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs runnerPublic, which it declares rather than makes.
 * import { runnerTools } from "./runner.ts";
 * declare const runnerPublic: () => Promise<Uint8Array>;
 * const [write] = runnerTools({ root: "/p", agent: "worker", runnerPublic });
 * await write.call({
 *   dispatch: "0".repeat(32),
 *   path: "src/a.txt",
 *   base_sha256: "absent",
 *   content: "hi\n",
 *   rationale: "add a",
 * });
 * ```
 */
export function runnerTools(o: RunnerToolsOptions): Tool[] {
  const remembered = new Map<string, Submitted>();
  const remember = (s: Submitted): void => {
    remembered.set(s.id, s);
    if (remembered.size > MAX_REMEMBERED) {
      const oldest = remembered.keys().next().value;
      if (oldest !== undefined) remembered.delete(oldest);
    }
  };
  const settle = async (s: Submitted, waitS: number): Promise<ToolResult> => {
    let opened;
    try {
      opened = await waitForResult(o.root, s, {
        timeoutMs: waitS * 1000,
        runnerPublic: await o.runnerPublic(),
      });
    } catch (e) {
      if (e instanceof QueueError && e.code === "NO_RUNNER") {
        // Withdrawn, or claimed and still running: request_status may fetch it later.
        throw new McpError(
          "RUNNER_UNAVAILABLE",
          `${e.message} (request_status ${s.id} asks again)`,
        );
      }
      throw e;
    }
    remembered.delete(s.id);
    // The runner's refusal is rethrown (RelayedError): a tool error with the runner's code.
    return answer(resultOrRefusal(opened), s.id);
  };
  /** Queues one request on the tool-server channel for this agent and waits for its result. */
  const queue = async (
    kind: "run-request" | "stage-proposal",
    artifact: Record<string, unknown>,
    args: Readonly<Record<string, unknown>>,
  ): Promise<ToolResult> => {
    const waitS = typeof args.wait_s === "number" ? args.wait_s : DEFAULT_WAIT_S;
    const s = await submitRequest(
      o.root,
      {
        kind,
        artifact,
        ...(args.dry_run === true ? { dry_run: true } : {}),
        via_agent: o.agent,
      },
      "mcp",
      {
        runnerPublic: o.runnerPublic,
        waitMs: waitS * 1000,
        now: (o.now ?? (() => new Date()))(),
      },
    );
    remember(s);
    return await settle(s, waitS);
  };
  return [
    {
      name: "write_file",
      description: `Propose a change to one file for agent ${o.agent}: its whole new content. ` +
        "Give the dispatch nonce you were handed, the project-relative path (inside your write " +
        "scopes), the sha256 of the file as you read it (read_file gives it; `absent` for a new " +
        "file) and why. The runner checks it and runs its gates, then writes it or stages it " +
        "for the orchestrator's approval, as your grant says.",
      args: {
        ...DISPATCH_ARG,
        path: PATH_ARG,
        base_sha256: BASE_ARG,
        content: {
          type: "string",
          description: "the file's whole new content (UTF-8 text, at most 256 KiB)",
          required: true,
          max: 262144,
        },
        rationale: RATIONALE_ARG,
        gates: {
          type: "string-array",
          description: "gate names to run besides those whose glob matches the path",
          max: 64,
        },
        dry_run: DRY_RUN_ARG,
        wait_s: WAIT_ARG,
      },
      readOnly: false,
      call: async (args) =>
        await queue(
          "stage-proposal",
          artifactOf("change-proposal", args, [
            "dispatch",
            "path",
            "base_sha256",
            "content",
            "rationale",
            "gates",
          ]),
          args,
        ),
    },
    {
      name: "delete_file",
      description: `Propose deleting one file for agent ${o.agent}. Give the dispatch nonce, ` +
        "the project-relative path, the sha256 of the file as you read it and why. The runner " +
        "checks it and stages it for the orchestrator's approval (a deletion is never direct).",
      args: {
        ...DISPATCH_ARG,
        path: PATH_ARG,
        base_sha256: BASE_ARG,
        rationale: RATIONALE_ARG,
        dry_run: DRY_RUN_ARG,
        wait_s: WAIT_ARG,
      },
      readOnly: false,
      call: async (args) =>
        await queue(
          "stage-proposal",
          artifactOf("delete-proposal", args, ["dispatch", "path", "base_sha256", "rationale"]),
          args,
        ),
    },
    {
      name: "run_command",
      description: `Ask the runner to run one allowlisted command for agent ${o.agent}. Give the ` +
        "dispatch nonce you were handed, the argv (it must start with one of your allowed " +
        "prefixes) and why. The runner checks it, runs it confined (at most 120 s) and " +
        "returns its exit code and output.",
      args: {
        ...DISPATCH_ARG,
        argv: {
          type: "string-array",
          description: "the command and its arguments",
          required: true,
          max: 1024,
        },
        purpose: RATIONALE_ARG,
        cwd: {
          type: "string",
          description: "the command entry's pinned cwd, when it has one",
          max: 4096,
        },
        expected_writes: {
          type: "string-array",
          description: "project-relative paths it will write (a directory ends with /)",
          max: 1024,
        },
        stdin_from_content: {
          type: "object",
          description: "{path, content}: text for its stdin (only entries with stdin_gates)",
        },
        dry_run: { ...DRY_RUN_ARG, description: "check only; run nothing" },
        wait_s: WAIT_ARG,
      },
      readOnly: false,
      call: async (args) =>
        await queue(
          "run-request",
          artifactOf("command-request", args, [
            "dispatch",
            "argv",
            "purpose",
            "cwd",
            "expected_writes",
            "stdin_from_content",
          ]),
          args,
        ),
    },
    {
      name: "request_status",
      description:
        "The result of a request write_file, delete_file or run_command queued in this session, when its wait " +
        "ended before the runner answered: waits again (default 30 s).",
      args: {
        request: {
          type: "string",
          description: "the request id the tool named",
          required: true,
          max: 64,
        },
        wait_s: {
          type: "integer",
          description: "how long to wait (default 30 s)",
          min: 1,
          max: MAX_WAIT_S,
        },
      },
      readOnly: true,
      call: async (args) => {
        const id = args.request as string;
        const s = isRequestId(id) ? remembered.get(id) : undefined;
        if (s === undefined) {
          throw new QueueError(
            "REQUEST_NOT_QUEUED",
            `${JSON.stringify(id)} is no request this server queued and still waits for`,
          );
        }
        return await settle(s, typeof args.wait_s === "number" ? args.wait_s : 30);
      },
    },
  ];
}

/**
 * The SHA-256 that names this build's runner server, as a direct-write grant binds it
 * (`server_sha256`): of the canonical JSON of its name, its map version and each tool's name,
 * read-only hint and input schema (the agent-specific descriptions left out). A build whose tools
 * take other arguments is another server: grants signed for the old one no longer verify.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runnerServerSha256 } from "./runner.ts";
 * assert.match(runnerServerSha256(), /^[0-9a-f]{64}$/);
 * ```
 */
export function runnerServerSha256(): string {
  const tools = runnerTools({
    root: "/",
    agent: "agent",
    runnerPublic: () => Promise.reject(new Error("not serving")),
  });
  return sha256Hex(canonical({
    server: RUNNER_SERVER_NAME,
    map_version: RUNNER_MAP_VERSION,
    tools: tools.map((t) => ({
      name: t.name,
      read_only: t.readOnly,
      input_schema: inputSchemaOf(t.args) as JsonObject,
    })),
  }));
}
