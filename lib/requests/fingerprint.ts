/**
 * Content fingerprints of worktree files, in git's own terms: `<mode> <blob id>`, where the blob
 * id is what `git hash-object --no-filters` would give. A clean tracked file's index entry has
 * the same form, so a file can be compared whether git saw it clean or dirty.
 *
 * Never follows a symlink (its target text is hashed, as git stores it), never opens anything
 * but a regular file, and reports `absent` for a missing path. Whatever cannot be read
 * (permissions, a file changing under the read) gets a fingerprint that never repeats, so it is
 * always reported: fail closed.
 *
 * SHA-1 and SHA-256 digests come from a {@link HashFactory} passed in: `node:crypto`'s
 * `createHash`, loaded by {@link loadHashFactory} only when a snapshot has a file to hash, so a
 * clean tree never pays for Deno's Node compatibility layer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { blobId, loadHashFactory } from "./fingerprint.ts";
 * assert.equal(
 *   blobId(new Uint8Array(0), "sha1", await loadHashFactory()),
 *   "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
 * );
 * ```
 * @module
 */

import { OPEN_DEADLINE_MS, openWithin, readWholeFileWithin } from "../fs/safe_read.ts";

/** An incremental digest. */
export interface Digest {
  /** Adds bytes (strings as UTF-8). */
  update(data: string | Uint8Array): Digest;
  /** The hex digest. */
  digest(encoding: "hex"): string;
}

/** Makes a fresh digest of git's object format. */
export type HashFactory = (format: "sha1" | "sha256") => Digest;

/**
 * Loads `node:crypto`'s `createHash` (on first use; later calls are free).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHashFactory } from "./fingerprint.ts";
 * const make = await loadHashFactory();
 * assert.equal(make("sha1").update("").digest("hex"), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
 * ```
 */
export async function loadHashFactory(): Promise<HashFactory> {
  const { createHash } = await import("node:crypto");
  return (format) => createHash(format) as unknown as Digest;
}

/** The fingerprint of a path that does not exist. */
export const ABSENT = "absent";

const CHUNK = 1 << 20;

/** Files above this size, unchanged for a while, are fingerprinted by stat (see fileFingerprint). */
export const LARGE_FILE_BYTES = 64 * 1024 * 1024;

/**
 * How long ago a large file's last change must lie for its stat to stand for its content: well
 * past the kernel's coarse timestamp granularity and the snapshot's racy window.
 */
const SETTLED_MS = 2000;

/**
 * The git blob id of `bytes` (`sha1` or `sha256` object format).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { blobId, loadHashFactory } from "./fingerprint.ts";
 * assert.equal(
 *   blobId(new TextEncoder().encode("hello\n"), "sha1", await loadHashFactory()),
 *   "ce013625030ba8dba906f756967f9e9ca394464a",
 * );
 * ```
 */
