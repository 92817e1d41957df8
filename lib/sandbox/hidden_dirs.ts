/**
 * What every confined command and gate must not see at all, whoever runs it: the operator's key
 * directory, the project's state dir (the ledger, the dispatch store, claimed requests) and the
 * queue's directory (requests are sealed to the runner, and stay hidden all the same). Each is
 * mounted over by an empty read-only tmpfs (bwrap) or denied (Seatbelt). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hiddenFromConfined } from "./hidden_dirs.ts";
 * assert.deepEqual(hiddenFromConfined("/p", "/h/.config/agentteams/keys"), [
 *   "/h/.config/agentteams/keys",
 *   "/p/.agentteams",
 *   "/p/.agentteams-queue",
 * ]);
 * ```
 * @module
 */
import { join } from "../fs/path.ts";
import { QUEUE_DIR, STATE_DIR } from "../layout.ts";

/**
 * The directories hidden from everything the sandbox runs (missing ones are skipped later).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hiddenFromConfined } from "./hidden_dirs.ts";
 * assert.equal(hiddenFromConfined("/p", "/k").length, 3);
 * ```
 */
export function hiddenFromConfined(root: string, keyDir: string): string[] {
  return [keyDir, join(root, STATE_DIR), join(root, QUEUE_DIR)];
}
