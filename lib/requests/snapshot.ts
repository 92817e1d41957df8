/**
 * Undeclared-write detection: a snapshot before and after a command, and their difference.
 *
 * What a snapshot holds:
 * - **Worktree files** (tracked and untracked, not ignored), by content. `git status` names the
 *   dirty and untracked paths, which are hashed as git blobs; every clean tracked file keeps the
 *   blob id its index entry records, so a clean tree costs one `git status` and one read of the
 *   index file. Entries git status skips (assume-unchanged, skip-worktree) are hashed too.
 * - **The control plane and git's behaviour-changing paths**, by stat (see `watch.ts`): the
 *   watched control plane under the project, the project's `.git` entry, and git's `hooks`
 *   (recursively), `config`, `config.worktree` and `info/` (recursively, except the derived
 *   `info/refs` that `git gc` rewrites), resolved by `git rev-parse --git-path`.
 *
 * Blind spot ({@link BLIND_SPOT}): paths git ignores are invisible to the worktree comparison.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a git worktree at /work/p
 * import { openGitContext } from "../git/context.ts";
 * import { diffSnapshots, takeSnapshot } from "./snapshot.ts";
 * const ctx = await openGitContext("/work/p");
 * const before = await takeSnapshot(ctx);
 * // ... run the command ...
 * const after = await takeSnapshot(ctx, { previous: before });
 * diffSnapshots(before, after, (rel) => rel === "out.txt").undeclared;
 * ```
 * @module
 */

import { RequestError } from "../errors.ts";
import {
  type ControlPlane,
  controlPlaneHit,
  isRuntimeWrite,
  planeOf,
} from "../policy/control_plane.ts";
import { keyUnder } from "../fs/within.ts";
import type { GitContext, IndexRead } from "../git/context.ts";
import { gitStatus, readIndex } from "../git/context.ts";
import type { StatusEntry } from "../git/status_z.ts";
import type { IndexEntry } from "../git/index_file.ts";
import {
  ABSENT,
  type HashFactory,
  loadHashFactory,
  uniqueFingerprint,
  worktreeEntry,
  worktreeFingerprint,
} from "./fingerprint.ts";
import {
  compareBytes,
  compareCodePoints,
  renderPathBytes,
  startsWithBytes,
} from "../git/path_bytes.ts";
import { controlPlaneRoots, RACY_WINDOW_MS, watchPaths, type WatchRoot } from "./watch.ts";

/** What the write check cannot see, stated with every result. */
export const BLIND_SPOT =
  "paths ignored by git (.gitignore, .git/info/exclude, core.excludesFile) are not compared; " +
  "neither are writes outside the project, nor changes inside a nested repository or submodule";

/** One worktree path in a snapshot. */
export interface PathState {
  /** Full path bytes from the worktree top. */
  readonly bytes: Uint8Array;
  /** Content fingerprint. */
  readonly fp: string;
}

/** The index restricted to the project. */
export interface IndexView {
  /** Entries under the project prefix, sorted by path bytes then stage. */
  readonly entries: readonly IndexEntry[];
  /**
   * What was read (its raw bytes: equal bytes mean equal entries; all entries, the flagged ones),
   * for reuse by a later snapshot.
   */
  readonly source: IndexRead;
  /** The index file's identity and times when it was read, or `null` (no file, or via git). */
  readonly stamp: string | null;
}

/** A snapshot of the project. */
export interface Snapshot {
  /** When it was started (ms since the epoch). */
  readonly takenAt: number;
  /** Paths git status named or skips (not the watched ones): project-relative key → state. */
  readonly worktree: ReadonlyMap<string, PathState>;
  /** The index. */
  readonly index: IndexView;
  /** Watched entries: key → stat fingerprint. */
  readonly watched: ReadonlyMap<string, string>;
  /** Watched keys that carry a content hash (racy). */
  readonly hashed: ReadonlySet<string>;
  /** Git invocations this snapshot made. */
  readonly gitCalls: number;
  /** Bytes of the project prefix inside the worktree (stripped from git's paths). */
  readonly prefixLength: number;
  /** The control plane the snapshot was taken against (a changed path in it is never declared). */
  readonly plane: ControlPlane;
}

