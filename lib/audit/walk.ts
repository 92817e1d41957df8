/**
 * The disk walk of the audit: every agent file under a directory, read as bytes and decoded as
 * strict UTF-8. Under the switch it doesn't follow symlinks: each one where an agent file or an
 * agent directory could be is reported, not read. Without the switch it follows them (once per
 * real directory). It never throws for a file it can't read: that is an entry of its own.
 *
 * @module
 */
import { join } from "../fs/path.ts";
import { type AuditEntry, type FileKind, kindOfNamed, kindOfPath } from "./team.ts";

/** Directories the walk never enters. */
const SKIP_DIRS: ReadonlySet<string> = new Set([
  ".git",
  ".hg",
  ".svn",
  "node_modules",
  ".venv",
  ".tox",
  ".agentteams",
  ".agentteams-status",
  ".agentteams-queue",
]);

/**
 * How deep the walk goes; a directory below is reported (as unreadable), never silently left:
 * Claude Code's walk of `.claude/agents/` has no depth limit.
 */
export const MAX_WALK_DEPTH = 256;

/**
 * A path inside a Claude or Copilot agent folder: Claude Code loads every `*.md` below
 * `.claude/agents/`, in any folder (`node_modules`, `.git` included), and the Copilot CLI 1.0.102
 * every `*.md` below `.github/agents/` (`node_modules` included), so the walk enters every folder
 * there.
 */
const AGENTS_INSIDE = /(^|\/)\.(claude|github)\/agents\//i;

/** Files larger than this are reported unreadable rather than read. */
export const MAX_AGENT_BYTES = 8 * 1024 * 1024;

const AGENT_DIR =
  /(^|\/)(\.claude|\.github\/(agents|chatmodes|hooks)|\.vscode|\.codex|\.goose|recipes)(\/|$)/i;

function dirKind(rel: string): FileKind | null {
  if (/(^|\/)\.claude(\/|$)/i.test(rel)) return "claude";
  if (/(^|\/)\.github\/(agents|chatmodes)(\/|$)/i.test(rel)) return "copilot";
  if (/(^|\/)\.github\/hooks(\/|$)/i.test(rel)) return "copilot-hooks";
  if (/(^|\/)\.vscode(\/|$)/i.test(rel)) return "vscode-settings";
  if (/(^|\/)\.codex(\/|$)/i.test(rel)) return "codex-agent";
  if (/(^|\/)(\.goose|recipes)(\/|$)/i.test(rel)) return "goose";
  return null;
}

/**
 * An agent file's bytes as the audit reads them: strict UTF-8, a byte-order mark kept (it is a
 * finding), or null when they are not UTF-8.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentText } from "./walk.ts";
 * assert.equal(agentText(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), "\uFEFFa");
 * assert.equal(agentText(new Uint8Array([0xff])), null);
 * ```
 */
export function agentText(bytes: Uint8Array): string | null {
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}

/** One decoder for every file (a whole-input decode keeps no state between calls). */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Reads one file into an entry (text, not UTF-8, unreadable), never throwing; synchronous:
 * agent files are small, and a team has thousands.
 */
function readEntrySync(abs: string, rel: string, kind?: FileKind): AuditEntry {
  try {
    const st = Deno.statSync(abs);
    if (!st.isFile || st.size > MAX_AGENT_BYTES) return { rel, state: "unreadable", kind };
    const text = agentText(Deno.readFileSync(abs));
    return text === null ? { rel, state: "not-utf8", kind } : { rel, state: "text", text, kind };
  } catch {
    return { rel, state: "unreadable", kind };
  }
}

/** Options of {@link walkTeam} and {@link listTeam}. */
export interface WalkOptions {
  readonly followLinks: boolean;
  /** Walk only this folder of `dir` (e.g. `.claude/agents`), its paths still from `dir`. */
  readonly under?: string;
  /** Called after each agent file is read (a progress line). */
  readonly onFile?: () => void;
}

/**
 * A file the walk found, read when asked: `read` gives its entry (reading the file each time it
 * is called; an entry the walk settled itself, a link or an unreadable folder, as it is).
 */
export interface ListedEntry {
  /** The path, relative to the walked directory. */
  readonly rel: string;
  /** The kind, when the walk settled the entry itself. */
  readonly kind?: FileKind;
  /** The entry, with the file's text as it is now. */
  readonly read: () => AuditEntry;
}

/**
 * An entry already read, as a {@link ListedEntry}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listedOf } from "./walk.ts";
 * assert.equal(listedOf({ rel: "AGENTS.md", state: "text", text: "" }).read().rel, "AGENTS.md");
 * ```
 */
export function listedOf(e: AuditEntry): ListedEntry {
  return { rel: e.rel, kind: e.kind, read: () => e };
}

/**
 * Every agent file under `dir` (paths relative to it), symlinks reported under the switch.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { walkTeam } from "./walk.ts";
 * const proj = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${proj}/.claude/agents`, { recursive: true });
 * Deno.writeTextFileSync(`${proj}/.claude/agents/worker.md`, "---\nname: worker\n---\n");
 * Deno.writeTextFileSync(`${proj}/AGENTS.md`, "# team\n");
 * const entries = await walkTeam(proj, { followLinks: false });
 * assert.deepEqual(entries.map((e) => e.rel), [".claude/agents/worker.md", "AGENTS.md"]);
 * ```
 */
export async function walkTeam(dir: string, opts: WalkOptions): Promise<AuditEntry[]> {
  return (await listTeam(dir, opts)).map((l) => l.read());
}

