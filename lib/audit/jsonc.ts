/**
 * The audit's reader of the JSONC files VS Code, the Copilot CLI, Claude Code and Codex load
 * (settings, hooks files, MCP servers files): a read document, or where and why it stopped, never
 * a throw. Shared by `check_vscode.ts` and `check_mcp.ts`.
 *
 * @module
 */
import { type JsonDocument, JsonReadError, readJson } from "../json/mod.ts";

/**
 * Reads JSONC, or says where it stopped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readJsonc } from "./jsonc.ts";
 * assert.equal(readJsonc('{"a": 1, // one\n}').ok, true);
 * assert.equal(readJsonc('{"a": 1, "a": 2}').ok, false);
 * ```
 */
export function readJsonc(
  text: string,
): { ok: true; doc: JsonDocument } | {
  ok: false;
  line: number;
  column: number;
  why: string;
} {
  try {
    return { ok: true, doc: readJson(text, { dialect: "jsonc" }) };
  } catch (e) {
    if (e instanceof JsonReadError) {
      return { ok: false, line: e.position.line, column: e.position.column, why: e.message };
    }
    throw e;
  }
}
