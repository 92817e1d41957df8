/**
 * The triad ledgers' index (lib/authz/csv_index.ts): a gate (and an act's HALT check) that reads
 * through it decides as the whole read does (allowed, HALTed, the same refusal, code and line); a
 * forged or replayed index, and a bad row appended after it, send the read back to the whole
 * file, which reports what it always did; and a file that no longer extends the index (a row
 * edited, removed or re-ordered, the file cut or gone: a HALT cut from its tail included, which
 * no chain sees) is refused, LEDGER_ROLLED_BACK, never read whole instead.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { removeTree, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";
import { decideGate, type GateDecision } from "../../lib/authz/gate.ts";
import {
  actionOf,
  decisionPayload,
  indexDecisionLog,
  NEW_DECISION_HEADER,
  signDecisionRow,
} from "../../lib/authz/decisions.ts";
import { formatCsv, parseCsv } from "../../lib/authz/csv.ts";
import { haltStop } from "../../lib/authz/stop.ts";
import { indexWaivers, issueWaiver } from "../../lib/authz/waivers.ts";
import { csvIndexLinesPath, csvIndexPath, keepIndex } from "../../lib/authz/csv_index.ts";
import { HmacKey, sha256Hex } from "../../lib/crypto/hash.ts";
import { project } from "./_fixtures.ts";

const NOW = new Date("2026-11-30T12:00:00Z");
const ENV = { AGENTTEAMS_DECISION_SIGNING_KEY: "dk", AGENTTEAMS_WAIVER_SIGNING_KEY: "wk" };
const KEY = new HmacKey(new TextEncoder().encode("ledger-key"));
const plain = { env: ENV, now: NOW };
const indexed = { env: ENV, now: NOW, indexKey: KEY };

function summary(d: GateDecision) {
  return {
    allowed: d.allowed,
    halted: d.halted,
    ref: d.authority?.ref ?? null,
    code: d.problem?.code ?? null,
    reason: d.problem?.reason ?? null,
  };
}

/** The gate through the index equals the whole read, and the read writes nothing. */
async function same(p: string, action: string): Promise<ReturnType<typeof summary>> {
  const before = await snapshotTree(p);
  const whole = summary(await decideGate(p, action, plain));
  assert.deepEqual(summary(await decideGate(p, action, indexed)), whole, action);
  assertSameTree(before, await snapshotTree(p), "a gate's read writes nothing");
  return whole;
}

/** What the writers do after a write (`decision sign`, `waiver issue`, a spend). */
async function reindex(p: string): Promise<void> {
  await indexDecisionLog(p, KEY);
  await indexWaivers(p, KEY);
}

function waiver(id: string, action: string) {
  return {
    waiverId: id,
    action,
    expiresAt: "2026-12-31T00:00:00Z",
    maxUses: 2,
    approver: "security",
    ticketId: "OPS-1",
    reasonCode: "cleanup",
  };
}

async function signedProject(dir: string): Promise<string> {
  const p = await project(dir);
  for (let i = 0; i < 6; i++) {
    await signDecisionRow(p, { action: `delete:d${i}`, verdict: "PASS" }, plain);
    await issueWaiver(p, waiver(`W-${i}`, `delete:w${i}`), plain);
  }
  await signDecisionRow(p, { action: "delete:h", verdict: "HALT" }, plain);
  await signDecisionRow(p, { action: "delete:d9", verdict: "PASS" }, plain);
  await reindex(p);
  return p;
}

const decisions = (p: string) => join(p, "references", "security-decisions.log.csv");

Deno.test("csv index: the gate through it decides as the whole read, before and after appends", async () => {
  const dir = await tempDir("csv-index-same");
  try {
    const p = await signedProject(dir);
    for (
      const a of ["delete:d1", "DELETE:D2 ", "delete:w3", "delete:h", "delete:h/x", "delete:no"]
    ) {
      await same(p, a);
    }
    assert.ok(Deno.statSync(csvIndexPath(p, "decisions")).isFile, "the index is kept");
    assert.ok(Deno.statSync(csvIndexPath(p, "waivers")).isFile, "the index is kept");
    // Rows appended after the index: a HALT, a PASS, a waiver; read as a tail, then indexed.
    await signDecisionRow(p, { action: "delete:d1", verdict: "HALT" }, plain);
    await signDecisionRow(p, { action: "delete:new", verdict: "PASS" }, plain);
    await issueWaiver(p, waiver("W-9", "delete:w9"), plain);
    for (const again of [false, true]) {
      if (again) await reindex(p);
      assert.equal((await same(p, "delete:d1")).code, "HALTED");
      assert.equal((await same(p, "delete:new")).ref, "security-decisions.log.csv:11");
      assert.equal((await same(p, "delete:w9")).ref, "W-9");
    }
  } finally {
    await removeTree(dir);
  }
});

