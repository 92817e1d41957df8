/**
 * The session-sandbox settings check (issue 15, item 5): do the Claude Code project settings the
 * team uses (`.claude/settings.json`, `.claude/settings.local.json`) deny the session what only
 * the runner may touch? Read: the key dir's secret files, `.agentteams/**` and
 * `.agentteams-queue/**` (requests in transit, sealed to the runner). Write: `.agentteams/` and `.agentteams-status/`
 * (only the runner writes them; the session writes requests into `.agentteams-queue/` and reads
 * `.agentteams-status/`).
 *
 * One pure function, {@link sessionSettingsFindings}, decides it from the files' texts; `doctor`,
 * `serve` (through `lib/runner/preflight.ts`) and the audit all call it. What counts as "denied"
 * is written down in `docs/session-settings.md`; in short, and strict where Claude Code's docs
 * leave room:
 * - only `permissions.deny` rules deny: `Read(...)` for reading, `Edit(...)` for writing
 *   (Claude Code checks paths only for Read and Edit rules; a `Write(path)` rule is accepted and
 *   ignored, so it is reported, never counted); a bare `Read` or `Edit` denies every path;
 * - a rule's path is `//abs`, `~/home-relative`, `/settings-root-relative` (the directory that
 *   holds `.claude/`), or `./relative` / `relative` (the project root, where the session starts);
 * - a directory counts as denied only under a rule ending in `/**` whose leading segments match
 *   it or one of its parents (`*`, `?`, `[...]` within a segment, `**` across segments); a bare
 *   directory name, a `..`, a `!` or a backslash escape counts for nothing;
 * - a trust root's rule counts only where Claude's sandbox applies it to Bash too
 *   ({@link bindsBash}: a path, and for Edit no pattern but a trailing `/**`);
 * - a file Claude Code would reject (not JSON: comments, trailing commas; or a shape it cannot
 *   read) denies nothing, since Claude Code then ignores the whole file;
 * - `sandbox.filesystem.allowRead` / `allowWrite`, and `permissions.allow` / `ask` rules, over a
 *   denied path are reported;
 * - with the trust roots' rules, Claude's sandbox must hold Bash to the rules (the deny rules
 *   alone bind its file tools only): {@link REQUIRED_SANDBOX}, read across the files as Claude
 *   Code merges them, each missing or weakened value a `SETTINGS_SANDBOX` error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sessionSettingsFindings } from "./session_settings.ts";
 * const findings = sessionSettingsFindings({
 *   root: "/work/p",
 *   settings: [{ path: "/work/p/.claude/settings.json", text: '{"permissions": {"deny": []}}' }],
 *   keyDir: "/home/op/.config/agentteams/keys",
 *   secretFiles: ["/home/op/.config/agentteams/keys/proposal-ledger.key"],
 *   homeDir: "/home/op",
 *   usesClaude: true,
 * });
 * assert.deepEqual(findings.map((f) => f.rule).slice(0, 2), ["Read(~/.config/agentteams/keys/**)", "Read(./.agentteams/**)"]);
 * ```
 * @module
 */
import { dirname, join, normalize, relative } from "../fs/path.ts";
import { overlaps, within } from "../fs/within.ts";
import { type JsonPath, JsonReadError, type Position, readJson } from "../json/reader.ts";
import { fnmatchCase, hasWildcard } from "../pycompat/fnmatch.ts";
import { DEFAULT_BRIEF_NAMES } from "../layout.ts";

/** The project settings files the check reads, relative to the project root, in Claude's order. */
export const SESSION_SETTINGS_FILES: readonly string[] = Object.freeze([
  ".claude/settings.json",
  ".claude/settings.local.json",
]);

/** The shared settings file (committed with the project): portable rules go here. */
const SHARED_FILE = ".claude/settings.json";
/** The local settings file (this machine): rules naming an absolute path go here. */
const LOCAL_FILE = ".claude/settings.local.json";

/** What a finding is about. */
export type SettingsFindingCode =
  | "SETTINGS_RULE_MISSING"
  | "SETTINGS_NONE"
  | "SETTINGS_UNREADABLE"
  | "SETTINGS_NOT_JSON"
  | "SETTINGS_SHAPE"
  | "SETTINGS_WRITE_RULE"
  | "SETTINGS_REOPENED"
  | "SETTINGS_HOOKS"
  | "SETTINGS_EXTRA_AGENTS"
  | "SETTINGS_SANDBOX";

/** Which way a required rule denies. */
export type DenyKind = "read-deny" | "write-deny";

/** One problem with the session settings; each names what to do. */
export interface SettingsFinding {
  /** What is wrong. */
  readonly code: SettingsFindingCode;
  /** The rule's direction, for a missing or weakened rule; else `null`. */
  readonly kind: DenyKind | null;
  /** The rule that is missing (or weakened), e.g. `Read(./.agentteams/**)`; else `null`. */
  readonly rule: string | null;
  /** The settings file it is about, relative to the project root (`.claude/settings.json`). */
  readonly file: string;
  /** The exact line to add to that file's `permissions.deny` array, or `null`. */
  readonly add: string | null;
  /** Line and column in `file` of the problem, when it points at an existing file's text. */
  readonly position: Position | null;
  /** One sentence: what is wrong and what to do. */
  readonly message: string;
  /**
   * The finding leaves a trust root writable to sessions (its write-deny rule is missing, or a
   * sandbox entry re-opens it): `doctor` fails and `serve` refuses to start on it, where the
   * other findings are warnings (`lib/runner/preflight.ts`). Absent: `false`.
   */
  readonly trustRoot?: boolean;
  /**
   * For a `SETTINGS_SANDBOX` finding: the `sandbox` key it is about and the value to set in
   * `file` (`null`: remove the key from `file`, as for a non-empty `excludedCommands`, which no
   * other file can clear: Claude Code concatenates arrays across its settings files).
   */
  readonly sandbox?: { readonly key: SandboxKey; readonly value: boolean | null };
}

/** The `sandbox` keys the check reads (Claude Code's `SandboxSettingsSchema`). */
export type SandboxKey =
  | "enabled"
  | "failIfUnavailable"
  | "allowUnsandboxedCommands"
  | "enableWeakerNestedSandbox"
  | "excludedCommands";

/** A settings file as read: its absolute path and its text (`null`: present but unreadable). */
export interface SettingsText {
  /** Absolute path. */
  readonly path: string;
  /** The text, or `null` when it could not be read (see `unreadable`). */
  readonly text: string | null;
  /** Why it could not be read (never its content). */
  readonly unreadable?: string;
  /**
   * A host's file rather than the project's (`claudeHostSettingsPaths`): the user's
   * settings, merged before the project's files, or the managed ones, after them. Such a file
   * only weakens: its sandbox values merge as Claude Code merges them and its sandbox entries
   * re-open, but its deny rules do not count for the project's (doctor asks for those in the
   * project's files). Absent: a project file.
   */
  readonly scope?: "user" | "managed";
}

