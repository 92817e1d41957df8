/**
 * The triad ledgers' indexes around each write (`lib/authz/csv_index.ts`): a writer (`decision
 * sign`, `waiver issue`, a spend) first refuses a ledger that no longer extends its index
 * (`LEDGER_ROLLED_BACK`: a write would make a cut or rewritten file the operator's), writes, then
 * keeps the index of what it wrote and records its anchor, a signed row of the proposal ledger
 * (`lib/ledger/anchor_state.ts`) saying what the file holds; a writer without the proposal-ledger
 * key removes the index it cannot keep (it would refuse the file just written). The anchor, not the
 * index, is what a read holds the file to: an index removed or put back is read around, never
 * taken as "nothing to hold it to".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { triadWrite } from "./triad_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const key = new HmacKey(new Uint8Array(32));
 * assert.equal(await triadWrite(root, key, "decisions", () => Promise.resolve(1)), 1);
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { dropIndex, requireExtends } from "./csv_index.ts";
import { indexDecisionLog } from "./decisions.ts";
import { authzPaths } from "./triad_paths.ts";
import { appendRow } from "../ledger/append.ts";
import { anchorRow } from "../ledger/anchor_state.ts";
import { indexWaivers } from "./waivers.ts";

/** A triad ledger that is indexed. */
export type TriadLedger = "decisions" | "waivers";

/**
 * Refuses when a ledger (or both) no longer extends its index, or is gone while one stands.
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keepTriadIndexes, requireTriadExtends } from "./triad_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const key = new HmacKey(new Uint8Array(32));
 * Deno.mkdirSync(root + "/references");
 * const log = root + "/references/security-waivers.log.csv";
 * const header = "timestamp,waiver_id,action_reviewed,expires_at,max_uses,uses,approver," +
 *   "ticket_id,reason_code,conditions_verified,signature\n";
 * Deno.writeTextFileSync(log, header + "2026-12-01T00:00:00Z,W-1,deploy,,1,0,security,T,r,,\n");
 * await keepTriadIndexes(root, key, "waivers");
 * await requireTriadExtends(root, key, "both"); // as the operator left it
 * Deno.writeTextFileSync(log, header);
 * await assert.rejects(requireTriadExtends(root, key, "both"), /no longer extends/);
 * ```
 */
export async function requireTriadExtends(
  root: string,
  key: HmacKey,
  which: TriadLedger | "both",
): Promise<void> {
  for (const name of which === "both" ? ["decisions", "waivers"] as const : [which]) {
    await requireExtends({ root, name, key, file: authzPaths(root)[name] });
  }
}

/**
 * Keeps a ledger's index after a write (with the key) and records its anchor in the proposal
 * ledger (what the file holds now: every later read with the key refuses a file that does not
 * start with it, `LEDGER_ROLLED_BACK`), or removes the index (without the key; the anchor stays,
 * and a file the write did not only extend is refused until `decision accept` / `waiver accept`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keepTriadIndexes } from "./triad_index.ts";
 * import { csvIndexPath } from "./csv_index.ts";
 * const root = Deno.makeTempDirSync();
 * await keepTriadIndexes(root, null, "waivers"); // no key: no index left
 * assert.throws(() => Deno.statSync(csvIndexPath(root, "waivers")), Deno.errors.NotFound);
 * ```
 */
export async function keepTriadIndexes(
  root: string,
  key: HmacKey | null,
  which: TriadLedger,
): Promise<void> {
  if (key === null) return dropIndex(root, which);
  const state = which === "decisions"
    ? await indexDecisionLog(root, key)
    : await indexWaivers(root, key);
  // The anchor: a signed, chained row of the proposal ledger saying what the file holds now,
  // which every later read holds it to (lib/ledger/anchor_state.ts).
  await appendRow(root, key, anchorRow(which, state));
}

/**
 * A write to a triad ledger between its index's check and its keeping (see the module doc).
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK` (nothing written); what `write` throws
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { triadWrite } from "./triad_index.ts";
 * const out = await triadWrite(Deno.makeTempDirSync(), null, "waivers", () => Promise.resolve("written"));
 * assert.equal(out, "written");
 * ```
 */
export async function triadWrite<T>(
  root: string,
  key: HmacKey | null,
  which: TriadLedger,
  write: () => Promise<T>,
): Promise<T> {
  if (key !== null) await requireTriadExtends(root, key, which);
  const out = await write();
  await keepTriadIndexes(root, key, which);
  return out;
}
