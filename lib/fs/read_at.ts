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
 * import { readAtSync } from "./read_at.ts";
 * const path = Deno.makeTempFileSync();
 * Deno.writeTextFileSync(path, "hello\n");
 * using f = Deno.openSync(path);
 * const buf = new Uint8Array(4);
 * readAtSync(f, 2, buf); // 4 ("llo\n")
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