/** The input of {@link sessionSettingsFindings}. */
export interface SessionSettingsInput {
  /** The project root (absolute; the directory the session starts in). */
  readonly root: string;
  /**
   * The settings files that exist, in Claude Code's merge order: the user's (`scope: "user"`),
   * then {@link SESSION_SETTINGS_FILES}, then the managed ones (`scope: "managed"`).
   */
  readonly settings: readonly SettingsText[];
  /** The key dir (absolute). */
  readonly keyDir: string;
  /** The key dir's secret files (absolute): each must be read-denied. */
  readonly secretFiles: readonly string[];
  /** The operator's home (absolute), for `~/` rules. */
  readonly homeDir: string;
  /** Whether the team uses Claude Code at all (the caller decides; `false`: no findings). */
  readonly usesClaude: boolean;
  /**
   * The brief (absolute), when the check should require its write-deny rule (a trust root: what
   * may proceed is decided by it); `null` or absent: not required (e.g. a brief outside the
   * project, where no session starts).
   */
  readonly brief?: string | null;
  /**
   * Whether the trust roots' rules are required too (`Edit(./references/**)`, `Edit(./.claude/**)`,
   * `Edit(./.git/config)`, `Edit(./.mcp.json)` and the brief's), with Claude Code's sandbox that makes every rule bind Bash as well
   * ({@link REQUIRED_SANDBOX}), and the key dir's rule as an error: `doctor` and `serve` ask for
   * them (issue 22, probe 22c C6); default false.
   */
  readonly trustRoots?: boolean;
}

/**
 * The triad's trust roots in a project, relative to its root: each must be write-denied to
 * every session (`Edit(./references/**)` covers them all), and under the switch a verify key or
 * roster read from one that is not is refused (`lib/authz/trust.ts`).
 */
export const TRUST_ROOT_FILES: readonly { readonly rel: string; readonly subtree: boolean }[] =
  Object.freeze([
    { rel: "references/authorized-verify-keys", subtree: true },
    { rel: "references/security-approvers.txt", subtree: false },
    { rel: "references/security-decisions.log.csv", subtree: false },
    { rel: "references/security-waivers.log.csv", subtree: false },
    { rel: "references/capability-grants.log.csv", subtree: false },
  ]);

/** A path that must be denied: a whole directory, or one file. */
interface Target {
  readonly abs: string;
  readonly segs: readonly string[];
  readonly subtree: boolean;
}

/** A required rule: the targets it must cover, and the rule to suggest. */
interface Requirement {
  readonly kind: DenyKind;
  readonly what: string;
  readonly targets: readonly Target[];
  readonly rule: string;
  readonly file: string;
  /** The directory it is about: an entry at or below it that allows the tool re-opens it. */
  readonly scope: string;
  /** A trust root's rule (issue 22): its findings are {@link SettingsFinding.trustRoot}. */
  readonly trustRoot?: boolean;
}

/** A parsed settings file: its deny, allow and sandbox entries with their positions. */
interface ParsedSettings {
  readonly rel: string;
  readonly anchor: string;
  readonly deny: readonly Located[];
  readonly opening: readonly (Located & { readonly list: string })[];
  /** The `sandbox` keys the file sets, each with its value and position. */
  readonly sandbox: Readonly<Partial<Record<SandboxKey, SandboxValue>>>;
}

/** A `sandbox` key as a file sets it: a boolean, or (`excludedCommands`) how many entries. */
interface SandboxValue {
  readonly value: boolean | number;
  readonly position: Position;
}

interface Located {
  readonly value: string;
  readonly position: Position;
}

const TOOL_RULE = /^([A-Za-z]+)(?:\((.*)\))?$/s;

/** The codes of a file whose content counts for nothing (the check could not read it). */
const UNREAD_CODES: ReadonlySet<SettingsFindingCode> = new Set([
  "SETTINGS_UNREADABLE",
  "SETTINGS_NOT_JSON",
  "SETTINGS_SHAPE",
]);

/**
 * The rules the project's settings must hold, each with the targets it must cover.
 * Under the home dir the key dir's rule is `~/`-relative (portable: the shared file); elsewhere
 * it is absolute (`//`) and belongs in the local file.
 */
function requirements(input: SessionSettingsInput): Requirement[] {
  const { root, keyDir, homeDir } = input;
  const keyRule = within(keyDir, homeDir) && keyDir !== homeDir
    ? `Read(~/${relative(homeDir, keyDir)}/**)`
    : `Read(/${keyDir}/**)`;
  const dir = (name: string): Target => ({
    abs: join(root, name),
    segs: pathSegments(join(root, name)),
    subtree: true,
  });
  return [
    {
      kind: "read-deny",
      what: `reading the key dir ${keyDir}`,
      // Each secret file; with none named, the whole dir.
      targets: input.secretFiles.length === 0
        ? [{ abs: keyDir, segs: pathSegments(keyDir), subtree: true }]
        : input.secretFiles.map((abs) => ({
          abs,
          segs: pathSegments(abs),
          subtree: false,
        })),
      rule: keyRule,
      file: keyRule.startsWith("Read(~/") ? SHARED_FILE : LOCAL_FILE,
      scope: keyDir,
      // The key dir's secrets sign and open what the runner trusts: with the trust roots'
      // rules, its rule is required as theirs are (probe 22c, "Noticed").
      ...(input.trustRoots === true ? { trustRoot: true } : {}),
    },
    {
      kind: "read-deny",
      what: "reading .agentteams/ (the ledger and dispatch store)",
      targets: [dir(".agentteams")],
      scope: join(root, ".agentteams"),
      rule: "Read(./.agentteams/**)",
      file: SHARED_FILE,
    },
    {
      kind: "write-deny",
      what: "writing .agentteams/ (only the runner writes the ledger)",
      targets: [dir(".agentteams")],
      scope: join(root, ".agentteams"),
      rule: "Edit(./.agentteams/**)",
      file: SHARED_FILE,
    },
    {
      kind: "write-deny",
      what: "writing .agentteams-status/ (only the runner publishes results and its public " +
        "key, which a waiter that cannot read the key dir seals its request to)",
      targets: [dir(".agentteams-status")],
      scope: join(root, ".agentteams-status"),
      rule: "Edit(./.agentteams-status/**)",
      file: SHARED_FILE,
      // The runner's published key is what a sandboxed waiter trusts (docs/runner.md).
      ...(input.trustRoots === true ? { trustRoot: true } : {}),
    },
    ...(input.trustRoots === true ? trustRequirements(input, dir) : []),
  ];
}

