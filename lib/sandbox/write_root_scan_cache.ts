/**
 * The write roots' scan remembered between runs, so a confined run lists only the directories
 * that changed since the last one, not every directory of its write roots (issue 24 item 3: at
 * 20,000 files the listing was most of what confinement cost).
 *
 * What the cache holds is a {@link ScanRecord}: per directory, its `lstat` identity when it was
 * listed (device, inode, ctime, mtime), the subdirectories the walk went into and the entries the
 * matcher selected. The next walk trusts a directory's record only while its identity is the same
 * and it had settled when recorded (`scanWritableRoots` with `previous`, the rule the walk after
 * the command already follows); any other directory is listed again. So an older record is never
 * wrong, only slower: a cache replaced by an earlier one of the same project costs listings, never
 * a missed `.git`.
 *
 * What makes it trusted: the file is `mac + "\n" + body`, the MAC the HMAC-SHA256 of the body
 * under the ledger key (with a prefix of its own), and the body names the matcher it was made
 * with (the project, its protected paths, the entry's owned writes, case folding). A file that is
 * missing, unreadable, not a regular file, too large, malformed, signed with another key or made
 * with another matcher is no cache: the walk lists everything, as without one. It lives in the
 * runs' temporary parent (`runTmpParent`), outside the project (so the run's own snapshots never
 * see it change), and is rewritten only when the walk listed something.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScanCache } from "./write_root_scan_cache.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const cache = await ScanCache.open(Deno.makeTempDirSync() + "/scan", new HmacKey(new Uint8Array([1])));
 * assert.equal(cache.load("ctx"), null); // nothing saved yet
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { sha256Hex } from "../crypto/hash.ts";
import type { EntryKind } from "../fs/entry.ts";
import { readSignedCache, writeSignedCache } from "./signed_cache.ts";
import { within } from "../fs/within.ts";
import type { ScanHit, ScannedDir, ScanRecord } from "./write_root_scan.ts";

/** What the MAC covers before the body, so no other signed text of the tool reads as a cache. */
const MAC_PREFIX = "agentteams write-root scan cache v1\n";
/** A cache larger than this is not read (a write root of some 100,000 directories). */
export const MAX_SCAN_CACHE_BYTES = 32 * 1024 * 1024;
const KINDS: ReadonlySet<string> = new Set(["dir", "file", "symlink", "other", "missing"]);

/**
 * Where the cache for the project at `projectReal` lives under the runs' temporary parent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scanCachePath } from "./write_root_scan_cache.ts";
 * assert.match(scanCachePath("/tmp/agentteams-1000", "/srv/p"), /^\/tmp\/agentteams-1000\/agentteams-scan-[0-9a-f]{16}\.cache$/);
 * ```
 */
export function scanCachePath(tmpParent: string, projectReal: string): string {
  return `${tmpParent}/agentteams-scan-${sha256Hex(projectReal).slice(0, 16)}.cache`;
}

type DirRow = [string, string, number, string[], [string, string][]];

function isStrings(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/** The record a body holds, or `null` when it is not one made with `context`. */
function parseBody(text: string, context: string): ScanRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.context !== context || !Array.isArray(o.dirs)) return null;
  const record: ScanRecord = new Map();
  for (const row of o.dirs as unknown[]) {
    if (!Array.isArray(row) || row.length !== 5) return null;
    const [path, id, at, descended, hits] = row as unknown[];
    if (typeof path !== "string" || typeof id !== "string" || typeof at !== "number") return null;
    if (!isStrings(descended) || !Array.isArray(hits)) return null;
    const own: ScanHit[] = [];
    for (const h of hits as unknown[]) {
      if (!isStrings(h) || h.length !== 2 || !KINDS.has(h[1])) return null;
      own.push({ path: h[0], kind: h[1] as EntryKind });
    }
    record.set(path, { id, at, descended, hits: own });
  }
  return record;
}

/**
 * One run's view of the cache: {@link ScanCache.open} reads and checks the file, {@link load}
 * gives the record made with a matcher (`context`), {@link save} writes the walk's new record back
 * when the walk listed anything.
 */
export class ScanCache {
  #context: string | null = null;
  #loaded: ScanRecord | null = null;

  private constructor(
    /** The cache file ({@link scanCachePath}). */
    readonly path: string,
    private readonly hmac: HmacKey,
    /** The signed body found there, or `null`. */
    private readonly body: string | null,
  ) {}

  /**
   * Reads the cache at `path` (a regular file, opened with a deadline: the runs' temporary parent
   * may be a folder others write) and keeps its body when `hmac` signed it. Never throws: a cache
   * that cannot be used is no cache.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScanCache } from "./write_root_scan_cache.ts";
   * import { HmacKey } from "../crypto/hash.ts";
   * const path = Deno.makeTempDirSync() + "/scan";
   * Deno.writeTextFileSync(path, "0".repeat(64) + '\n{"context":"ctx","dirs":[]}');
   * const cache = await ScanCache.open(path, new HmacKey(new Uint8Array([1])));
   * assert.equal(cache.load("ctx"), null); // its MAC does not verify
   * ```
   */
  static async open(path: string, hmac: HmacKey): Promise<ScanCache> {
    return new ScanCache(
      path,
      hmac,
      await readSignedCache(path, hmac, MAC_PREFIX, MAX_SCAN_CACHE_BYTES),
    );
  }

  /**
   * The record saved for `context` (the matcher's description, `scanMatcherContext`), or `null`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScanCache } from "./write_root_scan_cache.ts";
   * import { HmacKey } from "../crypto/hash.ts";
   * const cache = await ScanCache.open(Deno.makeTempDirSync() + "/none", new HmacKey(new Uint8Array([1])));
   * assert.equal(cache.load("ctx"), null);
   * ```
   */
  load(context: string): ScanRecord | null {
    this.#context = context;
    this.#loaded = this.body === null ? null : parseBody(this.body, context);
    return this.#loaded;
  }

  /**
   * Writes `record` (the walk's, made with the context {@link load} was asked for), less what
   * lies in `transient` (the run's private TMPDIR, made afresh for each run), unless every
   * directory in it came unchanged from the loaded record. Never throws: a cache that cannot be
   * written is only slower next time.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScanCache } from "./write_root_scan_cache.ts";
   * import { HmacKey } from "../crypto/hash.ts";
   * const k = new HmacKey(new Uint8Array([1]));
   * const path = Deno.makeTempDirSync() + "/scan";
   * const first = await ScanCache.open(path, k);
   * first.load("ctx");
   * first.save(new Map([["/p/src", { id: "x", at: 1, descended: [], hits: [] }]]));
   * assert.equal((await ScanCache.open(path, k)).load("ctx")?.get("/p/src")?.id, "x");
   * ```
   */
  save(record: ScanRecord, transient?: string): void {
    const context = this.#context;
    if (context === null) return;
    const kept = [...record].filter(([dir]) => transient === undefined || !within(dir, transient));
    const loaded = this.#loaded;
    if (
      loaded !== null && loaded.size === kept.length &&
      kept.every(([dir, d]) => loaded.get(dir) === d)
    ) {
      return;
    }
    const dirs: DirRow[] = kept.map(([dir, d]: [string, ScannedDir]) => [
      dir,
      d.id,
      d.at,
      [...d.descended],
      d.hits.map((h) => [h.path, h.kind]),
    ]);
    writeSignedCache(this.path, this.hmac, MAC_PREFIX, JSON.stringify({ context, dirs }));
  }
}
