/**
 * The MCP protocol over {@link serveLines}: `initialize` (version negotiation), `ping`,
 * `tools/list` and `tools/call`, and the client's notifications. A server is a name, a version
 * and a list of {@link Tool}s; each tool declares its arguments ({@link ArgSpec}), which are
 * checked before it runs. A tool's refusal (any {@link AgentTeamsError}) or failure becomes an
 * MCP tool error (`isError: true`, the code first in its text), never a crash; an unknown tool,
 * an unknown method and a call before `initialize` are JSON-RPC errors.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpHandler } from "./server.ts";
 * const h = mcpHandler({ name: "demo", version: "1" }, []);
 * await h.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } });
 * assert.deepEqual(await h.request("tools/list", {}), { tools: [] });
 * ```
 * @module
 */
import { AgentTeamsError } from "../errors.ts";
import { RPC, RpcError, type RpcHandler } from "./jsonrpc.ts";

/** The protocol revisions this server speaks, newest first. */
export const PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
]);

/** One argument of a tool. */
export interface ArgSpec {
  /** Its JSON type (`string-array`: an array of strings; `object`: any JSON object). */
  readonly type: "string" | "boolean" | "integer" | "string-array" | "object";
  /** What it is, for the client's model. */
  readonly description: string;
  /** Whether the call must carry it. */
  readonly required?: boolean;
  /** For integers: the smallest and largest value. */
  readonly min?: number;
  /** The largest value (integers) or length (strings). */
  readonly max?: number;
}

/** A tool's answer. */
export interface ToolResult {
  /** The text blocks the client's model sees. */
  readonly content: readonly { readonly type: "text"; readonly text: string }[];
  /** The same answer as data. */
  readonly structuredContent?: Record<string, unknown>;
  /** Set on a tool error. */
  readonly isError?: boolean;
}

/** One tool. */
export interface Tool {
  /** Its name (what `tools/call` names). */
  readonly name: string;
  /** What it does, for the client's model. */
  readonly description: string;
  /** Its arguments (no others are accepted). */
  readonly args: Readonly<Record<string, ArgSpec>>;
  /** Whether it only reads (MCP's `readOnlyHint`). */
  readonly readOnly: boolean;
  /** Runs it on checked arguments. */
  readonly call: (args: Readonly<Record<string, unknown>>) => Promise<ToolResult>;
}

/** Who the server says it is. */
export interface ServerInfo {
  readonly name: string;
  readonly version: string;
  /** Guidance for the client's model. */
  readonly instructions?: string;
}

/**
 * A tool error's result: the code and the message, as the client's model reads them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolError } from "./server.ts";
 * assert.equal(toolError("PATH_OUTSIDE_ROOT", "../x leaves the root").isError, true);
 * ```
 */
export function toolError(code: string, message: string): ToolResult {
  return {
    content: [{ type: "text", text: `${code}: ${message}` }],
    structuredContent: { error: { code, message } },
    isError: true,
  };
}

/**
 * A tool's `inputSchema` (JSON Schema, no extra properties) from its {@link ArgSpec}s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inputSchemaOf } from "./server.ts";
 * assert.deepEqual(inputSchemaOf({ path: { type: "string", description: "p", required: true } }).required, ["path"]);
 * ```
 */
export function inputSchemaOf(args: Readonly<Record<string, ArgSpec>>): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, a] of Object.entries(args)) {
    const p: Record<string, unknown> = a.type === "string-array"
      ? { type: "array", items: { type: "string" }, description: a.description }
      : { type: a.type, description: a.description };
    if (a.type === "integer" && a.min !== undefined) p.minimum = a.min;
    if (a.type === "integer" && a.max !== undefined) p.maximum = a.max;
    if (a.type === "string" && a.max !== undefined) p.maxLength = a.max;
    properties[name] = p;
  }
  const required = Object.entries(args).filter(([, a]) => a.required === true).map(([n]) => n);
  return { type: "object", properties, required, additionalProperties: false };
}

/**
 * The first problem with a call's arguments, or `null`. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { argsProblem } from "./server.ts";
 * assert.equal(argsProblem({ path: { type: "string", description: "p", required: true } }, {}), "path is required");
 * ```
 */
