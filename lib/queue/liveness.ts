/**
 * The runner's liveness file, `.agentteams-status/runner.json`: who serves (pid, version), since
 * when, its last beat, the hashes it pinned, and, when it stopped itself, why. A beat younger
 * than 15 s, with no stop, means a live runner. The status folder is one a session can write, so
 * the file is written and read through lib/fs/session_dir.ts (never through a link).
 *
 * @module
 */
import { type DirPin, pinDir, readNameWithin, replaceIn } from "../fs/session_dir.ts";
import type { Pins } from "./pins.ts";

/** How often the runner beats. */
export const BEAT_EVERY_MS = 3000;
/** A beat older than this is a runner gone. */
export const BEAT_FRESH_MS = 15_000;
/** The liveness file's name in the status folder. */
export const STATUS_NAME = "runner.json";
/** Largest liveness file read. */
const MAX_STATUS_BYTES = 64 * 1024;

/** Why a runner stopped itself (a pinned file changed, a refused start, a queue folder unsafe). */
export interface RunnerStop {
  readonly code: string;
  readonly message: string;
  readonly at: string;
}

/** The liveness file's content. */
export interface RunnerStatus {
  readonly pid: number;
  readonly version: string;
  readonly started: string;
  readonly beat: string;
  readonly pinned: Pins | null;
  readonly serving: string | null;
  /** Set when the runner stopped itself: waiting clients are told at once, with this reason. */
  readonly stopped?: RunnerStop;
}

/**
 * Writes the liveness file whole into the pinned status folder (0644: sessions read it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeStatus } from "./liveness.ts";
 * import { pinDir } from "../fs/session_dir.ts";
 * const dir = Deno.makeTempDirSync();
 * writeStatus(pinDir(dir)!, { pid: 1, version: "0", started: "s",
 *   beat: new Date().toISOString(), pinned: { brief: "b", confined: null, grants: null },
 *   serving: null });
 * assert.equal(JSON.parse(Deno.readTextFileSync(`${dir}/runner.json`)).pid, 1);
 * ```
 */
export function writeStatus(status: DirPin, s: RunnerStatus): void {
  replaceIn(status, STATUS_NAME, new TextEncoder().encode(JSON.stringify(s) + "\n"), 0o644);
}

/**
 * Reads the liveness file from the pinned status folder (null when absent or not JSON). A link,
 * hard link, FIFO or directory at its name is refused, never followed.
 *
 * @throws {FsSafetyError} what was at the name
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readStatusIn } from "./liveness.ts";
 * import { pinDir } from "../fs/session_dir.ts";
 * assert.equal(await readStatusIn(pinDir(Deno.makeTempDirSync())!), null);
 * ```
 */
export async function readStatusIn(status: DirPin): Promise<Partial<RunnerStatus> | null> {
  const bytes = await readNameWithin(status, STATUS_NAME, MAX_STATUS_BYTES);
  if (bytes === null) return null;
  try {
    const v: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (v === null || typeof v !== "object" || Array.isArray(v)) return null;
    const o = v as Record<string, unknown>;
    const st = o.stopped as Record<string, unknown> | undefined;
    const stopped = st !== null && typeof st === "object" && typeof st.code === "string"
      ? {
        code: st.code.slice(0, 64),
        message: String(st.message ?? "").slice(0, 2000),
        at: String(st.at ?? ""),
      }
      : undefined;
    return { ...o, stopped } as Partial<RunnerStatus>;
  } catch {
    return null;
  }
}

/**
 * Whether a liveness file's text shows a live runner at `now` (a beat within 15 s, not in the
 * future by more than that, and no stop). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isFreshBeat } from "./liveness.ts";
 * const now = new Date("2026-12-01T10:00:10Z");
 * assert.equal(isFreshBeat(JSON.stringify({ beat: "2026-12-01T10:00:00Z" }), now), true);
 * assert.equal(isFreshBeat(JSON.stringify({ beat: "2026-12-01T09:59:00Z" }), now), false);
 * assert.equal(isFreshBeat(JSON.stringify({ beat: "2026-12-01T10:00:00Z", stopped: { code: "X" } }), now), false);
 * assert.equal(isFreshBeat("not json", now), false);
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
  const { beat, stopped } = v as { beat?: unknown; stopped?: unknown };
  if (typeof beat !== "string" || stopped !== undefined) return false;
  const t = Date.parse(beat);
  return Number.isFinite(t) && Math.abs(now.getTime() - t) < BEAT_FRESH_MS;
}

/**
 * Whether a live runner serves the project whose status folder is `statusDir`: its liveness file
 * read without following anything (a link, hard link, FIFO or directory there, or a missing or
 * unreadable file, is no runner).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { liveRunner } from "./liveness.ts";
 * assert.equal(await liveRunner("/nonexistent/.agentteams-status", new Date()), false);
 * ```
 */
export async function liveRunner(statusDir: string, now: Date): Promise<boolean> {
  try {
    const pin = pinDir(statusDir);
    if (pin === null) return false;
    const bytes = await readNameWithin(pin, STATUS_NAME, MAX_STATUS_BYTES);
    return bytes !== null && isFreshBeat(new TextDecoder().decode(bytes), now);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
    return false;
  }
}
