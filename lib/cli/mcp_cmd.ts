/**
 * `agentteams mcp readfs [--root DIR]` and `agentteams mcp runner --agent SLUG`: stdio MCP
 * servers for agent sessions (lib/mcp/). Each serves its stdin until it closes; stdout carries
 * only JSON-RPC, and a problem before serving (a root that is no directory) is a refusal on
 * stderr, as for every command.
 *
 * @module
 */
import { keyDir } from "../crypto/keys.ts";
import { runnerKeyOnce } from "../queue/runner_key.ts";
import { UsageError } from "../errors.ts";
import { SLUG_RE } from "../layout.ts";
import { RUNNER_SERVER_NAME, runnerTools } from "../mcp/runner.ts";
import { resolve } from "../fs/path.ts";
import { serveLines, writerSink } from "../mcp/jsonrpc.ts";
import { openRoot } from "../mcp/read_root.ts";
import { readfsTools } from "../mcp/readfs.ts";
import { mcpHandler } from "../mcp/server.ts";
import { VERSION } from "./version.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * The root `mcp readfs` serves: `--root` (relative to the current directory, as a host launches
 * it from the workspace), else the project.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { readfsRootOf } from "./mcp_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams mcp readfs --root .` run from /work/p
 * readfsRootOf(ctx); // "/work/p"
 * ```
 */
export function readfsRootOf(ctx: Ctx): string {
  const root = ctx.parsed.flags.root;
  return typeof root === "string" ? resolve(root) : ctx.project;
}

/** The key dir `readfs` refuses to read, or `null` when the environment names none usable. */
function keyDirOrNull(ctx: Ctx): string | null {
  try {
    return keyDir(ctx.env);
  } catch {
    return null;
  }
}

/**
 * Runs `mcp readfs` until stdin closes.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { mcpReadfs } from "./mcp_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams mcp readfs --root .`
 * (await mcpReadfs(ctx)).exit; // 0, once the client closes stdin
 * ```
 */
export async function mcpReadfs(ctx: Ctx): Promise<Outcome> {
  const root = openRoot(readfsRootOf(ctx), keyDirOrNull(ctx));
  const handler = mcpHandler({
    name: "agentteams_readfs",
    version: VERSION,
    instructions: "Read-only access to the project: read_file (with the sha256 a change " +
      "proposal's base_sha256 needs), list_dir, find, grep, stat. Paths are relative to the " +
      "project root; the control plane (.git, .agentteams, .claude, ...) is not readable.",
  }, readfsTools(root));
  await serveLines(Deno.stdin.readable, writerSink(Deno.stdout), handler);
  return { exit: 0 };
}

/**
 * The agent `mcp runner` speaks for (`--agent`, a slug).
 *
 * @throws {UsageError} `USAGE` when it is missing or not a slug
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { runnerAgentOf } from "./mcp_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams mcp runner --agent worker`
 * runnerAgentOf(ctx); // "worker"
 * ```
 */
export function runnerAgentOf(ctx: Ctx): string {
  const agent = ctx.parsed.flags.agent;
  if (typeof agent !== "string" || !SLUG_RE.test(agent)) {
    throw new UsageError(
      "USAGE",
      `mcp runner needs --agent SLUG, the agent it speaks for (got ${
        JSON.stringify(agent ?? null)
      })`,
    );
  }
  return agent;
}

/**
 * Runs `mcp runner` until stdin closes.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { mcpRunner } from "./mcp_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams mcp runner --agent worker`
 * (await mcpRunner(ctx)).exit; // 0, once the client closes stdin
 * ```
 */
export async function mcpRunner(ctx: Ctx): Promise<Outcome> {
  const agent = runnerAgentOf(ctx);
  const handler = mcpHandler(
    {
      name: RUNNER_SERVER_NAME,
      version: VERSION,
      instructions:
        `Requests to the operator's runner for agent ${agent}, each with your dispatch nonce: ` +
        "write_file proposes a file's new content and delete_file its deletion (written or " +
        "staged for the orchestrator's approval, as your grant says); run_command asks it to " +
        "run one allowlisted command; request_status fetches a result that took longer than " +
        "the wait.",
    },
    runnerTools({
      root: ctx.project,
      agent,
      runnerPublic: runnerKeyOnce(ctx.project, ctx.env),
      now: ctx.now,
    }),
  );
  await serveLines(Deno.stdin.readable, writerSink(Deno.stdout), handler);
  return { exit: 0 };
}
