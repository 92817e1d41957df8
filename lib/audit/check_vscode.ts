/**
 * What VS Code and the Copilot CLI load from a project besides its agent files, that gives every
 * Copilot agent a shell or brings agents the audit does not read (probe 22c C2). Taken from the
 * VS Code sources (`src/vs/workbench/contrib/chat/common/promptSyntax/config/config.ts`
 * `PromptsConfig`, `promptFileLocations.ts` `DEFAULT_HOOK_FILE_PATHS`, `chat.contribution.ts`:
 * `chat.useHooks` on by default since 1.109) and the Copilot CLI's hooks (every `*.json` in
 * `.github/hooks/`).
 *
 * - **A hooks file** (`.github/hooks/*.json`): shell commands the host runs around every agent's
 *   tool calls, whatever its `tools:` say (`COPILOT_HOOKS`). Read as JSONC (VS Code's reader takes
 *   comments and trailing commas; the CLI's strict JSON is a subset); anything but an object whose
 *   `hooks` is empty (and which holds nothing but `version` besides) is reported, a file that does
 *   not read included: VS Code's own parser never refuses a file, it uses what it could parse.
 * - **The workspace settings** (`.vscode/settings.json`, and a `*.code-workspace` file's
 *   `settings`, which apply when the operator opens it): `chat.agentFilesLocations` and the
 *   legacy `chat.modeFilesLocations` (more agent folders), `chat.hookFilesLocations` (hook files
 *   anywhere), `chat.useCustomizationsInParentRepositories` (the parent repositories' agents and
 *   hooks), and `chat.pluginLocations` / `chat.plugins.paths` (agent plugins) are reported
 *   (`VSCODE_EXTRA_AGENTS`) unless they add nothing (an empty object, every entry `false`, the
 *   flag `false`). Keys count dotted or nested (`"chat": {"agentFilesLocations": ...}`) and in a
 *   language block, as written or escaped, and below a dotted key (VS Code splits a key at its
 *   dots: `"chat.agentFilesLocations.x": true` is that setting); a file that does not read is
 *   reported too.
 * - **MCP servers in the workspace settings** (`VSCODE_MCP`), from the VS Code sources
 *   (`services/configuration/common/configuration.ts`: `.vscode/mcp.json` is the standalone file
 *   of the `mcp` setting; `mcpWorkbenchManagementService.ts`: a workspace file's servers sit at
 *   `settings.mcp`; vscode-docs `docs/copilot/chat/mcp-servers.md` of 1.99: `"mcp": {"servers":
 *   ...}` in settings.json): each server of `mcp.servers` is judged as a `.vscode/mcp.json`
 *   server is (`check_mcp.ts`). And `chat.mcp.discovery.enabled` (`mcp/common/mcpConfiguration.ts`
 *   `DiscoverySource`: Claude Desktop, Windsurf, Cursor's global and workspace `.cursor/mcp.json`)
 *   makes VS Code load the servers those applications configure, which the audit does not read:
 *   it is reported unless it is `false`, the one value off in every release (1.99
 *   `nativeMcpDiscoveryAbstract.ts` took any object as on, later releases an entry unless it is
 *   `false`, current ones an entry that is `true`).
 *
 * @module
 */
import type { JsonDocument, JsonPath } from "../json/mod.ts";
import { hooksEmpty } from "../policy/mod.ts";
import { checkMcpServers } from "./check_mcp.ts";
import { type Spot, spot } from "./finding.ts";
import { readJsonc } from "./jsonc.ts";

/** The workspace settings that make VS Code load agents or hooks from elsewhere. */
export const VSCODE_LOADING_KEYS: readonly string[] = [
  "chat.agentFilesLocations",
  "chat.modeFilesLocations",
  "chat.hookFilesLocations",
  "chat.useCustomizationsInParentRepositories",
  "chat.pluginLocations",
  "chat.plugins.paths",
];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Who runs a hooks file, by the finding it is reported as. */
const HOOK_RUNNERS = {
  COPILOT_HOOKS: "VS Code and the Copilot CLI run",
  CODEX_HOOKS: "Codex runs (once the user trusts it, or at once where hook trust is bypassed)",
} as const;

