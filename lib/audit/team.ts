/**
 * The team audit: which files are agents (and of which framework), which one is the exempt
 * orchestrator, the write-policy sections, the Claude project settings' deny rules, and which
 * findings the switch enforces. `auditEntries` is pure (the files are passed in); the disk walk
 * is in `walk.ts`.
 *
 * @module
 */
import { sessionSettingsFindings } from "../policy/session_settings.ts";
import { basename } from "../fs/path.ts";
import {
  checkCodexAgent,
  checkCodexConfig,
  readToml,
  tomlName,
  type TomlRead,
} from "./check_codex.ts";
import { checkGoose } from "./check_goose.ts";
import { checkMarkdown, copilotAlias, strictGrant } from "./check_markdown.ts";
import { copilotCliReading } from "./hosts/copilot.ts";
import { vscodeReading } from "./hosts/vscode.ts";
import { classifyTool } from "./tools.ts";
import { CLAUDE_FRONT_MATTER, claudeReadings } from "./hosts/claude.ts";
import { judgeReadings } from "./hosts/judge.ts";
import { byPlace, type Finding, type Framework, RULES, type Spot, spot } from "./finding.ts";
import { frontMatterTooLarge, MAX_FRONT_MATTER_ITEMS, readFrontMatter } from "./front_matter.ts";
import { checkHooksFile, checkVscodeSettings } from "./check_vscode.ts";
import { checkMcpJson } from "./check_mcp.ts";
import { checkClaudeSkill } from "./check_skill.ts";

/** What an audited path is. */
export type FileKind =
  | "claude"
  | "copilot"
  | "goose"
  | "codex-agent"
  | "codex-config"
  | "agents-md"
  | "claude-settings"
  | "copilot-hooks"
  | "codex-hooks"
  | "vscode-settings"
  | "claude-mcp"
  | "vscode-mcp"
  | "claude-skill";

/** One file handed to the audit. */
export interface AuditEntry {
  /** The path, relative to the audited directory, `/`-separated. */
  readonly rel: string;
  /** What the walk found there. */
  readonly state: "text" | "symlink" | "unreadable" | "not-utf8";
  /** The text, for `text`. */
  readonly text?: string;
  /** The kind, when the caller knows it (a named file); else it comes from the path. */
  readonly kind?: FileKind;
}

/** The switch as the brief gives it. */
export interface AuditOptions {
  /** `write_policy` is `orchestrator-only`. */
  readonly switchOn: boolean;
  /** `write_policy_frameworks` (empty: every framework). */
  readonly frameworks: readonly string[];
  /** Where the session runs, for the Claude settings check (default: the key dir under HOME). */
  readonly settingsPlace?: SettingsPlace;
}

/** The heading the orchestrator must carry. */
export const ORCH_HEADING = "## Write Policy: Applying Proposals";
/** The heading every other agent must carry. */
export const AGENT_HEADING = "## Write Policy: Return Proposals, Never Write";

const ORCH_RE = /^[ \t]*## Write Policy: Applying Proposals[ \t]*$/m;
const NOTES_RE = /^[ \t]*## Project-Specific Notes[ \t]*$/m;
const AGENT_RE = /^[ \t]*## Write Policy: Return Proposals, Never Write[ \t]*$/m;

/**
 * The kind of agent file a path names, or null when it is none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kindOfPath } from "./team.ts";
 * assert.equal(kindOfPath(".claude/agents/w.md"), "claude");
 * assert.equal(kindOfPath(".github/agents/w.agent.md"), "copilot");
 * assert.equal(kindOfPath("src/a.md"), null);
 * ```
 */
