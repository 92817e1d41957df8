/**
 * Capped output capture: keep the first `cap` bytes of a stream, keep reading and discarding
 * the rest (so a chatty child never blocks on a full pipe), and say whether anything was dropped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { captureStream } from "./output.ts";
 * const cap = captureStream(new Blob(["hello"]).stream(), 3);
 * await cap.done;
 * assert.deepEqual(cap.result(), { bytes: new Uint8Array([104, 101, 108]), truncated: true });
 * ```
 * @module
 */

/** Bytes kept per stream by default (256 KiB). */
export const MAX_OUTPUT_BYTES = 256 * 1024;

/** A capture in progress. */
export interface Capture {
  /** Settles when the stream ends, fails or is cancelled. */
  readonly done: Promise<void>;
  /** True once the stream has ended (EOF) on its own. */
  ended(): boolean;
  /** Stops reading: pending reads settle, the pipe is released. */
  cancel(): Promise<void>;
  /** The bytes kept so far and whether any were dropped. */
  result(): { bytes: Uint8Array; truncated: boolean };
}

/**
 * Starts reading `stream`, keeping at most `cap` bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { captureStream } from "./output.ts";
 * const child = new Deno.Command("/bin/echo", { args: ["hi"], stdout: "piped" }).spawn();
 * const out = captureStream(child.stdout, 1024);
 * await child.status;
 * await out.done;
 * assert.equal(new TextDecoder().decode(out.result().bytes), "hi\n");
 * ```
 */
export function captureStream(stream: ReadableStream<Uint8Array>, cap: number): Capture {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let truncated = false;
  let eof = false;
  let cancelled = false;
  const done = (async () => {
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) {
          eof = !cancelled;
          return;
        }
        if (kept >= cap) {
          if (value.length > 0) truncated = true;
          continue;
        }
        const room = cap - kept;
        if (value.length > room) {
          chunks.push(value.slice(0, room));
          kept = cap;
          truncated = true;
        } else {
          chunks.push(value);
          kept += value.length;
        }
      }
    } catch {
      // A read error ends the capture; what was read is kept.
    }
  })();
  return {
    done,
    ended: () => eof,
    async cancel() {
      cancelled = true;
      try {
        await reader.cancel();
      } catch {
        // Already closed.
      }
      await done;
    },
    result() {
      const bytes = new Uint8Array(kept);
      let at = 0;
      for (const c of chunks) {
        bytes.set(c, at);
        at += c.length;
      }
      return { bytes, truncated };
    },
  };
}
