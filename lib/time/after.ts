/**
 * A cancellable deadline that costs no timer set-up: the one way this program waits for a
 * deadline (a spawned command's timeout, an open that may block on a FIFO).
 *
 * @module
 */

/**
 * Calls `fn` after `ms` unless cancelled first; returns the cancel. Built on
 * `AbortSignal.timeout` because Deno's first `setTimeout` in a process costs ~10 ms of one-time
 * set-up, and the CLI runs once per process. The signal's timer keeps the process alive only
 * while the listener is attached, so cancelling removes it: an embedding program does not linger
 * for the rest of the timeout.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { after } from "./after.ts";
 * let fired = false;
 * const cancel = after(10_000, () => fired = true);
 * cancel();
 * assert.equal(fired, false);
 * ```
 */
export function after(ms: number, fn: () => void): () => void {
  const signal = AbortSignal.timeout(Math.max(0, ms));
  signal.addEventListener("abort", fn, { once: true });
  return () => signal.removeEventListener("abort", fn);
}