/** The refusal of a ledger read through its index that no longer extends it. */
async function rolledBack(p: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(p, (e: Error & { code?: string }) => {
    assert.equal(e.code, "LEDGER_ROLLED_BACK", `${what}: ${e.message}`);
    assert.match(e.message, /security-decisions\.log\.csv no longer extends/, what);
    assert.match(e.message, /agentteams decision accept/, what);
    return true;
  });
}

Deno.test("csv index: an edited, removed, re-ordered or cut indexed row is LEDGER_ROLLED_BACK, never the whole read", async () => {
  const dir = await tempDir("csv-index-tamper");
  try {
    const p = await signedProject(dir);
    await same(p, "delete:d9");
    const text = Deno.readTextFileSync(decisions(p));
    const lines = text.split("\n");
    const edits: Record<string, string> = {
      edited: text.replace("delete:d2", "delete:d7"),
      removed: [...lines.slice(0, 3), ...lines.slice(4)].join("\n"),
      swapped: [lines[0], lines[2], lines[1], ...lines.slice(3)].join("\n"),
      halt_removed: text.replace(/^[^\n]*,HALT,[^\n]*\n/m, ""),
    };
    const original = Deno.readFileSync(decisions(p));
    for (const [what, edited] of Object.entries(edits)) {
      Deno.writeFileSync(decisions(p), original);
      await reindex(p);
      Deno.writeTextFileSync(decisions(p), edited);
      // The whole read sees the chain broken; through the index the file is refused outright.
      const whole = await decideGate(p, "delete:d9", plain);
      assert.equal(whole.problem?.code, "CHAIN_BROKEN", what);
      const before = await snapshotTree(p);
      await rolledBack(decideGate(p, "delete:d9", indexed), what);
      await rolledBack(haltStop(p, ["write:src/a.ts"], plain, KEY), what);
      assertSameTree(before, await snapshotTree(p), `${what}: a refused read writes nothing`);
    }
    // A HALT cut from the tail: the chain holds (no row after it), so the whole read allows;
    // through the index it is refused.
    Deno.writeFileSync(decisions(p), original);
    await signDecisionRow(p, { action: "delete:d9", verdict: "HALT" }, plain);
    await reindex(p);
    assert.equal((await same(p, "delete:d9")).code, "HALTED");
    Deno.writeFileSync(decisions(p), original);
    assert.equal(
      (await decideGate(p, "delete:d9", plain)).allowed,
      true,
      "the cut the chain misses",
    );
    await rolledBack(decideGate(p, "delete:d9", indexed), "the HALT cut from the tail");
    // The log removed altogether while its index stands: the same.
    Deno.removeSync(decisions(p));
    await rolledBack(haltStop(p, ["write:src/a.ts"], plain, KEY), "the log gone");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv index: a forged, replayed or foreign index is not believed", async () => {
  const dir = await tempDir("csv-index-forged");
  try {
    const p = await signedProject(dir);
    const good = Deno.readTextFileSync(csvIndexPath(p, "decisions"));
    // Remove the HALT and re-chain nothing: a forged index claims the new bytes checked.
    const original = Deno.readTextFileSync(decisions(p));
    const edited = original.replace(/^[^\n]*,HALT,[^\n]*\n/m, "");
    Deno.writeTextFileSync(decisions(p), edited);
    const bytes = new TextEncoder().encode(edited);
    const sha = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).toHex();
    const o = JSON.parse(good);
    o.body = { ...o.body, size: bytes.length, sha256: sha, rows: o.body.rows - 1 };
    Deno.writeTextFileSync(csvIndexPath(p, "decisions"), JSON.stringify(o));
    assert.equal((await decideGate(p, "delete:d9", indexed)).problem?.code, "CHAIN_BROKEN");
    // Signed with another key: the same.
    Deno.writeTextFileSync(csvIndexPath(p, "decisions"), JSON.stringify(o));
    const other = { ...indexed, indexKey: new HmacKey(new TextEncoder().encode("other")) };
    assert.equal((await decideGate(p, "delete:d9", other)).problem?.code, "CHAIN_BROKEN");
    // The waivers' index in the decisions' place (its name inside differs): not read.
    Deno.writeTextFileSync(decisions(p), original);
    Deno.copyFileSync(csvIndexPath(p, "waivers"), csvIndexPath(p, "decisions"));
    assert.equal((await same(p, "delete:h")).code, "HALTED");
    // A log truncated below a good index: refused, never the whole read.
    await reindex(p);
    Deno.writeTextFileSync(decisions(p), original.split("\n").slice(0, 4).join("\n") + "\n");
    assert.equal((await decideGate(p, "delete:d9", plain)).problem?.code, "NO_CLEARANCE");
    await rolledBack(decideGate(p, "delete:d9", indexed), "truncated");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv index: a line table edited beside its MAC'd body is not believed", async () => {
  const dir = await tempDir("csv-index-lines-edited");
  try {
    const p = await signedProject(dir);
    // The line table beside the MAC'd body edited (the HALT row's flag and action cleared): its
    // SHA-256 is no longer the one the body names, so it is not read, and the HALT still stops.
    const linesPath = csvIndexLinesPath(p, "decisions");
    const table = Deno.readFileSync(linesPath);
    const view = new DataView(table.buffer);
    const haltLine = Deno.readTextFileSync(decisions(p)).split("\n").findIndex((l) =>
      l.includes(",delete:h,HALT,")
    ) + 1;
    assert.ok(haltLine > 1, "the fixture's HALT row");
    const k = haltLine - 2;
    assert.notEqual(view.getUint32(k * 8 + 4, true) & 0x80000000, 0, "flagged as a HALT line");
    view.setUint32(k * 8 + 4, 0, true);
    Deno.writeFileSync(linesPath, table);
    assert.equal((await same(p, "delete:h")).code, "HALTED");
    assert.equal((await haltStop(p, ["delete:h"], plain, KEY))?.code, "HALTED");
    // Gone: the same.
    Deno.removeSync(linesPath);
    assert.equal((await same(p, "delete:h")).code, "HALTED");
    assert.equal((await haltStop(p, ["delete:h"], plain, KEY))?.code, "HALTED");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv index: a bad row appended after the index is refused as the whole read refuses it", async () => {
  const dir = await tempDir("csv-index-tail");
  try {
    const p = await signedProject(dir);
    const original = Deno.readTextFileSync(decisions(p));
    const last = original.trimEnd().split("\n").at(-1)!;
    // A copy of the last row appended: its prev_digest does not continue the chain.
    Deno.writeTextFileSync(decisions(p), original + last + "\n");
    const d = await same(p, "delete:d9");
    assert.equal(d.code, "CHAIN_BROKEN");
    assert.match(d.reason!, /line 10\)/);
    // A row of the wrong width: CSV_MALFORMED naming its true line, from either read.
    Deno.writeTextFileSync(decisions(p), original + "a,b\n");
    const errors = [];
    for (const c of [plain, indexed]) {
      errors.push(await decideGate(p, "delete:d9", c).then(() => null, (e) => e.message));
    }
    assert.match(errors[0], /line 10: 2 cell\(s\)/);
    assert.equal(errors[1], errors[0]);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv index: a BOM put at the start of the rows after the index is read as the whole read reads it", async () => {
  const dir = await tempDir("csv-index-tail-bom");
  try {
    const p = await signedProject(dir);
    const prefix = Deno.statSync(decisions(p)).size;
    const original = Deno.readFileSync(decisions(p));
    const withAt = (tail: Uint8Array, rest = new Uint8Array(0)) => {
      const out = new Uint8Array(prefix + tail.length + rest.length);
      out.set(original);
      out.set(tail, prefix);
      out.set(rest, prefix + tail.length);
      Deno.writeFileSync(decisions(p), out);
    };
    const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
    // Before two signed rows appended since: the first row's date holds it, so its signature and
    // the chain break for either read.
    await signDecisionRow(p, { action: "delete:t", verdict: "PASS" }, plain);
    await signDecisionRow(p, { action: "delete:u", verdict: "PASS" }, plain);
    const appended = Deno.readFileSync(decisions(p)).subarray(prefix);
    withAt(BOM, appended);
    assert.equal((await same(p, "delete:t")).allowed, false);
    assert.equal((await same(p, "delete:d1")).code, "CHAIN_BROKEN");
    assert.equal((await haltStop(p, ["write:src/a.ts"], plain, KEY))?.code, "HALTED");
    // Alone on a line: a row of one cell, CSV_MALFORMED from either read.
    withAt(new Uint8Array([...BOM, 0x0a]));
    const errors = [];
    for (const c of [plain, indexed]) {
      errors.push(await decideGate(p, "delete:d1", c).then(() => null, (e) => e.code));
    }
    assert.deepEqual(errors, ["CSV_MALFORMED", "CSV_MALFORMED"]);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv index: what the key signed is believed, so the fast path is the one a gate takes", async () => {
  const dir = await tempDir("csv-index-used");
  try {
    const p = await signedProject(dir);
    // The HALT row removed, and an index over the edited bytes signed with the key: only a
    // holder of the key can write one, and the gate then reads through it (and misses the break
    // the whole read reports): the index is what is read, and its MAC is what guards it.
    const edited = Deno.readTextFileSync(decisions(p)).replace(/^[^\n]*,HALT,[^\n]*\n/m, "");
    Deno.writeTextFileSync(decisions(p), edited);
    const bytes = new TextEncoder().encode(edited);
    const table = parseCsv(edited, { required: [] });
    await keepIndex(
      { bytes, text: edited },
      { root: p, name: "decisions", key: KEY },
      table,
      "x",
      actionOf,
    );
    assert.equal((await decideGate(p, "delete:d9", plain)).problem?.code, "CHAIN_BROKEN");
    assert.equal((await decideGate(p, "delete:d9", indexed)).allowed, true);
    // The same for an act's HALT check.
    assert.equal((await haltStop(p, ["delete:d9"], plain))?.code, "HALTED");
    assert.equal(await haltStop(p, ["delete:d9"], plain, KEY), null);
    // The same index in the earlier format (no line tables), MAC'd as that format was: not read,
    // so the gate reads the whole file and finds the break.
    const index = JSON.parse(Deno.readTextFileSync(csvIndexPath(p, "decisions"))).body;
    const { lines: _l, crlf: _c, ...rest } = index;
    const v1 = { ...rest, v: 1, marks: [] };
    const mac = KEY.hex(`agentteams-csv-index-v1|${JSON.stringify(v1)}`);
    Deno.writeTextFileSync(csvIndexPath(p, "decisions"), JSON.stringify({ body: v1, mac }));
    assert.equal((await same(p, "delete:d9")).code, "CHAIN_BROKEN");
    assert.equal((await haltStop(p, ["delete:d9"], plain, KEY))?.code, "HALTED");
    // It still holds the log to the bytes it records (the project has no anchor): a row cut from
    // them is refused, not read whole.
    const cut = edited.split("\n");
    cut.splice(3, 1);
    Deno.writeTextFileSync(decisions(p), cut.join("\n"));
    await rolledBack(decideGate(p, "delete:d9", indexed), "cut under an earlier-format index");
  } finally {
    await removeTree(dir);
  }
});

/**
 * Writes project `p`'s decision log from `rows` (each row's decision, status and evidence),
 * signed with the fixture's decision key and chained, with `eol` line ends.
 */
function writeSignedLog(
  p: string,
  rows: readonly { decision: string; status: string; evidence?: string }[],
  eol: "\n" | "\r\n",
): void {
  const dk = new HmacKey(new TextEncoder().encode(ENV.AGENTTEAMS_DECISION_SIGNING_KEY));
  const cells: string[][] = [];
  let prev = "";
  rows.forEach(({ decision, status, evidence = "" }, i) => {
    const r: Record<string, string> = {
      date: "2026-11-29",
      plan_slug: "",
      step: String(i),
      decision,
      status,
      conditions: "",
      conditions_verified: "verified",
      evidence,
      owner: "@security",
      prev_digest: prev,
    };
    r.signature = dk.hex(decisionPayload(r));
    prev = sha256Hex(decisionPayload(r));
    cells.push(NEW_DECISION_HEADER.map((c) => r[c] ?? ""));
  });
  Deno.writeTextFileSync(decisions(p), formatCsv(NEW_DECISION_HEADER, cells, { eol }));
}

Deno.test("csv index: a read through it takes the rows naming the action in any case or spacing, and the HALTs, as the whole read decides", async () => {
  const dir = await tempDir("csv-index-choice");
  try {
    const p = await project(dir);
    writeSignedLog(p, [
      { decision: " DELETE:Spaced ", status: "PASS" },
      // Another action named in its evidence: no clearance for that one.
      { decision: "delete:other", status: "PASS", evidence: "as for delete:mentioned" },
      { decision: "delete:halted", status: "HALT" },
      // A lower-case verdict is a HALT all the same, and it reaches deploy:x.
      { decision: "deploy", status: "halt" },
      { decision: "write:docs/", status: "HALT" },
    ], "\n");
    await reindex(p);
    assert.equal((await same(p, "delete:spaced")).allowed, true);
    assert.equal((await same(p, "Delete:Other ")).allowed, true);
    assert.equal((await same(p, "delete:mentioned")).code, "NO_CLEARANCE");
    assert.equal((await same(p, "delete:halted")).code, "HALTED");
    assert.equal((await same(p, "deploy:x")).code, "HALTED");
    assert.equal((await same(p, "write:./docs/a.md")).code, "HALTED");
    assert.equal((await same(p, "delete:none")).code, "NO_CLEARANCE");
  } finally {
    await removeTree(dir);
  }
});

/** The rows the line-number test makes HALTs: spread from the first rows to the last. */
const HALTED = [3, 509, 700, 1022, 1100, 1298];

Deno.test("csv index: the rows read through it carry the file's own line numbers", async () => {
  const dir = await tempDir("csv-index-lines");
  try {
    const p = await project(dir);
    // HALTs spread through the file: every one a row each indexed read selects.
    writeSignedLog(
      p,
      Array.from({ length: 1300 }, (_, i) => ({
        decision: `delete:d${i}`,
        status: HALTED.includes(i) ? "HALT" : "PASS",
      })),
      "\r\n",
    );
    await reindex(p);
    const index = JSON.parse(Deno.readTextFileSync(csvIndexPath(p, "decisions")));
    assert.equal(index.body.newlines, 1301, "the header and 1,300 rows");
    assert.equal(
      Deno.readFileSync(csvIndexLinesPath(p, "decisions")).length,
      1300 * 8,
      "where each line after the header starts, and its key",
    );
    for (const i of [0, 510, 511, 512, 1000, 1023, 1024, 1299]) {
      const d = await same(p, `delete:d${i}`);
      assert.equal(d.ref, `security-decisions.log.csv:${i + 2}`, `row ${i}`);
    }
    // A HALT's line, with the other HALTs before and after it read as candidates too.
    for (const i of HALTED) {
      const d = await same(p, `delete:d${i}`);
      assert.equal(d.halted, true, `row ${i}`);
      assert.match(d.reason!, new RegExp(`decision log line ${i + 2}\\)`), `row ${i}`);
    }
  } finally {
    await removeTree(dir);
  }
});

Deno.test("csv index: an act's HALT check through it stops what the whole read stops", async () => {
  const dir = await tempDir("csv-index-stop");
  try {
    const p = await signedProject(dir);
    const both = async (actions: string[]) => {
      const before = await snapshotTree(p);
      const whole = await haltStop(p, actions, plain);
      assert.deepEqual(await haltStop(p, actions, plain, KEY), whole, actions.join(" "));
      assertSameTree(before, await snapshotTree(p), "a HALT check writes nothing");
      return whole;
    };
    assert.equal((await both(["delete:h"]))?.code, "HALTED");
    assert.equal(await both(["delete:d1", "write:src/a.ts"]), null);
    // A HALT appended after the index (a tail row), then the emergency stop.
    await signDecisionRow(p, { action: "delete:d1", verdict: "HALT" }, plain);
    assert.equal((await both(["delete:d1"]))?.code, "HALTED");
    await signDecisionRow(p, { action: "*", verdict: "HALT" }, plain);
    await reindex(p);
    assert.match((await both(["write:src/a.ts"]))!.reason, /emergency stop/);
    // The HALT rows removed under the index: the chain breaks (the whole read), and the file no
    // longer extends the index (through it): every act stops either way.
    const text = Deno.readTextFileSync(decisions(p));
    Deno.writeTextFileSync(decisions(p), text.replace(/^[^\n]*,HALT,[^\n]*\n/gm, ""));
    assert.match((await haltStop(p, ["write:src/a.ts"], plain))!.reason, /chain is broken/);
    await rolledBack(haltStop(p, ["write:src/a.ts"], plain, KEY), "HALTs removed");
  } finally {
    await removeTree(dir);
  }
});
