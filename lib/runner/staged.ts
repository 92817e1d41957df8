/**
 * Staged proposals: a change or deletion an agent proposed through the tool-server channel that
 * waits for the orchestrator's approval instead of being written (FORMATS.md §2.5). The runner
 * checks it first through the act pipeline as a dry run (every path rule, the base, the gates),
 * then keeps it in `.agentteams/staged/<sid>.json` (directory 0700, file 0600), MAC'd with the
 * ledger key so a record edited on disk is never approved, and records a `stage-proposal` row.
 *
 * The record holds the artifact without its `dispatch` and `agent` (the nonce is never stored;
 * the agent is the record's own, from the signed dispatch record), the gates that passed, the
 * content's size and hash, and an expiry 24 hours on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stagedRecord } from "./staged.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const r = stagedRecord({
 *   sid: "0".repeat(32),
 *   agent: "worker",
 *   artifact: { kind: "delete-proposal", dispatch: "1".repeat(32), path: "src/a.txt", base_sha256: "a".repeat(64), rationale: "gone" },
 *   plan: { path: "src/a.txt", new_sha256: null, gates: [] },
 *   now: new Date("2026-12-01T10:00:00Z"),
 * }, new HmacKey(new Uint8Array(32)));
 * assert.equal(r.expires, "2026-12-02T10:00:00+00:00");
 * ```
 * @module
 */
import { canonical, type JsonObject, type JsonValue } from "../pycompat/canonical.ts";
import type { HmacKey } from "../crypto/hash.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { join } from "../fs/path.ts";
import { utcSeconds } from "../ledger/row.ts";
import { ensureQueueDir } from "../queue/dirs.ts";
import { STATE_DIR } from "../layout.ts";

/** How long a staged proposal waits for approval, in hours. */
export const STAGED_TTL_HOURS = 24;

/** What a staged record is made from. */
export interface StagedInput {
  /** The record's id (32 hex). */
  readonly sid: string;
  /** The agent the nonce resolved to. */
  readonly agent: string;
  /** The artifact as it came (its `dispatch` and `agent` are left out of the record). */
  readonly artifact: Record<string, unknown>;
  /** The dry run's result: the normalized path, the new content's hash, the gates that passed. */
  readonly plan: {
    readonly path: string;
    readonly new_sha256: string | null;
    readonly gates: readonly unknown[];
  };
  /** The clock's reading. */
  readonly now: Date;
}

/**
 * The staged record, MAC'd over its canonical form without `mac` (key order as FORMATS.md §2.5
 * writes it). Pure.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs input, which it declares rather than makes.
 * import { stagedRecord } from "./staged.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * declare const input: import("./staged.ts").StagedInput;
 * typeof stagedRecord(input, new HmacKey(new Uint8Array(32))).mac; // "string"
 * ```
 */
export function stagedRecord(input: StagedInput, hmac: HmacKey): JsonObject {
  const { dispatch: _d, agent: _a, ...artifact } = input.artifact;
  const content = typeof artifact.content === "string" ? artifact.content : null;
  const body: JsonObject = {
    sid: input.sid,
    agent: input.agent,
    path: input.plan.path,
    kind: String(artifact.kind),
    artifact: artifact as JsonObject,
    gates: input.plan.gates as JsonValue[],
    bytes: content === null ? 0 : new TextEncoder().encode(content).length,
    content_sha256: input.plan.new_sha256,
    expires: utcSeconds(new Date(input.now.getTime() + STAGED_TTL_HOURS * 3600_000)),
  };
  return { ...body, mac: hmac.hex(canonical(body)) };
}

/**
 * The staged folder of a project (`.agentteams/staged`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stagedDir } from "./staged.ts";
 * assert.equal(stagedDir("/p"), "/p/.agentteams/staged");
 * ```
 */
export function stagedDir(root: string): string {
  return join(root, STATE_DIR, "staged");
}

/**
 * Makes `.agentteams/staged/` (0700) when missing and checks it is a real directory, before
 * anything is recorded about a record to be written there. Returns its path.
 *
 * @throws {QueueError} `QUEUE_UNSAFE_PATH` when it is a link or not a directory
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ensureStagedDir } from "./staged.ts";
 * const root = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${root}/.agentteams`);
 * assert.equal(ensureStagedDir(root), `${root}/.agentteams/staged`);
 * ```
 */
export function ensureStagedDir(root: string): string {
  const dir = stagedDir(root);
  ensureQueueDir(dir, 0o700);
  return dir;
}

/**
 * Writes a staged record atomically (0600) into `.agentteams/staged/` (made 0700 when missing,
 * refused when it is not a real directory). Returns its path.
 *
 * @throws {QueueError} `QUEUE_UNSAFE_PATH` when the folder is a link or not a directory
 * @example
 * ```ts ignore
 * // Not run: it needs record, which it declares rather than makes, and writes in /p.
 * import { writeStaged } from "./staged.ts";
 * declare const record: import("../pycompat/canonical.ts").JsonObject;
 * writeStaged("/p", record); // "/p/.agentteams/staged/<sid>.json"
 * ```
 */
export function writeStaged(root: string, record: JsonObject): string {
  const dir = ensureStagedDir(root);
  const path = join(dir, `${record.sid}.json`);
  atomicWriteFileSync(path, JSON.stringify(record), { forceMode: 0o600 });
  return path;
}
