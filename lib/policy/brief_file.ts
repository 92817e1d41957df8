/**
 * The brief as a file: where it is (the one default name at the project root, or the path given),
 * and its bytes and text read safely (never through a symlink, a single name, at most 1 MiB,
 * UTF-8), with the refusals that name what was wrong. `brief.ts` turns the text into a `Policy`;
 * what only needs the file (the queue-mode check) reads it here without the policy's parser.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defaultBriefPath } from "./brief_file.ts";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/agentteams.json`, "{}");
 * assert.equal(await defaultBriefPath(root), `${root}/agentteams.json`);
 * ```
 * @module
 */
import { sha256Hex } from "../crypto/hash.ts";
import { basename, dirname, join, relative, resolve } from "../fs/path.ts";
import { FsSafetyError, PolicyError } from "../errors.ts";
import { readRegularFile } from "../fs/safe_read.ts";
import { within } from "../fs/within.ts";
import { DEFAULT_BRIEF_NAMES } from "../layout.ts";

/** The largest brief accepted, in bytes. */
export const MAX_BRIEF_BYTES = 1024 * 1024;

/** Why a brief could not be read (in `details.reason` of `BRIEF_UNREADABLE`). */
export type UnreadableReason =
  | "SYMLINK"
  | "NOT_REGULAR_FILE"
  | "FILE_TOO_LARGE"
  | "FILE_CHANGED"
  | "NOT_UTF8"
  | "AMBIGUOUS"
  | "IO";

function unreadable(
  path: string,
  reason: UnreadableReason,
  what: string,
  cause?: unknown,
): PolicyError {
  return new PolicyError("BRIEF_UNREADABLE", `brief ${path}: ${what}`, {
    cause,
    details: { file: path, reason },
  });
}

function notFound(path: string, cause: unknown): PolicyError {
  return new PolicyError("BRIEF_NOT_FOUND", `brief ${path} does not exist`, {
    cause,
    details: { file: path },
  });
}

/**
 * The default brief of a project: `<root>/agentteams.jsonc`, else `<root>/agentteams.json`.
 * The first name that exists in any form (a symlink included, which `loadPolicy` then refuses)
 * is returned, so a refused `.jsonc` never silently falls back to the `.json`.
 * Throws `BRIEF_NOT_FOUND` when neither exists, and `BRIEF_UNREADABLE` (reason `AMBIGUOUS`) when
 * both do: the session settings deny writing the operator's one, not the other name, so a brief a
 * session planted by the name searched first must not silently take over.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/proj with its brief
 * import assert from "node:assert/strict";
 * import { defaultBriefPath } from "./brief_file.ts";
 * assert.equal(await defaultBriefPath("/work/proj"), "/work/proj/agentteams.jsonc");
 * ```
 */
