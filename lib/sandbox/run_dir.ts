/**
 * Per-run housekeeping at the edges: the private TMPDIR a confined command gets, and removal of
 * the empty mount points bwrap creates on the host for masks (a mask covers a path that did not
 * exist, and bwrap must create an empty directory inside the writable root to mount over).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makePrivateTmpdir, removePrivateTmpdir } from "./run_dir.ts";
 * const tmp = makePrivateTmpdir({});
 * assert.ok(Deno.statSync(tmp).isDirectory);
 * // ... run the command with TMPDIR=tmp ...
 * removePrivateTmpdir(tmp);
 * assert.throws(() => Deno.statSync(tmp), Deno.errors.NotFound);
 * ```
 * @module
 */

import type { ConfinementPlan } from "./mounts.ts";
import { SandboxError } from "../errors.ts";
import { custodyProblem } from "../fs/safe_read.ts";

/**
 * Where a run's private directories are made: `TMPDIR` when it is set to an absolute path (the
 * operator's choice), else a per-user directory `/tmp/agentteams-<uid>` (so the permission flags
 * grant that one directory, not all of `/tmp`). The one rule the run, the gates and the permission
 * line use.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runTmpParent } from "./run_dir.ts";
 * assert.equal(runTmpParent({ TMPDIR: "/var/tmp/me" }, 1000), "/var/tmp/me");
 * assert.equal(runTmpParent({}, 1000), "/tmp/agentteams-1000");
 * assert.equal(runTmpParent({ TMPDIR: "rel" }, 0), "/tmp/agentteams-0");
 * ```
 */
export function runTmpParent(
  env: Readonly<Record<string, string | undefined>>,
  uid: number | null,
): string {
  const tmp = env.TMPDIR;
  if (tmp !== undefined && tmp.startsWith("/")) return tmp;
  return `/tmp/agentteams-${uid ?? "user"}`;
}

/**
 * Makes sure the per-user parent exists as this user's own private directory: created `0700`
 * when missing; an existing one must be a real directory (not a symlink), owned by `uid`, with no
 * access for group or others, or the run is refused (`CONFINED_PATH_UNSAFE`: another user could
 * have planted it to watch or steer what the command writes).
 */
function ensureOwnPrivateDir(path: string, uid: number | null): void {
  try {
    Deno.mkdirSync(path, { mode: 0o700 });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  }
  // The one owner and mode check (lib/fs/safe_read.ts); a uid this platform does not give is
  // not checked, as before.
  const problem = custodyProblem(Deno.lstatSync(path), {
    kind: "directory",
    ...(uid === null ? {} : { uid }),
    forbiddenModeBits: 0o077,
  })?.why ?? null;
  if (problem !== null) {
    throw new SandboxError(
      "CONFINED_PATH_UNSAFE",
      `the per-user temporary directory ${path} ${problem}; remove it, or set TMPDIR to a ` +
        "private directory of yours",
    );
  }
}

/**
 * Creates a fresh 0700 directory for one run under `runTmpParent(env, uid)` and returns its real
 * path. With `TMPDIR` unset the per-user parent is made (or checked) first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makePrivateTmpdir } from "./run_dir.ts";
 * const dir = makePrivateTmpdir({ TMPDIR: "/tmp" });
 * assert.match(dir, /^\/tmp\/agentteams-run-/);
 * Deno.removeSync(dir);
 * ```
 */
export function makePrivateTmpdir(
  env: Readonly<Record<string, string | undefined>> = Deno.env.toObject(),
  uid: number | null = Deno.uid(),
): string {
  const parent = runTmpParent(env, uid);
  if (parent !== env.TMPDIR) ensureOwnPrivateDir(parent, uid);
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
 * import assert from "node:assert/strict";
 * import { makePrivateTmpdir, removePrivateTmpdir } from "./run_dir.ts";
 * assert.equal(removePrivateTmpdir(makePrivateTmpdir({})), true);
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

/**
 * {@link removePrivateTmpdir} without blocking: the first removal runs in Deno's blocking pool,
 * so a caller overlaps it with other work (the run's second `git status`); a directory the first
 * try cannot remove is opened up and removed again as {@link removePrivateTmpdir} does. Never
 * rejects; resolves whether the directory is gone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { makePrivateTmpdir, removePrivateTmpdirSoon } from "./run_dir.ts";
 * assert.equal(await removePrivateTmpdirSoon(makePrivateTmpdir({})), true);
 * ```
 */
export async function removePrivateTmpdirSoon(dir: string): Promise<boolean> {
  try {
    await Deno.remove(dir, { recursive: true });
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return true;
    return removePrivateTmpdir(dir);
  }
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
 * import assert from "node:assert/strict";
 * import { removeMaskPoints } from "./run_dir.ts";
 * // A mask point is removed when it was left empty; one that does not exist is not listed.
 * assert.deepEqual(removeMaskPoints({ masks: ["/nonexistent/build/keys"] }), []);
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
