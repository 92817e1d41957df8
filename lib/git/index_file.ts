/**
 * Reading git's index file (`DIRC`, versions 2, 3 and 4) without running git: for each entry its
 * path bytes, mode, object id, stage and the flags that make `git status` skip a file
 * (assume-valid, skip-worktree). A split index or a sparse index carries a required extension
 * (`link`, `sdir`); those, and anything malformed, are reported as unsupported so the caller can
 * ask git instead.
 *
 * @example
 * ```ts ignore
 * // Not run: it reads the .git/index of a repository in the working directory
 * import { parseIndex } from "./index_file.ts";
 * const parsed = parseIndex(Deno.readFileSync(".git/index"), 20);
 * if (parsed.ok) console.log(parsed.entries.length);
 * ```
 * @module
 */

/** One index entry. */
export interface IndexEntry {
  /** Path bytes relative to the worktree top. */
  readonly path: Uint8Array;
  /** Mode as a number (`0o100644`, `0o100755`, `0o120000`, `0o160000`). */
  readonly mode: number;
  /** Object id bytes (20 for SHA-1, 32 for SHA-256). */
  readonly oid: Uint8Array;
  /** Merge stage, 0 when not conflicted. */
  readonly stage: number;
  /** `assume-unchanged`: git status does not look at the file. */
  readonly assumeValid: boolean;
  /** `skip-worktree`: git status does not look at the file. */
  readonly skipWorktree: boolean;
}

/** The result of {@link parseIndex}. */
export type IndexParse =
  | { readonly ok: true; readonly version: number; readonly entries: readonly IndexEntry[] }
  | { readonly ok: false; readonly reason: string };

function fail(reason: string): IndexParse {
  return { ok: false, reason };
}

/** git's offset varint (varint.c): 7 bits per byte, each continuation adds one. */
function readVarint(buf: Uint8Array, at: number): [number, number] | null {
  if (at >= buf.length) return null;
  let c = buf[at++];
  let val = c & 0x7f;
  while (c & 0x80) {
    if (at >= buf.length || val > 0xffffff) return null;
    c = buf[at++];
    val = ((val + 1) * 128) + (c & 0x7f);
  }
  return [val, at];
}

/**
 * Parses an index file. `oidLength` is 20 for SHA-1 repositories, 32 for SHA-256. With `keep`,
 * every entry is still checked but only those it accepts are returned (no object for the rest:
 * a 100k-entry index is scanned several times faster than it is fully built).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseIndex } from "./index_file.ts";
 * assert.deepEqual(parseIndex(new Uint8Array(4), 20), { ok: false, reason: "too short" });
 * ```
 */
export function parseIndex(
  buf: Uint8Array,
  oidLength: number,
  keep?: (assumeValid: boolean, skipWorktree: boolean, mode: number) => boolean,
): IndexParse {
  if (buf.length < 12 + oidLength) return fail("too short");
  if (buf[0] !== 0x44 || buf[1] !== 0x49 || buf[2] !== 0x52 || buf[3] !== 0x43) {
    return fail("no DIRC signature");
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const version = view.getUint32(4);
  if (version < 2 || version > 4) return fail(`unsupported index version ${version}`);
  const count = view.getUint32(8);
  const end = buf.length - oidLength;
  const entries: IndexEntry[] = [];
  let at = 12;
  let prev: Uint8Array = new Uint8Array(0);
  for (let n = 0; n < count; n++) {
    const fixed = 40 + oidLength + 2;
    if (at + fixed > end) return fail("truncated entry");
    const mode = view.getUint32(at + 24);
    const flags = view.getUint16(at + 40 + oidLength);
    const oidAt = at + 40;
    let cursor = at + fixed;
    let extended = 0;
    if (flags & 0x4000) {
      if (version < 3 || cursor + 2 > end) return fail("bad extended flags");
      extended = view.getUint16(cursor);
      cursor += 2;
    }
    if ((mode & 0o170000) === 0o040000) return fail("sparse directory entry");
    const assumeValid = (flags & 0x8000) !== 0;
    const skipWorktree = (extended & 0x4000) !== 0;
    const wanted = keep === undefined || keep(assumeValid, skipWorktree, mode);
    if (version === 4) {
      const v = readVarint(buf, cursor);
      if (v === null || v[0] > prev.length) return fail("bad path compression");
      const nul = buf.indexOf(0, v[1]);
      if (nul < 0 || nul >= end) return fail("unterminated path");
      const kept = prev.length - v[0];
      const suffix = buf.subarray(v[1], nul);
      const path = new Uint8Array(kept + suffix.length);
      path.set(prev.subarray(0, kept));
      path.set(suffix, kept);
      at = nul + 1;
      prev = path;
      if (wanted) {
        const oid = buf.subarray(oidAt, oidAt + oidLength);
        entries.push({ path, mode, oid, stage: (flags >> 12) & 3, assumeValid, skipWorktree });
      }
      continue;
    }
    // Versions 2 and 3 store the name's length in the flags (0xfff: 4095 or more).
    const short = flags & 0xfff;
    const nul = short < 0xfff ? cursor + short : buf.indexOf(0, cursor);
    if (nul < 0 || nul >= end || buf[nul] !== 0) return fail("unterminated path");
    const length = nul - cursor;
    if (wanted) {
      entries.push({
        path: buf.subarray(cursor, nul),
        mode,
        oid: buf.subarray(oidAt, oidAt + oidLength),
        stage: (flags >> 12) & 3,
        assumeValid,
        skipWorktree,
      });
    }
    at += Math.floor((cursor - at + length + 8) / 8) * 8;
  }
  while (at < end) {
    if (at + 8 > end) return fail("truncated extension");
    const sig = buf.subarray(at, at + 4);
    const size = view.getUint32(at + 4);
    if (at + 8 + size > end) return fail("truncated extension");
    if (sig[0] < 0x41 || sig[0] > 0x5a) {
      return fail(`required extension ${JSON.stringify(String.fromCharCode(...sig))}`);
    }
    at += 8 + size;
  }
  return { ok: true, version, entries };
}
