/**
 * The triad's entry point (`deno.json` exports `./triad`) gives a library caller with the ledger key
 * what the CLI's writers use: `triadWrite` hands `issueWaiver` its hold, so the waiver ledger is
 * anchored as written and a keyed gate reads it; the same write without the hold keeps nothing,
 * which `triadWrite` refuses.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { removeTree, tempDir } from "../_helpers/mod.ts";
import { decideGate, issueWaiver, triadWrite } from "../../lib/triad.ts";
import { HmacKey } from "../../lib/crypto/hash.ts";

Deno.test("triad entry: issueWaiver through triadWrite is anchored, and a keyed gate allows it", async () => {
  const dir = await tempDir("triad-entry");
  try {
    const p = join(dir, "project");
    await Deno.mkdir(join(p, "references"), { recursive: true });
    const key = new HmacKey(new TextEncoder().encode("ledger-key"));
    const ctx = {
      env: { AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" },
      now: new Date("2026-11-30T12:00:00Z"),
    };
    const fields = {
      waiverId: "W-1",
      action: "rotate-logs",
      expiresAt: "2026-12-31T00:00:00Z",
      maxUses: 1,
      approver: "security",
      ticketId: "T-1",
      reasonCode: "cleanup",
    };
    await triadWrite(p, key, "waivers", (hold) => issueWaiver(p, fields, { ...ctx, hold }));
    const d = await decideGate(p, "rotate-logs", { ...ctx, indexKey: key });
    assert.equal(d.allowed, true, d.problem?.reason);
    assert.equal(d.authority?.ref, "W-1");
    await assert.rejects(
      triadWrite(p, key, "waivers", () => issueWaiver(p, { ...fields, waiverId: "W-2" }, ctx)),
      TypeError,
    );
  } finally {
    await removeTree(dir);
  }
});
