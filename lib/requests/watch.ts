/**
 * The stat watch over the control plane and git's behaviour-changing paths: every entry,
 * recursively, without following symlinks, fingerprinted by type, mode, size, mtime, ctime and
 * inode (a directory by type, mode and inode only: its listing changes show as its entries).
 *
 * ctime cannot be set back by a process, so a same-size rewrite with its mtime restored still
 * shows. Deno reports ctime to the second only, so an entry changed within the last two seconds
 * before the first snapshot ("racy", as git calls it) also gets a content hash, and the later
 * snapshot hashes the same entries again.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statFingerprint } from "./watch.ts";
 * const f = Deno.makeTempFileSync();
 * Deno.writeTextFileSync(f, "abc");
 * // kind, mode, size, mtime and ctime (ms), inode
 * assert.match(statFingerprint(Deno.lstatSync(f)), /^file \d+ 3 \d+ \d+ \d+$/);
 * Deno.removeSync(f);
 * ```
 * @module
 */

import { RequestError } from "../errors.ts";
import { CONTROL_PLANE, type ControlPlane } from "../policy/control_plane.ts";
import { keyUnder } from "../fs/within.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { contentSha256 } from "./fingerprint.ts";

/** Most entries one snapshot will stat before refusing (fail closed). */
export const MAX_WATCHED_ENTRIES = 200_000;

/** How far back (ms, before the second the snapshot started) an entry counts as racy. */
export const RACY_WINDOW_MS = 1000;

/** One place to watch. */
export interface WatchRoot {
  /** Absolute path. */
  readonly abs: string;
  /** Key prefix for reports (project-relative when inside the project, else absolute). */
  readonly key: string;
  /** Walk below it. */
  readonly recursive: boolean;
  /** Child names directly below the root to leave out (e.g. `refs` in git's `info`). */
  readonly skipTop?: readonly string[];
}

/**
 * The stat fingerprint of an entry (see the module note).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statFingerprint } from "./watch.ts";
 * assert.equal(statFingerprint(Deno.lstatSync("/")).startsWith("dir "), true);
 * ```
 */
export function statFingerprint(info: Deno.FileInfo): string {
  const mode = info.mode ?? 0;
  if (info.isDirectory) return `dir ${mode} ${info.ino ?? 0}`;
  const kind = info.isFile ? "file" : info.isSymlink ? "link" : "other";
  const mtime = info.mtime?.getTime() ?? 0;
  const ctime = info.ctime?.getTime() ?? 0;
  return `${kind} ${mode} ${info.size} ${mtime} ${ctime} ${info.ino ?? 0}`;
}

/** The result of a watch pass. */
export interface WatchResult {
  /** Key → fingerprint. */
  readonly entries: Map<string, string>;
  /** Keys whose fingerprint carries a content hash. */
  readonly hashed: Set<string>;
}

/** Options of {@link watchPaths}. */
export interface WatchOptions {
  /** Entries changed at or after this time (ms since the epoch) get a content hash. */
  readonly racyCutoffMs: number;
  /** Keys to hash whatever their times (the earlier snapshot's racy keys). */
  readonly alsoHash?: ReadonlySet<string>;
  /** Keys never hashed: their content is compared by another check (the ledger's guard). */
  readonly statOnly?: ReadonlySet<string>;
  /** Entry cap (default {@link MAX_WATCHED_ENTRIES}). */
  readonly maxEntries?: number;
}

function lstatOrNull(abs: string): Deno.FileInfo | null {
  try {
    return lstatOrNullSync(abs);
  } catch (e) {
    // A watched path below a file that replaced its directory is gone; the file is watched.
    if (e instanceof Deno.errors.NotADirectory) return null;
    throw new RequestError("SNAPSHOT_FAILED", `cannot stat watched path ${abs}: ${String(e)}`);
  }
}

/**
 * Fingerprints every entry under the roots. A root that is a symlink is recorded as a link and
 * also walked through (the host reads what it points at); entries below are never followed.
 * Absent roots record nothing. Throws `SNAPSHOT_FAILED` on an unreadable directory or past the
 * entry cap.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { watchPaths } from "./watch.ts";
 * const p = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${p}/.claude`);
 * Deno.writeTextFileSync(`${p}/.claude/settings.json`, "{}");
 * const w = await watchPaths([{ abs: `${p}/.claude`, key: ".claude", recursive: true }], { racyCutoffMs: 0 });
 * assert.deepEqual([...w.entries.keys()], [".claude", ".claude/settings.json"]);
 * ```
 */
