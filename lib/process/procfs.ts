/**
 * What Linux's `/proc` tells about leftover processes: live members of a process group (zombies
 * excluded: an init that never reaps leaves them behind, and they cannot write), and the processes
 * that still hold a given pipe open. Parsing is pure; the readers return `null` where `/proc` is
 * unavailable (macOS) or unreadable, so callers fall back to cruder signals.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseProcStat } from "./procfs.ts";
 * assert.deepEqual(parseProcStat("42 (my (odd) name) S 1 42 42 0 -1"), { state: "S", ppid: 1, pgrp: 42, session: 42 });
 * ```
 * @module
 */

/** The fields of `/proc/<pid>/stat` this module reads. */
export interface ProcStat {
  /** One-letter state (`R`, `S`, `D`, `Z`, `X`, ...). */
  readonly state: string;
  /** Parent pid. */
  readonly ppid: number;
  /** Process group id. */
  readonly pgrp: number;
  /** Session id. */
  readonly session: number;
}

/**
 * Parses the start of `/proc/<pid>/stat` (the command name may hold spaces and parentheses, so
 * fields are counted after the last `)`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseProcStat } from "./procfs.ts";
 * assert.equal(parseProcStat("7 (sleep) Z 1 5 5 0")?.state, "Z");
 * ```
 */
export function parseProcStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const f = text.slice(close + 2).split(" ");
  if (f.length < 4) return null;
  const [state, ppid, pgrp, session] = [f[0], Number(f[1]), Number(f[2]), Number(f[3])];
  if (!state || ![ppid, pgrp, session].every(Number.isInteger)) return null;
  return { state, ppid, pgrp, session };
}

/**
 * Reads a `pipe:[<inode>]` link target, or `null` for anything else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePipeLink } from "./procfs.ts";
 * assert.equal(parsePipeLink("pipe:[123]"), 123);
 * assert.equal(parsePipeLink("/dev/null"), null);
 * ```
 */
export function parsePipeLink(target: string): number | null {
  const m = /^pipe:\[(\d+)\]$/.exec(target);
  return m === null ? null : Number(m[1]);
}

function pids(): number[] | null {
  try {
    const out: number[] = [];
    for (const e of Deno.readDirSync("/proc")) {
      if (/^\d+$/.test(e.name)) out.push(Number(e.name));
    }
    return out;
  } catch {
    return null;
  }
}

/**
 * The pids of live (not zombie) processes in group `pgid`; `null` when `/proc` cannot be read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { liveGroupMembers } from "./procfs.ts";
 * // Empty unless this process leads its own group.
 * const members = liveGroupMembers(Deno.pid);
 * assert.ok(Array.isArray(members) && members.every((pid) => Number.isInteger(pid)));
 * ```
 */
export function liveGroupMembers(pgid: number): number[] | null {
  const all = pids();
  if (all === null) return null;
  const live: number[] = [];
  for (const pid of all) {
    const st = readStat(pid); // null: exited meanwhile
    if (st !== null && st.pgrp === pgid && st.state !== "Z" && st.state !== "X") live.push(pid);
  }
  return live;
}

/**
 * The pipe inodes behind a process's file descriptors `fds` (default stdin, stdout, stderr);
 * `null` when they cannot be read (the process is gone, or no `/proc`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pipeInodesOf } from "./procfs.ts";
 * // Empty when this process's standard streams are not pipes.
 * const inodes = pipeInodesOf(Deno.pid);
 * assert.ok(Array.isArray(inodes) && inodes.every((i) => typeof i === "string" || typeof i === "number"));
 * ```
 */
export function pipeInodesOf(pid: number, fds: readonly number[] = [0, 1, 2]): number[] | null {
  const out: number[] = [];
  try {
    for (const fd of fds) {
      const inode = parsePipeLink(Deno.readLinkSync(`/proc/${pid}/fd/${fd}`));
      if (inode !== null && !out.includes(inode)) out.push(inode);
    }
  } catch {
    return null;
  }
  return out;
}

