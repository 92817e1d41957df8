/**
 * The HALT check every act makes (dispatch, apply, run, and so the runner's acts): one function,
 * {@link haltStop}, asked with the act's action ids (`lib/authz/actions.ts`). An unretracted HALT
 * reaching any of them stops the act (`HALTED`); a HALT on `*` is the operator's emergency stop
 * and reaches every act. A broken `prev_digest` chain stops every act too (a HALT may have been
 * removed: fail closed). With no decision log it costs one `lstat` (and, with the ledger key, the
 * check that no anchor or index holds one): the log's reader, its signatures and the trust roots
 * are loaded only when there is a log to read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { haltStop } from "./stop.ts";
 * assert.equal(await haltStop("/nonexistent", ["write:src/a.ts"], { env: {}, now: new Date() }), null);
 * ```
 * @module
 */
import { AuthzError } from "../errors.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import type { DecisionContext } from "./decisions.ts";
import type { HmacKey } from "../crypto/hash.ts";
import { authzPaths } from "./triad_paths.ts";
import type { Problem } from "./verdict.ts";
import { refuseGoneIndexed } from "./csv_index.ts";

/**
 * The HALT that stops an act with these action ids, or `null` when none stands (see the module
 * doc). Read-only. `context` may be a function: it is called only when there is a log to read.
 * With the proposal-ledger key (`key`), the log is read through its index
 * (`lib/authz/csv_index.ts`): the HALT rows and the rows appended since, the chain from its carry.
 *
 * @throws {AuthzError} `CSV_COLUMNS`, `CSV_MALFORMED` (a log that cannot be read stops nothing
 *   silently: the caller refuses the act with it).
 * @example
 * ```ts ignore
 * // Not run: it needs root, which it declares rather than makes.
 * import { haltStop } from "./stop.ts";
 * declare const root: string; // whose decision log holds a signed HALT on "*"
 * (await haltStop(root, ["run:git"], { env: {}, now: new Date() }))?.code; // "HALTED"
 * ```
 */
export async function haltStop(
  root: string,
  actions: readonly string[],
  context: DecisionContext | (() => Promise<DecisionContext>),
  key?: HmacKey,
): Promise<Problem | null> {
  // No log and no key: nothing to read. With the key, a log gone while its index stands refuses
  // (as its reader refuses it: `readDecisionLogFor`).
  const file = authzPaths(root).decisions;
  if (lstatOrNullSync(file) === null) {
    if (key !== undefined) refuseGoneIndexed({ root, name: "decisions", key, file });
    return null;
  }
  const { decisionChainBreak, haltFor, readDecisionLog, readDecisionLogFor } = await import(
    "./decisions.ts"
  );
  // With the ledger key, through the log's index: its HALT rows and what was appended since.
  const log = key === undefined ? readDecisionLog(root) : await readDecisionLogFor(root, null, key);
  if (log.table === null || log.recs.length === 0) return null;
  // The trust roots are read only now: with no decision log, nothing but the lstat above.
  const ctx = typeof context === "function" ? await context() : context;
  if (log.chainHeld !== true && log.table.header.includes("prev_digest")) {
    const broken = decisionChainBreak(log.recs);
    if (broken !== null) {
      return {
        code: "HALTED",
        reason: `the decision log's prev_digest chain is broken at row ${broken} (line ` +
          `${log.table.rows[broken - 1].line}): a HALT may have been removed, so every act is ` +
          "stopped until the log is repaired",
      };
    }
  }
  for (const action of actions) {
    const halt = await haltFor(log, action, ctx, root);
    if (halt !== null) {
      return { code: "HALTED", reason: `${action}: ${halt.problem.reason}` };
    }
  }
  return null;
}

/**
 * {@link haltStop}, throwing its problem: what the act pipeline and dispatch call.
 *
 * @throws {AuthzError} `HALTED`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requireNoHalt } from "./stop.ts";
 * // No decision log: no HALT stands.
 * await assert.doesNotReject(requireNoHalt("/nonexistent", ["dispatch:worker"], { env: {}, now: new Date() }));
 * ```
 */
export async function requireNoHalt(
  root: string,
  actions: readonly string[],
  ctx: DecisionContext | (() => Promise<DecisionContext>),
  key?: HmacKey,
): Promise<void> {
  const p = await haltStop(root, actions, ctx, key);
  if (p !== null) throw new AuthzError(p.code, `refused by a HALT: ${p.reason}`);
}
