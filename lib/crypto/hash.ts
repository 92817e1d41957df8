/**
 * SHA-256 and HMAC-SHA256 for the ledger's hot paths, synchronous, on the small WebAssembly
 * SHA-256 in `sha256_wasm.ts` (WebCrypto is promise-based and `node:crypto` would load Deno's Node
 * compatibility layer at start-up, ~30 ms). An {@link HmacKey} hashes its key pads once, so each
 * MAC costs two short hash continuations instead of a fresh key schedule.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HmacKey, sha256Hex } from "./hash.ts";
 * assert.equal(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
 * assert.equal(new HmacKey(new TextEncoder().encode("k")).hex("message").length, 64);
 * ```
 * @module
 */
import { WasmSha256 } from "./sha256_wasm.ts";

const enc = new TextEncoder();
let shared: WasmSha256 | null = null;

function bytesOf(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? enc.encode(data) : data;
}

/**
 * Hex SHA-256 of a string (UTF-8) or bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sha256Hex } from "./hash.ts";
 * assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
 * ```
 */
export function sha256Hex(data: string | Uint8Array): string {
  shared ??= WasmSha256.create();
  return shared.sha256Hex(bytesOf(data));
}

/** A keyed HMAC-SHA256 with its inner and outer pads hashed once. */
export class HmacKey {
  readonly #w: WasmSha256;

  /**
   * An HMAC-SHA256 keyed with `key`.
   *
   * @param key the raw key bytes (any length; keys over 64 bytes are hashed first, per RFC 2104).
   */
  constructor(key: Uint8Array) {
    this.#w = WasmSha256.create();
    this.#w.setKey(key);
  }

  /**
   * Hex HMAC-SHA256 of a string (UTF-8) or bytes.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HmacKey } from "./hash.ts";
   * const k = new HmacKey(new TextEncoder().encode("key"));
   * assert.equal(
   *   k.hex("The quick brown fox jumps over the lazy dog"),
   *   "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",
   * );
   * ```
   */
  hex(data: string | Uint8Array): string {
    return this.#w.hmacHex(bytesOf(data));
  }

  /**
   * True when `mac` is exactly the (lower-case hex) HMAC of `data`, as Python's
   * `hmac.compare_digest` decides. The comparison takes the same time wherever the first
   * difference is.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { HmacKey } from "./hash.ts";
   * const k = new HmacKey(new TextEncoder().encode("key"));
   * assert.equal(k.verify("m", k.hex("m")), true);
   * ```
   */
  verify(data: string | Uint8Array, mac: string): boolean {
    return hexEqual(this.hex(data), mac);
  }
}

/**
 * Constant-time comparison of two hex strings of equal length; false when lengths differ.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hexEqual } from "./hash.ts";
 * assert.equal(hexEqual("ab", "ab"), true);
 * ```
 */
export function hexEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Hex SHA-256 of a whole buffer in one native call (WebCrypto): for one large input (a file),
 * where the per-call cost of the promise is paid once and the native code is the fastest here.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sha256HexOnce } from "./hash.ts";
 * assert.equal(
 *   await sha256HexOnce(new TextEncoder().encode("abc")),
 *   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
 * );
 * ```
 */
export async function sha256HexOnce(data: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", data as BufferSource));
  return d.toHex();
}
