/**
 * The audit of directories and named files on disk (`agentteams audit` and `auditTeam` in the
 * library): walk, check, and with `fix` narrow and re-check. It reads files only and never
 * needs the ledger key.
 *
 * @module
 */
import { FsSafetyError, UsageError } from "../errors.ts";
import { anchoredReplace } from "../fs/anchored_write.ts";
import { lstatOrNull } from "../fs/entry.ts";
import { basename, dirname, isAbsolute, join, relative, resolve } from "../fs/path.ts";
import { within } from "../fs/within.ts";
import { byPlace, type Finding } from "./finding.ts";
import { fixText, isGenerated } from "./fix.ts";
import type { FixOutcome } from "./report.ts";
import {
  agentFileKind,
  auditEach,
  type AuditEntry,
  type AuditOptions,
  exemptFiles,
  isAgentEntry,
  kindOfPath,
} from "./team.ts";
import { auditRootOf } from "./root.ts";
import { claudeAgentDirs, claudeLookDirs } from "./hosts/claude_dirs.ts";
import { copilotAgentDirs } from "./hosts/copilot.ts";
import {
  agentText,
  claudeSettingsEntries,
  type ListedEntry,
  listedOf,
  listTeam,
  namedEntry,
  walkTeam,
} from "./walk.ts";

/** Options of {@link auditTeam}. */
export interface AuditTeamOptions extends AuditOptions {
  /** Narrow what can be narrowed (`--fix`). */
  readonly fix?: boolean;
  /**
   * With `fix`: work out every change and write none (`--fix --dry-run`); each file a fix would
   * change is reported `would-fix`, and the findings are the files' as they are.
   */
  readonly dryRun?: boolean;
  /** Called with the count of agent files walked so far (a progress line; never a decision). */
  readonly onProgress?: (files: number) => void;
  /** The operator's key dir and home (absolute), for the Claude settings check. */
  readonly operator?: { readonly keyDir: string; readonly homeDir: string };
  /**
   * Called with each file's absolute path after it was read and checked and before it is
   * written (tests swap a directory for a link here; the write must still refuse).
   */
  readonly beforeWrite?: (abs: string) => void | Promise<void>;
}

/** What an audit found. */
export interface AuditResult {
  /** Every finding, sorted by file and place. */
  readonly findings: Finding[];
  /** How many agent files were audited. */
  readonly files: number;
  /** The directories named (as shown) in which no agent file was found. */
  readonly emptyDirs: string[];
  /** What `fix` did, when asked. */
  readonly fixes?: FixOutcome[];
}

interface Group {
  /** The directory the entries' paths are relative to. */
  readonly base: string;
  /** How the group's paths are shown (its base relative to the project, or as given). */
  readonly prefix: string;
  /** Its files, each read when it is checked (or fixed). */
  readonly entries: readonly ListedEntry[];
  /** Entries named on the command line (a fix may touch them even when adopted). */
  readonly named: boolean;
  /**
   * The folder named inside the team (`.claude/agents`), relative to `base`: the team is walked
   * and judged from its root, and only the files in this folder are counted, reported and fixed.
   * Empty: the whole team.
   */
  readonly scope: string;
  /**
   * A parent directory's `.claude/agents/`, which Claude Code loads for a session started in
   * the team's root (`hosts/claude_dirs.ts`): judged, never fixed, and the team's settings are
   * not reported again for it.
   */
  readonly parent?: boolean;
}

/** A directory group as the user named it (its base and scope, from the project). */
function shownDir(g: Group): string {
  const parts = [g.prefix, g.scope].filter((x) => x !== "");
  return parts.length === 0 ? "." : parts.join("/");
}

/** Whether `rel` (relative to a group's base) lies in its scope. */
function inScope(g: Group, rel: string): boolean {
  return g.scope === "" || rel === g.scope || rel.startsWith(`${g.scope}/`);
}

/** Whether links are followed: never under the switch, never with `--fix` (it writes). */
function followsLinks(opts: AuditTeamOptions): boolean {
  return !opts.switchOn && opts.fix !== true;
}