export function kindOfPath(path: string): FileKind | null {
  const name = basename(path);
  const rel = foldedDirs(path);
  // A file a host opens by a fixed name (`join(dir, ".mcp.json")`) is found in any case on a
  // case-insensitive file system: matched folded, where a globbed name (`*.md`) is not.
  const fixed = path.toLowerCase();
  if (name === "AGENTS.md") return "agents-md";
  if (/(^|\/)\.claude\/settings(\.local)?\.json$/.test(fixed)) return "claude-settings";
  // Claude Code's project MCP servers (lib/audit/check_mcp.ts), in any folder a session may
  // start in or below.
  if (/(^|\/)\.mcp\.json$/.test(fixed)) return "claude-mcp";
  // Project skills and commands, for their hooks (lib/audit/check_skill.ts).
  if (/(^|\/)\.claude\/skills\/.+\/skill\.md$/.test(fixed)) return "claude-skill";
  if (/(^|\/)\.claude\/commands\/(.+\/)?[^/]+\.md$/.test(rel)) return "claude-skill";
  // Claude Code loads every `*.md` below `.claude/agents/` (its native walk and its
  // `rg --files --hidden --follow --no-ignore --glob *.md` alike): a README or a file under
  // `references/` too, when it has a front matter (see `claudeDocFile`).
  if (/(^|\/)\.claude\/agents\/(.+\/)?[^/]+\.md$/.test(rel)) return "claude";
  // The Copilot CLI loads every `*.md` below `.github/agents/`, subfolders and a README with a
  // front matter included (see `hostMayLoad`).
  if (/(^|\/)\.github\/agents\/(.+\/)?[^/]+\.md$/.test(rel)) return "copilot";
  if (/(^|\/)\.github\/chatmodes\/[^/]+\.chatmode\.md$/.test(rel)) return "copilot";
  // What VS Code and the Copilot CLI load besides agents (lib/audit/check_vscode.ts): hook files,
  // and the workspace settings that name more agent and hook files.
  if (/(^|\/)\.github\/hooks\/[^/]+\.json$/.test(rel)) return "copilot-hooks";
  if (/(^|\/)\.vscode\/settings\.json$/.test(fixed)) return "vscode-settings";
  if (/(^|\/)\.vscode\/mcp\.json$/.test(fixed)) return "vscode-mcp";
  if (/\.code-workspace$/.test(name)) return "vscode-settings";
  // Codex loads `.codex/config_override.toml` after `config.toml`, as a project layer of its own
  // (openai/codex `codex-rs/config/src/loader/mod.rs` `load_project_layers`, the same denylist).
  if (/(^|\/)\.codex\/config(_override)?\.toml$/.test(fixed)) return "codex-config";
  if (/(^|\/)\.codex\/hooks\.json$/.test(fixed)) return "codex-hooks";
  if (/(^|\/)\.codex\/agents\/(.+\/)?[^/]+\.toml$/.test(rel)) return "codex-agent";
  if (/(^|\/)(\.goose|recipes)\/(.+\/)?[^/]+\.ya?ml$/.test(rel)) return "goose";
  // Recipes may be JSON too (a YAML subset the same reader takes), under .goose/ only.
  if (/(^|\/)\.goose\/(.+\/)?[^/]+\.json$/.test(rel)) return "goose";
  if (/\.recipe\.ya?ml$/.test(name)) return "goose";
  return null;
}

/**
 * A path with its folder names lower-cased (the file name kept): on a case-insensitive file
 * system (macOS, Windows) the hosts open `.claude/agents` and find `.Claude/Agents`, so a team
 * checked out there loads what a case-sensitive CI would not call an agent folder. The file
 * name keeps its case: Claude Code matches `*.md` exactly.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { foldedDirs } from "./team.ts";
 * assert.equal(foldedDirs(".Claude/Agents/W.md"), ".claude/agents/W.md");
 * ```
 */
export function foldedDirs(rel: string): string {
  const i = rel.lastIndexOf("/");
  return i < 0 ? rel : rel.slice(0, i).toLowerCase() + rel.slice(i);
}

/**
 * The kind of a file named on the command line: its path's, else its extension's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kindOfNamed } from "./team.ts";
 * assert.equal(kindOfNamed("agents/w.toml"), "codex-agent");
 * ```
 */
export function kindOfNamed(rel: string): FileKind | null {
  const k = kindOfPath(rel);
  if (k !== null) return k;
  const name = basename(rel);
  if (/\.(agent|chatmode)\.md$/.test(name)) return "copilot";
  if (/\.md$/.test(name)) return "claude";
  if (/\.toml$/.test(name)) return "codex-agent";
  if (/\.ya?ml$/.test(name)) return "goose";
  return null;
}

/** The framework of a file kind. */
function frameworkOf(kind: FileKind): Framework {
  switch (kind) {
    case "claude":
    case "claude-settings":
    case "claude-mcp":
    case "claude-skill":
      return "claude";
    case "copilot":
    case "copilot-hooks":
    case "vscode-settings":
    case "vscode-mcp":
      return "copilot";
    case "goose":
      return "goose";
    case "codex-agent":
    case "codex-config":
    case "codex-hooks":
      return "codex";
    case "agents-md":
      return "agents-md";
  }
}