/** The trust roots' write-deny rules: `references/`, the settings themselves, the brief. */
function trustRequirements(
  input: SessionSettingsInput,
  dir: (name: string) => Target,
): Requirement[] {
  const { root } = input;
  const gitConfig = join(root, ".git", "config");
  const mcpJson = join(root, ".mcp.json");
  return [
    {
      kind: "write-deny",
      what: "writing references/ (the decision log, waivers, grants, the approver roster and " +
        "verify keys: trust roots)",
      targets: TRUST_ROOT_FILES.map((t) => ({
        abs: join(root, t.rel),
        segs: pathSegments(join(root, t.rel)),
        subtree: t.subtree,
      })),
      scope: join(root, "references"),
      rule: "Edit(./references/**)",
      file: SHARED_FILE,
      trustRoot: true,
    },
    {
      kind: "write-deny",
      what: "writing .claude/ (these settings decide what the session is denied, and so which " +
        "project trust roots count: a session that could edit them could lift every rule)",
      targets: [dir(".claude")],
      scope: join(root, ".claude"),
      rule: "Edit(./.claude/**)",
      file: SHARED_FILE,
      trustRoot: true,
    },
    {
      kind: "write-deny",
      what: "writing .git/config (it names the programs the operator's own git runs: a filter " +
        "driver written there between the tool's last look and git's own read would run as the " +
        "operator; Claude's sandbox already keeps it from Bash, this rule keeps it from Edit)",
      targets: [{ abs: gitConfig, segs: pathSegments(gitConfig), subtree: false }],
      scope: gitConfig,
      rule: "Edit(./.git/config)",
      file: SHARED_FILE,
      trustRoot: true,
    },
    {
      kind: "write-deny",
      what: "writing .mcp.json (Claude Code starts the project's MCP servers it names as the " +
        "user, outside its sandbox: a session that wrote one would reach every trust root from " +
        "the next session on; Claude's sandbox already keeps it from Bash, this rule keeps it " +
        "from Edit)",
      targets: [{ abs: mcpJson, segs: pathSegments(mcpJson), subtree: false }],
      scope: mcpJson,
      rule: "Edit(./.mcp.json)",
      file: SHARED_FILE,
      trustRoot: true,
    },
    ...briefRequirement(input),
  ];
}

/**
 * The brief's write-deny rules: one for the brief in use when it lies in the project, and one
 * for every name the brief is found under at the project root (`DEFAULT_BRIEF_NAMES`), in use or
 * not: a session that could write the other name would plant a second brief, and two stop every
 * act (`BRIEF_UNREADABLE`), or, with the one in use elsewhere, be the brief of every command run
 * without `--brief`.
 */
function briefRequirement(input: SessionSettingsInput): Requirement[] {
  const brief = input.brief ?? null;
  // The brief in use first, then the other names.
  const inUse = brief !== null && within(brief, input.root) && brief !== input.root ? [brief] : [];
  const paths = [
    ...inUse,
    ...DEFAULT_BRIEF_NAMES.map((n) => join(input.root, n)).filter((p) => !inUse.includes(p)),
  ];
  return paths.map((abs) => {
    const rel = relative(input.root, abs);
    const what = abs === brief
      ? `writing the brief ${rel} (a trust root: it decides what may proceed)`
      : `writing ${rel}, a name the brief is found under (a session that planted it would ` +
        "make a second brief, which stops every act, or the brief of a command run without " +
        "--brief)";
    return {
      kind: "write-deny" as const,
      what,
      targets: [{ abs, segs: pathSegments(abs), subtree: false }],
      scope: abs,
      rule: `Edit(./${rel})`,
      file: SHARED_FILE,
      trustRoot: true,
    };
  });
}

/**
 * A rule's path as absolute segments, or `null` when the check cannot read it safely (a `..`,
 * a negation, an escape): such a rule counts for nothing. `anchor` is what `/path` is relative
 * to (the directory holding `.claude/`).
 */
function ruleSegments(spec: string, c: Bases): string[] | null {
  if (spec.includes("\\") || spec.startsWith("!")) return null;
  let base: readonly string[];
  let rest: string;
  if (spec.startsWith("//")) [base, rest] = [[], spec.slice(2)];
  else if (spec === "~" || spec.startsWith("~/")) [base, rest] = [c.home, spec.slice(2)];
  else if (spec.startsWith("/")) [base, rest] = [c.anchor, spec.slice(1)];
  else if (spec.startsWith("./")) [base, rest] = [c.root, spec.slice(2)];
  else [base, rest] = [c.root, spec];
  const segs = rest.split("/").filter((s) => s !== "" && s !== ".");
  if (segs.includes("..")) return null;
  return [...base.map(literalSegment), ...segs];
}

/**
 * A path segment as a glob that matches only itself: the root's, HOME's or the anchor's own
 * `*`, `?` and `[` are not the rule's pattern.
 */
function literalSegment(seg: string): string {
  return seg.replace(/[*?[]/g, "[$&]");
}

/** The segment a glob segment names when it is a literal (escapes undone), else `null`. */
function literalOf(seg: string): string | null {
  if (seg === "**" || hasWildcard(seg.replace(/\[[^\]]\]/g, ""))) return null;
  return seg.replace(/\[([^\]])\]/g, "$1");
}

/** What a rule's path forms are relative to, as segments. */
interface Bases {
  readonly root: readonly string[];
  readonly home: readonly string[];
  readonly anchor: readonly string[];
}

function pathSegments(abs: string): string[] {
  return normalize(abs).split("/").filter((s) => s !== "");
}

/**
 * Which prefixes of the path segments `t` the glob segments `p` match exactly: `reach[j]` holds
 * when `p` matches `t[0..j)` (`**`: any run of segments; within a segment, fnmatch's `*`, `?`
 * and `[...]`).
 */
function prefixMatches(p: readonly string[], t: readonly string[]): boolean[] {
  let reach = new Array<boolean>(t.length + 1).fill(false);
  reach[0] = true;
  for (const seg of p) {
    const next = new Array<boolean>(t.length + 1).fill(false);
    if (seg === "**") {
      let on = false;
      for (let j = 0; j <= t.length; j++) {
        on = on || reach[j];
        next[j] = on;
      }
    } else {
      const wild = hasWildcard(seg);
      for (let j = 0; j < t.length; j++) {
        if (reach[j] && (wild ? fnmatchCase(t[j], seg) : t[j] === seg)) next[j + 1] = true;
      }
    }
    reach = next;
    if (!reach.includes(true)) break;
  }
  return reach;
}

/**
 * Whether a rule's pattern (absolute segments) denies every path of the target: for a
 * directory, a pattern `<q>/**` whose `q` matches the directory or one of its parents; for a
 * file, also the file's exact match.
 */
function covers(pattern: readonly string[], target: Target): boolean {
  const t = target.segs;
  let p = pattern;
  if (p.length >= 2 && p.at(-1) === "*" && p.at(-2) === "**") p = p.slice(0, -1);
  if (p.at(-1) === "**") {
    const reach = prefixMatches(p.slice(0, -1), t);
    const last = target.subtree ? t.length : t.length - 1;
    return reach.slice(0, last + 1).includes(true);
  }
  return !target.subtree && prefixMatches(p, t)[t.length];
}

