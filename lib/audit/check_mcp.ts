/**
 * Claude Code's project MCP servers (`.mcp.json`), from its published package (2.1.42 `cli.js`):
 * `LJ("project")` merges the `mcpServers` of every `.mcp.json` from the session's directory up to
 * `/`; `uJ6` approves a server when any settings file has `enableAllProjectMcpServers` or names it
 * in `enabledMcpjsonServers`, and in every non-interactive session (`claude -p`) while the
 * project settings are read, else when the user says yes to "New MCP server found in .mcp.json".
 * An approved server is a program Claude Code starts as the user at the session's start, outside
 * its sandbox, whatever any agent's `tools:` say. Under the switch the audit accepts only this
 * tool's own servers (docs/mcp.md), each as exactly `{command, args}` (an optional `type:
 * "stdio"`): `agentteams mcp readfs --root .`, `agentteams mcp runner --agent SLUG`, or the
 * readfs line `agentteams permissions mcp readfs` prints (`lib/mcp/readfs_launch.ts`). Anything
 * else (another program, an `env` or `cwd`, a `${VAR}` Claude Code would expand, a remote
 * server, a file that does not read) is `CLAUDE_MCP`. VS Code's workspace servers
 * (`.vscode/mcp.json`, its `servers`: started as the user once trusted, one click away, per
 * code.visualstudio.com/docs/copilot/reference/mcp-configuration) are judged the same way
 * (`VSCODE_MCP`), and so are the servers of the workspace settings' `mcp` section, the legacy form
 * of that file (`check_vscode.ts`, through {@link checkMcpServers}). Pure.
 *
 * @module
 */
import { basename } from "../fs/path.ts";
import { READFS_LAUNCH, readfsLaunchProblem } from "../mcp/readfs_launch.ts";
import type { JsonDocument, JsonPath } from "../json/mod.ts";
import { type Spot, spot } from "./finding.ts";
import { readJsonc } from "./jsonc.ts";

/** The keys an accepted server may hold. */
const SERVER_KEYS: ReadonlySet<string> = new Set(["type", "command", "args"]);

/** An agent slug as `mcp runner --agent` takes it. */
const SLUG = /^[a-z0-9][a-z0-9_-]*$/i;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Why a server entry is not one of this tool's servers, or `null` when it is. */
function serverProblem(server: unknown, who: string): string | null {
  if (!isRecord(server)) return "it is not an object";
  const extra = Object.keys(server).filter((k) => !SERVER_KEYS.has(k));
  if (extra.length > 0) return `it sets ${extra.map((k) => `"${k}"`).join(", ")}`;
  if (server.type !== undefined && server.type !== "stdio") return "it is not a stdio server";
  const { command, args } = server;
  if (typeof command !== "string") return "it has no command";
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) {
    return "its args are not a list of strings";
  }
  const argv = args as string[];
  if ([command, ...argv].some((a) => a.includes("$"))) {
    return `${who} expands \${...} variables in its command and args`;
  }
  if (command === READFS_LAUNCH.cmd) {
    if (argv.length === 4 && argv[0] === "mcp" && argv[1] === "runner" && argv[2] === "--agent") {
      return SLUG.test(argv[3]) ? null : `${JSON.stringify(argv[3])} is not an agent slug`;
    }
    return readfsLaunchProblem(command, argv);
  }
  if (basename(command) === "deno") return readfsLaunchProblem(command, argv);
  return `it launches ${command}, not agentteams mcp readfs or agentteams mcp runner`;
}

/** Which host reads an MCP servers file: its key, its name in messages, the finding. */
const HOSTS = {
  CLAUDE_MCP: {
    key: "mcpServers",
    who: "Claude Code",
    approved: "by the project settings, in every claude -p session, or by one click",
  },
  VSCODE_MCP: {
    key: "servers",
    who: "VS Code",
    approved: "once the user trusts it, one click away",
  },
} as const;

/**
 * The findings of an MCP servers file, `.mcp.json` (Claude Code: `CLAUDE_MCP`, the default) or
 * `.vscode/mcp.json` (VS Code: `VSCODE_MCP`): each server that is not one of this tool's own
 * (see the module notes) is reported.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkMcpJson } from "./check_mcp.ts";
 * const ours = '{"mcpServers": {"r": {"command": "agentteams", "args": ["mcp", "readfs", "--root", "."]}}}';
 * assert.deepEqual(checkMcpJson(ours, ".mcp.json"), []);
 * const sh = '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "id"]}}}';
 * assert.equal(checkMcpJson(sh, ".mcp.json")[0].code, "CLAUDE_MCP");
 * ```
 */
export function checkMcpJson(
  text: string,
  rel: string,
  code: keyof typeof HOSTS = "CLAUDE_MCP",
): Spot[] {
  const host = HOSTS[code];
  const read = readJsonc(text);
  if (!read.ok) {
    return [
      spot(
        code,
        read.line,
        read.column,
        `${rel} does not read as JSON (${read.why}), so the audit can't tell which servers it ` +
          `starts: ${whyOf(code)}; fix or remove it`,
      ),
    ];
  }
  const v = read.doc.value;
  if (!isRecord(v)) return [spot(code, 1, 1, `${rel} is not a JSON object: ${whyOf(code)}`)];
  return checkMcpServers(read.doc, [host.key], v[host.key], rel, code);
}

/** Why a server that is not agentteams' own fails, for the host that starts it. */
function whyOf(code: keyof typeof HOSTS): string {
  const host = HOSTS[code];
  return `a program ${host.who} starts as the user, outside any sandbox, whatever the ` +
    `agents' tools: say (approved ${host.approved}), so no agent is proven read-only`;
}

/**
 * The findings of one servers object (`servers`, the value at `at` in `doc`, read from `rel`),
 * judged for the host of `code`: each server that is not one of this tool's own (see the module
 * notes) is reported where its name is; a `servers` that is not an object too. The one judgment
 * of `.mcp.json`, `.vscode/mcp.json` and the VS Code settings' `mcp.servers`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkMcpServers } from "./check_mcp.ts";
 * import { readJsonc } from "./jsonc.ts";
 * const read = readJsonc('{"mcp": {"servers": {"x": {"command": "sh", "args": []}}}}');
 * assert.ok(read.ok);
 * const v = read.doc.value as { mcp: { servers: unknown } };
 * const s = checkMcpServers(read.doc, ["mcp", "servers"], v.mcp.servers, "s.json", "VSCODE_MCP");
 * assert.equal(s[0].code, "VSCODE_MCP");
 * ```
 */
export function checkMcpServers(
  doc: JsonDocument,
  at: JsonPath,
  servers: unknown,
  rel: string,
  code: keyof typeof HOSTS,
): Spot[] {
  const host = HOSTS[code];
  const why = whyOf(code);
  if (servers === undefined || servers === null) return [];
  if (!isRecord(servers)) {
    const pos = doc.locate(at);
    const name = at.join(".");
    return [spot(code, pos.line, pos.column, `"${name}" in ${rel} is not an object: ${why}`)];
  }
  const out: Spot[] = [];
  for (const [name, server] of Object.entries(servers)) {
    const problem = serverProblem(server, host.who);
    if (problem === null) continue;
    const pos = doc.locate([...at, name], true);
    out.push(
      spot(
        code,
        pos.line,
        pos.column,
        `${rel} server ${JSON.stringify(name)} is not one of agentteams' own (${problem}): ` +
          `${why}; remove it, or launch agentteams mcp readfs or mcp runner as docs/mcp.md shows`,
      ),
    );
  }
  return out;
}
