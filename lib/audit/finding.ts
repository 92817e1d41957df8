/**
 * The audit's findings and its rule table: every code the AR_WRITE_POLICY audit can report, with
 * its severity, a short and a full description and the help text (the SARIF rules are this table).
 *
 * @module
 */

/** A finding's severity: an error fails the audit under the switch; a warning prints. */
export type Severity = "error" | "warning";

/** The frameworks the audit reads (the brief's `write_policy_frameworks` names). */
export type Framework =
  | "claude"
  | "copilot"
  | "goose"
  | "codex"
  | "agents-md"
  | "other";

/** One problem in one file, at a line and column (1-based). */
export interface Finding {
  /** The stable code, e.g. `TOOL_WRITE`. */
  readonly code: string;
  /** Error or warning. */
  readonly severity: Severity;
  /** The file, relative to the audited directory (`/`-separated). */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
  /** The framework the file belongs to. */
  readonly framework: Framework;
  /** What is wrong and what to do, naming the file's own text. */
  readonly message: string;
  /** Whether the switch covers this file (only then does an error fail the audit). */
  readonly enforced: boolean;
}

/** A rule of the table. */
export interface Rule {
  /** Default severity. */
  readonly severity: Severity;
  /** One line. */
  readonly short: string;
  /** Why it matters. */
  readonly full: string;
  /** What to do. */
  readonly help: string;
}

const READ_HELP = "Rewrite the front matter in plain block YAML: one `key: value` per line, " +
  "no anchors, aliases, tags, merge keys, explicit `?` keys or quoted keys.";

