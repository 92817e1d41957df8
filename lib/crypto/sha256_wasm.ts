/**
 * The batch SHA-256 / HMAC-SHA256 module (`lib/crypto/wasm/sha256.c`, built by
 * `scripts/build-wasm`). One call verifies a whole table of ledger rows inside WebAssembly, which
 * avoids the per-call overhead that dominates hashing many short lines one call at a time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WasmSha256 } from "./sha256_wasm.ts";
 * const w = WasmSha256.create();
 * assert.equal(w.sha256Hex(new TextEncoder().encode("abc")).slice(0, 8), "ba7816bf");
 * ```
 * @module
 */
import { SHA256_WASM_BASE64 } from "./sha256_wasm_bytes.ts";

interface Exports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  hmac_setkey(ptr: number, len: number): void;
  sha256_hex(ptr: number, len: number, out: number): void;
  hmac_hex(ptr: number, len: number, out: number): void;
  verify_rows(
    n: number,
    table: number,
    hashes: number,
    flags: number,
    scratch: number,
    chained: number,
  ): void;
  scan_row(b: number, start: number, end: number, out: number): number;
  line_status(b: number, start: number, end: number, out: number, maxRow: number): number;
  scan_lines(
    b: number,
    from: number,
    end: number,
    table: number,
    status: number,
    max: number,
    maxRow: number,
  ): number;
  act_tags(
    b: number,
    from: number,
    end: number,
    tags: number,
    max: number,
    maxLine: number,
  ): number;
  scratch_per_row(): number;
}

let compiled: WebAssembly.Module | null = null;

function moduleBytes(): Uint8Array {
  // The built-in decoder: a charCodeAt loop over 29 KB costs ~8 ms before the JIT warms up.
  return Uint8Array.fromBase64(SHA256_WASM_BASE64);
}

const PAGE = 65536;

const dec = new TextDecoder();

/** One instance of the module with its own linear memory. */
export class WasmSha256 {
  readonly #x: Exports;
  readonly #base: number;

  private constructor(x: Exports) {
    this.#x = x;
    this.#base = (x.__heap_base.value as number + 63) & ~63;
  }

  /**
   * Instantiates the module (compiled once per process).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * assert.equal(WasmSha256.create().heapBase > 0, true);
   * ```
   */
  static create(): WasmSha256 {
    const inst = new WebAssembly.Instance(WasmSha256.module(), {});
    return new WasmSha256(inst.exports as unknown as Exports);
  }

  /**
   * The compiled module (compiled once per process), for a worker to instantiate its own copy.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * assert.equal(WebAssembly.Module.exports(WasmSha256.module()).some((e) => e.name === "verify_rows"), true);
   * ```
   */
  static module(): WebAssembly.Module {
    return compiled ??= new WebAssembly.Module(moduleBytes() as BufferSource);
  }

  /** First free byte of linear memory (64-aligned). */
  get heapBase(): number {
    return this.#base;
  }

