/**
 * The triad ledgers' indexes around each write (`lib/authz/csv_index.ts`): a writer (`decision
 * sign`, `waiver issue`, a spend) first refuses a ledger that no longer extends its index
 * (`LEDGER_ROLLED_BACK`: a write would make a cut or rewritten file the operator's), writes, then
 * keeps the index of what it wrote; a writer without the proposal-ledger key removes the index it
 * cannot keep (it would refuse the file just written).
 *
 * @example
 * ```ts
 * import { triadWrite } from "./triad_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * await triadWrite(root, new HmacKey(new Uint8Array(32)), "decisions", () => Promise.resolve(1)); // 1
 * ```
 * @module
 */
import type { HmacKey } from "../crypto/hash.ts";
import { dropIndex, requireExtends } from "./csv_index.ts";
import { indexDecisionLog } from "./decisions.ts";
import { authzPaths } from "./triad_paths.ts";
import { indexWaivers } from "./waivers.ts";

/** A triad ledger that is indexed. */
export type TriadLedger = "decisions" | "waivers";

/**
 * Refuses when a ledger (or both) no longer extends its index, or is gone while one stands.
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK`
 * @example
 * ```ts
 * import { requireTriadExtends } from "./triad_index.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * await requireTriadExtends(Deno.makeTempDirSync(), new HmacKey(new Uint8Array(32)), "both");
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
 * Keeps a ledger's index after a write (with the key), or removes it (without).
 *
 * @example
 * ```ts
 * import { keepTriadIndexes } from "./triad_index.ts";
 * await keepTriadIndexes(Deno.makeTempDirSync(), null, "waivers"); // no key: no index left
 * ```
 */
export async function keepTriadIndexes(
  root: string,
  key: HmacKey | null,
  which: TriadLedger,
): Promise<void> {
  if (key === null) return dropIndex(root, which);
  if (which === "decisions") await indexDecisionLog(root, key);
  else await indexWaivers(root, key);
}

/**
 * A write to a triad ledger between its index's check and its keeping (see the module doc).
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK` (nothing written); what `write` throws
 * @example
 * ```ts
 * import { triadWrite } from "./triad_index.ts";
 * await triadWrite(Deno.makeTempDirSync(), null, "waivers", () => Promise.resolve("written"));
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