/**
 * The pids (other than `exclude`) holding any of the pipes `inodes` open; `null` without `/proc`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pipeHolders } from "./procfs.ts";
 * assert.deepEqual(pipeHolders([123456789], [Deno.pid]), []); // nobody holds that pipe
 * ```
 */
export function pipeHolders(
  inodes: readonly number[],
  exclude: readonly number[],
): number[] | null {
  if (inodes.length === 0) return [];
  const all = pids();
  if (all === null) return null;
  const holders: number[] = [];
  for (const pid of all) {
    if (exclude.includes(pid)) continue;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(`/proc/${pid}/fd`)];
    } catch {
      continue;
    }
    for (const e of entries) {
      let target: string;
      try {
        target = Deno.readLinkSync(`/proc/${pid}/fd/${e.name}`);
      } catch {
        continue;
      }
      const inode = parsePipeLink(target);
      if (inode !== null && inodes.includes(inode)) {
        holders.push(pid);
        break;
      }
    }
  }
  return holders;
}

function readStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return null;
  }
}

/**
 * Whether a process holding one of `self`'s pipes escaped from a spawn: it is not a child of
 * `self`, not in `self`'s session, and not in the session of a live child of `self` (spawned
 * children lead their own sessions). Such a process is a leftover that left its group with
 * `setsid`; anything else belongs to a spawn that is still running.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isEscapee } from "./procfs.ts";
 * const self = { pid: 100, session: 90 };
 * assert.equal(isEscapee({ state: "S", ppid: 1, pgrp: 300, session: 300 }, self, new Set([200])), true);
 * assert.equal(isEscapee({ state: "S", ppid: 200, pgrp: 200, session: 200 }, self, new Set([200])), false);
 * ```
 */
export function isEscapee(
  st: ProcStat,
  self: { readonly pid: number; readonly session: number },
  childSessions: ReadonlySet<number>,
): boolean {
  return st.ppid !== self.pid && st.session !== self.session && !childSessions.has(st.session);
}

/**
 * The holders of `inodes` that escaped from a spawn of this process (see {@link isEscapee}), for
 * when `inodes` may include the pipes of spawns still running; `null` without `/proc`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { escapedPipeHolders } from "./procfs.ts";
 * assert.deepEqual(escapedPipeHolders([123456789]), []); // nobody holds that pipe
 * ```
 */
export function escapedPipeHolders(inodes: readonly number[]): number[] | null {
  const holders = pipeHolders(inodes, [Deno.pid]);
  if (holders === null || holders.length === 0) return holders;
  const me = readStat(Deno.pid);
  if (me === null) return [];
  const childSessions = new Set<number>();
  for (const pid of pids() ?? []) {
    if (readStat(pid)?.ppid === Deno.pid) childSessions.add(pid);
  }
  const self = { pid: Deno.pid, session: me.session };
  return holders.filter((pid) => {
    const st = readStat(pid);
    return st !== null && isEscapee(st, self, childSessions);
  });
}

/**
 * The pipe inodes this process holds open, or `null` when `/proc/self/fd` cannot be read (not
 * Linux, or narrow permissions). Compared before and after a spawn, the new ones are the child's
 * output pipes, even when the child exited before its own `/proc` entry could be read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ownPipeInodes } from "./procfs.ts";
 * // A set (empty when no standard stream is a pipe), or null where /proc cannot be read.
 * const own = ownPipeInodes();
 * assert.ok(own === null || own instanceof Set);
 * ```
 */
export function ownPipeInodes(): Set<number> | null {
  const out = new Set<number>();
  try {
    for (const e of Deno.readDirSync("/proc/self/fd")) {
      try {
        const inode = parsePipeLink(Deno.readLinkSync(`/proc/self/fd/${e.name}`));
        if (inode !== null) out.add(inode);
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  } catch {
    return null;
  }
  return out;
}