/** Options of {@link takeSnapshot}. */
export interface SnapshotOptions {
  /**
   * A `git status` already started (see {@link startStatus}); the watched paths are still read
   * when the snapshot is taken. Git's view of the control plane is never compared, so the status
   * may start before the caller writes its own state there.
   */
  readonly status?: Promise<StatusEntry[]>;
  /** The earlier snapshot of the same run: its racy watched keys are hashed again. */
  readonly previous?: Snapshot;
  /** Clock (ms since the epoch); default `Date.now`. */
  readonly now?: () => number;
  /** Watched keys fingerprinted by stat only (their content is compared elsewhere). */
  readonly statOnly?: ReadonlySet<string>;
}

/**
 * The key the write check uses for an absolute path: project-relative when it lies inside the
 * project, else the path itself.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a git worktree at /work/p
 * import assert from "node:assert/strict";
 * import { openGitContext } from "../git/context.ts";
 * import { watchKey } from "./snapshot.ts";
 * const ctx = await openGitContext("/work/p");
 * assert.equal(watchKey(ctx, "/work/p/src/lib"), "src/lib");
 * assert.equal(watchKey(ctx, "/etc/gitconfig"), "/etc/gitconfig");
 * ```
 */
export function watchKey(ctx: Pick<GitContext, "root">, abs: string): string {
  return keyUnder(ctx.root, abs);
}

/**
 * Every submodule in the project (each gitlink in the index) and its `.git` entry, watched by stat:
 * git status never looks into a submodule, so a repository the agent makes at a submodule's path
 * (or a replaced `.git` there) shows here, as the control-plane write it is. Not recursive: an
 * existing `.git` inside a write root is read-only in the sandbox, so creating or replacing it is
 * what can happen.
 *
 * @throws {RequestError} `SNAPSHOT_FAILED` for a submodule path that is not UTF-8 (it could not be
 *   watched).
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, index, which it declares rather than makes.
 * import { submoduleGitRoots } from "./snapshot.ts";
 * import type { GitContext, IndexRead } from "../git/context.ts";
 * declare const ctx: GitContext; // the worktree /work/p
 * declare const index: IndexRead; // a submodule at lib/vendor
 * submoduleGitRoots(ctx, index).map((r) => r.key); // ["lib/vendor", "lib/vendor/.git"]
 * ```
 */
export function submoduleGitRoots(ctx: GitContext, index: IndexRead): WatchRoot[] {
  const roots = new Map<string, WatchRoot>();
  for (const e of index.gitlinks) {
    if (!startsWithBytes(e.path, ctx.prefixBytes)) continue;
    const { key, text } = projectKey(ctx, e.path);
    if (text === null) {
      throw new RequestError(
        "SNAPSHOT_FAILED",
        `the submodule path ${key} is not UTF-8: its .git cannot be watched`,
      );
    }
    // The submodule's own path too: git status does not look at it either, so a submodule
    // replaced by a symlink or a file, or removed, shows only here (a directory's stat
    // fingerprint is its mode and inode, so what changes inside it is not compared).
    roots.set(key, { abs: `${ctx.top}/${text}`, key, recursive: false });
    roots.set(`${key}/.git`, {
      abs: `${ctx.top}/${text}/.git`,
      key: `${key}/.git`,
      recursive: false,
    });
  }
  return [...roots.values()];
}

/** The report key of a path, and the name to open it by (`null` when it is not UTF-8). */
function projectKey(ctx: GitContext, full: Uint8Array): { key: string; text: string | null } {
  const rel = renderPathBytes(full.subarray(ctx.prefixBytes.length));
  return { key: rel.text, text: rel.utf8 ? new TextDecoder().decode(full) : null };
}

/**
 * Starts the `git status` of a snapshot ahead of it, so it runs while the caller writes its
 * ledger rows. A failure is held until the snapshot awaits it.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a git worktree at /work/p
 * import { openGitContext } from "../git/context.ts";
 * import { startStatus, takeSnapshot } from "./snapshot.ts";
 * const git = await openGitContext("/work/p");
 * const status = startStatus(git);
 * // ... write the start row ...
 * const snap = await takeSnapshot(git, { status });
 * ```
 */
export function startStatus(ctx: GitContext): Promise<StatusEntry[]> {
  const p = gitStatus(ctx);
  p.catch(() => {}); // observed by the snapshot that awaits it
  return p;
}

