/**
 * Git reports paths as raw bytes (`-z`), and a file name need not be UTF-8. These helpers turn
 * such bytes into a string key without losing or merging anything: valid UTF-8 is kept as text,
 * every byte that is not part of valid UTF-8 becomes `\xNN`, and a literal backslash becomes
 * `\\`, so two different byte strings never render the same.
 *
 * @example
 * ```ts
 * import { renderPathBytes } from "./path_bytes.ts";
 * renderPathBytes(new Uint8Array([0x61, 0xff, 0x62])); // { text: "a\\xffb", utf8: false }
 * ```
 * @module
 */

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** A rendered path: the key text, and whether the bytes were valid UTF-8. */
export interface RenderedPath {
  /** Lossless, unambiguous text (`\xNN` for invalid bytes, `\\` for a backslash). */
  readonly text: string;
  /** True when the bytes were valid UTF-8 (the file can then be opened by that name). */
  readonly utf8: boolean;
}

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
function sequenceLength(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c < 0x80) return 1;
  let n: number;
  let min: number;
  if (c >= 0xc2 && c <= 0xdf) [n, min] = [2, 0x80];
  else if (c >= 0xe0 && c <= 0xef) [n, min] = [3, 0x800];
  else if (c >= 0xf0 && c <= 0xf4) [n, min] = [4, 0x10000];
  else return 0;
  if (i + n > b.length) return 0;
  let cp = c & (0xff >> (n + 1));
  for (let k = 1; k < n; k++) {
    const cc = b[i + k];
    if ((cc & 0xc0) !== 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

/**
 * Renders path bytes as a lossless key.
 *
 * @example
 * ```ts
 * import { renderPathBytes } from "./path_bytes.ts";
 * renderPathBytes(new TextEncoder().encode("src/é.ts")).text; // "src/é.ts"
 * renderPathBytes(new TextEncoder().encode("a\\b")).text; // "a\\\\b"
 * ```
 */
export function renderPathBytes(bytes: Uint8Array): RenderedPath {
  let valid = true;
  let text: string;
  try {
    text = strict.decode(bytes);
  } catch {
    valid = false;
    text = "";
  }
  if (valid) {
    return { text: text.includes("\\") ? text.replaceAll("\\", "\\\\") : text, utf8: true };
  }
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const n = sequenceLength(bytes, i);
    if (n === 0) {
      out += "\\x" + bytes[i].toString(16).padStart(2, "0");
      i += 1;
    } else {
      const piece = strict.decode(bytes.subarray(i, i + n));
      out += piece === "\\" ? "\\\\" : piece;
      i += n;
    }
  }
  return { text: out, utf8: false };
}

/**
 * The UTF-8 bytes of a string (for comparing with git's raw paths).
 *
 * @example
 * ```ts
 * import { utf8Bytes } from "./path_bytes.ts";
 * utf8Bytes("é").length; // 2
 * ```
 */
export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * True when `bytes` starts with `prefix`.
 *
 * @example
 * ```ts
 * import { startsWithBytes } from "./path_bytes.ts";
 * startsWithBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2])); // true
 * ```
 */
export function startsWithBytes(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/**
 * Compares two byte strings (memcmp order, as git sorts paths).
 *
 * @example
 * ```ts
 * import { compareBytes } from "./path_bytes.ts";
 * compareBytes(new Uint8Array([1]), new Uint8Array([1, 0])); // -1
 * ```
 */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Sorts strings by Unicode code point (one implementation: lib/pycompat/canonical.ts). */
export { compareCodePoints } from "../pycompat/canonical.ts";