export function argsProblem(
  spec: Readonly<Record<string, ArgSpec>>,
  args: Readonly<Record<string, unknown>>,
): string | null {
  for (const name of Object.keys(args)) {
    if (!Object.hasOwn(spec, name)) {
      const known = Object.keys(spec);
      return `unknown argument ${JSON.stringify(name)}` +
        (known.length ? ` (it takes ${known.join(", ")})` : " (it takes none)");
    }
  }
  for (const [name, a] of Object.entries(spec)) {
    const v = args[name];
    if (v === undefined) {
      if (a.required === true) return `${name} is required`;
      continue;
    }
    if (a.type === "string-array") {
      if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
        return `${name} must be an array of strings`;
      }
      if (a.max !== undefined && v.length > a.max) return `${name} has more than ${a.max} items`;
    } else if (a.type === "object") {
      if (typeof v !== "object" || v === null || Array.isArray(v)) {
        return `${name} must be an object`;
      }
    } else if (a.type === "integer") {
      if (typeof v !== "number" || !Number.isSafeInteger(v)) return `${name} must be an integer`;
      if (a.min !== undefined && v < a.min) return `${name} must be at least ${a.min}`;
      if (a.max !== undefined && v > a.max) return `${name} must be at most ${a.max}`;
    } else if (
      (a.type === "string" && typeof v !== "string") ||
      (a.type === "boolean" && typeof v !== "boolean")
    ) {
      return `${name} must be a ${a.type}`;
    } else if (a.type === "string" && a.max !== undefined && (v as string).length > a.max) {
      return `${name} is longer than ${a.max} characters`;
    }
  }
  return null;
}

/**
 * The MCP server over `tools`, as a {@link RpcHandler} for {@link serveLines}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mcpHandler } from "./server.ts";
 * import { serveLines } from "./jsonrpc.ts";
 * const input = new Blob(['{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n']).stream();
 * const out: string[] = [];
 * const sink = { write: (b: Uint8Array) => Promise.resolve(void out.push(new TextDecoder().decode(b))) };
 * await serveLines(input, sink, mcpHandler({ name: "x", version: "1" }, []));
 * // Nothing is listed before the client's initialize.
 * assert.equal(JSON.parse(out[0]).error.code, -32600);
 * ```
 */
export function mcpHandler(info: ServerInfo, tools: readonly Tool[]): RpcHandler {
  const byName = new Map(tools.map((t) => [t.name, t]));
  let initialized = false;
  const listed = tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: inputSchemaOf(t.args),
    annotations: { readOnlyHint: t.readOnly, openWorldHint: false },
  }));
  return {
    notify: () => {
      // notifications/initialized, notifications/cancelled (calls are answered in order, each
      // quickly: nothing to cancel), and any other: nothing to do.
    },
    request(method, params) {
      if (method === "ping") return Promise.resolve({});
      if (method === "initialize") {
        if (initialized) {
          throw new RpcError(RPC.INVALID_REQUEST, "the session is initialized already");
        }
        const asked = params.protocolVersion;
        if (typeof asked !== "string") {
          throw new RpcError(
            RPC.INVALID_PARAMS,
            "initialize needs params.protocolVersion (a string)",
          );
        }
        initialized = true;
        return Promise.resolve({
          // The client's revision when this server speaks it, else the newest it does.
          protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0],
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: info.name, version: info.version },
          ...(info.instructions === undefined ? {} : { instructions: info.instructions }),
        });
      }
      if (!initialized && (method === "tools/list" || method === "tools/call")) {
        throw new RpcError(RPC.INVALID_REQUEST, `${method} before initialize: initialize first`);
      }
      if (method === "tools/list") return Promise.resolve({ tools: listed });
      if (method === "tools/call") return callTool(byName, params);
      throw new RpcError(RPC.METHOD_NOT_FOUND, `unknown method ${JSON.stringify(method)}`);
    },
  };
}

async function callTool(
  byName: ReadonlyMap<string, Tool>,
  params: Readonly<Record<string, unknown>>,
): Promise<ToolResult> {
  const name = params.name;
  if (typeof name !== "string") {
    throw new RpcError(RPC.INVALID_PARAMS, "tools/call needs params.name (a string)");
  }
  const tool = byName.get(name);
  if (tool === undefined) {
    throw new RpcError(
      RPC.INVALID_PARAMS,
      `unknown tool ${JSON.stringify(name)}; this server has ${[...byName.keys()].join(", ")}`,
    );
  }
  const args = params.arguments === undefined ? {} : params.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return toolError("ARGUMENT_INVALID", "arguments must be an object");
  }
  const problem = argsProblem(tool.args, args as Record<string, unknown>);
  if (problem !== null) return toolError("ARGUMENT_INVALID", `${name}: ${problem}`);
  try {
    return await tool.call(args as Record<string, unknown>);
  } catch (e) {
    if (e instanceof AgentTeamsError) return toolError(e.code, e.message);
    if (e instanceof Deno.errors.NotFound) {
      return toolError("NOT_FOUND", "no such file or directory");
    }
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      return toolError("PERMISSION_DENIED", "this server may not read that");
    }
    return toolError("INTERNAL", e instanceof Error ? e.message : String(e));
  }
}