/**
 * Audits directories (each a team: its own orchestrator exemption) and named files (one team
 * together), relative to `project`.
 *
 * @example
 * ```ts ignore
 * // Not run: it audits a team in the working directory (a real project's .claude/, .codex/)
 * import { auditTeam } from "./audit.ts";
 * const r = await auditTeam("/work/proj", ["."], { switchOn: true, frameworks: [] });
 * r.findings.filter((f) => f.severity === "error").length; // 0 for a compliant team
 * ```
 */
export async function auditTeam(
  project: string,
  paths: readonly string[],
  opts: AuditTeamOptions,
): Promise<AuditResult> {
  const follow = followsLinks(opts);
  const home = opts.operator?.homeDir ?? null;
  const groups = await collect(project, paths, follow, home, opts.onProgress);
  let fixes: FixOutcome[] | undefined;
  if (opts.fix === true) {
    fixes = [];
    const fixed: Group[] = [];
    let stale = false;
    for (const g of groups) {
      if (g.parent === true) {
        // Outside the team's root: judged, not written (fix it from its own directory).
        fixed.push(g);
        continue;
      }
      const f = await fixGroup(project, g, opts.beforeWrite, opts.dryRun === true);
      fixes.push(...f.outcomes);
      fixed.push({ ...g, entries: f.entries });
      stale ||= f.stale;
    }
    // The findings are the files' as they are now. With nothing written, that is what was read;
    // in one directory walked under the switch (no link followed, each file one entry), each
    // written file holds the text the fix wrote. Otherwise a file may be held by two entries
    // (overlapping paths, a named file, a followed link), and a file found changed or
    // unwritable under the fix holds what only a fresh read tells: then all is read again.
    const written = fixes.some((f) => f.outcome === "fixed");
    const aliased = groups.length > 1 || groups.some((g) => g.named);
    const fresh = stale || (written && aliased);
    const now = fresh ? await collect(project, paths, follow, home) : fixed;
    const r = result(now, opts);
    return { ...r, findings: afterFix(r.findings, fixes), fixes };
  }
  return result(groups, opts);
}

/**
 * The findings after `--fix`: a finding in a file the fix did not change no longer tells to run
 * `--fix` (it just ran) but says why the file was not fixed and what to do instead.
 */
function afterFix(findings: Finding[], fixes: readonly FixOutcome[]): Finding[] {
  const why = new Map<string, string>();
  const fixed = new Set(fixes.filter((x) => x.outcome === "fixed").map((x) => x.file));
  for (const x of fixes) {
    if (!fixed.has(x.file) && x.reason !== undefined && !why.has(x.file)) {
      why.set(x.file, x.reason);
    }
  }
  const advice = /;? ?(re-render it )?or run `agentteams audit --fix`/;
  return findings.map((f) => {
    const reason = why.get(f.file);
    if (reason === undefined || !advice.test(f.message)) return f;
    const message = f.message.replace(advice, "").replace(/[;,. ]+$/, "");
    return { ...f, message: `${message} (--fix left this file as it was: ${reason})` };
  });
}

/** How many files the audit reads before it checks them (at most 8 MiB each). */
const READ_BATCH = 64;

function result(groups: readonly Group[], opts: AuditTeamOptions): AuditResult {
  const findings: Finding[] = [];
  let files = 0;
  const emptyDirs: string[] = [];
  for (const g of groups) {
    let count = 0;
    let claudeHere = false;
    // The exemption is decided first, by paths and a Codex copy's name: the file it read is
    // checked as it read it (each file is read once).
    const early = new Map<ListedEntry, AuditEntry>();
    const exempt = exemptFiles(g.entries, (l) => {
      const e = l.read();
      early.set(l, e);
      return e.state === "text" ? e.text ?? "" : null;
    });
    // The files are read a few at a time just before they are checked, and let go after: a
    // team's texts are never all held at once. (Read one at a time between checks, each read
    // costs about twice what it costs among other reads.)
    const read = function* (): Generator<AuditEntry> {
      for (let i = 0; i < g.entries.length; i += READ_BATCH) {
        const batch = g.entries.slice(i, i + READ_BATCH).map((l) => early.get(l) ?? l.read());
        for (const e of batch) {
          if (inScope(g, e.rel)) {
            if (isAgentEntry(e)) count++;
            // A named folder's Claude agents are loaded under the team's settings: their
            // findings count.
            if ((e.kind ?? kindOfPath(e.rel)) === "claude") claudeHere = true;
          }
          yield e;
        }
      }
    };
    // The settings' `./` rules are relative to the team's directory, where its session starts.
    const place = opts.operator === undefined ? undefined : { root: g.base, ...opts.operator };
    const found = auditEach(read(), exempt, { ...opts, settingsPlace: place });
    // A parent's folder is judged, not counted: what was named is what may be empty.
    if (g.parent !== true) {
      files += count;
      if (count === 0 && !g.named) emptyDirs.push(shownDir(g));
    }
    for (const f of found) {
      // The team's settings, by the walk's matcher (any case, the local file too): their hooks
      // run in the session that loads the named folder's agents.
      const settings = kindOfPath(f.file) === "claude-settings";
      if (!inScope(g, f.file) && !(settings && claudeHere && g.parent !== true)) continue;
      findings.push({ ...f, file: g.prefix === "" ? f.file : `${g.prefix}/${f.file}` });
    }
  }
  return { findings: findings.sort(byPlace), files, emptyDirs };
}