/**
 * The findings of a hooks file: `.github/hooks/*.json` (VS Code, the Copilot CLI:
 * `COPILOT_HOOKS`) or `.codex/hooks.json` (Codex, `codex-rs/hooks/src/engine/discovery.rs`
 * `load_hooks_json`: `CODEX_HOOKS`). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkHooksFile } from "./check_vscode.ts";
 * assert.deepEqual(checkHooksFile('{"version": 1, "hooks": {}}', ".github/hooks/h.json", "COPILOT_HOOKS"), []);
 * assert.equal(
 *   checkHooksFile('{"hooks": {"PreToolUse": [{"command": "sh"}]}}', ".codex/hooks.json", "CODEX_HOOKS")[0].code,
 *   "CODEX_HOOKS",
 * );
 * ```
 */
export function checkHooksFile(
  text: string,
  rel: string,
  code: keyof typeof HOOK_RUNNERS,
): Spot[] {
  const runs = HOOK_RUNNERS[code];
  const why = `so no agent is proven read-only; remove ${rel} (agentteams installs no hook)`;
  const read = readJsonc(text);
  if (!read.ok) {
    return [
      spot(
        code,
        read.line,
        read.column,
        `${rel} does not read as JSON (${read.why}), but a host may still use what it can parse ` +
          `of a hooks file (${runs} its commands around every agent's tool calls), ${why}`,
      ),
    ];
  }
  const v = read.doc.value;
  if (!isRecord(v)) {
    return [spot(code, 1, 1, `${rel} is not an object the audit can read, ${why}`)];
  }
  const out: Spot[] = [];
  for (const key of Object.keys(v)) {
    if (key === "version" || (key === "hooks" && hooksEmpty(v.hooks))) continue;
    const at = read.doc.locate([key], true);
    const events = key === "hooks" && isRecord(v.hooks)
      ? ` (${Object.keys(v.hooks).join(", ")})`
      : "";
    out.push(
      spot(
        code,
        at.line,
        at.column,
        `"${key}"${events}: ${runs} a hooks file's commands around every agent's tool calls, ` +
          `whatever its tools: say, ${why}`,
      ),
    );
  }
  return out;
}

/**
 * Every value of `v` with its key path joined by dots (nested and language blocks included), the
 * first `skip` keys of `at` left out of the name.
 */
function dotted(
  v: Record<string, unknown>,
  at: JsonPath,
  skip: number,
  out: [string, JsonPath, unknown][],
): void {
  for (const [k, x] of Object.entries(v)) {
    const path = [...at, k];
    const name = path.slice(skip).filter((p) => !/^\[.*\]$/.test(String(p))).join(".");
    out.push([name, path, x]);
    if (isRecord(x)) dotted(x, path, skip, out);
  }
}

/** Whether a loading setting's value adds nothing: absent, an empty object, each entry false. */
function addsNothing(x: unknown): boolean {
  if (x === false || x === null || x === undefined) return true;
  if (isRecord(x)) {
    return Object.values(x).every((e) => e === false || String(e).trim().toLowerCase() === "false");
  }
  return Array.isArray(x) && x.length === 0;
}

/** The setting that makes VS Code load the MCP servers other applications configure. */
const MCP_DISCOVERY = "chat.mcp.discovery.enabled";
/** The settings' own MCP servers: the `mcp` section's `servers` (`.vscode/mcp.json`'s, inline). */
const MCP_SERVERS = "mcp.servers";

/**
 * The findings of one setting about MCP servers, or null when `name` is none: the servers of the
 * `mcp` section (judged by `check_mcp.ts` `checkMcpServers`, as `.vscode/mcp.json`'s are), a
 * server written as a dotted key below it (VS Code splits a key at its dots: `"mcp.servers.x"` is
 * server `x`, or part of it), and the discovery setting when it is not `false`.
 */
