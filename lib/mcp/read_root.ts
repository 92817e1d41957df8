/**
 * Where a reading tool may look: a tool's path argument resolved to a real path inside one root,
 * outside the control plane and the key dir. Every rule is an existing one, asked here:
 * the path's syntax and length (`lib/proposals/path_rules.ts` over `lib/fs/rel_path.ts`: no
 * `..`, not absolute, no `~`, no NUL or control character, no longer than a file system takes),
 * the control plane (`lib/policy/control_plane.ts`: `.git`, `.claude`, `.agentteams`,
 * `.agentteams-queue`, `.agentteams-status`, `references`, … in any letter case), and
 * containment (`lib/fs/within.ts`) of the path's real form, so a link whose target leaves the
 * root, or lands in the control plane, is refused.
 *
 * A link inside the root that stays inside is followed (its target is checked as if named). The
 * read itself (`lib/fs/safe_read.ts`) then refuses a final symlink, a FIFO, a device and a file
 * swapped in between; {@link readHeld} counts a read only when no folder on the path changed while
 * it was read, so a folder swapped for a link (to the key dir, say) and back around the open is
 * refused too, however briefly it was swapped (probe 22e, E3).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRoot, resolveIn } from "./read_root.ts";
 * const root = openRoot(Deno.makeTempDirSync(), null);
 * assert.equal(resolveIn(root, ".").rel, ".");
 * ```
 * @module
 */
import { FsSafetyError, McpError } from "../errors.ts";
import { dirname, join } from "../fs/path.ts";
import { normalizeRel } from "../fs/rel_path.ts";
import { keyUnder, within } from "../fs/within.ts";
import { controlPlaneHit, staticPlane } from "../policy/control_plane.ts";
import { checkRelativePath } from "../proposals/path_rules.ts";

/** A root opened for reading. */
export interface ReadRoot {
  /** The root's real path. */
  readonly real: string;
  /** The key dir (as named), refused wherever it lies; `null` when unknown. */
  readonly keyDir: string | null;
}

/** A tool argument, resolved. */
export interface Resolved {
  /** Its real path. */
  readonly abs: string;
  /** Its real path relative to the root (`.` for the root itself). */
  readonly rel: string;
  /** The path as the tool was given it, below the root (not resolved). */
  readonly named: string;
}

/**
 * Opens `root` (it must be a directory) with the key dir to refuse.
 *
 * @throws {McpError} `NOT_DIRECTORY`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRoot } from "./read_root.ts";
 * assert.equal(openRoot("/tmp", "/root/.config/agentteams/keys").real, "/tmp");
 * ```
 */
export function openRoot(root: string, keyDir: string | null): ReadRoot {
  let real: string;
  try {
    real = Deno.realPathSync(root);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new McpError(
        "NOT_DIRECTORY",
        `the root ${root} does not exist; give --root a directory`,
      );
    }
    throw e;
  }
  if (!Deno.statSync(real).isDirectory) {
    throw new McpError("NOT_DIRECTORY", `the root ${root} is not a directory`);
  }
  // The key dir is compared by its name: this server never reads it, not even to resolve it.
  return { real, keyDir };
}

/**
 * The syntax rules alone: the normalized project-relative form of a tool argument (`.` for the
 * root; `./a//b/` is `a/b`). Pure.
 *
 * @throws {ProposalError} `PATH_INVALID`, `PATH_OUTSIDE_PROJECT` (from the proposal path rules)
 * @throws {McpError} `PATH_INVALID`
 * @example
 * ```ts
 * import { toolRel } from "./read_root.ts";
 * import assert from "node:assert/strict";
 * assert.equal(toolRel("./src//a.ts"), "src/a.ts");
 * assert.throws(() => toolRel("../etc/passwd"));
 * ```
 */
export function toolRel(arg: string): string {
  const n = normalizeRel(arg);
  if (!n.ok) {
    // The proposal rules word the refusal; anything they let through is still refused here.
    checkRelativePath(arg);
    throw new McpError("PATH_INVALID", `path ${JSON.stringify(arg)} is not a plain relative path`);
  }
  if (n.rel !== ".") checkRelativePath(n.rel);
  return n.rel;
}

/**
 * Why a path below the root may not be read (the control plane or the key dir), or `null`:
 * asked of every argument and of every entry a listing or a walk meets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reservedProblem } from "./read_root.ts";
 * const root = { real: "/p", keyDir: "/p/keys" };
 * assert.equal(reservedProblem(root, ".Git/config", "/p/.Git/config")?.code, "CONTROL_PLANE");
 * assert.equal(reservedProblem(root, "keys/k", "/p/keys/k")?.code, "KEY_DIR");
 * assert.equal(reservedProblem(root, "src/a.ts", "/p/src/a.ts"), null);
 * ```
 */
export function reservedProblem(
  root: ReadRoot,
  rel: string,
  abs: string,
): { readonly code: "CONTROL_PLANE" | "KEY_DIR"; readonly why: string } | null {
  const hit = rel === "." ? null : controlPlaneHit(rel, staticPlane(root.real));
  if (hit !== null) {
    return { code: "CONTROL_PLANE", why: `is in the control plane (${hit.entry}: ${hit.reason})` };
  }
  if (root.keyDir !== null && within(abs, root.keyDir, true)) {
    return { code: "KEY_DIR", why: "is in the operator's key dir" };
  }
  return null;
}

function refuseReserved(root: ReadRoot, rel: string, abs: string, arg: string): void {
  const p = reservedProblem(root, rel, abs);
  if (p !== null) {
    throw new McpError(p.code, `${JSON.stringify(arg)} ${p.why}; this server does not read it`);
  }
}

