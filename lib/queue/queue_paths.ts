/**
 * The queue's layout, in one place: where requests arrive, where the runner claims them, where
 * results and liveness are published, and which names are requests at all.
 *
 * ```
 * .agentteams-queue/requests/<id>.json      the orchestrator's channel (sessions write here)
 * .agentteams-queue/mcp-requests/<id>.json  the tool-server channel (carries via_agent)
 * .agentteams-queue/acks/<id>               the result's ack token: the waiter has read it
 * .agentteams/queue-claimed/<id>.json       a request the runner took (renamed here), 0700 dir
 * .agentteams/acks-claimed/<id>             an ack the runner took to check it (renamed here)
 * .agentteams/runner.lock                   the runner's exclusive lock (never deleted)
 * .agentteams-status/runner.json            liveness: pid, version, start, beat, pinned hashes
 * .agentteams-status/results/<id>.json      results, sealed to their requester and MAC'd
 * ```
 *
 * @module
 */
import { join } from "../fs/path.ts";
import { QUEUE_DIR, STATE_DIR, STATUS_DIR } from "../layout.ts";

/** A request's channel, taken from the directory it arrived in, never from a field. */
export type Channel = "orchestrator" | "mcp";

/** Every path of the queue for one project. */
export interface QueuePaths {
  readonly root: string;
  readonly queue: string;
  readonly requests: string;
  readonly mcpRequests: string;
  readonly acks: string;
  readonly state: string;
  readonly claimed: string;
  /** Acks moved here (renamed, never followed) before the runner reads them; 0700. */
  readonly ackClaimed: string;
  readonly lock: string;
  readonly status: string;
  readonly results: string;
  readonly runnerJson: string;
}

/**
 * The queue's paths under a project root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { queuePaths } from "./queue_paths.ts";
 * assert.equal(queuePaths("/p").requests, "/p/.agentteams-queue/requests");
 * assert.equal(queuePaths("/p").claimed, "/p/.agentteams/queue-claimed");
 * ```
 */
export function queuePaths(root: string): QueuePaths {
  const queue = join(root, QUEUE_DIR);
  const state = join(root, STATE_DIR);
  const status = join(root, STATUS_DIR);
  return {
    root,
    queue,
    requests: join(queue, "requests"),
    mcpRequests: join(queue, "mcp-requests"),
    acks: join(queue, "acks"),
    state,
    claimed: join(state, "queue-claimed"),
    ackClaimed: join(state, "acks-claimed"),
    lock: join(state, "runner.lock"),
    status,
    results: join(status, "results"),
    runnerJson: join(status, "runner.json"),
  };
}

/**
 * The directory of a channel.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { channelDir, queuePaths } from "./queue_paths.ts";
 * assert.equal(channelDir(queuePaths("/p"), "mcp"), "/p/.agentteams-queue/mcp-requests");
 * ```
 */
export function channelDir(paths: QueuePaths, channel: Channel): string {
  return channel === "orchestrator" ? paths.requests : paths.mcpRequests;
}

const ID = /^[0-9a-f]{32}$/;
const NAME = /^[0-9a-f]{32}\.json$/;
const TEMP = /^\.[0-9a-f]{32}\.tmp$/;

/**
 * The id of a request file's name, or null for any other name (temp files included).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { idOfName } from "./queue_paths.ts";
 * assert.equal(idOfName("0123456789abcdef0123456789abcdef.json"), "0123456789abcdef0123456789abcdef");
 * assert.equal(idOfName(".tmp-x.json"), null);
 * assert.equal(idOfName("0123456789ABCDEF0123456789ABCDEF.json"), null);
 * ```
 */
export function idOfName(name: string): string | null {
  return NAME.test(name) ? name.slice(0, 32) : null;
}

/**
 * Whether a name is a request still being written: the client's temporary `.<id>.tmp`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isTempName } from "./queue_paths.ts";
 * assert.equal(isTempName(".0123456789abcdef0123456789abcdef.tmp"), true);
 * assert.equal(isTempName("notes.txt"), false);
 * ```
 */
export function isTempName(name: string): boolean {
  return TEMP.test(name);
}

/**
 * The temporary name a request is written under before its rename.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isTempName, tempNameOf } from "./queue_paths.ts";
 * assert.equal(isTempName(tempNameOf("0123456789abcdef0123456789abcdef")), true);
 * ```
 */
export function tempNameOf(id: string): string {
  return `.${id}.tmp`;
}

/**
 * Whether a string is a request id (32 lower-case hex).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRequestId } from "./queue_paths.ts";
 * assert.equal(isRequestId("0".repeat(32)), true);
 * assert.equal(isRequestId("../x"), false);
 * ```
 */
export function isRequestId(id: string): boolean {
  return ID.test(id);
}

/**
 * A new request id (16 random bytes, hex).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRequestId, newRequestId } from "./queue_paths.ts";
 * assert.equal(isRequestId(newRequestId()), true);
 * ```
 */
export function newRequestId(): string {
  return crypto.getRandomValues(new Uint8Array(16)).toHex();
}
