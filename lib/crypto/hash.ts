/**
 * SHA-256 and HMAC-SHA256 for the ledger's hot paths. `node:crypto` is used because it is several
 * times faster per call than WebCrypto's promise-based API; an {@link HmacKey} hashes its key pads
 * once, so each MAC costs two short hash continuations instead of a fresh key schedule.
 *
 * @example
 * ```ts
 * import { HmacKey, sha256Hex } from "./hash.ts";
 * sha256Hex("abc"); // "ba7816bf..."
 * new HmacKey(new TextEncoder().encode("k")).hex("message").length; // 64
 * ```
 * @module
 */
import { createHash, type Hash, timingSafeEqual } from "node:crypto";

type CopyableHash = Hash & { copy(): CopyableHash };

/**
 * Hex SHA-256 of a string (UTF-8) or bytes.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./hash.ts";
 * sha256Hex(""); // "e3b0c442..."
 * ```
 */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A keyed HMAC-SHA256 with its inner and outer pads hashed once. */
export class HmacKey {
  readonly #inner: CopyableHash;
  readonly #outer: CopyableHash;

  /** @param key the raw key bytes (any length; keys over 64 bytes are hashed first, per RFC 2104). */
  constructor(key: Uint8Array) {
    let k = key;
    if (k.length > 64) k = new Uint8Array(createHash("sha256").update(k).digest());
    const ipad = new Uint8Array(64).fill(0x36);
    const opad = new Uint8Array(64).fill(0x5c);
    for (let i = 0; i < k.length; i++) {
      ipad[i] ^= k[i];
      opad[i] ^= k[i];
    }
    this.#inner = createHash("sha256").update(ipad) as CopyableHash;
    this.#outer = createHash("sha256").update(opad) as CopyableHash;
  }

  /**
   * Hex HMAC-SHA256 of a string (UTF-8) or bytes.
   *
   * @example
   * ```ts
   * import { HmacKey } from "./hash.ts";
   * const k = new HmacKey(new TextEncoder().encode("key"));
   * k.hex("The quick brown fox jumps over the lazy dog");
   * // "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
   * ```
   */
  hex(data: string | Uint8Array): string {
    const inner = this.#inner.copy().update(data).digest();
    return this.#outer.copy().update(inner).digest("hex");
  }

  /**
   * True when `mac` is exactly the (lower-case hex) HMAC of `data`, as Python's
   * `hmac.compare_digest` decides. The comparison takes the same time wherever the first
   * difference is.
   *
   * @example
   * ```ts
   * import { HmacKey } from "./hash.ts";
   * const k = new HmacKey(new TextEncoder().encode("key"));
   * k.verify("m", k.hex("m")); // true
   * ```
   */
  verify(data: string | Uint8Array, mac: string): boolean {
    return hexEqual(this.hex(data), mac);
  }
}

const enc = new TextEncoder();

/**
 * Constant-time comparison of two hex strings of equal length; false when lengths differ.
 *
 * @example
 * ```ts
 * import { hexEqual } from "./hash.ts";
 * hexEqual("ab", "ab"); // true
 * ```
 */
export function hexEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(enc.encode(a), enc.encode(b));
}
