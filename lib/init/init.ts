/**
 * `agentteams init`: switches a project on in one command, idempotently. Everything is decided
 * before the first write (a refusal leaves the project as it was), each change is shown before it
 * is made, and `dryRun` shows them only:
 *
 * 1. the brief (`agentteams.jsonc`, or the one the project has): the commented template
 *    (`lib/policy/brief_template.ts`) naming the agents the audit's walk finds, checked by the
 *    brief's own reader, schema and lint; an existing brief is kept, and with `force` backed up
 *    (`<brief>.bak`, never over an earlier backup) and replaced;
 * 2. the Claude Code settings: exactly the deny rules and `sandbox` values the one settings check
 *    requires for this operator (`sessionSettingsFindings` with `operatorSettingsInput`, as
 *    `doctor` and `serve` ask it), merged into the file each belongs in without losing the
 *    user's rules (a non-empty `sandbox.excludedCommands` is refused, never removed); a settings
 *    file that check cannot read (JSONC, not JSON, another shape, a link) is refused, never
 *    rewritten;
 * 3. the `.gitignore` lines for the runner's runtime folders;
 * 4. the reference file the agents' write-policy sections point at;
 * 5. then `audit --fix --dry-run`: what `--fix` would change, and the command that does it.
 *
 * Writes go through the anchored write (`lib/fs/anchored_write.ts`: atomic, no link followed on
 * the way or at the target), each only if the file still holds what was read.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project with agent files at /work/p.
 * import { initProject } from "./init.ts";
 * const r = await initProject({
 *   root: "/work/p", env: { HOME: "/home/op" }, dryRun: true, force: false, show: console.log,
 * });
 * r.changes.map((c) => c.file); // ["agentteams.jsonc", ".claude/settings.json", ".gitignore", ...]
 * ```
 * @module
 */
import { FsSafetyError, InitError, isAgentTeamsError, PolicyError, UsageError } from "../errors.ts";
import type { Env } from "../env.ts";
import { anchoredReplace } from "../fs/anchored_write.ts";
import { lstatOrNull } from "../fs/entry.ts";
import { join, relative, resolve } from "../fs/path.ts";
import { readRegularFile } from "../fs/safe_read.ts";
import { within } from "../fs/within.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { keyDir } from "../crypto/keys.ts";
import { homeFrom } from "../env.ts";
import { auditTeam } from "../audit/audit.ts";
import { WRITE_POLICY_REFERENCE } from "../audit/fix.ts";
import type { FixOutcome } from "../audit/report.ts";
import {
  agentFileKind,
  type AuditEntry,
  exemptFiles,
  isAgentEntry,
  kindOfPath,
  slugOf,
} from "../audit/team.ts";
import { walkTeam } from "../audit/walk.ts";
import { defaultBriefPath, MAX_BRIEF_BYTES } from "../policy/brief_file.ts";
import { briefTemplate, type FoundAgent } from "../policy/brief_template.ts";
import { RUNTIME_FOLDERS } from "../policy/control_plane.ts";
import { briefFindings } from "../policy/parse.ts";
import {
  SESSION_SETTINGS_FILES,
  sessionSettingsFindings,
  type SettingsText,
} from "../policy/session_settings.ts";
import { mergeSessionSettings } from "../policy/session_settings_merge.ts";
import { MAX_SETTINGS_BYTES, readSessionSettings } from "../policy/session_settings_read.ts";
import { operatorSettingsInput } from "../runner/preflight.ts";
import { BRIEF_UNREADABLE_REASON, briefQueueReason } from "../queue/mode.ts";
import { writePolicyReference } from "./reference.ts";

/** The brief `init` writes when the project has none. */
export const INIT_BRIEF_NAME = "agentteams.jsonc";

/** What `init` does (or, under `dryRun`, would do) to one file. */
export interface InitChange {
  /** The file, relative to the project. */
  readonly file: string;
  /** `create`, `update` (lines added), `replace` (with `force`), `backup`, or `keep` (left as is). */
  readonly action: "create" | "update" | "replace" | "backup" | "keep";
  /** One sentence: what changes, or why it is left. */
  readonly what: string;
}