/**
 * Takes a snapshot: one `git status` (plus `git ls-files` only for a split or sparse index),
 * the index file, and the watched paths. Throws `SNAPSHOT_FAILED` when git or a watched path
 * cannot be read.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a git worktree at /work/p
 * import assert from "node:assert/strict";
 * import { openGitContext } from "../git/context.ts";
 * import { takeSnapshot } from "./snapshot.ts";
 * const snap = await takeSnapshot(await openGitContext("/work/p"));
 * assert.equal(snap.gitCalls, 1);
 * ```
 */
export async function takeSnapshot(
  ctx: GitContext,
  options: SnapshotOptions = {},
): Promise<Snapshot> {
  const now = options.now ?? Date.now;
  const takenAt = now();
  const callsBefore = ctx.counter.calls;
  // Git works while the index and the watched paths are read: none of them depends on the others
  // (status never writes the index), and the command, if any, has already ended.
  const pending = options.status ?? gitStatus(ctx);
  pending.catch(() => {});
  // An index file with the same inode, size and times as at the previous snapshot, last changed
  // well before it, is the same file: git replaces the index by rename, never in place. Reading
  // and scanning it again (tens of milliseconds at 100k files) is then skipped.
  const stamp = indexStamp(ctx.indexPath, takenAt);
  const prev = options.previous?.index;
  const index = prev !== undefined && stamp !== null && prev.stamp === stamp
    ? prev.source
    : await readIndex(ctx);
  const racyCutoffMs = Math.floor(takenAt / 1000) * 1000 - RACY_WINDOW_MS;
  const plane = planeOf(ctx);
  const watch = await watchPaths([
    ...controlPlaneRoots(plane),
    ...submoduleGitRoots(ctx, index),
  ], {
    racyCutoffMs,
    alsoHash: options.previous?.hashed,
    statOnly: options.statOnly,
  });
  const status = await pending;
  // Paths git lists that the watch already fingerprints (the control plane, e.g. an untracked
  // `.agentteams/`) are left to the watch: hashing them again would cost a read per run. A clean
  // tree hashes nothing, and then never loads the hashing code.
  let make: HashFactory | null = null;
  const worktree = new Map<string, PathState>();
  for (const full of [...status, ...index.flagged].map((e) => e.path)) {
    if (!startsWithBytes(full, ctx.prefixBytes)) continue;
    const { key, text } = projectKey(ctx, full);
    if (worktree.has(key) || watch.entries.has(key)) continue;
    // The runner's queue and status folders change under every run (the beat, requests, acks).
    if (isRuntimeWrite(key)) continue;
    let fp: string;
    if (text === null) fp = uniqueFingerprint("opaque-name");
    else {
      const abs = `${ctx.top}/${text}`;
      const entry = worktreeEntry(abs);
      if (typeof entry === "string") fp = entry;
      else {
        make ??= await loadHashFactory();
        // A later snapshot fingerprints a large file by stat only where the earlier one did (any
        // other earlier fingerprint is a content hash, from this one or from the index).
        const statAllowed = options.previous === undefined ||
          (options.previous.worktree.get(key)?.fp.startsWith("large ") ?? false);
        fp = await worktreeFingerprint(abs, ctx.objectFormat, make, statAllowed, entry);
      }
    }
    worktree.set(key, { bytes: full, fp });
  }
  return {
    takenAt,
    worktree,
    index: projectIndex(index, ctx.prefixBytes, index.viaGit ? null : stamp),
    watched: watch.entries,
    hashed: watch.hashed,
    gitCalls: ctx.counter.calls - callsBefore,
    prefixLength: ctx.prefixBytes.length,
    plane,
  };
}

/** The index restricted to the project, its entries built only when first read. */
function projectIndex(index: IndexRead, prefix: Uint8Array, stamp: string | null): IndexView {
  let entries: readonly IndexEntry[] | null = null;
  return {
    source: index,
    stamp,
    get entries() {
      return entries ??= index.entries.filter((e) => startsWithBytes(e.path, prefix));
    },
  };
}

/**
 * The index file's inode, size, mtime and ctime, or `null` when it is missing or changed within
 * the racy window before `now` (a same-size rewrite in that window could keep the same times).
 */
function indexStamp(path: string, now: number): string | null {
  try {
    const st = Deno.statSync(path);
    const changed = Math.max(st.mtime?.getTime() ?? now, st.ctime?.getTime() ?? now);
    if (changed > Math.floor(now / 1000) * 1000 - RACY_WINDOW_MS) return null;
    return `${st.dev}:${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}`;
  } catch {
    return null;
  }
}

