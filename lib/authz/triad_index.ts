/**
 * The triad ledgers' indexes around each write (`lib/authz/csv_index.ts`): a writer (`decision
 * sign`, `waiver issue`, a spend), under its lock, refuses the ledger as it read it when it no
 * longer extends its index (`LEDGER_ROLLED_BACK`: a write would make a cut or rewritten file the
 * operator's), writes from those very bytes, then keeps the index of what it wrote (not of a later
 * read) and records its anchor (`lib/authz/triad_hold.ts`), a signed row of the proposal ledger
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
 * // A write with the key that keeps nothing is refused (a writer takes both steps itself).
 * await assert.rejects(triadWrite(root, key, "decisions", () => Promise.resolve(1)), TypeError);
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { type CsvText, readCsvText } from "./csv.ts";
import { dropIndex, requireReadExtends } from "./csv_index.ts";
import type { TriadHold } from "./triad_hold.ts";
import { indexDecisionLog } from "./decisions.ts";
import { authzPaths } from "./triad_paths.ts";
import { appendRow } from "../ledger/append.ts";
import { anchorRow } from "../ledger/anchor_state.ts";
import { indexWaivers } from "./waivers.ts";

/** A triad ledger that is indexed. */
export type TriadLedger = "decisions" | "waivers";

/**
 * Reads a ledger (or both), refusing one that no longer extends its index, or is gone while one
 * stands; returns what it read (`null`: no file), for the caller to decide and write from.
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
): Promise<Partial<Record<TriadLedger, CsvText | null>>> {
  const reads: Partial<Record<TriadLedger, CsvText | null>> = {};
  for (const name of which === "both" ? ["decisions", "waivers"] as const : [which]) {
    const file = authzPaths(root)[name];
    const read = readCsvText(file);
    await requireReadExtends(read, { root, name, key, file });
    reads[name] = read;
  }
  return reads;
}

/**
 * Keeps a ledger's index after a write (with the key) and records its anchor in the proposal
 * ledger (what the file holds: `written`, what the write wrote, else as read now; every later
 * read with the key refuses a file that does not start with it, `LEDGER_ROLLED_BACK`), or removes
 * the index (without the key; the anchor stays, and a file the write did not only extend is
 * refused until `decision accept` / `waiver accept`).
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
  written?: CsvText | null,
): Promise<void> {
  if (key === null) return dropIndex(root, which);
  const state = which === "decisions"
    ? await indexDecisionLog(root, key, written)
    : await indexWaivers(root, key, written);
  // The anchor: a signed, chained row of the proposal ledger saying what the file holds now,
  // which every later read holds it to (lib/ledger/anchor_state.ts).
  await appendRow(root, key, anchorRow(which, state));
}

/**
 * The two steps a writer with the key takes under its own lock (`lib/authz/triad_hold.ts`): the
 * check of what it read, the index and anchor of what it wrote.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { triadHold } from "./triad_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * const hold = triadHold(root, new HmacKey(new Uint8Array(32)), "waivers");
 * await hold.held(null); // no ledger, and nothing holds one: nothing to refuse
 * const text = "timestamp,waiver_id,action_reviewed,expires_at,max_uses,uses,approver," +
 *   "ticket_id,reason_code,conditions_verified,signature\n";
 * await hold.kept({ bytes: new TextEncoder().encode(text), text }); // anchored as written
 * await assert.rejects(hold.held(null), /it is gone/);
 * ```
 */
export function triadHold(root: string, key: HmacKey, which: TriadLedger): TriadHold {
  const file = authzPaths(root)[which];
  return {
    held: (read) => requireReadExtends(read, { root, name: which, key, file }),
    kept: (written) => keepTriadIndexes(root, key, which, written),
  };
}

/**
 * A write to a triad ledger: `write` is given the hold (`null` without the key, and the index is
 * then removed after it) and must take both its steps on its own bytes (see the module doc); a
 * write with the key that returns without keeping what it wrote is an internal error.
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
  write: (hold: TriadHold | null) => Promise<T>,
): Promise<T> {
  if (key === null) {
    const out = await write(null);
    dropIndex(root, which);
    return out;
  }
  const hold = triadHold(root, key, which);
  let kept = false;
  const out = await write({
    held: hold.held,
    kept: async (written) => {
      await hold.kept(written);
      kept = true;
    },
  });
  if (!kept) throw new TypeError(`a ${which} write with the ledger key kept no index or anchor`);
  return out;
}