/** The input of {@link initProject}. */
export interface InitOptions {
  /** The project root. */
  readonly root: string;
  /** The operator's environment (HOME, the key dir's variables): the settings rules name it. */
  readonly env: Env;
  /** Show every change, make none. */
  readonly dryRun: boolean;
  /** Replace an existing brief or reference file that differs from the template (backed up). */
  readonly force: boolean;
  /** The brief to write (absolute, inside the project); default: the project's, else `agentteams.jsonc`. */
  readonly briefPath?: string | null;
  /** Called with each change before it is made (and under `dryRun`, instead). */
  readonly show: (change: InitChange) => void;
  /** Called with the count of agent files walked so far (a progress line). */
  readonly onProgress?: (files: number) => void;
}

/** What {@link initProject} did. */
export interface InitReport {
  /** The project root (real). */
  readonly root: string;
  /** Every change, in the order made (or shown); `keep` entries name what was left. */
  readonly changes: readonly InitChange[];
  /** The agents the brief template names (a slug each). */
  readonly agents: readonly string[];
  /** What else the settings check says (warnings `doctor` will repeat), one sentence each. */
  readonly notes: readonly string[];
  /** What `audit --fix` would change (its dry run). */
  readonly fixes: readonly FixOutcome[];
  /**
   * The command that makes those changes, run from the project root (its files relative to it),
   * or null when there is none to make.
   */
  readonly fixCommand: string | null;
  /** The files that command names, relative to the project root. */
  readonly fixFiles: readonly string[];
  /** The audit's enforced errors as the project now is (before `--fix`). */
  readonly auditErrors: number;
  /** The brief, relative to the project root. */
  readonly brief: string;
  /**
   * Whether the brief as it now is (or, under `dryRun`, would be) turns the switch on: `on` when
   * it is the template or says `"write_policy": "orchestrator-only"`, `off` when a brief init
   * kept says otherwise, `unreadable` when the kept one cannot be read as a brief's JSON (queue
   * mode's one rule, `briefQueueReason`).
   */
  readonly switchState: "on" | "off" | "unreadable";
}

/** A file `init` would write: its new bytes and the bytes it must still hold (null: absent). */
interface Write {
  readonly change: InitChange;
  readonly content: Uint8Array;
  readonly expect: Uint8Array | null;
}

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

/** The settings check's codes for a file whose rules count for nothing: init never rewrites one. */
const UNREADABLE_SETTINGS = new Set(["SETTINGS_NOT_JSON", "SETTINGS_SHAPE", "SETTINGS_UNREADABLE"]);

/**
 * Refuses a link, or an entry of the wrong kind, at `rel` or at any directory on the way to it:
 * `init` writes nothing through a link and checks that up front, so a refusal leaves every file
 * as it was (the anchored write refuses a link swapped in later).
 */
async function refuseLinks(root: string, rel: string, last: "file" | "dir"): Promise<void> {
  const parts = rel.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const sub = parts.slice(0, i).join("/");
    const st = await lstatOrNull(join(root, sub));
    if (st === null) return;
    const want = i < parts.length ? "dir" : last;
    if (st.isSymlink) {
      throw new InitError(
        "INIT_LINK",
        `${sub} is a symlink; init writes nothing through a link (a session could point it at ` +
          `a file of yours): replace it with a real ${want === "dir" ? "directory" : "file"}, ` +
          "then run agentteams init again",
      );
    }
    if (want === "dir" ? !st.isDirectory : !st.isFile) {
      throw new InitError(
        "INIT_LINK",
        `${sub} is not a ${want === "dir" ? "directory" : "regular file"}; init would write ` +
          "there: move it away, then run agentteams init again",
      );
    }
  }
}