/** Every rule, by code. */
export const RULES: Readonly<Record<string, Rule>> = {
  FILE_UNREADABLE: {
    severity: "error",
    short: "The agent file can't be read.",
    full: "The audit could not read this agent file, but the host may still load it as an agent.",
    help: "Make it a readable regular file.",
  },
  FILE_NOT_UTF8: {
    severity: "error",
    short: "The agent file is not UTF-8.",
    full: "A file that is not UTF-8 can't be audited, but the host may still load it as an agent.",
    help: "Replace it with a regular UTF-8 file.",
  },
  FILE_SYMLINK: {
    severity: "error",
    short: "A symlink where an agent file or directory is expected.",
    full: "Under the switch the audit doesn't follow symlinks, but the host may still load the " +
      "target as an agent.",
    help: "Replace it with a regular UTF-8 file.",
  },
  FM_MISSING: {
    severity: "error",
    short: "No front matter.",
    full: "The agent file has no `---` front matter, so it declares no tools and may inherit all.",
    help: "Start the file with a `---` front matter that declares `tools:`.",
  },
  FM_UNTERMINATED: {
    severity: "error",
    short: "Unterminated front matter.",
    full: "The front matter opens with `---` but never closes, so hosts read it differently.",
    help: "Close the front matter with a `---` line.",
  },
  FM_BOM: {
    severity: "error",
    short: "A byte-order mark before the front matter.",
    full: "A BOM before the opening `---` can hide the front matter from the host.",
    help: "Save the file as UTF-8 without a BOM.",
  },
  FM_CRLF: {
    severity: "error",
    short: "CRLF line endings in the front matter.",
    full: "CRLF line endings can hide the front matter's delimiters from the host.",
    help: "Convert the file to LF line endings.",
  },
  FM_LENIENT: {
    severity: "warning",
    short: "A front-matter value holds `: ` unquoted.",
    full: "The front matter parses only once such one-line values are quoted (as Claude Code " +
      "reads it); a host that parses it strictly drops the whole front matter, `tools:` with it.",
    help: 'Quote the value (description: "...").',
  },
  FM_AMBIGUOUS: {
    severity: "error",
    short: "The tools an agent gets depend on which host version or parser reads the file.",
    full: "The host models (lib/audit/hosts/) read this file differently from the audit's strict " +
      "reading or from each other (the host's `---` boundary, its retry after a YAML error, its " +
      "YAML parser, an older host version), and at least one reading grants a tool beyond " +
      "read-only, or every tool. The audit judges the widest reading; such a file is not proven " +
      "read-only.",
    help:
      "Write the front matter so every reading agrees: no `---` inside values, no `: ` or `#` " +
      "unquoted in one-line values, `tools:` as one plain line of comma-separated names.",
  },
  YAML_SYNTAX: {
    severity: "error",
    short: "The YAML does not parse.",
    full: "A host that fails to parse the front matter may load the agent with every tool.",
    help: "Fix the YAML (quote values that contain `: `).",
  },
  YAML_NOT_MAPPING: {
    severity: "error",
    short: "The YAML is not a mapping.",
    full: "The front matter or recipe must be a mapping of keys.",
    help: "Write it as `key: value` lines.",
  },
  YAML_ANCHOR: {
    severity: "error",
    short: "A YAML anchor.",
    full: "Anchors let one value stand for another; the audit refuses them.",
    help: READ_HELP,
  },
  YAML_ALIAS: {
    severity: "error",
    short: "A YAML alias.",
    full: "An alias repeats an anchored value elsewhere; hosts may expand it differently.",
    help: READ_HELP,
  },
  YAML_MERGE_KEY: {
    severity: "error",
    short: "A YAML merge key `<<`.",
    full: "Some hosts apply `<<` merges and some don't, so it can hide a key.",
    help: READ_HELP,
  },
  YAML_EXPLICIT_KEY: {
    severity: "error",
    short: "An explicit `?` key.",
    full: "An explicit key can hide a key from a line-based reader.",
    help: READ_HELP,
  },
  YAML_TAG: {
    severity: "error",
    short: "A YAML tag.",
    full: "Tags change how a value is read, differently per host.",
    help: READ_HELP,
  },
  YAML_QUOTED_KEY: {
    severity: "error",
    short: "A quoted or escaped key.",
    full: "A quoted key (possibly with escapes) can spell a capability key the eye doesn't see.",
    help: READ_HELP,
  },
  YAML_COMPLEX_KEY: {
    severity: "error",
    short: "A key that is not a plain scalar.",
    full: "A collection used as a key can't be read the same way by every host.",
    help: READ_HELP,
  },
  YAML_DUPLICATE_KEY: {
    severity: "error",
    short: "A duplicated key.",
    full: "Hosts differ on whether the first or last duplicate wins.",
    help: "Keep one of the duplicates.",
  },
  YAML_TAB_INDENT: {
    severity: "error",
    short: "A tab in indentation.",
    full: "Tabs in YAML indentation are read differently by different parsers.",
    help: "Indent with spaces.",
  },
  YAML_MULTI_DOC: {
    severity: "error",
    short: "More than one YAML document.",
    full: "Hosts read only one document, not always the same one.",
    help: "Keep one document (no `---` or `...` separators).",
  },
  TOML_SYNTAX: {
    severity: "error",
    short: "The TOML does not parse.",
    full: "Invalid TOML can't be audited; the host may read part of it.",
    help: "Fix the TOML.",
  },
  TOOLS_MISSING: {
    severity: "error",
    short: "No `tools:` declaration.",
    full: "Without `tools:` the agent inherits every tool, writes included.",
    help: "Declare `tools:` with read-only tools only (`agentteams audit --fix` can).",
  },
  TOOLS_NULL: {
    severity: "error",
    short: "`tools:` is null.",
    full: "Hosts read a null `tools:` differently: no tools (Claude Code), a refused file " +
      "(Copilot CLI), or no declaration, so the agent may inherit every tool.",
    help: "Declare the read-only tools.",
  },
  TOOLS_EMPTY: {
    severity: "error",
    short: "`tools:` is empty.",
    full: "An empty `tools:` list is read by some hosts as no restriction.",
    help: "Declare the read-only tools.",
  },
  TOOLS_SHAPE: {
    severity: "error",
    short: "`tools:` has a shape the audit can't read the way the host does.",
    full: "Only a one-line value or a clean `- item` block list is read the same by every host.",
    help: "Write `tools:` on one line, e.g. `tools: Read, Grep, Glob`.",
  },
  TOOL_WRITE: {
    severity: "error",
    short: "A write tool.",
    full: "Non-orchestrator agents return proposals instead of writing.",
    help: "Drop the write tools (`agentteams audit --fix` narrows the list).",
  },
  TOOL_DISPATCH: {
    severity: "error",
    short: "A dispatch tool.",
    full: "Dispatch (Task/agent) can start a subagent that writes.",
    help: "Drop the dispatch tool.",
  },
  TOOL_UNKNOWN: {
    severity: "error",
    short: "A tool the audit can't classify as read-only.",
    full: "Only known read-only tools are allowed; MCP tools and `*` are refused.",
    help: "Drop the tool, or use only read-only tools.",
  },
  TOOL_SHELL: {
    severity: "error",
    short: "A shell tool.",
    full: "A shell can write anything; under the switch commands go through the runner.",
    help: "Drop the shell tool; ask for commands with a command request.",
  },
  TOOL_SHELL_WARN: {
    severity: "warning",
    short: "A shell tool (warning, can't be silenced).",
    full: "Agents hold no shell under the switch: commands go through the runner's confined " +
      "--run-request. This warning can't be silenced.",
    help: "Drop Bash from `tools:`.",
  },
  CAPABILITY_KEY: {
    severity: "error",
    short: "A capability key beside `tools:`.",
    full:
      "Capability keys (mcpServers, hooks, skills, memory, allowed-tools, capabilities) grant " +
      "what `tools:` doesn't show.",
    help: "Remove the key.",
  },
  PERMISSION_MODE: {
    severity: "error",
    short: "A permissionMode other than default or plan.",
    full: "Other permission modes let the agent act without asking.",
    help: "Use `permissionMode: default` or remove it.",
  },
  GOOSE_EXTENSIONS_MISSING: {
    severity: "error",
    short: "The recipe has no `extensions`.",
    full: "A recipe without `extensions` runs with the user's enabled extensions, writes included.",
    help: "Declare `extensions:` with agentteams_readfs only.",
  },
  GOOSE_WRITE: {
    severity: "error",
    short: "A Goose extension that can edit or write.",
    full: "The developer extension's write/edit tools (or every tool, when `available_tools` " +
      "is missing or `[]`) let the agent write.",
    help: "Use agentteams_readfs instead of developer.",
  },
  GOOSE_SUMMON: {
    severity: "error",
    short: "Goose summon (subagents).",
    full: "summon starts subagents that may write.",
    help: "List summon off (`available_tools: [__none__]`) or remove it.",
  },
  GOOSE_SUB_RECIPES: {
    severity: "error",
    short: "Goose sub_recipes.",
    full: "Sub-recipes run other recipes with their own extensions.",
    help: "Remove `sub_recipes`.",
  },
  GOOSE_RETRY: {
    severity: "error",
    short: "A Goose `retry` block.",
    full: "goose runs a retry block's checks and on_failure as shell commands.",
    help: "Remove `retry`.",
  },
  GOOSE_TEMPLATE: {
    severity: "error",
    short: "Jinja outside the prompt text.",
    full: "goose renders the recipe as a template before reading it, so `{{`, `{%` or `{#` " +
      "outside the instructions and prompt can change what it grants.",
    help: "Remove the template syntax outside `instructions` and `prompt`.",
  },
  GOOSE_EXTENSION: {
    severity: "error",
    short: "A Goose extension the audit doesn't allow.",
    full: "Under the switch a recipe may carry only developer, analyze (listed off), summon " +
      "(listed off) and agentteams_readfs; an operator MCP server can't be judged.",
    help: "Remove the extension.",
  },
  GOOSE_EXTENSION_KEY: {
    severity: "error",
    short: "A Goose extension key the audit doesn't allow.",
    full: "Keys such as `envs` or `cmd` on a built-in extension can change what it runs.",
    help: "Remove the key.",
  },
  GOOSE_BUILTIN_TYPE: {
    severity: "error",
    short: "A built-in Goose extension name with the wrong `type`.",
    full: "A built-in name with another type runs something else under a trusted name.",
    help: "developer is `builtin` (or `platform`); analyze and summon are `platform`.",
  },
  GOOSE_READFS: {
    severity: "error",
    short: "agentteams_readfs does not launch the readfs server.",
    full: "agentteams_readfs is trusted by name only with a known launch and read tools.",
    help: "Use `type: stdio` with `cmd: agentteams`, `args: [mcp, readfs, --root, .]` (or the " +
      "line `agentteams permissions mcp readfs --root .` prints) and read tools only (docs/mcp.md).",
  },
  GOOSE_ANALYZE_ON: {
    severity: "error",
    short: "Goose analyze is on.",
    full: "analyze reads outside the workspace, and goose adds it beside developer.",
    help: "List it off: `available_tools: [__none__]`.",
  },
  GOOSE_SHELL: {
    severity: "warning",
    short: "A Goose shell (warning, can't be silenced).",
    full: "The developer shell runs commands unconfined.",
    help: "Drop `shell` from developer's available_tools.",
  },
  CODEX_SANDBOX: {
    severity: "error",
    short: "sandbox_mode other than read-only.",
    full: 'A Codex agent must declare `sandbox_mode = "read-only"`; a missing key inherits ' +
      "the parent's mode.",
    help: 'Set `sandbox_mode = "read-only"` (`agentteams audit --fix` can).',
  },
  CODEX_MCP: {
    severity: "error",
    short: "Codex mcp_servers.",
    full: "sandbox_mode does not confine MCP servers.",
    help: "Remove `mcp_servers`.",
  },
  CLAUDE_MCP: {
    severity: "error",
    short: "A Claude Code project MCP server that is not agentteams' own.",
    full: "Claude Code starts each server of a .mcp.json as the user, outside its sandbox, " +
      "whatever the agents' tools: say: approved by the project settings, in every claude -p " +
      "session, or by one click.",
    help: "Remove it, or launch `agentteams mcp readfs` or `agentteams mcp runner` as " +
      "docs/mcp.md shows.",
  },
  VSCODE_MCP: {
    severity: "error",
    short: "A VS Code workspace MCP server that is not agentteams' own, or MCP discovery on.",
    full: "VS Code starts each server of .vscode/mcp.json and of the workspace settings' " +
      "mcp.servers as the user, outside any sandbox, whatever the agents' tools: say, once the " +
      "user trusts it; chat.mcp.discovery.enabled, unless false, adds the servers other " +
      "applications configure (Claude Desktop, Cursor, Windsurf).",
    help: "Remove it, or launch `agentteams mcp readfs` or `agentteams mcp runner` as " +
      "docs/mcp.md shows; set chat.mcp.discovery.enabled to false.",
  },
  CLAUDE_SKILL_HOOKS: {
    severity: "error",
    short: "A Claude Code project skill or command declares hooks.",
    full: "Claude Code runs a skill's hooks, once the session runs the skill (its model may, on " +
      "its own), as shell commands around every tool call, outside its sandbox.",
    help: "Remove `hooks` from the skill's or command's front matter.",
  },
  CODEX_CONFIG_SANDBOX: {
    severity: "warning",
    short: "The project's .codex/config.toml sets a sandbox_mode other than read-only.",
    full: "The session's sandbox governs every agent, spawned ones included.",
    help: 'Set `sandbox_mode = "read-only"` or launch through the confined launcher.',
  },
  AGENTS_MD: {
    severity: "error",
    short: "AGENTS.md can't be enforced.",
    full: 'write_policy "orchestrator-only" cannot be enforced on agents-md: it declares no ' +
      "per-agent tools.",
    help: "Use a framework with per-agent tool declarations.",
  },
  ORCH_SECTION_MISSING: {
    severity: "error",
    short: 'The orchestrator lacks its "Write Policy: Applying Proposals" section.',
    full: "The orchestrator is the only writer; its duties are in that section.",
    help: "Re-render it, or run `agentteams audit --fix`.",
  },
  AGENT_SECTION_MISSING: {
    severity: "error",
    short: 'The agent lacks its "Write Policy: Return Proposals, Never Write" section.',
    full: "The section overrides any write wording in the body.",
    help: "Re-render it, or run `agentteams audit --fix` (Claude, Copilot and Codex agents; " +
      "add it to a Goose recipe's instructions by hand).",
  },
  SETTINGS_DENY_MISSING: {
    severity: "warning",
    short: "The Claude project settings miss a deny rule.",
    full: "The session sandbox keeps the key and raw nonces out of the agents' reach only with " +
      "these deny rules.",
    help: "Add the rule to permissions.deny in .claude/settings.json.",
  },
  SETTINGS_HOOKS: {
    severity: "error",
    short: "The Claude project settings run hooks or commands of their own.",
    full: "A hook is a shell command Claude Code runs on tool events for every agent of the " +
      "session, whatever its tools: say (one that runs a tool's input makes a read-only Grep a " +
      "shell); statusLine, fileSuggestion and the credential helpers (apiKeyHelper, " +
      "awsAuthRefresh, ...) are commands it runs as the user, and an env name outside its own " +
      "knobs (PATH, LD_PRELOAD, ...) reaches every program it starts; agentteams installs none.",
    help: 'Remove "hooks" and the command settings from .claude/settings.json and ' +
      ".claude/settings.local.json.",
  },
  SETTINGS_EXTRA_AGENTS: {
    severity: "error",
    short: "The Claude project settings load agents the audit does not read.",
    full: "enabledPlugins and extraKnownMarketplaces bring plugins (their agents hold any tools, " +
      "their hooks run around every call); permissions.additionalDirectories makes Claude Code " +
      "load each directory's .claude/agents/ as project agents.",
    help: "Remove them from .claude/settings.json and .claude/settings.local.json.",
  },
  COPILOT_HOOKS: {
    severity: "error",
    short: "A Copilot hooks file runs commands around every agent's tool calls.",
    full: "VS Code (chat.useHooks, on by default) and the Copilot CLI run the commands of " +
      ".github/hooks/*.json on tool events for every agent, whatever its tools: say; " +
      "agentteams installs none.",
    help: "Remove the file from .github/hooks/.",
  },
  CODEX_EXTERNAL: {
    severity: "error",
    short: "A Codex config replays its settings from a file the audit does not read.",
    full:
      "Codex builds the whole session from `[debug.config_lockfile] load_path` (sandbox_mode, " +
      "mcp_servers, hooks and notify included) in place of the project's config; a project " +
      "config may set it.",
    help: "Remove `load_path` from `[debug.config_lockfile]`.",
  },
  CODEX_HOOKS: {
    severity: "error",
    short: "Codex hooks or notify run commands around the agents' work.",
    full: ".codex/hooks.json, a [hooks] table or notify in a Codex config or agent TOML name " +
      "programs Codex runs as the user on tool events or after each turn, whatever " +
      "sandbox_mode says; agentteams installs none.",
    help: "Remove them.",
  },
  VSCODE_EXTRA_AGENTS: {
    severity: "error",
    short: "The VS Code workspace settings load agents or hooks the audit does not read.",
    full: "chat.agentFilesLocations, chat.modeFilesLocations, chat.hookFilesLocations, " +
      "chat.useCustomizationsInParentRepositories and the plugin locations make VS Code load " +
      "agent files, hook files and plugins from other folders.",
    help: "Remove them from .vscode/settings.json.",
  },
  SETTINGS_UNREADABLE: {
    severity: "warning",
    short: "The Claude project settings can't be read.",
    full: ".claude/settings.json is not valid JSON or not an object.",
    help: "Fix .claude/settings.json.",
  },
};

/** A finding's code, as the table names them. */
export type Code = keyof typeof RULES;

/** Where a finding is, before the file and framework are known. */
export interface Spot {
  /** The code. */
  readonly code: Code;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
  /** The message. */
  readonly message: string;
}

/**
 * A spot (code, line, column, message) with its rule's severity.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spot } from "./finding.ts";
 * assert.equal(spot("TOOL_WRITE", 3, 8, "declares write tool(s) Edit").code, "TOOL_WRITE");
 * ```
 */
export function spot(code: Code, line: number, column: number, message: string): Spot {
  return { code, line: Math.max(1, line), column: Math.max(1, column), message };
}

/**
 * The order findings print in: by file, line, column, code.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a, which it declares rather than makes.
 * import { byPlace } from "./finding.ts";
 * declare const a: import("./finding.ts").Finding, b: import("./finding.ts").Finding;
 * [a, b].sort(byPlace);
 * ```
 */
export function byPlace(a: Finding, b: Finding): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  if (a.line !== b.line) return a.line - b.line;
  if (a.column !== b.column) return a.column - b.column;
  return a.code < b.code ? -1 : a.code > b.code ? 1 : 0;
}