  /** The linear memory as bytes (re-read after {@link reserve}, which may move it). */
  get bytes(): Uint8Array {
    return new Uint8Array(this.#x.memory.buffer);
  }

  /**
   * Grows linear memory so that `[heapBase, heapBase + n)` is addressable.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * const w = WasmSha256.create();
   * w.reserve(1 << 20);
   * assert.equal(w.bytes.length >= w.heapBase + (1 << 20), true);
   * ```
   */
  reserve(n: number): void {
    const need = this.#base + n;
    const have = this.#x.memory.buffer.byteLength;
    if (need > have) this.#x.memory.grow(Math.ceil((need - have) / PAGE));
  }

  /**
   * Sets the HMAC key (keys over 64 bytes are hashed first, per RFC 2104).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { createHmac } from "node:crypto";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * const w = WasmSha256.create();
   * w.setKey(new TextEncoder().encode("k"));
   * assert.equal(w.hmacHex(new TextEncoder().encode("m")), createHmac("sha256", "k").update("m").digest("hex"));
   * ```
   */
  setKey(key: Uint8Array): void {
    const k = this.keyBlock(key);
    this.reserve(64);
    this.bytes.set(k, this.#base);
    this.#x.hmac_setkey(this.#base, k.length);
  }

  /**
   * The key as HMAC pads it: the key itself, or its SHA-256 when longer than 64 bytes (RFC
   * 2104). What {@link setKey} keys with, and what a worker's instance is given.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * assert.equal(WasmSha256.create().keyBlock(new Uint8Array(65)).length, 32);
   * ```
   */
  keyBlock(key: Uint8Array): Uint8Array {
    return key.length > 64 ? Uint8Array.fromHex(this.sha256Hex(key)) : key;
  }

  /**
   * Hex SHA-256 of bytes (copies them into linear memory; for tests and small inputs).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * assert.equal(WasmSha256.create().sha256Hex(new Uint8Array(0)).slice(0, 8), "e3b0c442");
   * ```
   */
  sha256Hex(data: Uint8Array): string {
    this.reserve(data.length + 64);
    const out = this.#base + data.length;
    this.bytes.set(data, this.#base);
    this.#x.sha256_hex(this.#base, data.length, out);
    return dec.decode(this.bytes.subarray(out, out + 64));
  }

  /**
   * Hex HMAC-SHA256 of bytes under the key from {@link setKey}.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * const w = WasmSha256.create();
   * w.setKey(new TextEncoder().encode("key"));
   * assert.equal(w.hmacHex(new TextEncoder().encode("m")).length, 64);
   * ```
   */
  hmacHex(data: Uint8Array): string {
    this.reserve(data.length + 64);
    const out = this.#base + data.length;
    this.bytes.set(data, this.#base);
    this.#x.hmac_hex(this.#base, data.length, out);
    return dec.decode(this.bytes.subarray(out, out + 64));
  }

  /** Scratch bytes `verifyRows` needs per row. */
  get scratchPerRow(): number {
    return this.#x.scratch_per_row();
  }

  /**
   * Runs `verify_rows` (see the C source) on a table already placed in linear memory.
   * All arguments are absolute offsets into {@link bytes}; `scratch` is 16-aligned and holds
   * `n * scratchPerRow` bytes. With `chained`, the first row's `prev` is compared with the hex
   * hash just before `hashes` (the previous call's last row).
   */
  verifyRows(
    n: number,
    table: number,
    hashes: number,
    flags: number,
    scratch: number,
    chained: boolean,
  ): void {
    this.#x.verify_rows(n, table, hashes, flags, scratch, chained ? 1 : 0);
  }

  /**
   * Scans the ledger line at `[b + start, b + end)` of linear memory (`scan_row` in the C
   * source, the one definition of the line's layout) into the six i32 slots at `out`
   * (positions relative to `b`); 1 when the line has the canonical layout.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * const w = WasmSha256.create();
   * w.reserve(64);
   * w.bytes.set(new TextEncoder().encode("{}"), w.heapBase);
   * assert.equal(w.scanRow(w.heapBase, 0, 2, w.heapBase + 32), 1);
   * ```
   */
  scanRow(b: number, start: number, end: number, out: number): number {
    return this.#x.scan_row(b, start, end, out);
  }

  /**
   * The form of the ledger line at `[b + start, b + end)` (`line_status` in the C source): bit 0
   * scanned, bit 1 `prev` is `""`, bit 2 over `maxRow` bytes; the scan's slots at `out` as
   * {@link scanRow} leaves them.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * const w = WasmSha256.create();
   * w.reserve(64);
   * w.bytes.set(new TextEncoder().encode("{}"), w.heapBase);
   * assert.equal(w.lineStatus(w.heapBase, 0, 2, w.heapBase + 32, 1), 4);
   * ```
   */
  lineStatus(b: number, start: number, end: number, out: number, maxRow: number): number {
    return this.#x.line_status(b, start, end, out, maxRow);
  }

  /**
   * Finds and scans up to `max` complete lines in `[b + from, b + end)` (`scan_lines` in the C
   * source): the verify table's six words per line at `table`, a form byte per line at `status`
   * (bit 0 scanned, bit 1 `prev` is `""`, bit 2 over `maxRow` bytes). Returns the line count.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * const w = WasmSha256.create();
   * w.reserve(256);
   * const b = w.heapBase;
   * w.bytes.set(new TextEncoder().encode("x\ny\n"), b);
   * assert.equal(w.scanLines(b, 0, 4, b + 64, b + 200, 8, 1 << 20), 2);
   * ```
   */
  scanLines(
    b: number,
    from: number,
    end: number,
    table: number,
    status: number,
    max: number,
    maxRow: number,
  ): number {
    return this.#x.scan_lines(b, from, end, table, status, max, maxRow);
  }

  /**
   * The dispatch tags named by up to `max` complete lines in `[b + from, b + end)` (`act_tags` in
   * the C source, the rule `lib/ledger/dispatch_acts.ts` states), as runs of consecutive lines
   * naming the same tag: a pair of u32 words at `tags` (4-aligned; two words a line at most) per
   * run, the absolute offset of its first tag's 12 characters and the number of lines, in line
   * order. Lines over `maxLine` bytes are not looked at. Returns the number of runs.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { WasmSha256 } from "./sha256_wasm.ts";
   * const w = WasmSha256.create();
   * w.reserve(256);
   * const b = w.heapBase;
   * w.bytes.set(new TextEncoder().encode('{"action": "apply-proposal", "dispatch": "0123456789ab"}\n'), b);
   * assert.equal(w.actTags(b, 0, 57, b + 128, 8, 1 << 20), 1);
   * assert.deepEqual([...new Uint32Array(w.bytes.buffer, b + 128, 2)], [b + 42, 1]);
   * ```
   */
  actTags(
    b: number,
    from: number,
    end: number,
    tags: number,
    max: number,
    maxLine: number,
  ): number {
    return this.#x.act_tags(b, from, end, tags, max, maxLine);
  }
}