/** A file's bytes, or null when it does not exist (a link or non-file was refused before). */
async function bytesOrNull(
  abs: string,
  maxBytes: number,
  what: string,
): Promise<Uint8Array | null> {
  try {
    return (await readRegularFile(abs, { maxBytes, what })).bytes;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The agent files that cannot be read: init names its agents from them, so it stops. */
function unreadableAgents(entries: readonly AuditEntry[]): AuditEntry[] {
  return entries.filter((e) =>
    e.state !== "text" && (e.kind ?? kindOfPath(e.rel)) !== "claude-settings"
  );
}

/** The agents the template names: every agent file's slug but the exempt orchestrator's. */
function foundAgents(entries: readonly AuditEntry[]): FoundAgent[] {
  const exempt = exemptFiles(entries);
  const bySlug = new Map<string, string[]>();
  for (const e of entries) {
    if (e.state !== "text" || agentFileKind(e) === null || !isAgentEntry(e)) continue;
    if (exempt.has(e.rel)) continue;
    const slug = slugOf(e.rel);
    bySlug.set(slug, [...(bySlug.get(slug) ?? []), e.rel]);
  }
  return [...bySlug].map(([slug, files]) => ({ slug, files }));
}

/** A free backup name for `rel`: `<rel>.bak`, else `<rel>.bak.1`, ... */
async function backupName(root: string, rel: string): Promise<string> {
  for (let i = 0; i < 1000; i++) {
    const name = i === 0 ? `${rel}.bak` : `${rel}.bak.${i}`;
    if ((await lstatOrNull(join(root, name))) === null) return name;
  }
  throw new InitError(
    "INIT_BACKUP",
    `${rel} has 1000 backups already; remove the old ones, then run agentteams init again`,
  );
}

/**
 * A file init owns the text of (the brief, the reference file): created when absent, left when
 * the same, else kept (or, with `force`, backed up and replaced).
 */
async function ownedFile(
  root: string,
  rel: string,
  text: string,
  current: Uint8Array | null,
  force: boolean,
  what: string,
): Promise<Write[]> {
  const content = enc.encode(text);
  if (current === null) {
    return [{ change: { file: rel, action: "create", what }, content, expect: null }];
  }
  if (sameBytes(current, content)) return [];
  if (!force) {
    return [{
      change: {
        file: rel,
        action: "keep",
        what: `it exists and differs from the template, and init never overwrites it: keep ` +
          `it, or run agentteams init --force to back it up and write the template`,
      },
      content: current,
      expect: current,
    }];
  }
  const backup = await backupName(root, rel);
  return [
    {
      change: { file: backup, action: "backup", what: `a copy of ${rel} as it was` },
      content: current,
      expect: null,
    },
    { change: { file: rel, action: "replace", what }, content, expect: current },
  ];
}

/** Whether a brief init keeps turns the switch on (queue mode's rule, on its bytes). */
function switchOfKept(bytes: Uint8Array): "on" | "off" | "unreadable" {
  const reason = briefQueueReason(bytes);
  return reason === null ? "off" : reason === BRIEF_UNREADABLE_REASON ? "unreadable" : "on";
}

/** The brief's path: the flag's, else the project's default brief, else `agentteams.jsonc`. */
async function briefPathOf(root: string, given: string | null | undefined): Promise<string> {
  if (given !== null && given !== undefined) {
    const abs = resolve(given);
    if (!within(abs, root) || abs === root) {
      throw new UsageError(
        "USAGE",
        `--brief ${given} lies outside the project ${root}; init writes the brief in the ` +
          "project, where the session settings can deny it to every session",
      );
    }
    return abs;
  }
  try {
    return await defaultBriefPath(root);
  } catch (e) {
    if (e instanceof PolicyError && e.code === "BRIEF_NOT_FOUND") {
      return join(root, INIT_BRIEF_NAME);
    }
    throw e;
  }
}

/** The template's text, refused (a bug, not the user's) when the brief's own checks refuse it. */
function checkedTemplate(agents: readonly FoundAgent[], root: string, briefAbs: string): string {
  const text = briefTemplate(agents);
  const found = briefFindings(
    text,
    { briefPath: briefAbs, projectRoot: root, briefSha256: sha256Hex(text) },
    () => false,
  );
  if (found.findings.length > 0) {
    throw new InitError(
      "INIT_BRIEF_INVALID",
      `the brief template for this project does not pass the brief check (${
        found.findings[0].message
      }); nothing was written: report this as a bug`,
    );
  }
  return text;
}

/** The `.gitignore` with a line per runtime folder it does not ignore yet, or null: none missing. */
function gitignoreText(current: string | null): { text: string; added: string[] } | null {
  const have = new Set(
    (current ?? "").split(/\r?\n/).map((l) => l.trim().replace(/^\//, "").replace(/\/$/, "")),
  );
  const added = RUNTIME_FOLDERS.filter((f) => !have.has(f)).map((f) => `/${f}/`);
  if (added.length === 0) return null;
  const base = current === null || current === "" || current.endsWith("\n")
    ? (current ?? "")
    : `${current}\n`;
  const head = current === null || !current.includes("agentteams") ? "# agentteams runner\n" : "";
  return { text: `${base}${head}${added.join("\n")}\n`, added };
}

/** The settings files with the rules the check requires merged in, and the changes. */
function settingsWrites(
  root: string,
  env: Env,
  files: readonly SettingsText[],
  briefAbs: string,
): { writes: Write[]; notes: string[] } {
  const input = (settings: readonly SettingsText[]) =>
    operatorSettingsInput({ root, env, settings, usesClaude: true, brief: briefAbs });
  const findings = sessionSettingsFindings(input(files));
  const bad = findings.filter((f) => UNREADABLE_SETTINGS.has(f.code));
  if (bad.length > 0) {
    throw new InitError(
      "INIT_SETTINGS_UNREADABLE",
      `${bad[0].message}. init never rewrites a settings file it cannot read as strict JSON (it ` +
        `would lose what you wrote): fix ${bad[0].file} by hand, then run agentteams init again`,
    );
  }
  // Commands the user excluded from Claude's sandbox: init removes nothing the user wrote.
  const excluded = findings.find((f) => f.sandbox?.key === "excludedCommands");
  if (excluded !== undefined) {
    throw new InitError(
      "INIT_SANDBOX_EXCLUDED",
      `${excluded.message}. init never removes what you wrote: remove it by hand, then run ` +
        "agentteams init again",
    );
  }
  const byFile = new Map<string, { rules: string[]; sandbox: Record<string, boolean> }>();
  const at = (file: string) => {
    const e = byFile.get(file) ?? { rules: [], sandbox: {} };
    byFile.set(file, e);
    return e;
  };
  for (const f of findings) {
    if (f.code === "SETTINGS_RULE_MISSING" && f.rule !== null) at(f.file).rules.push(f.rule);
    // A sandbox value is set in the file the check names: the one whose value wins now.
    if (f.sandbox !== undefined && f.sandbox.value !== null) {
      at(f.file).sandbox[f.sandbox.key] = f.sandbox.value;
    }
  }
  const writes: Write[] = [];
  const merged = new Map(files.map((s) => [relative(root, s.path), s]));
  // In Claude's order (the shared file first), then any other file a finding names.
  const order = [
    ...new Set([...SESSION_SETTINGS_FILES.filter((f) => byFile.has(f)), ...byFile.keys()]),
  ];
  for (const file of order) {
    const { rules, sandbox } = byFile.get(file) ?? { rules: [], sandbox: {} };
    const now = merged.get(file);
    const text = mergeSessionSettings(now?.text ?? null, {
      ...(rules.length > 0 ? { deny: rules } : {}),
      sandbox,
    });
    merged.set(file, { path: join(root, file), text });
    const what = [
      ...(rules.length > 0 ? [`deny ${rules.join(", ")} (permissions.deny)`] : []),
      ...(Object.keys(sandbox).length > 0
        ? [
          `hold Bash to them in Claude's sandbox: ${
            Object.entries(sandbox).map(([k, v]) => `sandbox.${k}: ${v}`).join(", ")
          }`,
        ]
        : []),
    ];
    writes.push({
      change: {
        file,
        action: now === undefined ? "create" : "update",
        what: what.join("; "),
      },
      content: enc.encode(text),
      expect: now?.text === undefined || now.text === null ? null : enc.encode(now.text),
    });
  }
  // Fail closed: the merged files must satisfy the very check the rules came from.
  const after = sessionSettingsFindings(input([...merged.values()]));
  const left = after.filter((f) =>
    f.code === "SETTINGS_RULE_MISSING" || f.code === "SETTINGS_SANDBOX"
  );
  if (left.length > 0) {
    throw new InitError(
      "INIT_RULES_UNMET",
      `with the rules merged in, the settings would still miss ${
        left[0].rule ?? `sandbox.${left[0].sandbox?.key}`
      } (${left[0].message}); nothing was written: add it by hand`,
    );
  }
  return { writes, notes: after.map((f) => f.message) };
}

/** Writes one planned file through the anchored write, if it still holds what was read. */
async function write(root: string, w: Write): Promise<void> {
  const dirs = w.change.file.split("/");
  const name = dirs.pop() as string;
  await anchoredReplace({
    root,
    dirs,
    name,
    op: "write",
    createDirs: true,
    decide: (current) => {
      if (!sameBytes(current?.bytes ?? null, w.expect)) {
        throw new FsSafetyError(
          "FILE_CHANGED",
          `${w.change.file} changed while init ran; nothing more was written: run agentteams ` +
            "init again",
        );
      }
      return { newFileMode: 0o644, content: w.content };
    },
  });
}

/** A path as one shell word. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/**
 * The `audit --fix` command naming `files` (shell-quoted), or null for none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fixCommandOf } from "./init.ts";
 * assert.equal(fixCommandOf([".claude/agents/a b.md"]), "agentteams audit --fix '.claude/agents/a b.md'");
 * ```
 */
export function fixCommandOf(files: readonly string[]): string | null {
  return files.length === 0 ? null : `agentteams audit --fix ${files.map(shellWord).join(" ")}`;
}

/**
 * Switches the project at `root` on (see the module doc).
 *
 * @throws {InitError} `INIT_LINK`, `INIT_AGENT_UNREADABLE`, `INIT_SETTINGS_UNREADABLE`,
 *   `INIT_SANDBOX_EXCLUDED`, `INIT_RULES_UNMET`, `INIT_BRIEF_INVALID`, `INIT_FILE_UNREADABLE`, `INIT_BACKUP`, each before
 *   anything is written;
 *   {@link PolicyError} `BRIEF_UNREADABLE` for two default briefs; {@link FsSafetyError} from a
 *   write that found its file changed or a link swapped in.
 * @example
 * ```ts ignore
 * // Not run: it needs a project with agent files at /work/p, and writes there.
 * import { initProject } from "./init.ts";
 * const r = await initProject({
 *   root: "/work/p", env: { HOME: "/home/op" }, dryRun: false, force: false, show: () => {},
 * });
 * r.fixCommand; // "agentteams audit --fix .claude/agents/reviewer.md" when it has work to do
 * ```
 */
export async function initProject(o: InitOptions): Promise<InitReport> {
  const root = Deno.realPathSync(resolve(o.root));
  const briefAbs = await briefPathOf(root, o.briefPath);
  const briefRel = relative(root, briefAbs);
  // 1. No link anywhere init could write, before anything else is read.
  for (const rel of SESSION_SETTINGS_FILES) await refuseLinks(root, rel, "file");
  await refuseLinks(root, WRITE_POLICY_REFERENCE, "file");
  await refuseLinks(root, ".gitignore", "file");
  await refuseLinks(root, briefRel, "file");
  // 2. The agents, from the audit's walk (no link followed).
  const entries = await walkTeam(root, {
    followLinks: false,
    onFile: o.onProgress === undefined ? undefined : (() => {
      let n = 0;
      return () => o.onProgress?.(++n);
    })(),
  });
  const unreadable = unreadableAgents(entries);
  if (unreadable.length > 0) {
    const why = { symlink: "a symlink", unreadable: "unreadable", "not-utf8": "not UTF-8" };
    throw new InitError(
      "INIT_AGENT_UNREADABLE",
      `${unreadable.map((e) => `${e.rel} (${why[e.state as keyof typeof why]})`).join(", ")}: ` +
        "init names the brief's agents from the agent files and cannot read this; make it a " +
        "readable UTF-8 regular file (or remove it), then run agentteams init again",
    );
  }
  const agents = foundAgents(entries);
  // 3. Every write, decided before the first one.
  const writes: Write[] = [];
  const briefNow = await bytesOrNull(briefAbs, MAX_BRIEF_BYTES, "brief");
  writes.push(
    ...await ownedFile(
      root,
      briefRel,
      checkedTemplate(agents, root, briefAbs),
      briefNow,
      o.force,
      `the brief, switch on, naming ${agents.length} agent(s)` +
        (agents.length > 0 ? `: ${agents.map((a) => a.slug).join(", ")}` : ""),
    ),
  );
  const settings = await readSessionSettings(root);
  const s = settingsWrites(root, o.env, settings.settings, briefAbs);
  writes.push(...s.writes);
  const ignoreNow = await bytesOrNull(join(root, ".gitignore"), MAX_SETTINGS_BYTES, ".gitignore");
  let ignoreText: string;
  try {
    ignoreText = ignoreNow === null ? "" : dec.decode(ignoreNow);
  } catch {
    throw new InitError(
      "INIT_FILE_UNREADABLE",
      ".gitignore is not UTF-8 text; init would append to it: fix it, then run agentteams init again",
    );
  }
  const ignore = gitignoreText(ignoreNow === null ? null : ignoreText);
  if (ignore !== null) {
    writes.push({
      change: {
        file: ".gitignore",
        action: ignoreNow === null ? "create" : "update",
        what: `ignore the runner's folders: ${ignore.added.join(", ")}`,
      },
      content: enc.encode(ignore.text),
      expect: ignoreNow,
    });
  }
  const refNow = await bytesOrNull(join(root, WRITE_POLICY_REFERENCE), MAX_BRIEF_BYTES, "file");
  writes.push(
    ...await ownedFile(
      root,
      WRITE_POLICY_REFERENCE,
      writePolicyReference(),
      refNow,
      o.force,
      "the artifacts' forms and the exit codes, which every agent's write-policy section names",
    ),
  );
  // The switch, as the brief will stand: a kept brief decides it by queue mode's own rule.
  const keptBrief = writes.some((w) => w.change.file === briefRel && w.change.action === "keep");
  const switchState = keptBrief ? switchOfKept(briefNow!) : "on";
  // 4. Shown, then made, one at a time.
  for (const w of writes) {
    o.show(w.change);
    if (!o.dryRun && w.change.action !== "keep") await write(root, w);
  }
  // 5. What `audit --fix` would change, under the switch the template turns on.
  let operator: { keyDir: string; homeDir: string } | undefined;
  try {
    operator = { keyDir: keyDir(o.env), homeDir: homeFrom(o.env) };
  } catch (e) {
    if (!isAgentTeamsError(e)) throw e;
  }
  const audit = await auditTeam(root, ["."], {
    switchOn: true,
    frameworks: [],
    fix: true,
    dryRun: true,
    operator,
  });
  const fixes = (audit.fixes ?? []).filter((f) => f.outcome !== "unchanged");
  const toFix = fixes.filter((f) => f.outcome === "would-fix" || f.outcome === "skipped-adopted");
  return {
    root,
    changes: writes.map((w) => w.change),
    agents: agents.map((a) => a.slug),
    notes: s.notes,
    fixes,
    fixCommand: fixCommandOf(toFix.map((f) => f.file)),
    fixFiles: toFix.map((f) => f.file),
    brief: briefRel,
    switchState,
    auditErrors: audit.findings.filter((f) => f.enforced && f.severity === "error").length,
  };
}