export async function watchPaths(
  roots: readonly WatchRoot[],
  options: WatchOptions,
): Promise<WatchResult> {
  const entries = new Map<string, string>();
  const hashed = new Set<string>();
  const toHash: { abs: string; key: string; fp: string }[] = [];
  const max = options.maxEntries ?? MAX_WATCHED_ENTRIES;
  const record = (abs: string, key: string, info: Deno.FileInfo): void => {
    if (entries.size >= max) {
      throw new RequestError("SNAPSHOT_FAILED", `more than ${max} watched entries`);
    }
    const fp = statFingerprint(info);
    const changed = Math.max(info.mtime?.getTime() ?? 0, info.ctime?.getTime() ?? 0);
    if (
      info.isFile && !options.statOnly?.has(key) &&
      (changed >= options.racyCutoffMs || options.alsoHash?.has(key))
    ) {
      toHash.push({ abs, key, fp });
      hashed.add(key);
    }
    entries.set(key, fp);
  };
  const walk = (dirAbs: string, dirKey: string, skip: readonly string[]): void => {
    let names: string[];
    try {
      names = [...Deno.readDirSync(dirAbs)].map((e) => e.name);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      throw new RequestError("SNAPSHOT_FAILED", `cannot list watched ${dirAbs}: ${String(e)}`);
    }
    for (const name of names) {
      if (skip.includes(name)) continue;
      const abs = `${dirAbs}/${name}`;
      const key = `${dirKey}/${name}`;
      const info = lstatOrNull(abs);
      if (info === null) continue;
      record(abs, key, info);
      if (info.isDirectory) walk(abs, key, []);
    }
  };
  for (const root of roots) {
    const info = lstatOrNull(root.abs);
    if (info === null) continue;
    record(root.abs, root.key, info);
    if (!root.recursive) continue;
    let through = info;
    if (info.isSymlink) {
      try {
        through = Deno.statSync(root.abs);
      } catch {
        continue; // a dangling link: the link itself is recorded
      }
    }
    if (through.isDirectory) walk(root.abs, root.key, root.skipTop ?? []);
  }
  // The content hashes of racy entries, read once the walk is done (their keys keep their order).
  await Promise.all(toHash.map(async ({ abs, key, fp }) => {
    entries.set(key, `${fp} sha256:${await contentSha256(abs)}`);
  }));
  return { entries, hashed };
}

/**
 * What the write check watches of the control plane: the watched table entries present at the
 * project root, matched case-folded (`.Claude` is `.claude` on a case-insensitive file system),
 * and git's watched paths (its hooks, config files and includes, `info/`, the worktree's `.git`
 * entry), keyed project-relative inside the project.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { controlPlaneRoots } from "./watch.ts";
 * const p = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${p}/.agentteams`);
 * Deno.mkdirSync(`${p}/.claude`);
 * Deno.writeTextFileSync(`${p}/a.txt`, "");
 * // Only what is present, and only control-plane entries: a.txt is not one.
 * assert.deepEqual(controlPlaneRoots({ root: p, git: [] }).map((r) => r.key), [".claude", ".agentteams"]);
 * ```
 */
export function controlPlaneRoots(plane: ControlPlane): WatchRoot[] {
  const roots = new Map<string, WatchRoot>();
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(plane.root)]
      .filter((e) => e.isDirectory || e.isSymlink || e.isFile)
      .map((e) => e.name);
  } catch {
    names = [];
  }
  const base = plane.root === "/" ? "" : plane.root;
  for (const entry of CONTROL_PLANE) {
    if (!entry.watched) continue;
    for (const name of names) {
      if (name.toLowerCase() !== entry.name) continue;
      roots.set(name, { abs: `${base}/${name}`, key: name, recursive: true });
    }
  }
  for (const g of plane.git) {
    if (g.watch === null) continue;
    const key = keyUnder(plane.root, g.abs);
    if (roots.has(key)) continue;
    roots.set(key, {
      abs: g.abs,
      key,
      recursive: g.watch === "tree",
      ...(g.skipTop ? { skipTop: g.skipTop } : {}),
    });
  }
  return [...roots.values()];
}
