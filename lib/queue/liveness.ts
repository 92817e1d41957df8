/**
 * The runner's liveness file, `.agentteams-status/runner.json`: who serves (pid, version), since
 * when, its last beat, and the hashes it pinned. A beat younger than 15 s means a live runner.
 *
 * @module
 */
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import type { Pins } from "./pins.ts";

/** How often the runner beats. */
export const BEAT_EVERY_MS = 3000;
/** A beat older than this is a runner gone. */
export const BEAT_FRESH_MS = 15_000;

/** The liveness file's content. */
export interface RunnerStatus {
  readonly pid: number;
  readonly version: string;
  readonly started: string;
  readonly beat: string;
  readonly pinned: Pins;
  readonly serving: string | null;
}

/**
 * Writes the liveness file atomically (0644: sessions read it).
 *
 * @example
 * ```ts
 * import { writeStatus } from "./liveness.ts";
 * const p = Deno.makeTempDirSync() + "/runner.json";
 * writeStatus(p, { pid: 1, version: "0", started: "s", beat: new Date().toISOString(),
 *   pinned: { brief: "b", confined: null, grants: null }, serving: null });
 * ```
 */
export function writeStatus(path: string, s: RunnerStatus): void {
  atomicWriteFileSync(path, JSON.stringify(s) + "\n", { mode: 0o644 });
}

/**
 * Whether a liveness file's text shows a live runner at `now` (a beat within 15 s, not in the
 * future by more than that). Pure.
 *
 * @example
 * ```ts
 * import { isFreshBeat } from "./liveness.ts";
 * const now = new Date("2026-12-01T10:00:10Z");
 * isFreshBeat(JSON.stringify({ beat: "2026-12-01T10:00:00Z" }), now); // true
 * isFreshBeat(JSON.stringify({ beat: "2026-12-01T09:59:00Z" }), now); // false
 * isFreshBeat("not json", now); // false
 * ```
 */
export function isFreshBeat(text: string, now: Date): boolean {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  if (v === null || typeof v !== "object") return false;
  const beat = (v as { beat?: unknown }).beat;
  if (typeof beat !== "string") return false;
  const t = Date.parse(beat);
  return Number.isFinite(t) && Math.abs(now.getTime() - t) < BEAT_FRESH_MS;
}

/**
 * Whether a live runner serves the project whose liveness file is `path` (an unreadable or
 * missing file is no runner).
 *
 * @example
 * ```ts
 * import { liveRunner } from "./liveness.ts";
 * liveRunner("/nonexistent/runner.json", new Date()); // false
 * ```
 */
export function liveRunner(path: string, now: Date): boolean {
  try {
    const { bytes } = readRegularFileSync(path, { maxBytes: 64 * 1024, what: "runner status" });
    return isFreshBeat(new TextDecoder().decode(bytes), now);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
    return false;
  }
}
