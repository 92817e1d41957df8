/**
 * A cache file the tool trusts only when it signed it: `mac + "\n" + body`, the MAC the
 * HMAC-SHA256 of a prefix naming the cache's kind and the body, under the ledger key. Read with a
 * deadline on the open (the runs' temporary parent may be a folder others write: a FIFO there is
 * refused, not waited on), never through a symlink, at most `maxBytes`; written atomically,
 * `0600`. What cannot be read, or does not verify, is no cache: the caller does the work the cache
 * would have saved. The write-root scan (`write_root_scan_cache.ts`) and the sandbox probe
 * (`probe_cache.ts`) keep theirs this way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSignedCache, writeSignedCache } from "./signed_cache.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const k = new HmacKey(new Uint8Array([1]));
 * const path = Deno.makeTempDirSync() + "/c";
 * writeSignedCache(path, k, "kind 1\n", "body");
 * assert.equal(await readSignedCache(path, k, "kind 1\n", 1024), "body");
 * assert.equal(await readSignedCache(path, k, "kind 2\n", 1024), null);
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { readRegularFileWithin } from "../fs/safe_read.ts";

/**
 * The body of the cache at `path` when `hmac` signed it under `prefix`, else `null`. Never throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSignedCache } from "./signed_cache.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.equal(await readSignedCache("/nonexistent/c", new HmacKey(new Uint8Array([1])), "k\n", 9), null);
 * ```
 */
export async function readSignedCache(
  path: string,
  hmac: HmacKey,
  prefix: string,
  maxBytes: number,
): Promise<string | null> {
  try {
    const read = await readRegularFileWithin(path, { maxBytes, what: "cache" });
    const text = new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
    const cut = text.indexOf("\n");
    if (cut !== 64) return null;
    const body = text.slice(cut + 1);
    return hmac.verify(prefix + body, text.slice(0, cut)) ? body : null;
  } catch {
    return null;
  }
}

/**
 * Writes `body` signed under `prefix` to `path` (atomically, `0600`). Never throws: a cache that
 * cannot be written only saves nothing next time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSignedCache, writeSignedCache } from "./signed_cache.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const path = Deno.makeTempDirSync() + "/c";
 * const key = new HmacKey(new Uint8Array([1]));
 * writeSignedCache(path, key, "k\n", "{}");
 * assert.equal(await readSignedCache(path, key, "k\n", 4096), "{}");
 * // Another key's cache is none.
 * assert.equal(await readSignedCache(path, new HmacKey(new Uint8Array([2])), "k\n", 4096), null);
 * ```
 */
export function writeSignedCache(path: string, hmac: HmacKey, prefix: string, body: string): void {
  try {
    atomicWriteFileSync(path, `${hmac.hex(prefix + body)}\n${body}`, { forceMode: 0o600 });
  } catch {
    // Only slower next time.
  }
}