/** The literal directory a pattern lies in (its segments before the first wildcard). */
function literalPrefix(pattern: readonly string[]): string {
  const lit: string[] = [];
  for (const s of pattern) {
    const l = literalOf(s);
    if (l === null) break;
    lit.push(l);
  }
  return "/" + lit.join("/");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads one settings file into its entries, or the findings that make it count for nothing. */
function parseSettings(
  s: SettingsText,
  root: string,
): { parsed: ParsedSettings | null; findings: SettingsFinding[] } {
  const rel = s.scope === undefined ? relative(root, s.path) : s.path;
  const anchor = dirname(dirname(s.path));
  const fail = (code: SettingsFindingCode, message: string, position: Position | null = null) => ({
    parsed: null,
    findings: [{ code, kind: null, rule: null, file: rel, add: null, position, message }],
  });
  if (s.text === null) {
    return fail(
      "SETTINGS_UNREADABLE",
      `${rel} ${s.unreadable ?? "cannot be read"}; the check does not follow or guess it, so ` +
        `none of its rules count: make it a regular JSON file`,
    );
  }
  // Claude Code drops one leading byte order mark before `JSON.parse` (2.1.42 `f46` through
  // `p5`/`jH1`; 2.1.332's reader too): the file's rules and hooks count as it reads them.
  const text = s.text.startsWith("\uFEFF") ? s.text.slice(1) : s.text;
  let doc;
  try {
    doc = readJson(text, { dialect: "json" });
  } catch (e) {
    if (!(e instanceof JsonReadError)) throw e;
    let jsonc = false;
    try {
      readJson(text, { dialect: "jsonc" });
      jsonc = true;
    } catch {
      // Not JSONC either: the strict reader's error stands.
    }
    const at = `${rel}:${e.position.line}:${e.position.column}`;
    return fail(
      "SETTINGS_NOT_JSON",
      jsonc
        ? `${at}: comments or trailing commas (${e.message}); Claude Code ` +
          `reads settings as strict JSON and ignores the whole file, so none of its rules count: ` +
          `remove them`
        : `${at}: not valid JSON (${e.message}); Claude Code ignores the whole file, so none ` +
          `of its rules count: fix it`,
      e.position,
    );
  }
  const v = doc.value;
  const shape = (path: JsonPath, what: string) =>
    fail(
      "SETTINGS_SHAPE",
      `${rel}:${doc.locate(path).line}:${doc.locate(path).column}: ${what}; Claude Code ` +
        `rejects the file, so none of its rules count: fix it`,
      doc.locate(path),
    );
  if (!isRecord(v)) return shape([], "the settings are not a JSON object");
  const deny: Located[] = [];
  const opening: (Located & { list: string })[] = [];
  const perms = v.permissions;
  if (perms !== undefined) {
    if (!isRecord(perms)) return shape(["permissions"], '"permissions" is not an object');
    for (const list of ["deny", "allow", "ask"]) {
      const arr = perms[list];
      if (arr === undefined) continue;
      if (!Array.isArray(arr)) {
        return shape(["permissions", list], `"permissions.${list}" is not an array`);
      }
      for (let i = 0; i < arr.length; i++) {
        const item = arr[i];
        if (typeof item !== "string") {
          return shape(["permissions", list, i], `"permissions.${list}[${i}]" is not a string`);
        }
        const located = { value: item, position: doc.locate(["permissions", list, i]) };
        if (list === "deny") deny.push(located);
        else opening.push({ ...located, list: `permissions.${list}` });
      }
    }
  }
  // Claude Code validates `sandbox` with its schema and drops the whole file when a key has the
  // wrong type (`SandboxSettingsSchema`, entrypoints/sandboxTypes.ts): so does the check.
  const sandbox: Partial<Record<SandboxKey, SandboxValue>> = {};
  if (v.sandbox !== undefined) {
    if (!isRecord(v.sandbox)) return shape(["sandbox"], '"sandbox" is not an object');
    for (const key of REQUIRED_SANDBOX.map((r) => r.key)) {
      const x = v.sandbox[key];
      if (x === undefined) continue;
      if (typeof x !== "boolean") {
        return shape(["sandbox", key], `"sandbox.${key}" is not true or false`);
      }
      sandbox[key] = { value: x, position: doc.locate(["sandbox", key]) };
    }
    const ex = v.sandbox.excludedCommands;
    if (ex !== undefined) {
      if (!Array.isArray(ex) || ex.some((c) => typeof c !== "string")) {
        return shape(
          ["sandbox", "excludedCommands"],
          '"sandbox.excludedCommands" is not an array of strings',
        );
      }
      sandbox.excludedCommands = {
        value: ex.length,
        position: doc.locate(["sandbox", "excludedCommands"]),
      };
    }
  }
  const fs = isRecord(v.sandbox) ? v.sandbox.filesystem : undefined;
  if (isRecord(fs)) {
    for (const list of ["allowRead", "allowWrite"]) {
      const arr = fs[list];
      if (!Array.isArray(arr)) continue;
      arr.forEach((item, i) => {
        if (typeof item !== "string") return;
        const position = doc.locate(["sandbox", "filesystem", list, i]);
        // A sandbox path is a path, not a rule: wrapped so it reads like one below.
        const tool = list === "allowRead" ? "Read" : "Edit";
        opening.push({ value: `${tool}(${item})`, position, list: `sandbox.filesystem.${list}` });
      });
    }
    // The sandbox runtime's own switch that lets Bash write `.git/config` (denied by default):
    // read as an entry re-opening that path, so it is reported where the rule is required.
    if (fs.allowGitConfig !== undefined && fs.allowGitConfig !== false) {
      const position = doc.locate(["sandbox", "filesystem", "allowGitConfig"]);
      opening.push({
        value: "Edit(./.git/config)",
        position,
        list: "sandbox.filesystem.allowGitConfig",
      });
    }
  }
  const locate = (path: JsonPath) => doc.locate(path);
  // A host's file only weakens (SettingsText.scope): its deny rules are not the project's, and
  // what it loads is the operator's machine, not the team's.
  if (s.scope !== undefined) {
    return { parsed: { rel, anchor, deny: [], opening, sandbox }, findings: [] };
  }
  return {
    parsed: { rel, anchor, deny, opening, sandbox },
    findings: [...hookFindings(v, rel, locate), ...extraAgentFindings(v, rel, locate)],
  };
}

/**
 * Whether a `hooks` value runs nothing: absent, null, an empty object or an empty list. Anything
 * else is hooks a host may run (the one rule for Claude Code's settings and Copilot's hooks files).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hooksEmpty } from "./session_settings.ts";
 * assert.equal(hooksEmpty({}), true);
 * assert.equal(hooksEmpty({ PreToolUse: [] }), false);
 * ```
 */
export function hooksEmpty(hooks: unknown): boolean {
  return hooks === undefined || hooks === null ||
    (isRecord(hooks) && Object.keys(hooks).length === 0) ||
    (Array.isArray(hooks) && hooks.length === 0);
}

/**
 * The settings besides `hooks` whose value is a shell command Claude Code runs as the user,
 * outside its sandbox, from the project's settings files: the status lines (`{type: "command"}`,
 * run on each refresh) and `fileSuggestion` (run for `@` completions), 2.1.42 `cli.js` `oSA`,
 * `sSA`; and the credential helpers (2.1.42 `vr8`, `Er8`, `kr8`, `ow5`: read from the project
 * and local settings once the workspace is trusted). 2.1.332 lists these together as its
 * command-running settings (`vnd`), with `processWrapper` and `policyHelpers`, which it honors
 * from managed and user settings only.
 */
const SETTINGS_COMMAND_KEYS: readonly string[] = [
  "statusLine",
  "subagentStatusLine",
  "fileSuggestion",
  "apiKeyHelper",
  "awsAuthRefresh",
  "awsCredentialExport",
  "gcpAuthRefresh",
  "otelHeadersHelper",
  "proxyAuthHelper",
];

/**
 * The `env` names Claude Code itself sets from a project's settings before the workspace is
 * trusted, as its own knobs (2.1.42 `cli.js` `$51`, compared upper-cased as it compares them).
 * Every other name it sets once the workspace is trusted (`h11`: `Object.assign(process.env,
 * settings.env)`), and it starts every program from that environment, outside its sandbox: a
 * stdio MCP server (`{...process.env, ...server.env}`, through `CLAUDE_CODE_SHELL_PREFIX` when
 * that is set), the `rg` of Grep and Glob, hooks and helpers. So `LD_PRELOAD`, `PATH`,
 * `NODE_OPTIONS` or `CLAUDE_CODE_SHELL_PREFIX` there picks the program that runs.
 */
const SETTINGS_SAFE_ENV: ReadonlySet<string> = new Set([
  "ANTHROPIC_CUSTOM_HEADERS",
  "ANTHROPIC_DEFAULT_HAIKU_MODEL",
  "ANTHROPIC_DEFAULT_OPUS_MODEL",
  "ANTHROPIC_DEFAULT_SONNET_MODEL",
  "ANTHROPIC_FOUNDRY_API_KEY",
  "ANTHROPIC_MODEL",
  "ANTHROPIC_SMALL_FAST_MODEL_AWS_REGION",
  "ANTHROPIC_SMALL_FAST_MODEL",
  "AWS_DEFAULT_REGION",
  "AWS_PROFILE",
  "AWS_REGION",
  "BASH_DEFAULT_TIMEOUT_MS",
  "BASH_MAX_OUTPUT_LENGTH",
  "BASH_MAX_TIMEOUT_MS",
  "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR",
  "CLAUDE_BASH_NO_LOGIN",
  "CLAUDE_CODE_API_KEY_HELPER_TTL_MS",
  "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS",
  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
  "CLAUDE_CODE_DISABLE_TERMINAL_TITLE",
  "CLAUDE_CODE_ENABLE_TELEMETRY",
  "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS",
  "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL",
  "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
  "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
  "CLAUDE_CODE_SKIP_FOUNDRY_AUTH",
  "CLAUDE_CODE_SKIP_VERTEX_AUTH",
  "CLAUDE_CODE_SUBAGENT_MODEL",
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_FOUNDRY",
  "CLAUDE_CODE_USE_VERTEX",
  "DISABLE_AUTOUPDATER",
  "DISABLE_BUG_COMMAND",
  "DISABLE_COST_WARNINGS",
  "DISABLE_ERROR_REPORTING",
  "DISABLE_TELEMETRY",
  "ENABLE_EXPERIMENTAL_MCP_CLI",
  "ENABLE_TOOL_SEARCH",
  "MAX_MCP_OUTPUT_TOKENS",
  "MAX_THINKING_TOKENS",
  "MCP_TIMEOUT",
  "MCP_TOOL_TIMEOUT",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
  "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
  "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE",
  "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY",
  "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
  "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_LOG_USER_PROMPTS",
  "OTEL_LOGS_EXPORT_INTERVAL",
  "OTEL_LOGS_EXPORTER",
  "OTEL_METRIC_EXPORT_INTERVAL",
  "OTEL_METRICS_EXPORTER",
  "OTEL_METRICS_INCLUDE_ACCOUNT_UUID",
  "OTEL_METRICS_INCLUDE_SESSION_ID",
  "OTEL_METRICS_INCLUDE_VERSION",
  "OTEL_RESOURCE_ATTRIBUTES",
  "USE_BUILTIN_RIPGREP",
  "VERTEX_REGION_CLAUDE_3_5_HAIKU",
  "VERTEX_REGION_CLAUDE_3_5_SONNET",
  "VERTEX_REGION_CLAUDE_3_7_SONNET",
  "VERTEX_REGION_CLAUDE_4_0_OPUS",
  "VERTEX_REGION_CLAUDE_4_0_SONNET",
  "VERTEX_REGION_CLAUDE_4_1_OPUS",
  "VERTEX_REGION_CLAUDE_HAIKU_4_5",
]);

/** Whether a command setting's value runs nothing: absent, null, `false` or an empty string. */
function runsNothing(v: unknown): boolean {
  return v === undefined || v === null || v === false || v === "";
}

/**
 * A settings file's `hooks`: shell commands Claude Code runs around every tool call of every
 * agent of the session (`PreToolUse`, `PostToolUse`, ...), whatever the agent's own `tools:`
 * say, so a hook that runs what a tool's input holds turns a read-only agent's Grep into a
 * shell; and each of {@link SETTINGS_COMMAND_KEYS}, a program of the file's author run as the
 * user. This project installs none, so any is reported (`SETTINGS_HOOKS`): an error for the
 * audit under the switch, a warning for `doctor` and `serve`.
 */
function hookFindings(
  v: Record<string, unknown>,
  rel: string,
  locate: (path: JsonPath) => Position,
): SettingsFinding[] {
  const finding = (key: string, message: string, path: JsonPath = [key]): SettingsFinding => {
    const position = locate(path);
    return {
      code: "SETTINGS_HOOKS",
      kind: null,
      rule: null,
      file: rel,
      add: null,
      position,
      message: `${rel}:${position.line}:${position.column}: ${message}, so no agent of this ` +
        `session is proven read-only; remove "${key}" from ${rel}`,
    };
  };
  const out: SettingsFinding[] = [];
  const hooks = v.hooks;
  if (!hooksEmpty(hooks)) {
    const events = isRecord(hooks) ? Object.keys(hooks).join(", ") : "an unreadable value";
    out.push(
      finding(
        "hooks",
        `"hooks" (${events}) runs shell commands around every agent's tool calls, whatever ` +
          "its tools: say",
      ),
    );
  }
  for (const key of SETTINGS_COMMAND_KEYS) {
    if (runsNothing(v[key])) continue;
    out.push(
      finding(
        key,
        `"${key}" names a shell command Claude Code runs as the user, outside its sandbox`,
      ),
    );
  }
  const env = v.env;
  if (env !== undefined && env !== null && !isRecord(env)) {
    out.push(finding("env", '"env" is not an object the check can read'));
  }
  for (const name of isRecord(env) ? Object.keys(env) : []) {
    if (SETTINGS_SAFE_ENV.has(name.toUpperCase())) continue;
    out.push(
      finding(
        `env.${name}`,
        `"env.${name}" is put in the environment of every program Claude Code starts as the ` +
          "user, outside its sandbox (MCP servers, the rg of Grep and Glob, hooks), so it can " +
          "pick the program that runs",
        ["env", name],
      ),
    );
  }
  return out;
}

/**
 * What makes Claude Code load agents from outside the project's `.claude/agents/` folders, which
 * the audit does not read (Claude Code 2.1.42 `cli.js` and 2.1.332's bundled JavaScript):
 * `enabledPlugins` (a plugin's `agents/` folder, its hooks and MCP servers; an entry counts unless
 * it is `false`), `extraKnownMarketplaces` (the project's marketplaces, offered for install), and
 * `permissions.additionalDirectories` (each one's `.claude/agents/` is loaded as project agents,
 * 2.1.332 `OVe`). Each is reported (`SETTINGS_EXTRA_AGENTS`): an error for the audit under the
 * switch, a warning for `doctor` and `serve`.
 */
function extraAgentFindings(
  v: Record<string, unknown>,
  rel: string,
  locate: (path: JsonPath) => Position,
): SettingsFinding[] {
  const out: SettingsFinding[] = [];
  const report = (path: JsonPath, what: string) => {
    const position = locate(path);
    out.push({
      code: "SETTINGS_EXTRA_AGENTS",
      kind: null,
      rule: null,
      file: rel,
      add: null,
      position,
      message: `${rel}:${position.line}:${position.column}: "${path.join(".")}" ${what}, which ` +
        `the audit does not read, so no agent of this session is proven read-only; remove it ` +
        `from ${rel} (or audit those agents where they live and keep them out of this project)`,
    });
  };
  const plugins = v.enabledPlugins;
  if (isRecord(plugins) && Object.values(plugins).some((x) => x !== false && x !== undefined)) {
    report(["enabledPlugins"], "enables plugins, whose agents (any tools), hooks and servers load");
  } else if (plugins !== undefined && plugins !== null && !isRecord(plugins)) {
    report(["enabledPlugins"], "is not an object the check can read (plugins may load)");
  }
  const markets = v.extraKnownMarketplaces;
  if (
    markets !== undefined && markets !== null &&
    !(isRecord(markets) && Object.keys(markets).length === 0)
  ) {
    report(["extraKnownMarketplaces"], "offers plugin marketplaces, whose plugins bring agents");
  }
  const perms = v.permissions;
  const dirs = isRecord(perms) ? perms.additionalDirectories : undefined;
  if (dirs !== undefined && dirs !== null && !(Array.isArray(dirs) && dirs.length === 0)) {
    report(
      ["permissions", "additionalDirectories"],
      "adds working directories, whose .claude/agents/ Claude Code loads as project agents",
    );
  }
  return out;
}

/** A deny rule as read: its tool and absolute segments (`all`: a bare tool; `null`: unreadable). */
interface DenyRule {
  readonly tool: string | null;
  readonly segs: readonly string[] | "all" | null;
  /** Whether Claude's sandbox holds Bash to it too ({@link bindsBash}). */
  readonly bash: boolean;
}

/**
 * Whether Claude's sandbox applies a `Read(...)`/`Edit(...)` deny rule to Bash as well as to the
 * file tools. A rule with no path is not passed to the sandbox at all (Claude Code converts only
 * a rule's path); on Linux the sandbox strips one trailing `/**` from a write path and skips the
 * path when what is left still holds `*`, `?`, `[` or `]` (bubblewrap mounts real paths:
 * `stripWriteGlobs`, `@anthropic-ai/sandbox-runtime` 0.0.83). Read paths with patterns are
 * expanded when the sandbox starts, so they bind what exists then.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bindsBash } from "./session_settings.ts";
 * assert.equal(bindsBash("Edit", "./references/**"), true);
 * assert.equal(bindsBash("Edit", "./refer*\/**"), false);
 * assert.equal(bindsBash("Edit", undefined), false);
 * ```
 */
export function bindsBash(tool: string, path: string | undefined): boolean {
  if (path === undefined) return false;
  if (tool !== "Edit") return true;
  return !/[*?[\]]/.test(path.trim().replace(/\/\*\*$/, ""));
}

/** Every deny rule of every readable file, read once, and the memoized path reader. */
function denyRules(
  input: Pick<SessionSettingsInput, "root" | "homeDir">,
  parsed: readonly ParsedSettings[],
): { segmentsOf: (spec: string, anchor: string) => string[] | null; denies: DenyRule[] } {
  const root = pathSegments(input.root);
  const home = pathSegments(input.homeDir);
  // Each path form read once per call: a rule's segments by its anchor and specifier.
  const memo = new Map<string, string[] | null>();
  const segmentsOf = (spec: string, anchor: string): string[] | null => {
    const k = `${anchor}\0${spec}`;
    if (!memo.has(k)) memo.set(k, ruleSegments(spec, { root, home, anchor: pathSegments(anchor) }));
    return memo.get(k) ?? null;
  };
  const denies = parsed.flatMap((p) =>
    p.deny.map((d): DenyRule => {
      const m = TOOL_RULE.exec(d.value.trim());
      if (m === null) return { tool: null, segs: null, bash: false };
      return {
        tool: m[1],
        segs: m[2] === undefined ? "all" : segmentsOf(m[2], p.anchor),
        bash: bindsBash(m[1], m[2]),
      };
    })
  );
  return { segmentsOf, denies };
}

/** Whether a deny rule for `tool` covers `t`; with `bash`, only rules that bind Bash too count. */
function deniedBy(denies: readonly DenyRule[], tool: string, t: Target, bash: boolean): boolean {
  return denies.some((d) =>
    d.tool === tool && d.segs !== null && (!bash || d.bash) &&
    (d.segs === "all" || covers(d.segs, t))
  );
}

/**
 * Whether the settings deny every session writing `abs` (a file, or with `subtree` a directory
 * and all below it): an `Edit(...)` deny rule in a file Claude Code reads covers it, Claude's
 * sandbox holds Bash to it ({@link REQUIRED_SANDBOX}, no excluded commands), and no
 * `sandbox.filesystem.allowWrite` entry re-opens it to sandboxed commands. What "a
 * session cannot write it" is checked as, with the control plane's coverage
 * (`lib/authz/trust.ts`). Pure; a file Claude Code would ignore denies nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeDenied } from "./session_settings.ts";
 * const text = JSON.stringify({
 *   permissions: { deny: ["Edit(./references/**)"] },
 *   sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false },
 * });
 * const settings = [{ path: "/p/.claude/settings.json", text }];
 * assert.equal(writeDenied({ root: "/p", homeDir: "/home/op", settings }, "/p/references/security-approvers.txt", false), true);
 * ```
 */
export function writeDenied(
  input: Pick<SessionSettingsInput, "root" | "homeDir" | "settings">,
  abs: string,
  subtree: boolean,
): boolean {
  const parsed: ParsedSettings[] = [];
  for (const s of input.settings) {
    const r = parseSettings(s, input.root);
    if (r.parsed !== null) parsed.push(r.parsed);
  }
  const { denies, segmentsOf } = denyRules(input, parsed);
  if (!deniedBy(denies, "Edit", { abs, segs: pathSegments(abs), subtree }, true)) return false;
  // Without Claude's sandbox holding Bash to it, the rule binds the file tools only: a session's
  // shell writes the path all the same (probe 22c C6).
  if (sandboxFindings(parsed).length > 0) return false;
  // A `sandbox.filesystem.allowWrite` entry over it re-opens it to sandboxed commands: one the
  // check cannot read, or that overlaps the path at all, leaves it writable (fail closed; doctor
  // reports it as SETTINGS_REOPENED).
  return !parsed.some((p) =>
    p.opening.some((o) => {
      if (o.list !== "sandbox.filesystem.allowWrite") return false;
      const m = TOOL_RULE.exec(o.value.trim());
      if (m === null || m[2] === undefined) return true;
      return [p.anchor, join(p.anchor, ".claude")].some((anchor) => {
        const segs = segmentsOf(m[2], anchor);
        return segs === null || overlaps(literalPrefix(segs), abs);
      });
    })
  );
}

/**
 * The values of Claude Code's `sandbox` settings that doctor and serve require with the trust
 * roots' rules (probe 22c C6). Read and Edit deny rules bind Claude's own file tools only; a Bash
 * command is held to them only inside Claude's sandbox, which adds them to its own deny lists
 * (`convertToSandboxRuntimeConfig`, utils/sandbox/sandbox-adapter.ts). Each value closes one way
 * out of it, with Claude Code's default (`sandbox-adapter.ts`, `shouldUseSandbox.ts`):
 * `enabled` (default false: no sandbox), `failIfUnavailable` (default false: when the sandbox
 * cannot start, commands run unsandboxed after a warning), `allowUnsandboxedCommands` (default
 * true: the model may rerun a command with `dangerouslyDisableSandbox`). `excludedCommands`, which
 * are never sandboxed, must be absent or empty in every file (its arrays concatenate).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { REQUIRED_SANDBOX } from "./session_settings.ts";
 * assert.deepEqual(REQUIRED_SANDBOX.map((r) => [r.key, r.value]), [
 *   ["enabled", true], ["failIfUnavailable", true], ["allowUnsandboxedCommands", false],
 *   ["enableWeakerNestedSandbox", false],
 * ]);
 * ```
 */
export const REQUIRED_SANDBOX: readonly {
  readonly key:
    | "enabled"
    | "failIfUnavailable"
    | "allowUnsandboxedCommands"
    | "enableWeakerNestedSandbox";
  readonly value: boolean;
  /** Claude Code's default when no file sets it. */
  readonly byDefault: boolean;
  /** What the wrong value lets a session do. */
  readonly why: string;
}[] = Object.freeze(
  [
    {
      key: "enabled",
      value: true,
      byDefault: false,
      why:
        "without Claude Code's sandbox its Bash runs outside every Read and Edit deny rule, so " +
        "a session's shell may cut the decision log, write .agentteams/ and read the key dir",
    },
    {
      key: "failIfUnavailable",
      value: true,
      byDefault: false,
      why: "when the sandbox cannot start (bubblewrap missing, an unsupported platform) Claude " +
        "Code warns and runs every command unsandboxed",
    },
    {
      key: "allowUnsandboxedCommands",
      value: false,
      byDefault: true,
      why: "the model may rerun a command the sandbox refused with dangerouslyDisableSandbox, " +
        "outside it",
    },
    {
      key: "enableWeakerNestedSandbox",
      value: false,
      byDefault: false,
      why: "Claude Code's weaker Linux sandbox (meant for unprivileged containers) runs commands " +
        "without the isolation the deny rules rely on",
    },
  ] as const,
);

/**
 * The sandbox's findings: each {@link REQUIRED_SANDBOX} value as Claude Code resolves it across
 * the files (`parsed` in its order, the local file last: for a scalar the last file that sets it
 * wins, `settingsMergeCustomizer` in utils/settings/settings.ts), and every file whose
 * `excludedCommands` is not empty.
 */
function sandboxFindings(parsed: readonly ParsedSettings[]): SettingsFinding[] {
  const out: SettingsFinding[] = [];
  const block = (key: string, value: boolean) => `"sandbox": {"${key}": ${value}}`;
  for (const req of REQUIRED_SANDBOX) {
    const setters = parsed.filter((p) => p.sandbox[req.key] !== undefined);
    const last = setters.at(-1);
    const got = last?.sandbox[req.key];
    if (last !== undefined && got !== undefined && got.value === req.value) continue;
    // A value no file sets is Claude Code's default: where that is the one required, it holds.
    if (last === undefined && req.byDefault === req.value) continue;
    const base = {
      code: "SETTINGS_SANDBOX" as const,
      kind: null,
      rule: null,
      add: `"${req.key}": ${req.value}`,
      trustRoot: true,
      sandbox: { key: req.key, value: req.value },
    };
    if (last === undefined || got === undefined) {
      out.push({
        ...base,
        file: SHARED_FILE,
        position: null,
        message: `no settings file sets "sandbox.${req.key}" (Claude Code's default is ` +
          `${req.byDefault}): ${req.why}; add ${block(req.key, req.value)} to ${SHARED_FILE}`,
      });
      continue;
    }
    const over = setters.slice(0, -1).filter((p) => p.sandbox[req.key]?.value === req.value);
    const overrides = over.length > 0
      ? ` (it overrides ${over.map((p) => p.rel).join(", ")}, which sets ${req.value}: the ` +
        `later file wins)`
      : "";
    out.push({
      ...base,
      file: last.rel,
      position: got.position,
      message: `${last.rel}:${got.position.line}:${got.position.column}: "sandbox.${req.key}" ` +
        `is ${got.value}${overrides}: ${req.why}; set ${block(req.key, req.value)} in ${last.rel}`,
    });
  }
  for (const p of parsed) {
    const ex = p.sandbox.excludedCommands;
    if (ex === undefined || ex.value === 0) continue;
    out.push({
      code: "SETTINGS_SANDBOX",
      kind: null,
      rule: null,
      file: p.rel,
      add: null,
      position: ex.position,
      message: `${p.rel}:${ex.position.line}:${ex.position.column}: "sandbox.excludedCommands" ` +
        `lists ${ex.value} command(s) Claude Code never runs in its sandbox, so no deny rule ` +
        `binds them (an empty list in another file does not clear it: the lists concatenate); ` +
        `remove "excludedCommands" from ${p.rel}`,
      trustRoot: true,
      sandbox: { key: "excludedCommands", value: null },
    });
  }
  return out;
}

/** The tool a rule's kind must name (`Read` reads; `Edit` covers every file-editing tool). */
function toolOf(kind: DenyKind): string {
  return kind === "read-deny" ? "Read" : "Edit";
}

/**
 * The session settings' findings: every required rule no readable file holds (with the file it
 * should go in and the exact line to add), every file Claude Code would ignore (with its line and
 * column), every `Write(...)` rule that was meant to deny a write, and every allow rule or sandbox
 * entry over a denied path. An empty list: the settings deny all of it. Pure: the caller reads the
 * files (`readSessionSettings`) and decides `usesClaude`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sessionSettingsFindings } from "./session_settings.ts";
 * const f = sessionSettingsFindings({
 *   root: "/p",
 *   settings: [{ path: "/p/.claude/settings.json", text: "{\n  // no\n}" }],
 *   keyDir: "/k",
 *   secretFiles: ["/k/proposal-ledger.key"],
 *   homeDir: "/home/op",
 *   usesClaude: true,
 * });
 * assert.equal(f[0].code, "SETTINGS_NOT_JSON"); // at line 2, column 3
 * ```
 */
export function sessionSettingsFindings(input: SessionSettingsInput): SettingsFinding[] {
  if (!input.usesClaude) return [];
  const out: SettingsFinding[] = [];
  const parsed: ParsedSettings[] = [];
  const trust = input.trustRoots === true;
  for (const s of input.settings) {
    const r = parseSettings(s, input.root);
    // With the trust roots, a file the check cannot read is an error: Claude Code may read it
    // otherwise (it follows a link; its JSON.parse takes a duplicate key's last value) and so
    // take a sandbox value or an allowWrite entry from it that the check never saw.
    out.push(
      ...r.findings.map((f) => trust && UNREAD_CODES.has(f.code) ? { ...f, trustRoot: true } : f),
    );
    if (r.parsed !== null) parsed.push(r.parsed);
  }
  if (input.settings.every((s) => s.scope !== undefined)) {
    out.push({
      code: "SETTINGS_NONE",
      kind: null,
      rule: null,
      file: SHARED_FILE,
      add: null,
      position: null,
      message: `no Claude Code project settings (${SESSION_SETTINGS_FILES.join(", ")}): the ` +
        `session is denied nothing the runner keeps; create ${SHARED_FILE} with the rules below`,
    });
  }
  const { segmentsOf, denies } = denyRules(input, parsed);
  for (const req of requirements(input)) {
    const tool = toolOf(req.kind);
    // A trust root's rule must bind a session's Bash too, through Claude's sandbox.
    const bash = req.trustRoot === true;
    const uncovered = req.targets.filter((t) => !deniedBy(denies, tool, t, bash));
    if (uncovered.length > 0) {
      const pattern = /[*?[\]\\!]/.test(req.rule.slice(5, -1).replace(/\/\*\*\)?$/, ""))
        ? " (the path holds pattern characters, which Claude Code reads as a pattern: name " +
          "the directory without them)"
        : bash && uncovered.every((t) => deniedBy(denies, tool, t, false))
        ? " (the rule there denies Claude's file tools only: Claude's sandbox does not apply a " +
          "rule with no path, or on Linux a write rule whose path is a pattern, to Bash)"
        : "";
      out.push({
        code: "SETTINGS_RULE_MISSING",
        kind: req.kind,
        rule: req.rule,
        file: req.file,
        add: JSON.stringify(req.rule),
        position: null,
        message: `no ${req.kind} rule for ${req.what}: add ${req.rule} to "permissions.deny" ` +
          `in ${req.file}${pattern}`,
        ...(req.trustRoot === true ? { trustRoot: true } : {}),
      });
    }
    // A Write(...) rule over the target: accepted by Claude Code, never checked.
    if (req.kind === "write-deny") {
      for (const p of parsed) {
        for (const d of p.deny) {
          const m = TOOL_RULE.exec(d.value.trim());
          if (m === null || m[1] !== "Write") continue;
          const segs = m[2] === undefined ? [] : segmentsOf(m[2], p.anchor);
          if (segs === null || !req.targets.some((t) => overlaps(literalPrefix(segs), t.abs))) {
            continue;
          }
          out.push({
            code: "SETTINGS_WRITE_RULE",
            kind: req.kind,
            rule: req.rule,
            file: p.rel,
            add: JSON.stringify(req.rule),
            position: d.position,
            message: `${p.rel}:${d.position.line}:${d.position.column}: ${d.value} denies ` +
              `nothing: Claude Code checks paths only for Read and Edit rules (Edit covers ` +
              `every tool that writes files); write ${req.rule} instead`,
          });
        }
      }
    }
    // What could re-open the target: an allow or ask rule, a sandbox allow entry.
    for (const p of parsed) {
      for (const o of p.opening) {
        const m = TOOL_RULE.exec(o.value.trim());
        if (m === null || m[1] !== tool) continue;
        const sandbox = o.list.startsWith("sandbox.");
        // A sandbox entry's `/path` is relative to the settings file's directory in Claude's
        // sandbox docs, a rule's to the directory holding `.claude/`: both are tried.
        const anchors = sandbox ? [p.anchor, join(p.anchor, ".claude")] : [p.anchor];
        const hit = anchors.some((anchor) => {
          // A bare allowed tool names no path: deny rules still win over it.
          if (m[2] === undefined) return false;
          const segs = segmentsOf(m[2], anchor);
          // A sandbox entry the check cannot read may re-open anything; it really re-opens
          // what it overlaps. An allow rule is reported when it names the denied path itself.
          if (segs === null) return sandbox;
          // A literal entry re-opens what lies at or below it inside the denied directory (an
          // entry above it leaves a deny below it standing); one with wildcards may match
          // inside it from anywhere, so any overlap counts.
          const at = literalPrefix(segs);
          const wild = segs.some((g) => literalOf(g) === null);
          return sandbox && wild ? overlaps(at, req.scope) : within(at, req.scope);
        });
        if (!hit) continue;
        const why = sandbox
          ? "it re-opens the path to sandboxed commands, which the deny rule would close"
          : "deny rules win in Claude Code, so it opens nothing while the deny rule stands, but " +
            "it says the opposite of the rule and a later edit that drops the deny leaves it open";
        out.push({
          code: "SETTINGS_REOPENED",
          kind: req.kind,
          rule: req.rule,
          file: p.rel,
          add: null,
          position: o.position,
          message: `${p.rel}:${o.position.line}:${o.position.column}: ${o.list} entry ` +
            `${JSON.stringify(m[2] ?? o.value)} reaches what ${req.rule} denies; ${why}: ` +
            `remove it`,
          // A sandbox entry really re-opens a trust root to sandboxed commands.
          ...(sandbox && req.trustRoot === true ? { trustRoot: true } : {}),
        });
      }
    }
  }
  // What makes the rules bind Bash too, with the trust roots' rules.
  if (trust) out.push(...sandboxFindings(parsed));
  return out;
}
