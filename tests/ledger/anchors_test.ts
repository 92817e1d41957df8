/**
 * The ledger's anchors (`lib/ledger/anchor_state.ts`, `anchors.ts`): the latest anchor row of each
 * name, read from the anchors file every append keeps when it stands at the head, else from the
 * rows, each verified and chained. A removed, older or forged anchors file only costs a read of
 * the rows; an anchor row copied into the ledger (an older one, to make the latest look older) is
 * `LEDGER_TAMPERED`, never taken.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendRow } from "../../lib/ledger/append.ts";
import { anchorRow } from "../../lib/ledger/anchor_state.ts";
import { ledgerAnchors } from "../../lib/ledger/anchors.ts";
import { LedgerError } from "../../lib/errors.ts";
import { keyOf, stateFiles } from "../_helpers/mod.ts";
import { withSandbox } from "./_fixture.ts";

const KEY = keyOf("anchors-test-key");
const A1 = { size: 10, sha256: "a1".repeat(32), rows: 1 };
const A2 = { size: 20, sha256: "a2".repeat(32), rows: 2 };

async function twoAnchors(root: string): Promise<void> {
  await appendRow(root, KEY.hmac, { action: "note", n: 1 });
  await appendRow(root, KEY.hmac, anchorRow("decisions", A1));
  await appendRow(root, KEY.hmac, { action: "note", n: 2 });
  await appendRow(root, KEY.hmac, anchorRow("decisions", A2));
  await appendRow(root, KEY.hmac, anchorRow("waivers", A1));
  await appendRow(root, KEY.hmac, { action: "note", n: 3 });
}

Deno.test("anchors: the latest of each name, from the anchors file or, without it, from the rows", async () => {
  await withSandbox("anchors-latest", async (sb) => {
    assert.equal(ledgerAnchors(sb.project, KEY.hmac).size, 0, "no ledger: no anchors");
    await twoAnchors(sb.project);
    const want = new Map([["decisions", A2], ["waivers", A1]]);
    assert.deepEqual(ledgerAnchors(sb.project, KEY.hmac), want);
    const side = join(stateFiles(sb.project).dir, "anchors.json");
    const kept = await Deno.readTextFile(side);
    // Removed: read from the rows.
    await Deno.remove(side);
    assert.deepEqual(ledgerAnchors(sb.project, KEY.hmac), want);
    // Put back from an earlier position (before A2): the rows after it are read.
    await Deno.writeTextFile(side, kept);
    await appendRow(sb.project, KEY.hmac, anchorRow("decisions", A1));
    const later = await Deno.readTextFile(side);
    await Deno.writeTextFile(side, kept);
    assert.deepEqual(ledgerAnchors(sb.project, KEY.hmac).get("decisions"), A1);
    // Forged (another key's MAC, claiming the head's position): not believed, the rows decide.
    const forged = JSON.parse(later);
    forged.body.anchors.decisions = A2;
    await Deno.writeTextFile(side, JSON.stringify(forged));
    assert.deepEqual(ledgerAnchors(sb.project, KEY.hmac).get("decisions"), A1);
    // The next append rewrites it from the rows.
    await appendRow(sb.project, KEY.hmac, { action: "note", n: 4 });
    assert.deepEqual(JSON.parse(await Deno.readTextFile(side)).body.anchors.decisions, A1);
  });
});

Deno.test("anchors: an older anchor row copied into the ledger (with the anchors file removed) is LEDGER_TAMPERED", async () => {
  await withSandbox("anchors-copied", async (sb) => {
    await twoAnchors(sb.project);
    const p = stateFiles(sb.project);
    const lines = (await Deno.readTextFile(p.ledger)).trimEnd().split("\n");
    // Rows 1-2 (a note and the A1 anchor, chained onto each other) copied after the A2 anchor:
    // the copy of A1 chains onto the copy of its predecessor, so only the whole chain shows it.
    const spliced = [...lines.slice(0, 5), lines[0], lines[1], ...lines.slice(5)];
    await Deno.writeTextFile(p.ledger, spliced.join("\n") + "\n");
    await Deno.remove(join(p.dir, "anchors.json"));
    assert.throws(
      () => ledgerAnchors(sb.project, KEY.hmac),
      (e: unknown) => e instanceof LedgerError && e.code === "LEDGER_TAMPERED",
    );
    // At the end instead: the head no longer fits the last line.
    await Deno.writeTextFile(p.ledger, [...lines, lines[1]].join("\n") + "\n");
    assert.throws(
      () => ledgerAnchors(sb.project, KEY.hmac),
      (e: unknown) => e instanceof LedgerError && e.code === "LEDGER_TAMPERED",
    );
  });
});