/** The lower bound of `path` in sorted entries. */
function lowerBound(entries: readonly IndexEntry[], path: Uint8Array): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareBytes(entries[mid].path, path) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The index fingerprint of a path (all its stages), or `null` when untracked. */
function indexFingerprint(entries: readonly IndexEntry[], path: Uint8Array): string | null {
  let i = lowerBound(entries, path);
  const parts: string[] = [];
  while (i < entries.length && compareBytes(entries[i].path, path) === 0) {
    const e = entries[i++];
    const body = `${e.mode.toString(8)} ${e.oid.toHex()}`;
    parts.push(e.stage === 0 ? body : `stage${e.stage}:${body}`);
  }
  return parts.length === 0 ? null : parts.join(" ");
}

function fingerprintOf(snap: Snapshot, key: string, bytes: Uint8Array): string {
  return snap.worktree.get(key)?.fp ?? indexFingerprint(snap.index.entries, bytes) ?? ABSENT;
}

/** Equal bytes; the same buffer (an index reused from the earlier snapshot) is not scanned. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a === b || (a.length === b.length && compareBytes(a, b) === 0);
}

/** Paths whose index entries differ between two indexes (both sorted). */
function indexChanges(a: readonly IndexEntry[], b: readonly IndexEntry[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const c = i >= a.length ? 1 : j >= b.length ? -1 : compareBytes(a[i].path, b[j].path);
    const path = c <= 0 ? a[i].path : b[j].path;
    const fa = c <= 0 ? indexFingerprint(a, path) : null;
    const fb = c >= 0 ? indexFingerprint(b, path) : null;
    if (fa !== fb) out.push(path);
    while (i < a.length && compareBytes(a[i].path, path) === 0) i++;
    while (j < b.length && compareBytes(b[j].path, path) === 0) j++;
  }
  return out;
}

/** The outcome of comparing two snapshots. */
export interface WriteCheck {
  /** Every changed path (project-relative, or absolute for git paths outside the project). */
  readonly changed: readonly string[];
  /** The changed paths no declaration covers, sorted by code point. */
  readonly undeclared: readonly string[];
  /** What the comparison cannot see. */
  readonly blindSpot: typeof BLIND_SPOT;
}

/**
 * Compares two snapshots. A worktree path is declared when `isDeclared(rel)` says so, except in
 * the control plane; a changed watched entry (control plane, git's paths) is never declared.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs two snapshots of a worktree, which it declares rather than makes.
 * import { diffSnapshots, type Snapshot } from "./snapshot.ts";
 * declare const before: Snapshot; // from `takeSnapshot`, before the command
 * declare const after: Snapshot; // and after it
 * const check = diffSnapshots(before, after, (rel) => rel.startsWith("build/"));
 * console.log(check.undeclared); // e.g. [".git/hooks/pre-commit", "src/a.ts"]
 * ```
 */
export function diffSnapshots(
  before: Snapshot,
  after: Snapshot,
  isDeclared: (rel: string) => boolean,
): WriteCheck {
  const candidates = new Map<string, Uint8Array>();
  for (const [key, state] of before.worktree) candidates.set(key, state.bytes);
  for (const [key, state] of after.worktree) candidates.set(key, state.bytes);
  if (!sameBytes(before.index.source.raw, after.index.source.raw)) {
    const prefixLength = after.prefixLength;
    for (const path of indexChanges(before.index.entries, after.index.entries)) {
      candidates.set(renderPathBytes(path.subarray(prefixLength)).text, path);
    }
  }
  const changed = new Set<string>();
  const undeclared = new Set<string>();
  for (const [key, bytes] of candidates) {
    // Watched paths (the control plane) are compared below, by the watch alone.
    if (before.watched.has(key) || after.watched.has(key)) continue;
    if (fingerprintOf(before, key, bytes) === fingerprintOf(after, key, bytes)) continue;
    changed.add(key);
    if (controlPlaneHit(key, after.plane) !== null || !isDeclared(key)) undeclared.add(key);
  }
  for (const key of new Set([...before.watched.keys(), ...after.watched.keys()])) {
    if (before.watched.get(key) === after.watched.get(key)) continue;
    changed.add(key);
    undeclared.add(key);
  }
  return {
    changed: [...changed].sort(compareCodePoints),
    undeclared: [...undeclared].sort(compareCodePoints),
    blindSpot: BLIND_SPOT,
  };
}
