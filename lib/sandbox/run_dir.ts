/**
 * Per-run housekeeping at the edges: the private TMPDIR a confined command gets, and removal of
 * the empty mount points bwrap creates on the host for masks (a mask covers a path that did not
 * exist, and bwrap must create an empty directory inside the writable root to mount over).
 *
 * @example
 * ```ts
 * import { makePrivateTmpdir, removePrivateTmpdir } from "./run_dir.ts";
 * const tmp = makePrivateTmpdir();
 * // ... run the command with TMPDIR=tmp ...
 * removePrivateTmpdir(tmp);
 * ```
 * @module
 */

import type { ConfinementPlan } from "./plan.ts";

/**
 * Creates a fresh 0700 directory for one run and returns its real path.
 *
 * @example
 * ```ts
 * import { makePrivateTmpdir } from "./run_dir.ts";
 * const dir = makePrivateTmpdir(); // e.g. "/tmp/agentteams-run-abc123"
 * ```
 */
export function makePrivateTmpdir(parent?: string): string {
  const dir = Deno.makeTempDirSync({ prefix: "agentteams-run-", dir: parent });
  Deno.chmodSync(dir, 0o700);
  return Deno.realPathSync(dir);
}

/**
 * Removes a run's private TMPDIR and everything in it. The command may have left directories this
 * process cannot enter or empty (mode `0500`): they are the same user's, so their modes are put
 * back to `0700` (never through a symlink) and the removal tried again. Returns whether the
 * directory is gone; a failure is not thrown, since it comes after the run's result, which it
 * must not replace (a leftover directory under TMPDIR is harmless).
 *
 * @example
 * ```ts
 * import { makePrivateTmpdir, removePrivateTmpdir } from "./run_dir.ts";
 * removePrivateTmpdir(makePrivateTmpdir()); // true
 * ```
 */
export function removePrivateTmpdir(dir: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      Deno.removeSync(dir, { recursive: true });
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return true;
      if (attempt === 0) openUp(dir);
    }
  }
  return false;
}

/** Gives every directory below `dir` (itself included, never through a symlink) mode `0700`. */
function openUp(dir: string): void {
  try {
    const st = Deno.lstatSync(dir);
    if (!st.isDirectory) return;
    Deno.chmodSync(dir, 0o700);
    for (const e of Deno.readDirSync(dir)) {
      if (e.isDirectory) openUp(`${dir}/${e.name}`);
    }
  } catch {
    // Best effort: what stays is reported by the removal's result.
  }
}

/**
 * After a bwrap run, removes each mask mount point that is still an empty real directory (the
 * path did not exist before the run, so bwrap made it). Returns the paths removed.
 *
 * @example
 * ```ts
 * import { removeMaskPoints } from "./run_dir.ts";
 * removeMaskPoints({ masks: ["/srv/repo/build/keys"] }); // ["/srv/repo/build/keys"] when left empty
 * ```
 */
export function removeMaskPoints(plan: Pick<ConfinementPlan, "masks">): string[] {
  const removed: string[] = [];
  for (const m of [...plan.masks].reverse()) {
    try {
      const st = Deno.lstatSync(m);
      if (!st.isDirectory) continue;
      Deno.removeSync(m); // not recursive: fails on a non-empty directory, which is kept
      removed.push(m);
    } catch {
      // absent, non-empty or busy: leave it for the operator
    }
  }
  return removed;
}
