/**
 * Parsing `git status --porcelain=v1 -z` output: one `XY <path>` record per NUL, paths as raw
 * bytes relative to the top of the worktree. A rename or copy record (`R`/`C` in X or Y) is
 * followed by a second record holding the source path; both paths are returned.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseStatusZ } from "./status_z.ts";
 * const out = new TextEncoder().encode(" M a.ts\0?? new.txt\0");
 * assert.deepEqual(parseStatusZ(out).map((e) => e.xy), [" M", "??"]);
 * ```
 * @module
 */

/** One path git status reported. */
export interface StatusEntry {
  /** The two status letters (`??` untracked, ` M` modified, `D ` staged deletion, ...). */
  readonly xy: string;
  /** The path, raw bytes, relative to the worktree top. */
  readonly path: Uint8Array;
}

/**
 * Splits `-z` porcelain v1 output into entries. Throws on a record too short to hold a status
 * (the caller treats that as git being unusable).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseStatusZ } from "./status_z.ts";
 * const out = new TextEncoder().encode("R  new.ts\0old.ts\0");
 * assert.equal(parseStatusZ(out).length, 2);
 * ```
 */
export function parseStatusZ(out: Uint8Array): StatusEntry[] {
  const entries: StatusEntry[] = [];
  let start = 0;
  let sourceNext = false;
  let xy = "";
  for (let i = 0; i < out.length; i++) {
    if (out[i] !== 0) continue;
    const record = out.subarray(start, i);
    start = i + 1;
    if (sourceNext) {
      entries.push({ xy, path: record });
      sourceNext = false;
      continue;
    }
    if (record.length < 4 || record[2] !== 0x20) {
      throw new Error(`unreadable git status record (${record.length} bytes)`);
    }
    xy = String.fromCharCode(record[0], record[1]);
    entries.push({ xy, path: record.subarray(3) });
    sourceNext = /[RC]/.test(xy);
  }
  if (start !== out.length || sourceNext) throw new Error("git status output ends mid-record");
  return entries;
}