/**
 * The files {@link walkTeam} finds, in its order, none read yet: the audit reads each one just
 * before it checks it, so a team's texts are never all held at once (`onFile` is called as each
 * is read).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listTeam } from "./walk.ts";
 * const proj = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${proj}/AGENTS.md`, "# team\n");
 * const listed = await listTeam(proj, { followLinks: false });
 * assert.deepEqual(listed.map((l) => l.read().state), ["text"]);
 * ```
 */
export async function listTeam(dir: string, opts: WalkOptions): Promise<ListedEntry[]> {
  const out: ListedEntry[] = [];
  const settled = (e: AuditEntry) => out.push(listedOf(e));
  const seen = new Set<string>();
  const visit = async (abs: string, rel: string, level: number): Promise<void> => {
    if (level > MAX_WALK_DEPTH) {
      settled({ rel, state: "unreadable", kind: dirKind(rel) ?? "claude" });
      return;
    }
    if (opts.followLinks) {
      let real: string;
      try {
        // Synchronous, as the reads are: an async call per directory waits on the runtime's
        // thread pool for what one system call tells.
        real = Deno.realPathSync(abs);
      } catch {
        return;
      }
      if (seen.has(real)) return;
      seen.add(real);
    }
    let names: Deno.DirEntry[];
    try {
      names = [...Deno.readDirSync(abs)];
    } catch {
      if (rel !== "" && AGENT_DIR.test(rel)) {
        settled({ rel, state: "unreadable", kind: dirKind(rel) ?? "claude" });
      }
      return;
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of names) {
      const childRel = rel === "" ? d.name : `${rel}/${d.name}`;
      const childAbs = join(abs, d.name);
      let isDir = d.isDirectory;
      let isFile = d.isFile;
      if (d.isSymlink) {
        if (!opts.followLinks) {
          const k = kindOfPath(childRel) ?? (AGENT_DIR.test(childRel) ? dirKind(childRel) : null);
          if (k !== null) settled({ rel: childRel, state: "symlink", kind: k });
          continue;
        }
        try {
          const st = Deno.statSync(childAbs);
          isDir = st.isDirectory;
          isFile = st.isFile;
        } catch {
          if (kindOfPath(childRel) !== null) settled({ rel: childRel, state: "unreadable" });
          continue;
        }
      }
      if (isDir) {
        if (SKIP_DIRS.has(d.name) && !AGENTS_INSIDE.test(childRel)) continue;
        await visit(childAbs, childRel, level + 1);
      } else if (isFile || !d.isSymlink) {
        // The kind is left to the path (set only for a named file), so a YAML file under
        // `recipes/` is audited only when it reads as a Goose recipe.
        if (kindOfPath(childRel) === null) continue;
        out.push({
          rel: childRel,
          read: () => {
            const e = readEntrySync(childAbs, childRel);
            opts.onFile?.();
            return e;
          },
        });
      }
    }
  };
  const under = opts.under ?? "";
  await visit(under === "" ? dir : join(dir, under), under, 0);
  return out;
}

/**
 * The project's Claude Code settings files, as the walk would list them (a link is an entry of its
 * own where the walk follows none): what a named Claude agent file is loaded under, so an audit of
 * named files judges the settings the session really has. Found by the walk's own matcher
 * (`kindOfPath`, which matches these fixed names in any case, as a case-insensitive file system
 * resolves Claude Code's `.claude/settings.json`), in every `.claude` folder of the project in
 * any case.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { claudeSettingsEntries } from "./walk.ts";
 * const proj = Deno.makeTempDirSync();
 * assert.deepEqual(await claudeSettingsEntries(proj, false), []);
 * Deno.mkdirSync(`${proj}/.Claude`);
 * Deno.writeTextFileSync(`${proj}/.Claude/Settings.Local.json`, "{}");
 * assert.deepEqual((await claudeSettingsEntries(proj, false)).map((e) => e.rel), [
 *   ".Claude/Settings.Local.json",
 * ]);
 * ```
 */
export async function claudeSettingsEntries(
  project: string,
  followLinks: boolean,
): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for (const dir of sortedNames(project) ?? [".claude"]) {
    if (dir.toLowerCase() !== ".claude") continue;
    // A folder that can't be listed may still be searched: Claude Code opens its names.
    const names = sortedNames(join(project, dir)) ?? ["settings.json", "settings.local.json"];
    for (const name of names) {
      const rel = `${dir}/${name}`;
      if (kindOfPath(rel) !== "claude-settings") continue;
      const abs = join(project, rel);
      let st: Deno.FileInfo;
      try {
        st = await Deno.lstat(abs);
      } catch {
        continue;
      }
      if (st.isSymlink && !followLinks) {
        out.push({ rel, state: "symlink", kind: "claude-settings" });
      } else out.push(readEntrySync(abs, rel, "claude-settings"));
    }
  }
  return out;
}

/** The names in a directory, sorted, or null when it can't be listed. */
function sortedNames(dir: string): string[] | null {
  try {
    return [...Deno.readDirSync(dir)].map((d) => d.name).sort();
  } catch {
    return null;
  }
}

/**
 * A file named on the command line, as an entry (its kind from its path, else its extension).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { namedEntry } from "./walk.ts";
 * const e = await namedEntry("/p/.claude/agents/w.md", ".claude/agents/w.md", false);
 * assert.equal(e?.kind, "claude");
 * ```
 */
export async function namedEntry(
  abs: string,
  rel: string,
  followLinks: boolean,
): Promise<AuditEntry | null> {
  const kind = kindOfNamed(rel);
  if (kind === null) return null;
  if (!followLinks) {
    try {
      if ((await Deno.lstat(abs)).isSymlink) return { rel, state: "symlink", kind };
    } catch {
      return { rel, state: "unreadable", kind };
    }
  }
  return readEntrySync(abs, rel, kind);
}
