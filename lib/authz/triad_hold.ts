/**
 * What an operator's write to a triad ledger (the decision log, the waiver ledger) does under its
 * own lock, with the proposal-ledger key: the ledger as the writer read it is checked to extend
 * what it is held to, and what the writer wrote is what gets indexed and anchored. Both on the
 * writer's own bytes: a check of an earlier read, or an anchor of a later one, would leave a
 * window in which a session's cut (a HALT removed) is parsed, rewritten and anchored as the
 * operator's. `lib/authz/triad_index.ts` makes one; the writers (decisions.ts, waivers.ts) call
 * it, which they cannot import.
 *
 * @module
 */
import type { CsvText } from "./csv.ts";

/** The two steps of a triad write, on the writer's own bytes (see the module doc). */
export interface TriadHold {
  /**
   * Refuses (`LEDGER_ROLLED_BACK`) the ledger as the writer read it (`null`: no file) when it no
   * longer extends what it is held to.
   */
  held(read: CsvText | null): Promise<void>;
  /** Indexes and anchors what the writer wrote. */
  kept(written: CsvText): Promise<void>;
}
