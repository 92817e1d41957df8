/**
 * Positional reads that do not stop at a short read.
 *
 * @module
 */

/**
 * Seeks `file` to `offset` and reads until `buf` is full or the file ends; returns how many bytes
 * were read (less than `buf.length` only at end of file, which callers treat as the file having
 * changed under them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readAtSync } from "./read_at.ts";
 * const path = Deno.makeTempFileSync();
 * Deno.writeTextFileSync(path, "hello\n");
 * using f = Deno.openSync(path);
 * const buf = new Uint8Array(4);
 * assert.equal(readAtSync(f, 2, buf), 4); // ("llo\n")
 * ```
 */
export function readAtSync(file: Deno.FsFile, offset: number, buf: Uint8Array): number {
  file.seekSync(offset, Deno.SeekMode.Start);
  let off = 0;
  while (off < buf.length) {
    const n = file.readSync(buf.subarray(off));
    if (n === null || n === 0) break;
    off += n;
  }
  return off;
}

/**
 * Calls `each` with every complete line (without its `\n`) of `file` between `from` and `size`,
 * read in chunks of `chunk` bytes; a line still unterminated at `size` is left out. The line is a
 * view into the chunk: copy what is kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forEachLineAt } from "./read_at.ts";
 * const path = Deno.makeTempFileSync();
 * Deno.writeTextFileSync(path, "ab\ncd\nef");
 * using f = Deno.openSync(path);
 * const seen: string[] = [];
 * forEachLineAt(f, 0, 8, (l) => seen.push(new TextDecoder().decode(l)), 2);
 * assert.deepEqual(seen, ["ab", "cd"]);
 * ```
 */
export function forEachLineAt(
  file: Deno.FsFile,
  from: number,
  size: number,
  each: (line: Uint8Array) => void,
  chunk: number = 1 << 20,
): void {
  let carry = new Uint8Array(0);
  let pos = from;
  while (pos < size) {
    const buf = new Uint8Array(Math.min(chunk, size - pos));
    const n = readAtSync(file, pos, buf);
    if (n === 0) break;
    pos += n;
    const data = new Uint8Array(carry.length + n);
    data.set(carry);
    data.set(buf.subarray(0, n), carry.length);
    let start = 0;
    for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, start)) {
      each(data.subarray(start, nl));
      start = nl + 1;
    }
    carry = data.slice(start);
  }
}

/**
 * Reads a whole file into one buffer sized from `fstat`, growing it only if the file grew after
 * the stat. `Deno.readFileSync` reads in growing chunks and then copies the result; on a machine
 * where touching fresh memory is slow (about 13 µs a page in a VM) that costs twice the pages:
 * 15 ms against 8 ms for a 1.7 MB git index.
 *
 * @throws what `Deno.openSync` throws (`Deno.errors.NotFound`, ...).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readWholeFileSync } from "./read_at.ts";
 * const path = Deno.makeTempFileSync();
 * Deno.writeTextFileSync(path, "hello\n");
 * assert.equal(readWholeFileSync(path).length, 6);
 * ```
 */
export function readWholeFileSync(path: string): Uint8Array<ArrayBuffer> {
  using file = Deno.openSync(path, { read: true });
  return readWholeOpenedSync(file);
}

/**
 * {@link readWholeFileSync} of a file already open (the caller closes it): for a path someone
 * else may swap, open it with a deadline first (`readWholeFileWithin`, `lib/fs/safe_read.ts`).
 * With `maxBytes`, it stops once it holds more than that (a file that grows while it is read), so
 * a result longer than `maxBytes` means "over the cap", cut.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readWholeOpenedSync } from "./read_at.ts";
 * const path = Deno.makeTempFileSync();
 * Deno.writeTextFileSync(path, "hello\n");
 * using f = Deno.openSync(path);
 * assert.equal(readWholeOpenedSync(f).length, 6);
 * ```
 */
export function readWholeOpenedSync(
  file: Deno.FsFile,
  maxBytes: number = Infinity,
): Uint8Array<ArrayBuffer> {
  let buf = new Uint8Array(Math.min(file.statSync().size, maxBytes) + 1);
  let off = readAtSync(file, 0, buf);
  // A full buffer: the file has more than the stat said (it grew, or it is in /proc).
  while (off === buf.length && off <= maxBytes) {
    const grown = new Uint8Array(buf.length * 2);
    grown.set(buf);
    buf = grown;
    off += readAtSync(file, off, buf.subarray(off));
  }
  return buf.subarray(0, off);
}
