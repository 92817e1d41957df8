/**
 * Tool names and what they grant: the spec's read-only tokens, and each framework's names mapped
 * onto them (lower-cased, cut at the first `(`), compared case-insensitively.
 *
 * @module
 */

/** The spec's read-only tokens. */
export const READ_ONLY_TOKENS: ReadonlySet<string> = new Set([
  "read",
  "search",
  "grep",
  "glob",
  "ls",
  "todo",
  "todowrite",
  "web",
  "fetch",
  "webfetch",
  "websearch",
  "retrieval",
  "codebase",
  "usages",
  "problems",
]);

/** Tokens that write. */
export const WRITE_TOKENS: ReadonlySet<string> = new Set([
  "edit",
  "write",
  "create",
  "multiedit",
  "notebookedit",
  "editfiles",
  "createfile",
  "createdirectory",
  "editnotebook",
  "newjupyternotebook",
]);

/** Tokens that are a shell (Copilot's `execute` and its aliases included). */
export const SHELL_TOKENS: ReadonlySet<string> = new Set([
  "execute",
  "bash",
  "shell",
  "powershell",
  "runcommands",
  "runinterminal",
  "terminal",
  "runtasks",
]);

/** Tokens that dispatch a subagent. */
export const DISPATCH_TOKENS: ReadonlySet<string> = new Set([
  "agent",
  "task",
  "custom-agent",
  "runsubagent",
]);

/** What a declared tool grants. */
export type ToolClass = "read" | "write" | "shell" | "dispatch" | "unknown";

/**
 * The class of a declared tool name: lower-cased and cut at the first `(` (`Bash(git:*)` is a
 * shell), then looked up. `mcp__…`, `*`, `github/*` and every other name are unknown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { classifyTool } from "./tools.ts";
 * assert.equal(classifyTool("Bash(git status)"), "shell");
 * assert.equal(classifyTool("mcp__x__y"), "unknown");
 * assert.equal(classifyTool("TodoWrite"), "read");
 * ```
 */
export function classifyTool(name: string): ToolClass {
  const cut = name.indexOf("(");
  const token = (cut >= 0 ? name.slice(0, cut) : name).trim().toLowerCase();
  if (READ_ONLY_TOKENS.has(token)) return "read";
  if (WRITE_TOKENS.has(token)) return "write";
  if (SHELL_TOKENS.has(token)) return "shell";
  if (DISPATCH_TOKENS.has(token)) return "dispatch";
  return "unknown";
}

/**
 * The narrowed Claude `tools:` value: `Read, Grep, Glob`, plus `TodoWrite` when a todo tool was
 * declared.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { narrowedClaudeTools } from "./tools.ts";
 * assert.equal(narrowedClaudeTools(["Read", "Bash", "TodoWrite"]), "Read, Grep, Glob, TodoWrite");
 * ```
 */
export function narrowedClaudeTools(declared: readonly string[]): string {
  const todo = declared.some((d) => /^todo(write)?$/i.test(d.trim()));
  return todo ? "Read, Grep, Glob, TodoWrite" : "Read, Grep, Glob";
}

/**
 * The narrowed Copilot `tools:` value: the declared tokens among read, search and todo, read
 * always, single-quoted in a flow list.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { narrowedCopilotTools } from "./tools.ts";
 * assert.equal(narrowedCopilotTools(["search", "editFiles"]), "['read', 'search']");
 * ```
 */
export function narrowedCopilotTools(declared: readonly string[]): string {
  const has = new Set(declared.map((d) => d.trim().toLowerCase()));
  const kept = ["read", ...["search", "todo"].filter((t) => has.has(t))];
  return `[${kept.map((t) => `'${t}'`).join(", ")}]`;
}
