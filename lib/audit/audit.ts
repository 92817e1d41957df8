/**
 * The audit of directories and named files on disk (`agentteams audit` and `auditTeam` in the
 * library): walk, check, and with `fix` narrow and re-check. It reads files only and never
 * needs the ledger key.
 *
 * @module
 */
import { FsSafetyError, UsageError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { lstatOrNull } from "../fs/entry.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { isAbsolute, join, relative, resolve } from "../fs/path.ts";
import { within } from "../fs/within.ts";
import { byPlace, type Finding } from "./finding.ts";
import { fixText, isGenerated } from "./fix.ts";
import type { FixOutcome } from "./report.ts";
import {
  agentFileKind,
  auditEntries,
  type AuditEntry,
  type AuditOptions,
  exemptFiles,
  isAgentEntry,
} from "./team.ts";
import { agentText, MAX_AGENT_BYTES, namedEntry, walkTeam } from "./walk.ts";

/** Options of {@link auditTeam}. */
export interface AuditTeamOptions extends AuditOptions {
  /** Narrow what can be narrowed (`--fix`). */
  readonly fix?: boolean;
  /** The operator's key dir and home (absolute), for the Claude settings check. */
  readonly operator?: { readonly keyDir: string; readonly homeDir: string };
}

/** What an audit found. */
export interface AuditResult {
  /** Every finding, sorted by file and place. */
  readonly findings: Finding[];
  /** How many agent files were audited. */
  readonly files: number;
  /** What `fix` did, when asked. */
  readonly fixes?: FixOutcome[];
}

interface Group {
  /** The directory the entries' paths are relative to. */
  readonly base: string;
  /** How the group's paths are shown (its base relative to the project, or as given). */
  readonly prefix: string;
  readonly entries: AuditEntry[];
  /** Entries named on the command line (a fix may touch them even when adopted). */
  readonly named: boolean;
}

/**
 * Audits directories (each a team: its own orchestrator exemption) and named files (one team
 * together), relative to `project`.
 *
 * @example
 * ```ts
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
  const groups = await collect(project, paths, !opts.switchOn);
  let fixes: FixOutcome[] | undefined;
  if (opts.fix === true) {
    fixes = [];
    const fixed: Group[] = [];
    let stale = false;
    for (const g of groups) {
      const f = fixGroup(g);
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
    const aliased = groups.length > 1 || groups.some((g) => g.named) || !opts.switchOn;
    const fresh = stale || (written && aliased);
    const now = fresh ? await collect(project, paths, !opts.switchOn) : fixed;
    return { ...result(now, opts), fixes };
  }
  return result(groups, opts);
}

function result(groups: readonly Group[], opts: AuditTeamOptions): AuditResult {
  const findings: Finding[] = [];
  let files = 0;
  for (const g of groups) {
    files += g.entries.filter(isAgentEntry).length;
    // The settings' `./` rules are relative to the team's directory, where its session starts.
    const place = opts.operator === undefined ? undefined : { root: g.base, ...opts.operator };
    for (const f of auditEntries(g.entries, { ...opts, settingsPlace: place })) {
      findings.push({ ...f, file: g.prefix === "" ? f.file : `${g.prefix}/${f.file}` });
    }
  }
  return { findings: findings.sort(byPlace), files };
}

async function collect(
  project: string,
  paths: readonly string[],
  followLinks: boolean,
): Promise<Group[]> {
  const groups: Group[] = [];
  const named: AuditEntry[] = [];
  for (const p of paths.length === 0 ? ["."] : paths) {
    const abs = isAbsolute(p) ? resolve(p) : resolve(project, p);
    const st = await lstatOrNull(abs);
    const shown = within(abs, project) ? relative(project, abs) : abs;
    const isDir = st !== null &&
      (st.isDirectory || (followLinks && st.isSymlink && await isDirAt(abs)));
    if (isDir) {
      groups.push({
        base: abs,
        prefix: shown === "." ? "" : shown,
        entries: await walkTeam(abs, { followLinks }),
        named: false,
      });
      continue;
    }
    if (st === null) {
      // A typo must not audit nothing and pass.
      throw new UsageError("USAGE", `${p}: no such file or directory to audit`);
    }
    const e = await namedEntry(abs, shown, followLinks);
    if (e === null) {
      throw new UsageError(
        "USAGE",
        `${p} is not an agent file (.md, .agent.md, .chatmode.md, .toml, .yaml) or a directory`,
      );
    }
    named.push(e);
  }
  if (named.length > 0) groups.push({ base: project, prefix: "", entries: named, named: true });
  return groups;
}

async function isDirAt(abs: string): Promise<boolean> {
  try {
    return (await Deno.stat(abs)).isDirectory;
  } catch {
    return false;
  }
}

/** The refusals of the read before a write that mean the path no longer holds a regular file. */
const NOT_REGULAR: ReadonlySet<string> = new Set(["SYMLINK", "NOT_REGULAR_FILE"]);

/**
 * What fixing a group did: its outcomes, its entries as they now are on disk, and whether a file
 * changed under the fix or could not be written (then only a fresh read tells what it holds).
 */
interface GroupFix {
  readonly outcomes: FixOutcome[];
  readonly entries: AuditEntry[];
  readonly stale: boolean;
}

function fixGroup(g: Group): GroupFix {
  const out: FixOutcome[] = [];
  const entries = [...g.entries];
  let stale = false;
  const exempt = exemptFiles(g.entries);
  for (const [i, e] of g.entries.entries()) {
    const kind = agentFileKind(e);
    if (kind === null || !isAgentEntry(e)) continue;
    if (e.state !== "text" || e.text === undefined) continue;
    const file = g.prefix === "" || g.named ? e.rel : `${g.prefix}/${e.rel}`;
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
        reason: "an adopted file (no AGENTTEAMS fences); name it to fix it",
      });
      continue;
    }
    const abs = g.named ? (isAbsolute(e.rel) ? e.rel : join(g.base, e.rel)) : join(g.base, e.rel);
    try {
      // Written only if the file, still a regular one, holds the bytes that were audited.
      let now: Uint8Array;
      try {
        now = readRegularFileSync(abs, { maxBytes: MAX_AGENT_BYTES, what: "agent file" }).bytes;
      } catch (err) {
        if (!(err instanceof FsSafetyError) || !NOT_REGULAR.has(err.code)) throw err;
        out.push({ file, outcome: "refused", changes: [], reason: "not a regular file" });
        stale = true;
        continue;
      }
      if (agentText(now) !== e.text) {
        out.push({
          file,
          outcome: "refused",
          changes: [],
          reason: "it changed while the audit ran",
        });
        stale = true;
        continue;
      }
      atomicWriteFileSync(abs, r.text);
      entries[i] = { ...e, text: r.text };
      out.push({ file, outcome: "fixed", changes: [...r.changes] });
    } catch (err) {
      stale = true;
      out.push({
        file,
        outcome: "refused",
        changes: [],
        reason: `it can't be written: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }
  return { outcomes: out, entries, stale };
}