async function collect(
  project: string,
  paths: readonly string[],
  followLinks: boolean,
  home: string | null,
  onProgress?: (files: number) => void,
): Promise<Group[]> {
  let walked = 0;
  const onFile = onProgress === undefined ? undefined : () => onProgress(++walked);
  const groups: Group[] = [];
  const named: AuditEntry[] = [];
  for (const p of paths.length === 0 ? ["."] : paths) {
    const abs = isAbsolute(p) ? resolve(p) : resolve(project, p);
    const st = await lstatOrNull(abs);
    const shownOf = (a: string) => within(a, project) ? relative(project, a) : a;
    const linkedDir = st !== null && st.isSymlink && await isDirAt(abs);
    if (st !== null && (st.isDirectory || linkedDir)) {
      // A framework's agent folder (or a folder in it) is judged from its team's root.
      const root = auditRootOf(abs, project);
      if (linkedDir && !followLinks && root.scope === "") {
        throw new UsageError(
          "USAGE",
          `${p} is a symlink to a directory; under the switch and with --fix the audit follows ` +
            "no link: name the directory it points to",
        );
      }
      const shown = shownOf(root.base);
      groups.push({
        base: root.base,
        prefix: shown === "." ? "" : shown,
        entries: await listTeam(root.base, { followLinks, onFile }),
        named: false,
        scope: root.scope,
      });
      groups.push(...await parentGroups(root.base, home, followLinks, shownOf));
      continue;
    }
    if (st === null) {
      // A typo must not audit nothing and pass.
      throw new UsageError("USAGE", `${p}: no such file or directory to audit`);
    }
    const e = await namedEntry(abs, shownOf(abs), followLinks);
    if (e === null) {
      throw new UsageError(
        "USAGE",
        `${p} is not an agent file (.md, .agent.md, .chatmode.md, .toml, .yaml) or a directory`,
      );
    }
    named.push(e);
  }
  if (named.length > 0) {
    // Named Claude agents are loaded under the project's settings: those are judged with them
    // (else the audit would say there are none).
    const claude = named.some((e) => (e.kind ?? kindOfPath(e.rel)) === "claude");
    const settings = claude ? await claudeSettingsEntries(project, followLinks) : [];
    groups.push({
      base: project,
      prefix: "",
      entries: [...named, ...settings].map(listedOf),
      named: true,
      scope: "",
    });
  }
  // A parent folder is judged once, and not at all when it is a team named itself.
  const teams = new Set(groups.filter((g) => g.parent !== true).map((g) => g.base));
  const seen = new Set<string>();
  return groups.filter((g) => {
    if (g.parent !== true) return true;
    const key = `${g.base}\0${g.scope}`;
    if (teams.has(g.base) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The nearest directory of `dirs` (nearest first) that is a git root: for Claude Code, any `.git`
 * directory or file; for the Copilot CLI (`real`), a repository (`.git/HEAD`, or a `.git` file
 * naming its `gitdir:`), so an empty `.git` folder stops Claude Code's walk and not Copilot's.
 */
async function gitRootOf(dirs: readonly string[], real: boolean): Promise<string | null> {
  for (const d of dirs) {
    try {
      const st = await Deno.stat(join(d, ".git"));
      if (!real && (st.isDirectory || st.isFile)) return d;
      if (st.isDirectory && (await Deno.stat(join(d, ".git", "HEAD"))).isFile) return d;
      if (st.isFile && (await Deno.readTextFile(join(d, ".git"))).startsWith("gitdir:")) return d;
    } catch {
      // No root here (or none the audit may read: then it looks further up, the wider reading).
    }
  }
  return null;
}

/** A Claude Code project's agent folder, from its directory. */
const CLAUDE_AGENTS = ".claude/agents";
/** A Copilot project's agent folder, from its directory. */
const COPILOT_AGENTS = ".github/agents";
/** Claude Code's project MCP servers file, in each directory from the session's up to `/`. */
const CLAUDE_MCP = ".mcp.json";

/**
 * The agent folders of each parent directory the hosts load for a session started in `base`, as
 * groups judged with the team: Claude Code's `.claude/agents/` up to the git root, else up to
 * HOME (`hosts/claude_dirs.ts`); the Copilot CLI's `.github/agents/` and `.claude/agents/` up to
 * the repository's root, else up to `/` (`hosts/copilot.ts` `copilotAgentDirs`); and each
 * parent's `.mcp.json` up to `/`. A link on the way where the walk follows none is an entry of its
 * own.
 */
async function parentGroups(
  base: string,
  home: string | null,
  followLinks: boolean,
  shownOf: (abs: string) => string,
): Promise<Group[]> {
  const look = claudeLookDirs(base, null);
  const claude = new Set(claudeAgentDirs(base, home, await gitRootOf(look, false)));
  const copilot = new Set(copilotAgentDirs(base, await gitRootOf(look, true)));
  const out: Group[] = [];
  for (const d of look.slice(1)) {
    const folders = [
      ...(claude.has(d) || (copilot.has(d) && d !== home) ? [CLAUDE_AGENTS] : []),
      ...(copilot.has(d) ? [COPILOT_AGENTS] : []),
    ];
    // Claude Code merges the `.mcp.json` of every directory up to `/` (`check_mcp.ts`).
    for (const folder of [...folders, CLAUDE_MCP]) {
      const entries = folder === CLAUDE_MCP
        ? await mcpEntry(d, followLinks)
        : await folderEntries(d, folder, followLinks);
      if (entries.length === 0) continue;
      const shown = shownOf(d);
      out.push({
        base: d,
        prefix: shown === "." || shown === "" ? "" : shown,
        entries: entries.map(listedOf),
        named: false,
        scope: folder,
        parent: true,
      });
    }
  }
  return out;
}

/** A parent's `.mcp.json`, as a one-entry list (a link where none is followed reported). */
async function mcpEntry(dir: string, followLinks: boolean): Promise<AuditEntry[]> {
  const abs = join(dir, CLAUDE_MCP);
  if (await lstatOrNull(abs) === null) return [];
  const e = await namedEntry(abs, CLAUDE_MCP, followLinks);
  return e === null ? [] : [e];
}

/** The entries of `dir/folder` (a two-level agent folder), a link on the way reported. */
async function folderEntries(
  dir: string,
  folder: string,
  followLinks: boolean,
): Promise<AuditEntry[]> {
  const [top] = folder.split("/");
  const first = await lstatOrNull(join(dir, top));
  if (first === null) return [];
  const second = first.isSymlink ? null : await lstatOrNull(join(dir, folder));
  if (!first.isSymlink && second === null) return [];
  const kind = folder === CLAUDE_AGENTS ? "claude" : "copilot";
  if (!followLinks && (first.isSymlink || second?.isSymlink === true)) {
    return [{ rel: first.isSymlink ? top : folder, state: "symlink", kind }];
  }
  if (!first.isSymlink && !first.isDirectory) return [];
  return await walkTeam(dir, { followLinks, under: folder });
}

async function isDirAt(abs: string): Promise<boolean> {
  try {
    return (await Deno.stat(abs)).isDirectory;
  } catch {
    return false;
  }
}

/**
 * What fixing a group did: its outcomes, its entries as they now are on disk, and whether a file
 * changed under the fix or could not be written (then only a fresh read tells what it holds).
 */
interface GroupFix {
  readonly outcomes: FixOutcome[];
  readonly entries: ListedEntry[];
  readonly stale: boolean;
}

async function fixGroup(
  project: string,
  g: Group,
  beforeWrite: AuditTeamOptions["beforeWrite"],
  dryRun: boolean,
): Promise<GroupFix> {
  const out: FixOutcome[] = [];
  // A fix reads the whole team once and checks what it wrote against what it read.
  const read = g.entries.map((l) => l.read());
  const entries = [...read];
  let stale = false;
  const exempt = exemptFiles(read);
  for (const [i, e] of read.entries()) {
    if (!inScope(g, e.rel)) continue;
    const file = g.prefix === "" || g.named ? e.rel : `${g.prefix}/${e.rel}`;
    if (e.state === "symlink") {
      out.push({
        file,
        outcome: "refused",
        changes: [],
        reason: "it is a symlink, and --fix never writes through a link; replace it with a " +
          "regular file, then run agentteams audit --fix again",
      });
      continue;
    }
    const kind = agentFileKind(e);
    if (kind === null || !isAgentEntry(e)) continue;
    if (e.state !== "text" || e.text === undefined) continue;
    const r = fixText(kind, e.rel, e.text, exempt.has(e.rel));
    if (r.outcome === "unchanged") continue;
    if (r.outcome === "refused") {
      out.push({ file, outcome: "refused", changes: [], reason: r.reason });
      continue;
    }
    if (!g.named && !isGenerated(e.text)) {
      out.push({
        file,
        outcome: "skipped-adopted",
        changes: [],
        reason: "an adopted file (no AGENTTEAMS fences), which --fix changes only when named: " +
          `run agentteams audit --fix ${shellWord(file)} (it would make: ${r.changes.join("; ")})`,
      });
      continue;
    }
    if (dryRun) {
      out.push({ file, outcome: "would-fix", changes: [...r.changes] });
      continue;
    }
    const abs = g.named ? (isAbsolute(e.rel) ? e.rel : join(g.base, e.rel)) : join(g.base, e.rel);
    const at = anchorOf(project, abs);
    const content = new TextEncoder().encode(r.text);
    try {
      await beforeWrite?.(abs);
      // Written only if the file, still a regular one reached through no link, holds the bytes
      // that were audited: the anchored write walks one directory at a time and refuses a link.
      await anchoredReplace({
        root: at.root,
        dirs: at.dirs,
        name: at.name,
        op: "write",
        createDirs: false,
        decide: (current) => {
          if (current === null || agentText(current.bytes) !== e.text) throw new ChangedUnderFix();
          return { newFileMode: 0o644, content };
        },
      });
      entries[i] = { ...e, text: r.text };
      out.push({ file, outcome: "fixed", changes: [...r.changes] });
    } catch (err) {
      stale = true;
      const reason = err instanceof ChangedUnderFix
        ? "it changed while the audit ran"
        : err instanceof FsSafetyError && err.code === "SYMLINK"
        ? `${err.message}, and --fix never writes through a link`
        : err instanceof FsSafetyError &&
            (err.code === "NOT_REGULAR_FILE" || err.code === "NOT_DIRECTORY")
        ? `not a regular file (${err.message})`
        : `it can't be written: ${err instanceof Error ? err.message : String(err)}`;
      out.push({ file, outcome: "refused", changes: [], reason });
    }
  }
  return { outcomes: out, entries: entries.map(listedOf), stale };
}

/** The file held other bytes at the write than the audit read. */
class ChangedUnderFix extends Error {}

/**
 * Where the anchored write of `abs` starts: the project root when the file lies in it (so no
 * directory between the project and the file may be a link), else the file's own directory.
 */
function anchorOf(project: string, abs: string): { root: string; dirs: string[]; name: string } {
  const dir = dirname(abs);
  if (within(abs, project) && abs !== project) {
    const rel = relative(project, dir);
    return {
      root: project,
      dirs: rel === "" || rel === "." ? [] : rel.split("/"),
      name: basename(abs),
    };
  }
  return { root: dir, dirs: [], name: basename(abs) };
}

/** A path as one shell word (quoted when it needs to be). */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}
