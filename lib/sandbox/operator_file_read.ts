/**
 * Reads the operator-owned `confined_programs` file under custody rules, or reports it absent.
 *
 * Custody: the directory is a real directory (not a symlink), owned by the user, mode 0700 (no
 * group or other bits); the file is a regular file (not a symlink, FIFO or device), owned by the
 * user, not group- or world-writable, outside the project, at most 64 KiB. `lstat` must show a
 * regular file before it is opened (a FIFO at the path cannot hang the reader), and the opened
 * file's inode and device must be the ones checked, so a swap between check and open is refused
 * (`lib/fs/safe_read.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readConfinedFile } from "./operator_file_read.ts";
 * const home = Deno.makeTempDirSync(); // no operator file there
 * assert.equal(readConfinedFile({ projectReal: "/srv/repo", home }), null);
 * ```
 * @module
 */

import { readJson } from "../json/reader.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { FsSafetyError, SandboxError } from "../errors.ts";
import { custodyProblem, type CustodyRule, readRegularFileSync } from "../fs/safe_read.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { confinedFilePath, MAX_CONFINED_BYTES } from "./operator_file.ts";
import { within } from "../fs/within.ts";

/** Inputs of {@link readConfinedFile}. */
export interface ReadConfinedOptions {
  /** The project's real path. */
  readonly projectReal: string;
  /** The operator's home directory. */
  readonly home: string;
  /** The uid that must own the file and directory (default: the current uid). */
  readonly uid?: number;
  /** Compare "inside the project" case-folded (default: on macOS). */
  readonly foldCase?: boolean;
}

/** The file's parsed content, the SHA-256 of its raw bytes, and where it was read. */
export interface ConfinedFileRead {
  /** The parsed JSON object. */
  readonly data: Record<string, unknown>;
  /** SHA-256 hex of the raw bytes (the runner pins it). */
  readonly sha256: string;
  /** The file's path. */
  readonly path: string;
}

function unsafe(path: string, why: string): SandboxError {
  return new SandboxError("CONFINED_FILE_UNSAFE", `operator confined file ${path}: ${why}`, {
    details: { path },
  });
}

/**
 * Deno's `NotCapable` (the launch flags do not grant the path) passes through unwrapped: it is the
 * permission layer's refusal, not a custody failure, and a caller working out the permission needs
 * must be able to tell it from one.
 */
function rethrowNotCapable(e: unknown): void {
  if (e instanceof Deno.errors.NotCapable) throw e;
}

/** Inputs of {@link readOperatorFile}: where, how large at most, and the refusal to throw. */
export interface OperatorFileOptions {
  /** The project's real path (the file must lie outside it). */
  readonly projectReal: string;
  /** The uid that must own the file and directory (default: the current uid). */
  readonly uid?: number;
  /** Compare "inside the project" case-folded (default: on macOS). */
  readonly foldCase?: boolean;
  /** The largest file read, in bytes. */
  readonly maxBytes: number;
  /** What the file is, for the refusal's words (e.g. "operator confined file"). */
  readonly what: string;
  /** The refusal thrown for a custody failure, naming the path and why. */
  readonly unsafe: (path: string, why: string) => Error;
}

/** An operator file's raw bytes, their SHA-256, and where they were read. */
export interface OperatorFileRead {
  readonly bytes: Uint8Array;
  readonly sha256: string;
  readonly path: string;
}

/**
 * Reads an operator-owned file under the custody rules of the module doc (its directory a real
 * directory owned by the user with no group or other bits, the file a regular file owned by the
 * user and not group- or world-writable, outside the project, at most `maxBytes`), or `null` when
 * its directory or the file is absent. The one custody rule for every file the operator keeps
 * beside the confined-programs file (its direct-write grants, its verify keys).
 *
 * @throws what `opts.unsafe` makes, on any custody failure; Deno's `NotCapable` when the launch
 *   flags do not grant the file or its directory
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readOperatorFile } from "./operator_file_read.ts";
 * const got = readOperatorFile("/nonexistent/dir/file.json", {
 *   projectReal: "/srv/repo", maxBytes: 1024, what: "operator file",
 *   unsafe: (path, why) => new Error(`${path}: ${why}`),
 * });
 * assert.equal(got, null);
 * ```
 */
