/**
 * The spent counts (lib/authz/spent.ts): counted from the proposal ledger's gate-pass rows (an
 * earlier row without `spent` by its waiver `ref`), through an index MAC'd with the ledger key. An
 * index forged, put back to an earlier state, or pointing at a line that is not there never makes a
 * count smaller; a read without `persist` writes nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { HmacKey } from "../../lib/crypto/hash.ts";
import { appendRow } from "../../lib/ledger/append.ts";
import { SPENT_INDEX_FILE, spentCounts, waiverSpentKey } from "../../lib/authz/spent.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { removeTree, snapshotTree, tempDir } from "../_helpers/mod.ts";

const KEY = new HmacKey(new Uint8Array(32).fill(7));

async function pass(root: string, spent: string | null, ref = "W-1"): Promise<void> {
  await appendRow(root, KEY, {
    action: "gate-pass",
    agent: "operator",
    gate_action: "deploy",
    by: "waiver",
    ref,
    ...(spent === null ? {} : { spent }),
  });
}

Deno.test("spent counts: gate-pass rows by spent key (and an earlier row by its waiver ref); other rows count nothing", async () => {
  const root = await tempDir("spent-count");
  try {
    assert.equal(spentCounts(root, KEY).size, 0, "no ledger: nothing spent");
    await appendRow(root, KEY, { action: "note", text: '"gate-pass"' });
    await pass(root, "waiver:W-1");
    await pass(root, null, "W-1");
    await pass(root, "clearance:ab");
    const c = spentCounts(root, KEY);
    assert.equal(c.get(waiverSpentKey("W-1")), 2);
    assert.equal(c.get("clearance:ab"), 1);
    assert.equal(c.size, 2);
    // Read-only: no index written.
    const before = await snapshotTree(root);
    spentCounts(root, KEY);
    assertSameTree(before, await snapshotTree(root), "a read without persist");
  } finally {
    await removeTree(root);
  }
});

Deno.test("spent index: kept by persist; forged, put back or pointing elsewhere, it never lowers a count", async () => {
  const root = await tempDir("spent-index");
  try {
    const index = join(root, ".agentteams", SPENT_INDEX_FILE);
    await pass(root, "waiver:W-1");
    assert.equal(spentCounts(root, KEY, { persist: true }).get("waiver:W-1"), 1);
    const early = await Deno.readTextFile(index);
    await pass(root, "waiver:W-1");
    await pass(root, "waiver:W-1");
    assert.equal(spentCounts(root, KEY, { persist: true }).get("waiver:W-1"), 3);
    // Put back to the index of one spend: the rows since are counted again.
    await Deno.writeTextFile(index, early);
    assert.equal(spentCounts(root, KEY).get("waiver:W-1"), 3);
    // Forged counts (MAC not matching): rebuilt from the start.
    const o = JSON.parse(early);
    o.body.counts["waiver:W-1"] = 0;
    o.body.offset = (await Deno.stat(join(root, ".agentteams", "proposal-ledger.jsonl"))).size;
    await Deno.writeTextFile(index, JSON.stringify(o));
    assert.equal(spentCounts(root, KEY).get("waiver:W-1"), 3);
    // A valid index whose line is not where it says (a key holder's copy of another ledger):
    // rebuilt.
    const other = await tempDir("spent-other");
    try {
      for (let i = 0; i < 5; i++) await appendRow(other, KEY, { action: "note", i });
      spentCounts(other, KEY, { persist: true });
      await Deno.copyFile(join(other, ".agentteams", SPENT_INDEX_FILE), index);
    } finally {
      await removeTree(other);
    }
    assert.equal(spentCounts(root, KEY).get("waiver:W-1"), 3);
    // An index not JSON at all: rebuilt.
    await Deno.writeTextFile(index, "{");
    assert.equal(spentCounts(root, KEY).get("waiver:W-1"), 3);
  } finally {
    await removeTree(root);
  }
});