export function defaultBriefPath(projectRoot: string): Promise<string> {
  try {
    return Promise.resolve(findDefaultBrief(projectRoot));
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * {@link defaultBriefPath}'s search: an lstat per name, synchronous (no trip through Deno's
 * blocking pool).
 */
function findDefaultBrief(projectRoot: string): string {
  const root = resolve(projectRoot);
  const found: string[] = [];
  for (const name of DEFAULT_BRIEF_NAMES) {
    const candidate = join(root, name);
    try {
      Deno.lstatSync(candidate);
      found.push(candidate);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      throw unreadable(candidate, "IO", `cannot be examined: ${String(e)}`, e);
    }
  }
  // Two default names at once: the operator's settings deny writing the one they name, not the
  // other, so a session could plant the one searched first. Neither is chosen.
  if (found.length > 1) {
    throw new PolicyError(
      "BRIEF_UNREADABLE",
      `two briefs in ${projectRoot}: ${found.map((f) => relative(root, f)).join(" and ")}; ` +
        `remove the one that is not yours (an agent session may have written it), or pass --brief`,
      { details: { file: found[0], reason: "AMBIGUOUS" satisfies UnreadableReason, files: found } },
    );
  }
  if (found.length === 1) return found[0];
  throw new PolicyError(
    "BRIEF_NOT_FOUND",
    `no brief in ${projectRoot}: expected ${DEFAULT_BRIEF_NAMES.join(" or ")} (or pass --brief)`,
    { details: { project: projectRoot, names: [...DEFAULT_BRIEF_NAMES] } },
  );
}

/**
 * Reads a brief's bytes: a regular file, not a symlink, at most {@link MAX_BRIEF_BYTES}.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/proj with its brief
 * import { readBriefBytes } from "./brief_file.ts";
 * const bytes = await readBriefBytes("/work/proj/agentteams.jsonc");
 * ```
 */
export async function readBriefBytes(path: string): Promise<Uint8Array> {
  try {
    return (await readRegularFile(path, {
      maxBytes: MAX_BRIEF_BYTES,
      what: "brief",
      singleName: true,
    })).bytes;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw notFound(path, e);
    if (e instanceof FsSafetyError) {
      const reason: UnreadableReason = e.code === "SYMLINK" || e.code === "NOT_REGULAR_FILE" ||
          e.code === "FILE_TOO_LARGE" || e.code === "FILE_CHANGED"
        ? e.code
        : "IO";
      throw new PolicyError("BRIEF_UNREADABLE", e.message, {
        cause: e,
        details: { file: path, reason },
      });
    }
    throw unreadable(path, "IO", `cannot be read: ${String(e)}`, e);
  }
}

/**
 * The brief's path with its directory resolved (the file itself is not followed: a symlinked
 * brief is refused when read); a missing directory means a missing brief. Launched with narrow
 * flags, the tool may read a brief that lies outside the project but not the directory around it;
 * then the file's own real path is taken, once the file is known not to be a symlink.
 */
function realBriefPath(abs: string): string {
  try {
    return join(Deno.realPathSync(dirname(abs)), basename(abs));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw notFound(abs, e);
    if (!(e instanceof Deno.errors.NotCapable)) {
      throw unreadable(abs, "IO", `its directory cannot be resolved: ${String(e)}`, e);
    }
  }
  try {
    return Deno.lstatSync(abs).isSymlink ? abs : Deno.realPathSync(abs);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw notFound(abs, e);
    throw unreadable(abs, "IO", `cannot be resolved: ${String(e)}`, e);
  }
}

/**
 * The brief's text as `loadPolicy` and `checkBrief` read it (through {@link readBriefBytes}, then
 * strict UTF-8), with the project root's and the brief's real paths and the SHA-256 of its bytes.
 *
 * @throws {PolicyError} `BRIEF_NOT_FOUND`, `BRIEF_UNREADABLE` (`NOT_UTF8` among its reasons).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readBriefText } from "./brief_file.ts";
 * const root = Deno.realPathSync(Deno.makeTempDirSync());
 * Deno.writeTextFileSync(`${root}/agentteams.json`, "{}");
 * const read = await readBriefText(`${root}/agentteams.json`, root);
 * assert.deepEqual([read.real, read.text, read.sha.length], [`${root}/agentteams.json`, "{}", 64]);
 * ```
 */
export async function readBriefText(
  briefPath: string,
  projectRoot: string,
): Promise<{ root: string; real: string; text: string; sha: string }> {
  let root: string;
  let rootUnresolved: Deno.errors.NotCapable | null = null;
  try {
    root = Deno.realPathSync(resolve(projectRoot));
  } catch (e) {
    // Launched with narrow flags, a command that reads only the brief (the triad's, for the
    // switch) may not read the project directory around it: its path is taken as given, as
    // `realBriefPath` takes the brief's own.
    if (!(e instanceof Deno.errors.NotCapable)) {
      throw unreadable(briefPath, "IO", `project root ${projectRoot} cannot be resolved`, e);
    }
    root = resolve(projectRoot);
    rootUnresolved = e;
  }
  const real = realBriefPath(resolve(briefPath));
  // A root taken as given must still hold the brief by the brief's real path: a project reached
  // through a link would otherwise make a brief inside it look outside it, and the lint that holds
  // an inside brief's own path out of every write scope would not run. Refused as before.
  if (rootUnresolved !== null && !within(real, root)) throw rootUnresolved;
  const bytes = await readBriefBytes(real);
  const sha = sha256Hex(bytes);
  try {
    return {
      root,
      real,
      text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes),
      sha,
    };
  } catch (e) {
    throw unreadable(real, "NOT_UTF8", "is not valid UTF-8", e);
  }
}