export function readOperatorFile(path: string, opts: OperatorFileOptions): OperatorFileRead | null {
  const dir = path.slice(0, path.lastIndexOf("/"));
  const unsafe = opts.unsafe;
  const uid = opts.uid ?? Deno.uid();
  if (uid === null) throw unsafe(path, "the current uid is unknown on this platform");
  const fold = opts.foldCase ?? Deno.build.os === "darwin";
  const lstat = (p: string): Deno.FileInfo | null => {
    try {
      return lstatOrNullSync(p);
    } catch (e) {
      rethrowNotCapable(e);
      throw unsafe(p, `cannot be inspected (${(e as Error).message})`);
    }
  };
  const custody = (p: string, st: Deno.FileInfo, rule: CustodyRule, what: string): void => {
    const problem = custodyProblem(st, rule);
    if (problem !== null) throw unsafe(p, `${what} ${problem.why}`);
  };

  // The directory first: one replaced by a file or a link is refused, never taken for "no file".
  const dirSt = lstat(dir);
  if (dirSt === null) return null;
  // Its kind before the file's presence, its owner and mode only once there is a file to guard.
  custody(dir, dirSt, { kind: "directory" }, "the directory");
  const fileSt = lstat(path);
  if (fileSt === null) return null;
  custody(dir, dirSt, { kind: "directory", uid, forbiddenModeBits: 0o077 }, "the directory");
  custody(path, fileSt, { kind: "file", uid, forbiddenModeBits: 0o022 }, "the file");
  if (fileSt.size > opts.maxBytes) {
    throw unsafe(path, `is larger than ${opts.maxBytes} bytes`);
  }
  let dirReal: string;
  try {
    dirReal = Deno.realPathSync(dir);
  } catch (e) {
    rethrowNotCapable(e);
    throw unsafe(dir, `cannot be resolved (${(e as Error).message})`);
  }
  if (within(dirReal, opts.projectReal, fold)) {
    throw unsafe(path, "lies inside the project, where agents' commands could write it");
  }

  let bytes: Uint8Array;
  try {
    bytes = readRegularFileSync(path, {
      maxBytes: opts.maxBytes,
      ownerUid: uid,
      forbiddenModeBits: 0o022,
      what: opts.what,
    }).bytes;
  } catch (e) {
    if (e instanceof FsSafetyError) throw unsafe(path, e.message);
    rethrowNotCapable(e);
    throw unsafe(path, `cannot be read (${(e as Error).message})`);
  }
  return { bytes, sha256: sha256Hex(bytes), path };
}

/**
 * Returns the operator file's content and digest, `null` when there is none, or throws
 * `SandboxError("CONFINED_FILE_UNSAFE")` on any custody failure, `CONFINED_INVALID` when the
 * bytes are not a UTF-8 JSON object, and Deno's `NotCapable` when the launch flags do not grant
 * the file or its directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readConfinedFile } from "./operator_file_read.ts";
 * assert.equal(readConfinedFile({ projectReal: "/srv/repo", home: "/nonexistent" }), null);
 * ```
 */
export function readConfinedFile(opts: ReadConfinedOptions): ConfinedFileRead | null {
  const got = readOperatorFile(confinedFilePath(opts.projectReal, opts.home), {
    projectReal: opts.projectReal,
    ...(opts.uid !== undefined ? { uid: opts.uid } : {}),
    ...(opts.foldCase !== undefined ? { foldCase: opts.foldCase } : {}),
    maxBytes: MAX_CONFINED_BYTES,
    what: "operator confined file",
    unsafe,
  });
  if (got === null) return null;
  const { bytes: raw, sha256, path } = got;
  let data: unknown;
  try {
    // The one JSON reader (duplicate keys, depth, a byte order mark refused), strict JSON.
    data = readJson(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw), {
      dialect: "json",
    }).value;
  } catch (e) {
    throw new SandboxError(
      "CONFINED_INVALID",
      `operator confined file ${path} is not valid UTF-8 JSON: ${(e as Error).message}`,
      { details: { path } },
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new SandboxError(
      "CONFINED_INVALID",
      `operator confined file ${path} must hold a JSON object of {agent: {exec, write}}`,
      { details: { path } },
    );
  }
  return Object.freeze({ data: data as Record<string, unknown>, sha256, path });
}