/**
 * An agent's slug: its file name without the framework's extension.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { slugOf } from "./team.ts";
 * assert.equal(slugOf(".github/agents/reviewer.agent.md"), "reviewer");
 * ```
 */
export function slugOf(rel: string): string {
  return basename(rel).replace(
    /(\.agent\.md|\.chatmode\.md|\.recipe\.ya?ml|\.md|\.ya?ml|\.json|\.toml)$/,
    "",
  );
}

/** The `write_policy_frameworks` names (the brief's words) of each framework. */
const FRAMEWORK_NAMES: Readonly<Record<Framework, readonly string[]>> = {
  claude: ["claude"],
  copilot: ["copilot-vscode", "copilot-cli", "copilot"],
  goose: ["goose"],
  codex: ["codex"],
  "agents-md": ["agents-md"],
  other: [],
};

/** Whether the switch covers a framework. */
function covers(opts: AuditOptions, fw: Framework): boolean {
  if (!opts.switchOn) return false;
  if (opts.frameworks.length === 0) return true;
  return FRAMEWORK_NAMES[fw].some((n) => opts.frameworks.includes(n));
}

function depth(rel: string): number {
  return rel.split("/").length;
}

/** The kinds that are one agent each (a slug, a fix): not AGENTS.md or the project configs. */
export type AgentFileKind = Exclude<
  FileKind,
  | "agents-md"
  | "claude-settings"
  | "codex-config"
  | "codex-hooks"
  | "copilot-hooks"
  | "vscode-settings"
  | "claude-mcp"
  | "vscode-mcp"
  | "claude-skill"
>;

/**
 * An entry's kind when it is one agent's file (see {@link AgentFileKind}), else null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentFileKind } from "./team.ts";
 * assert.equal(agentFileKind({ rel: ".codex/agents/w.toml" }), "codex-agent");
 * assert.equal(agentFileKind({ rel: ".codex/config.toml" }), null);
 * ```
 */
export function agentFileKind(e: Pick<AuditEntry, "rel" | "kind">): AgentFileKind | null {
  const kind = e.kind ?? kindOfPath(e.rel);
  return kind === null || kind === "agents-md" || kind === "claude-settings" ||
      kind === "codex-config" || kind === "codex-hooks" || kind === "copilot-hooks" ||
      kind === "vscode-settings" || kind === "claude-mcp" || kind === "vscode-mcp" ||
      kind === "claude-skill"
    ? null
    : kind;
}

/**
 * The exempt orchestrator files: per framework and exempt slug, the single shallowest copy (on
 * Codex only when its TOML `name` is `orchestrator` too). Decided by paths alone but for that
 * Codex name: `textOf` gives a file's text (null when it has none), asked only of the one Codex
 * copy; by default the entry's own, so entries whose files are not read yet can be passed with a
 * `textOf` that reads one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exemptFiles } from "./team.ts";
 * assert.equal(exemptFiles([{ rel: ".claude/agents/orchestrator.md", state: "text", text: "" }]).size, 1);
 * assert.equal(
 *   exemptFiles([{ rel: ".codex/agents/orchestrator.toml" }], () => 'name = "orchestrator"\n').size,
 *   1,
 * );
 * ```
 */