function mcpSpots(
  doc: JsonDocument,
  name: string,
  path: JsonPath,
  x: unknown,
  rel: string,
): Spot[] | null {
  if (name === MCP_SERVERS) return checkMcpServers(doc, path, x, rel, "VSCODE_MCP");
  const at = doc.locate(path, true);
  if (name.startsWith(`${MCP_SERVERS}.`)) {
    return [
      spot(
        "VSCODE_MCP",
        at.line,
        at.column,
        `"${name}" in ${rel} defines an MCP server (or part of one) through a dotted key, which ` +
          "the audit does not piece together; VS Code starts its servers as the user, outside " +
          `any sandbox: write the servers as an object under "${MCP_SERVERS}" or in ` +
          ".vscode/mcp.json, each one agentteams' own (docs/mcp.md)",
      ),
    ];
  }
  if (name !== MCP_DISCOVERY && !name.startsWith(`${MCP_DISCOVERY}.`)) return null;
  if (name === MCP_DISCOVERY && x === false) return [];
  return [
    spot(
      "VSCODE_MCP",
      at.line,
      at.column,
      `"${MCP_DISCOVERY}" is not false in ${rel}: VS Code then loads the MCP servers ` +
        "configured for other applications (Claude Desktop, Windsurf, Cursor, this workspace's " +
        ".cursor/mcp.json), which the audit does not read, and starts them as the user, outside " +
        "any sandbox, so no agent is proven read-only (1.99 takes any value but false as on, an " +
        `object of false entries too); set it to false or remove it from ${rel}`,
    ),
  ];
}

/**
 * The findings of the VS Code workspace settings (`.vscode/settings.json`, a `*.code-workspace`
 * file's `settings`): the loading keys (`VSCODE_EXTRA_AGENTS`), and the MCP servers of the `mcp`
 * section and the discovery setting (`VSCODE_MCP`). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkVscodeSettings } from "./check_vscode.ts";
 * assert.deepEqual(checkVscodeSettings('{"editor.tabSize": 2}', ".vscode/settings.json"), []);
 * assert.equal(
 *   checkVscodeSettings('{"chat.agentFilesLocations": {"x": true}}', ".vscode/settings.json")[0].code,
 *   "VSCODE_EXTRA_AGENTS",
 * );
 * assert.equal(
 *   checkVscodeSettings('{"chat.mcp.discovery.enabled": true}', ".vscode/settings.json")[0].code,
 *   "VSCODE_MCP",
 * );
 * ```
 */
export function checkVscodeSettings(text: string, rel: string): Spot[] {
  const read = readJsonc(text);
  if (!read.ok) {
    return [
      spot(
        "VSCODE_EXTRA_AGENTS",
        read.line,
        read.column,
        `${rel} does not read as JSONC (${read.why}), but VS Code uses what it can parse, and ` +
          `its chat settings may load agents and hooks the audit does not read; fix ${rel}`,
      ),
    ];
  }
  if (!isRecord(read.doc.value)) return [];
  // A workspace file (`*.code-workspace`) holds its settings under `settings`.
  const workspace = rel.endsWith(".code-workspace");
  const settings = workspace ? read.doc.value.settings : read.doc.value;
  if (!isRecord(settings)) return [];
  const all: [string, JsonPath, unknown][] = [];
  dotted(settings, workspace ? ["settings"] : [], workspace ? 1 : 0, all);
  const out: Spot[] = [];
  // A key judged as a whole (the servers, the discovery setting): what lies below it is not
  // judged again.
  const judged: JsonPath[] = [];
  for (const [name, path, x] of all) {
    if (judged.some((j) => j.every((k, i) => path[i] === k))) continue;
    const mcp = mcpSpots(read.doc, name, path, x, rel);
    if (mcp !== null) {
      judged.push(path);
      out.push(...mcp);
      continue;
    }
    // VS Code splits a key at its dots (`toValuesTree`): `"chat.agentFilesLocations.x": true`
    // is the setting `{"x": true}`.
    const key = VSCODE_LOADING_KEYS.find((k) => name === k || name.startsWith(`${k}.`));
    if (key === undefined) continue;
    judged.push(path);
    if (addsNothing(name === key ? x : { [name.slice(key.length + 1)]: x })) continue;
    const at = read.doc.locate(path, true);
    out.push(
      spot(
        "VSCODE_EXTRA_AGENTS",
        at.line,
        at.column,
        `"${name}" makes VS Code load agents or hooks from places the audit does not read, so ` +
          `no agent is proven read-only; remove it from ${rel} (or audit those files where ` +
          "they live and keep them out of this project)",
      ),
    );
  }
  return out;
}