export function blobId(bytes: Uint8Array, format: "sha1" | "sha256", make: HashFactory): string {
  return make(format).update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/**
 * A fingerprint that never equals any other (for what cannot be read or named).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { uniqueFingerprint } from "./fingerprint.ts";
 * assert.equal(uniqueFingerprint("opaque") !== uniqueFingerprint("opaque"), true);
 * ```
 */
export function uniqueFingerprint(why: string): string {
  return `${why}:${crypto.randomUUID()}`;
}

/**
 * `<mode> <blob id>` of a regular file read in chunks, or a unique fingerprint when it changed
 * while being read or cannot be read.
 */
async function fileFingerprint(
  abs: string,
  info: Deno.FileInfo,
  format: "sha1" | "sha256",
  make: HashFactory,
  statAllowed: boolean,
): Promise<string> {
  let file: Deno.FsFile;
  try {
    // With a deadline: a FIFO renamed over the file after its lstat would hold a plain open,
    // and the runner with it, forever (probe 22e E1).
    file = await openWithin(abs, OPEN_DEADLINE_MS, "worktree file");
  } catch {
    return uniqueFingerprint("unreadable");
  }
  try {
    const st = file.statSync();
    if (!st.isFile || st.ino !== info.ino || st.dev !== info.dev) {
      return uniqueFingerprint("unstable");
    }
    const mode = (st.mode ?? 0) & 0o111 ? "100755" : "100644";
    // A large file last changed well before now is fingerprinted by its identity and times, not
    // read: a sparse file of terabytes would otherwise cost hours per snapshot. Its ctime cannot
    // be set back, so a write shows; a file changed within the racy window is read like any other.
    const changed = Math.max(st.mtime?.getTime() ?? Infinity, st.ctime?.getTime() ?? Infinity);
    if (statAllowed && st.size > LARGE_FILE_BYTES && changed < Date.now() - SETTLED_MS) {
      return `large ${mode} ${st.size} ${st.dev}:${st.ino} ${st.mtime?.getTime()} ` +
        `${st.ctime?.getTime()}`;
    }
    const hash = make(format).update(`blob ${st.size}\0`);
    const buf = new Uint8Array(CHUNK);
    let total = 0;
    while (true) {
      const n = file.readSync(buf);
      if (n === null) break;
      total += n;
      if (total > st.size) break;
      hash.update(buf.subarray(0, n));
    }
    if (total !== st.size) return uniqueFingerprint("unstable");
    return `${mode} ${hash.digest("hex")}`;
  } catch {
    return uniqueFingerprint("unreadable");
  } finally {
    file.close();
  }
}

/**
 * The first step of {@link worktreeFingerprint}: the path's `lstat`, or the fingerprint it alone
 * decides (absent, unreadable, a directory, a special file), which needs no hashing code. A
 * snapshot loads that code ({@link loadHashFactory}: Node's `crypto`, the compatibility layer
 * with it) only for a path this leaves to hash: a temporary file git listed that is gone by then
 * (the head's, renamed while the first `git status` ran) costs a stat, not the layer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { worktreeEntry } from "./fingerprint.ts";
 * assert.equal(worktreeEntry("/nonexistent/x"), "absent");
 * assert.equal(worktreeEntry(Deno.makeTempDirSync()), "dir");
 * assert.equal(typeof worktreeEntry(Deno.makeTempFileSync()), "object"); // a file: hashed next
 * ```
 */
export function worktreeEntry(abs: string): string | Deno.FileInfo {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(abs.endsWith("/") ? abs.slice(0, -1) : abs);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return ABSENT;
    return uniqueFingerprint("unreadable");
  }
  if (info.isDirectory) return "dir";
  if (!info.isSymlink && !info.isFile) return `special ${info.mode ?? 0}`;
  return info;
}

/**
 * Fingerprints one worktree path (absolute). With `statAllowed` false a large settled file is read
 * all the same: a later snapshot must use the form the earlier one used for the path, or an
 * untouched file would compare unequal. `entry` is {@link worktreeEntry}'s answer for the path
 * when the caller already has it (the same single `lstat`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHashFactory, worktreeFingerprint } from "./fingerprint.ts";
 * assert.equal(await worktreeFingerprint("/nonexistent/x", "sha1", await loadHashFactory()), "absent");
 * ```
 */
export async function worktreeFingerprint(
  abs: string,
  format: "sha1" | "sha256",
  make: HashFactory,
  statAllowed = true,
  entry: string | Deno.FileInfo = worktreeEntry(abs),
): Promise<string> {
  if (typeof entry === "string") return entry;
  const info = entry;
  if (info.isSymlink) {
    try {
      const target = new TextEncoder().encode(Deno.readLinkSync(abs));
      return `120000 ${blobId(target, format, make)}`;
    } catch {
      return uniqueFingerprint("unreadable");
    }
  }
  return await fileFingerprint(abs, info, format, make, statAllowed);
}

/**
 * The largest racy watched file hashed (bytes); a larger one gets a fingerprint that never repeats,
 * so it shows as changed (fail closed) without being read into memory (a session may write
 * `.git/info/`, and a sparse file there costs it no disk).
 */
export const MAX_WATCHED_HASH_BYTES = 256 * 1024 * 1024;

/**
 * SHA-256 hex of a regular file's content (for racy control-plane entries), or a unique
 * fingerprint when it cannot be read. WebCrypto, not the WebAssembly hasher: a racy entry can be
 * large (the brief, an operator's file; the ledger and the dispatch store are left to the guard),
 * and a first WebAssembly call runs its baseline code (~14 ms for 400 KB, against ~2.5 ms here).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { contentSha256 } from "./fingerprint.ts";
 * assert.equal((await contentSha256("/nonexistent")).startsWith("unreadable:"), true);
 * ```
 */
export async function contentSha256(abs: string): Promise<string> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await readWholeFileWithin(abs, "watched file", MAX_WATCHED_HASH_BYTES);
  } catch {
    return uniqueFingerprint("unreadable");
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).toHex();
}