export function exemptFiles<E extends Pick<AuditEntry, "rel" | "kind">>(
  entries: readonly E[],
  textOf: (e: E) => string | null = ownText,
): Set<string> {
  const groups = new Map<string, E[]>();
  for (const e of entries) {
    const kind = agentFileKind(e);
    if (kind === null) continue;
    const slug = slugOf(e.rel);
    const exemptSlugs = kind === "goose"
      ? ["orchestrator", "bridge-orchestrator"]
      : ["orchestrator"];
    if (!exemptSlugs.includes(slug)) continue;
    const key = `${kind}:${slug}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const out = new Set<string>();
  for (const [key, list] of groups) {
    const min = Math.min(...list.map((e) => depth(e.rel)));
    const shallow = list.filter((e) => depth(e.rel) === min);
    if (shallow.length !== 1) continue;
    const e = shallow[0];
    if (key.startsWith("codex-agent:")) {
      const text = textOf(e);
      if (text === null || tomlName(text) !== "orchestrator") continue;
    }
    out.add(e.rel);
  }
  return out;
}

/** An entry's text as {@link exemptFiles} asks for it: null unless it was read as text. */
function ownText(e: Pick<AuditEntry, "rel" | "kind">): string | null {
  const full = e as Partial<AuditEntry>;
  return full.state === "text" ? full.text ?? "" : null;
}

/** Where the settings check places the session (absolute paths), when the caller knows. */
export interface SettingsPlace {
  /** The directory the settings' `./` rules are relative to (the team's root). */
  readonly root: string;
  /** The operator's key dir. */
  readonly keyDir: string;
  /** The operator's home, for `~/` rules. */
  readonly homeDir: string;
}

/** The place assumed when the caller gives none: the key dir at its default, under HOME. */
const DEFAULT_PLACE: SettingsPlace = {
  root: "/project",
  keyDir: "/home/operator/.config/agentteams/keys",
  homeDir: "/home/operator",
};

/** Why the settings check can't read a settings file the walk didn't read as text. */
const SETTINGS_UNREAD: Record<Exclude<AuditEntry["state"], "text">, string> = {
  symlink: "is a symlink",
  "not-utf8": "is not UTF-8 text",
  unreadable: "cannot be read",
};

/**
 * The Claude project settings' findings under the switch, from the one settings check
 * (`lib/policy/session_settings.ts`, which `serve` and `doctor` use too), as audit spots: a
 * missing or weakened deny rule is `SETTINGS_DENY_MISSING`, a file the check cannot read
 * `SETTINGS_UNREADABLE` (and none of its rules count). `e` undefined: no settings file at all.
 */
function settingsSpots(
  e: AuditEntry | undefined,
  place: SettingsPlace | undefined,
  local = false,
): Spot[] {
  const at = place ?? DEFAULT_PLACE;
  const path = `${at.root}/.claude/${local ? "settings.local.json" : "settings.json"}`;
  const found = sessionSettingsFindings({
    root: at.root,
    settings: e === undefined
      ? []
      : e.state === "text"
      ? [{ path, text: e.text ?? "" }]
      : [{ path, text: null, unreadable: SETTINGS_UNREAD[e.state] }],
    keyDir: at.keyDir,
    secretFiles: [],
    homeDir: at.homeDir,
    usesClaude: true,
  });
  // The local file (this machine's) is read for its hooks and extra agents alone: its deny rules
  // are judged with
  // the shared file's by doctor and serve, which read both.
  const loads = (c: string) => c === "SETTINGS_HOOKS" || c === "SETTINGS_EXTRA_AGENTS";
  return found.filter((f) => !local || loads(f.code)).map((f) =>
    spot(
      f.code === "SETTINGS_HOOKS" || f.code === "SETTINGS_EXTRA_AGENTS"
        ? f.code
        : f.code === "SETTINGS_UNREADABLE" || f.code === "SETTINGS_NOT_JSON" ||
            f.code === "SETTINGS_SHAPE"
        ? "SETTINGS_UNREADABLE"
        : "SETTINGS_DENY_MISSING",
      f.position?.line ?? 1,
      f.position?.column ?? 1,
      f.message,
    )
  );
}

/**
 * Audits a team's files (pure: the texts are passed in). Findings are sorted by file and line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { auditEntries } from "./team.ts";
 * const f = auditEntries([{ rel: "AGENTS.md", state: "text", text: "# team\n" }], {
 *   switchOn: true,
 *   frameworks: [],
 * });
 * assert.deepEqual(f.map((x) => x.code), ["AGENTS_MD"]);
 * ```
 */
export function auditEntries(entries: readonly AuditEntry[], opts: AuditOptions): Finding[] {
  return auditEach(entries, exemptFiles(entries), opts);
}

/**
 * {@link auditEntries} over entries taken one at a time, with the team's exempt files decided
 * beforehand ({@link exemptFiles}, from the paths): each entry is checked as it comes and not
 * held, so a walk can read each file just before it is checked and let its text go after.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { auditEach } from "./team.ts";
 * function* files() {
 *   yield { rel: "AGENTS.md", state: "text" as const, text: "# team\n" };
 * }
 * assert.deepEqual(
 *   auditEach(files(), new Set(), { switchOn: true, frameworks: [] }).map((x) => x.code),
 *   ["AGENTS_MD"],
 * );
 * ```
 */
export function auditEach(
  entries: Iterable<AuditEntry>,
  exempt: ReadonlySet<string>,
  opts: AuditOptions,
): Finding[] {
  const out: Finding[] = [];
  let claudeAgents = false;
  let settingsSeen = false;
  let claudeRoot = "";
  for (const e of entries) {
    const kind = e.kind ?? kindOfPath(e.rel);
    if (kind === null) continue;
    const fw = frameworkOf(kind);
    const enforced = covers(opts, fw);
    const push = (s: Spot) => out.push(findingOf(s, e.rel, fw, enforced));
    const at = foldedDirs(e.rel).indexOf(".claude/agents/");
    if (kind === "claude" && at >= 0) {
      claudeAgents = true;
      claudeRoot = e.rel.slice(0, at);
    }
    if (kind === "claude-settings") {
      const local = e.rel.toLowerCase().endsWith("settings.local.json");
      if (!local) settingsSeen = true;
      if (covers(opts, "claude")) {
        for (const s of settingsSpots(e, opts.settingsPlace, local)) push(s);
        // Claude Code reads what the audit cannot: it follows a link, decodes UTF-16LE after an
        // FF FE mark (2.1.42 `f46` through `PJ`/`JX`), so the hooks such a file may hold run.
        const unread = unreadSpot(e, "as its settings (it follows links and reads UTF-16)");
        if (unread !== null) push(unread);
      }
      continue;
    }
    const unread = unreadSpot(e, "as an agent");
    if (unread !== null) {
      push(unread);
      continue;
    }
    const text = e.text ?? "";
    if (!hostMayLoad(e, kind)) continue;
    let spots: Spot[];
    try {
      spots = checkFile(kind, e.rel, text, exempt.has(e.rel));
    } catch (err) {
      // Never a stack trace: a file the readers can't take is a finding.
      spots = [
        spot(
          "FILE_UNREADABLE",
          1,
          1,
          `the audit can't read ${e.rel} (${err instanceof Error ? err.name : "error"}), but the ` +
            "host may still load it as an agent; simplify or replace it",
        ),
      ];
    }
    for (const s of spots) push(s);
  }
  if (covers(opts, "claude") && claudeAgents && !settingsSeen) {
    // No settings file: its findings have no place in it, so they sit at 1:1.
    for (const s of settingsSpots(undefined, opts.settingsPlace)) {
      out.push(findingOf(s, `${claudeRoot}.claude/settings.json`, "claude", true));
    }
  }
  return out.sort(byPlace);
}

/**
 * The error for a file the walk could not read as UTF-8 text (a link where no link is followed,
 * bytes that are not UTF-8, a file it could not read) that a host may load `as` it is; `null`
 * for a file read as text.
 */
function unreadSpot(e: AuditEntry, as: string): Spot | null {
  if (e.state === "symlink") {
    return spot(
      "FILE_SYMLINK",
      1,
      1,
      `write_policy "orchestrator-only": ${e.rel} is a symlink, so the audit can't read it, but ` +
        `the host may still load it ${as}. Replace it with a regular UTF-8 file.`,
    );
  }
  if (e.state === "not-utf8" || e.state === "unreadable") {
    return spot(
      e.state === "not-utf8" ? "FILE_NOT_UTF8" : "FILE_UNREADABLE",
      1,
      1,
      `write_policy "orchestrator-only": ${e.rel} is ${
        e.state === "not-utf8" ? "not UTF-8" : "unreadable"
      }, so the audit can't read it, but the host may still load it ${as}. Replace it with a ` +
        "regular UTF-8 file.",
    );
  }
  return null;
}

/** A spot as a finding of `file`, with its rule's severity. */
function findingOf(s: Spot, file: string, framework: Framework, enforced: boolean): Finding {
  return {
    code: s.code,
    severity: RULES[s.code].severity,
    file,
    line: s.line,
    column: s.column,
    framework,
    message: s.message,
    enforced,
  };
}

/**
 * The checks of one file of a known kind (no team context but whether it is the exempt
 * orchestrator).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkFile } from "./team.ts";
 * assert.deepEqual(checkFile("codex-agent", ".codex/agents/w.toml", 'sandbox_mode = "read-only"\n', false)
 *   .map((s) => s.code), ["AGENT_SECTION_MISSING"]);
 * ```
 */
export function checkFile(kind: FileKind, rel: string, text: string, exempt: boolean): Spot[] {
  const slug = slugOf(rel);
  const out: Spot[] = [];
  switch (kind) {
    case "agents-md":
      out.push(
        spot(
          "AGENTS_MD",
          1,
          1,
          'write_policy "orchestrator-only" cannot be enforced on agents-md: it declares no ' +
            "per-agent tools. Use a framework with per-agent tool declarations.",
        ),
      );
      return out;
    case "codex-config":
      return checkCodexConfig(text);
    case "claude":
    case "copilot": {
      const items = frontMatterTooLarge(text);
      if (items !== null) {
        out.push(
          spot(
            "FILE_UNREADABLE",
            1,
            1,
            `'${slug}': its front matter holds ${items} lines, commas and brackets, more than ` +
              `the ${MAX_FRONT_MATTER_ITEMS} the audit reads, but the host may still load it as ` +
              "an agent. Shorten the front matter",
          ),
        );
        return out;
      }
      const fm = readFrontMatter(text);
      out.push(...fm.spots);
      if (!exempt) {
        out.push(...checkMarkdown(fm, kind, slug));
        // The checks run on what the host grants too: each modeled Claude Code version's reading.
        if (kind === "claude") {
          // The Copilot CLI loads `.claude/agents/` files too, with its own reader.
          const readings = [...claudeReadings(text), copilotCliReading(text)];
          out.push(...judgeReadings(`'${slug}'`, strictGrant(fm), readings, "TOOL_SHELL_WARN"));
        } else {
          // VS Code reads custom agents and the legacy chat modes; the Copilot CLI reads
          // custom agents only (lib/audit/hosts/vscode.ts, lib/audit/hosts/copilot.ts).
          const readings = rel.endsWith(".chatmode.md")
            ? [vscodeReading(text)]
            : [copilotCliReading(text), vscodeReading(text)];
          out.push(
            ...judgeReadings(
              `'${slug}'`,
              strictGrant(fm),
              readings,
              "TOOL_SHELL",
              (n) => classifyTool(copilotAlias(n)),
            ),
          );
        }
      }
      break;
    }
    case "goose": {
      const s = checkGoose(text, slug, rel.endsWith(".json"));
      out.push(...(exempt ? s.filter((x) => isReaderCode(x.code)) : s));
      break;
    }
    case "codex-agent": {
      const read = readToml(text);
      const s = checkCodexAgent(text, slug, read);
      out.push(...(exempt ? s.filter((x) => isReaderCode(x.code)) : s));
      // A section may sit in a string value: the heading checks read those too.
      return sectionSpots(out, codexInstructions(text, read), slug, exempt, true);
    }
    case "claude-settings":
      return out;
    case "copilot-hooks":
      return checkHooksFile(text, rel, "COPILOT_HOOKS");
    case "codex-hooks":
      return checkHooksFile(text, rel, "CODEX_HOOKS");
    case "vscode-settings":
      return checkVscodeSettings(text, rel);
    case "claude-mcp":
      return checkMcpJson(text, rel);
    case "vscode-mcp":
      return checkMcpJson(text, rel, "VSCODE_MCP");
    case "claude-skill":
      return checkClaudeSkill(text, rel);
  }
  return sectionSpots(out, text, slug, exempt, kind !== "goose");
}

/**
 * `out` with the write-policy section finding of `sectionText`, if it lacks its section
 * (`fixable`: `audit --fix` can add it, so the message says so; it does not rewrite recipes).
 */
function sectionSpots(
  out: Spot[],
  sectionText: string,
  slug: string,
  exempt: boolean,
  fixable: boolean,
): Spot[] {
  if (exempt) {
    // The heading's words first: a file's whole text is searched, most often for nothing.
    const m = sectionText.includes(ORCH_HEADING) ? ORCH_RE.exec(sectionText) : null;
    const notes = NOTES_RE.exec(sectionText);
    if (m === null || (notes !== null && notes.index < m.index)) {
      out.push(
        spot(
          "ORCH_SECTION_MISSING",
          1,
          1,
          'write_policy "orchestrator-only": the orchestrator lacks its "Write Policy: Applying ' +
            'Proposals" section (its duties as the only writer). Re-render it.',
        ),
      );
    }
  } else if (!sectionText.includes(AGENT_HEADING) || !AGENT_RE.test(sectionText)) {
    out.push(
      spot(
        "AGENT_SECTION_MISSING",
        1,
        1,
        `'${slug}' lacks its "${AGENT_HEADING.slice(3)}" section; ` +
          (fixable
            ? "re-render it or run `agentteams audit --fix`"
            : "re-render it, or add the section to the recipe's instructions by hand (--fix " +
              "does not rewrite recipes)"),
      ),
    );
  }
  return out;
}

/**
 * Whether an entry is an agent file the audit counts: of a known kind but the Claude settings,
 * and, for YAML under a `recipes/` directory, a Goose recipe.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isAgentEntry } from "./team.ts";
 * assert.equal(isAgentEntry({ rel: "recipes/ci.yaml", state: "text", text: "on: push\n" }), false);
 * ```
 */
export function isAgentEntry(e: AuditEntry): boolean {
  const kind = e.kind ?? kindOfPath(e.rel);
  if (
    kind === null || kind === "claude-settings" || kind === "copilot-hooks" ||
    kind === "codex-hooks" || kind === "vscode-settings" || kind === "claude-mcp" ||
    kind === "vscode-mcp" || kind === "claude-skill"
  ) return false;
  return hostMayLoad(e, kind);
}

/**
 * Whether the host may load a walked file of `kind` as an agent: a YAML file under `recipes/`
 * only when it reads as a Goose recipe; a Claude documentation file (see `claudeDocFile`) only
 * when it has a front matter as Claude Code cuts it (without one Claude Code finds no `name`, so
 * no agent); a README in `.github/agents/` only when it opens a front matter. A file the audit can't read (a link, not UTF-8, unreadable) always counts: the host
 * may load it. A named file (its kind given) always counts.
 */
function hostMayLoad(e: AuditEntry, kind: FileKind): boolean {
  if (e.kind !== undefined || e.state !== "text") return true;
  const text = e.text ?? "";
  if (kind === "goose") return looksLikeRecipe(e.rel, text);
  if (kind === "claude" && claudeDocFile(e.rel)) {
    return CLAUDE_FRONT_MATTER.test(text.replace(/^\uFEFF/, ""));
  }
  // A README in `.github/agents/`: the Copilot CLI 1.0.102 loads it when it opens a front matter
  // (a BOM dropped); without one it reports it malformed and loads nothing.
  if (kind === "copilot" && /^readme\.md$/i.test(basename(e.rel))) {
    return /^\uFEFF?---[ \t]*\r?\n/.test(text);
  }
  return true;
}

/**
 * Whether a Claude agent-folder file is, by its name, documentation (a `README.md`, a
 * `SETUP-REQUIRED.md`, anything under a `references/` folder): Claude Code still loads it as an
 * agent when its front matter names one, so it is audited when it has a front matter.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeDocFile } from "./team.ts";
 * assert.equal(claudeDocFile(".claude/agents/references/notes.md"), true);
 * assert.equal(claudeDocFile(".claude/agents/reviewer.md"), false);
 * ```
 */
export function claudeDocFile(rel: string): boolean {
  const name = basename(rel);
  if (name === "SETUP-REQUIRED.md" || /^readme\.md$/i.test(name)) return true;
  const folded = foldedDirs(rel);
  return /(^|\/)references\//.test(folded.slice(folded.indexOf(".claude/agents/")));
}

/**
 * Whether a YAML file found under a `recipes/` directory (not `.goose/`) is a Goose recipe: one
 * of a recipe's own top-level keys starts a line. Other projects keep other YAML there.
 */
function looksLikeRecipe(rel: string, text: string): boolean {
  if (/(^|\/)\.goose\//i.test(rel) || /\.recipe\.ya?ml$/.test(rel)) return true;
  return /^(recipe|instructions|prompt|extensions|sub_recipes)[ \t]*:/m.test(text);
}

function isReaderCode(code: string): boolean {
  return /^(YAML_|TOML_|FM_)/.test(code) || code === "GOOSE_TEMPLATE";
}

/**
 * The text of a Codex agent's top-level string values, where the host reads its instructions: a
 * section in a TOML comment is never shown to the model, so it does not count.
 */
function codexInstructions(text: string, r: TomlRead): string {
  if (!r.ok) return text;
  const strings = Object.values(r.value).filter((v): v is string => typeof v === "string");
  return strings.join("\n");
}
