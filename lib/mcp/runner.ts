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
 * Tools: `run_command` (a command request) and `request_status` (the result of a request this
 * server queued, when the first wait ended before the runner answered). The runner takes only
 * command requests on this channel (`lib/queue/request.ts`), so change and deletion proposals
 * are not offered here.
 *
 * @example
 * ```ts
 * import { runnerTools } from "./runner.ts";
 * const tools = runnerTools({ root: "/p", agent: "worker", runnerPublic: () => Promise.resolve(new Uint8Array(32)) });
 * tools.map((t) => t.name); // ["run_command", "request_status"]
 * ```
 * @module
 */
import type { JsonObject } from "../pycompat/canonical.ts";
import { McpError, QueueError } from "../errors.ts";
import { resultOrRefusal, submitRequest, type Submitted, waitForResult } from "../queue/client.ts";
import { isRequestId } from "../queue/queue_paths.ts";
import { MCP_TIMEOUT_CAP_S, REQUEST_GRACE_S } from "../queue/queued_request.ts";
import type { Tool, ToolResult } from "./server.ts";

/** How long `run_command` waits by default: the channel's command cap and the grace after it. */
export const DEFAULT_WAIT_S = MCP_TIMEOUT_CAP_S + REQUEST_GRACE_S;
/** The longest wait a call may ask for. */
export const MAX_WAIT_S = 600;
/** How many queued requests the server remembers for `request_status` (oldest dropped). */
export const MAX_REMEMBERED = 256;

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
 * ```ts
 * import { runnerTools } from "./runner.ts";
 * declare const runnerPublic: () => Promise<Uint8Array>;
 * const [run] = runnerTools({ root: "/p", agent: "worker", runnerPublic });
 * await run.call({ dispatch: "0".repeat(32), argv: ["true"], purpose: "check" });
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
  return [
    {
      name: "run_command",
      description: `Ask the runner to run one allowlisted command for agent ${o.agent}. Give the ` +
        "dispatch nonce you were handed, the argv (it must start with one of your allowed " +
        "prefixes) and why. The runner checks it, runs it confined (at most 120 s) and " +
        "returns its exit code and output.",
      args: {
        dispatch: {
          type: "string",
          description: "your dispatch nonce (32 hex)",
          required: true,
          max: 64,
        },
        argv: {
          type: "string-array",
          description: "the command and its arguments",
          required: true,
          max: 1024,
        },
        purpose: {
          type: "string",
          description: "why (recorded in the ledger)",
          required: true,
          max: 16384,
        },
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
        dry_run: { type: "boolean", description: "check only; run nothing" },
        wait_s: {
          type: "integer",
          description: `how long to wait for the result (default ${DEFAULT_WAIT_S} s)`,
          min: 1,
          max: MAX_WAIT_S,
        },
      },
      readOnly: false,
      call: async (args) => {
        const artifact: Record<string, unknown> = {
          kind: "command-request",
          dispatch: args.dispatch,
          argv: args.argv,
          purpose: args.purpose,
        };
        for (const k of ["cwd", "expected_writes", "stdin_from_content"]) {
          if (args[k] !== undefined) artifact[k] = args[k];
        }
        const waitS = typeof args.wait_s === "number" ? args.wait_s : DEFAULT_WAIT_S;
        const s = await submitRequest(
          o.root,
          {
            kind: "run-request",
            artifact,
            ...(args.dry_run === true ? { dry_run: true } : {}),
            via_agent: o.agent,
          },
          "mcp",
          { waitMs: waitS * 1000, now: (o.now ?? (() => new Date()))() },
        );
        remember(s);
        return await settle(s, waitS);
      },
    },
    {
      name: "request_status",
      description: "The result of a request run_command queued in this session, when its wait " +
        "ended before the runner answered: waits again (default 30 s).",
      args: {
        request: {
          type: "string",
          description: "the request id run_command named",
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
