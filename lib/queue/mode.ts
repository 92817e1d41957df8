/**
 * Queue mode: when the CLI's acting commands (`dispatch`, `apply`, `run`, `ledger verify`) do not
 * act themselves but queue a request for the runner. They do when the brief says
 * `"write_policy": "orchestrator-only"`, when a brief exists that cannot be read (fail closed),
 * or when a live runner serves the project (a fresh beat). An operator who holds the key and
 * acts outside every session says `--direct`.
 *
 * @module
 */
import { resolve } from "../fs/path.ts";
import { readJson } from "../json/reader.ts";
import { defaultBriefPath, readBriefBytes } from "../policy/brief_file.ts";
import { PolicyError } from "../errors.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { liveRunner } from "./liveness.ts";
import { queuePaths } from "./queue_paths.ts";

/** The reason given when a brief exists that cannot be read. */
export const BRIEF_UNREADABLE_REASON = "the brief cannot be read (queue mode, failing closed)";

/** The write policy that puts a project under the runner. */
export const ORCHESTRATOR_ONLY = "orchestrator-only";

/**
 * Why the brief's text (or its bytes: what is not UTF-8 cannot be read) puts the project in queue
 * mode, or null when it does not. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { briefQueueReason } from "./mode.ts";
 * assert.equal(briefQueueReason('{"write_policy": "orchestrator-only"}'), "the brief says write_policy orchestrator-only");
 * assert.equal(briefQueueReason('{"write_policy": "cooperative"}'), null);
 * assert.equal(briefQueueReason("{ broken"), "the brief cannot be read (queue mode, failing closed)");
 * assert.equal(briefQueueReason(new Uint8Array([0xff])), "the brief cannot be read (queue mode, failing closed)");
 * ```
 */
export function briefQueueReason(brief: string | Uint8Array): string | null {
  let v: unknown;
  try {
    const text = typeof brief === "string"
      ? brief
      : new TextDecoder("utf-8", { fatal: true }).decode(brief);
    v = readJson(text, { dialect: "jsonc" }).value;
  } catch {
    return BRIEF_UNREADABLE_REASON;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return BRIEF_UNREADABLE_REASON;
  }
  return (v as { write_policy?: unknown }).write_policy === ORCHESTRATOR_ONLY
    ? `the brief says write_policy ${ORCHESTRATOR_ONLY}`
    : null;
}

/**
 * Why this project is in queue mode now, or null for direct mode.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { queueModeReason } from "./mode.ts";
 * assert.equal(await queueModeReason(Deno.makeTempDirSync(), null, new Date()), null); // (no brief, no runner)
 * ```
 */
export async function queueModeReason(
  root: string,
  briefFlag: string | null,
  now: Date,
): Promise<string | null> {
  if (await liveRunner(queuePaths(root).status, now)) return "a runner serves this project";
  let path: string;
  try {
    path = briefFlag !== null ? resolve(briefFlag) : await defaultBriefPath(root);
  } catch (e) {
    // No brief at all is direct mode (it needs the key); one that cannot be examined is not.
    if (e instanceof PolicyError && e.code === "BRIEF_NOT_FOUND") return null;
    return BRIEF_UNREADABLE_REASON;
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBriefBytes(path);
  } catch {
    if (briefFlag !== null && lstatOrNullSync(path) === null) return null;
    return BRIEF_UNREADABLE_REASON;
  }
  return briefQueueReason(bytes);
}