/**
 * Resolves a tool's path argument below the root, or refuses it (see the module doc).
 *
 * @throws {McpError} `PATH_INVALID`, `PATH_OUTSIDE_PROJECT`, `CONTROL_PLANE`, `KEY_DIR`,
 *   `NOT_FOUND`; {@link toolRel}'s refusals
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRoot, resolveIn } from "./read_root.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a.txt`, "x");
 * assert.equal(resolveIn(openRoot(dir, null), "a.txt").rel, "a.txt");
 * ```
 */
export function resolveIn(root: ReadRoot, arg: string): Resolved {
  const named = toolRel(arg);
  const lexical = named === "." ? root.real : join(root.real, named);
  refuseReserved(root, named, lexical, arg);
  let abs: string;
  try {
    abs = Deno.realPathSync(lexical);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
      throw new McpError("NOT_FOUND", `${JSON.stringify(arg)} does not exist below the root`);
    }
    throw e;
  }
  if (!within(abs, root.real)) {
    throw new McpError(
      "PATH_OUTSIDE_PROJECT",
      `${JSON.stringify(arg)} leads through a link out of the root; this server reads only ` +
        "inside it",
    );
  }
  const rel = abs === root.real ? "." : keyUnder(root.real, abs);
  if (rel !== named) refuseReserved(root, rel, abs, arg);
  return { abs, rel, named };
}

/**
 * Whether a resolved path still resolves where it did (checked after a read, so a component
 * swapped for a link while the file was opened is caught).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRoot, resolveIn, stillAt } from "./read_root.ts";
 * const r = openRoot(Deno.makeTempDirSync(), null);
 * assert.equal(stillAt(r, resolveIn(r, ".")), true);
 * ```
 */
export function stillAt(root: ReadRoot, r: Resolved): boolean {
  try {
    return Deno.realPathSync(r.named === "." ? root.real : join(root.real, r.named)) === r.abs;
  } catch {
    return false;
  }
}

/**
 * A folder whose change time or modification time is this close to a look's start is not taken to
 * have held still: the kernel stamps those times from a clock that ticks every few milliseconds.
 * Deno reports a change time in whole seconds (rounded down), so a change time must lie a second
 * more in the past: a change made after the look began then always shows.
 */
export const SETTLE_MS = 50;

/** Looks {@link readHeld} tries before it gives up on a folder that keeps changing. */
const HELD_ATTEMPTS = 3;

/** The real folders from the root down to the one holding `abs`. */
function foldersOf(root: ReadRoot, abs: string): string[] {
  const parent = dirname(abs);
  const out = [root.real];
  if (parent === root.real || !within(parent, root.real)) return out;
  let at = root.real;
  for (const seg of keyUnder(root.real, parent).split("/")) {
    at = `${at}/${seg}`;
    out.push(at);
  }
  return out;
}

/**
 * Each folder's identity and times (a string), or how long to wait until every folder will have
 * settled (ms, a number: one was changed too close to `start`), or `null` when one is not a real
 * folder now (a link, or gone).
 */
function foldersStamp(folders: readonly string[], start: number): string | number | null {
  const parts: string[] = [];
  let waitMs = 0;
  for (const f of folders) {
    let st: Deno.FileInfo;
    try {
      st = Deno.lstatSync(f);
    } catch {
      return null;
    }
    if (!st.isDirectory) return null;
    const c = st.ctime?.getTime() ?? start;
    const m = st.mtime?.getTime() ?? start;
    waitMs = Math.max(waitMs, c + 1000 + SETTLE_MS - start, m + SETTLE_MS - start);
    parts.push(`${st.dev}:${st.ino}:${c}:${m}`);
  }
  return waitMs > 0 ? waitMs : parts.join("|");
}

/**
 * Runs `look` (an open and read of `r.abs` by path, a listing, an `lstat`) and returns what it
 * found only when the path held still meanwhile: every folder from the root down to the one
 * holding `r.abs` was a real folder, unchanged since before the look began (identity, change and
 * modification times, each settled before it: {@link SETTLE_MS}), and the name still resolves to
 * `r.abs` after. Deno has no `openat`, so a look follows whatever the path names at that
 * instant: a session that swaps a folder on it for a link (to the key dir, say) and back changes
 * the folder above, which no process can hide (a change time is never set back). A folder changed
 * just now is waited for (about a second); one that keeps changing is refused after
 * {@link HELD_ATTEMPTS} tries.
 *
 * @throws {FsSafetyError} `FILE_CHANGED` when the path did not hold still; what `look` throws.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openRoot, readHeld, resolveIn } from "./read_root.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a.txt`, "x");
 * const root = openRoot(dir, null);
 * const bytes = await readHeld(root, resolveIn(root, "a.txt"), (p) => Deno.readFile(p));
 * assert.equal(bytes.length, 1);
 * ```
 */
export async function readHeld<T>(
  root: ReadRoot,
  r: Resolved,
  look: (abs: string) => T | Promise<T>,
): Promise<T> {
  const folders = foldersOf(root, r.abs);
  for (let attempt = 1;; attempt++) {
    const start = Date.now();
    const before = foldersStamp(folders, start);
    if (typeof before === "string") {
      const found = await look(r.abs);
      if (foldersStamp(folders, start) === before && stillAt(root, r)) return found;
    }
    if (attempt >= HELD_ATTEMPTS) {
      throw new FsSafetyError(
        "FILE_CHANGED",
        `${r.named} changed while it was read (a folder on its path was changed just now); ` +
          "read it again",
        { details: { path: r.named } },
      );
    }
    const waitMs = typeof before === "number" ? Math.min(before, 1000 + 2 * SETTLE_MS) : SETTLE_MS;
    await new Promise((done) => setTimeout(done, waitMs + 5));
  }
}
