/**
 * Clearances (lib/authz/decisions.ts): the Python-written vectors (9 columns signed and chained,
 * legacy 6), the decision order (HALT first over the whole log, retraction rules, CONDITIONAL
 * PASS, consumed rows skipped), authorship and signatures when signing is active, the chain
 * (edited, re-ordered, deleted rows), the Ed25519 option, and consumption keeping the format.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { removeTree, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { AuthzError } from "../../lib/errors.ts";
import {
  checkClearance,
  consumeClearance,
  DECISION_COLUMNS,
  signDecisionRow,
  verifyDecisions,
} from "../../lib/authz/decisions.ts";
import { formatCsv } from "../../lib/authz/csv.ts";
import { installedSigner, mac, pipe, project, VECTOR_KEYS, VECTORS } from "./_fixtures.ts";

const NOW = new Date("2026-11-30T12:00:00Z");
const KEY = "k-dec";
const H = [...DECISION_COLUMNS, "prev_digest", "signature"];

type Row = Partial<Record<string, string>> & { decision: string; status: string };

/** A signed, chained log computed independently (node:crypto). */
function signedLog(rows: Row[], key = KEY): string {
  let prev = "";
  const cells: string[][] = [];
  for (const r of rows) {
    const rec: Record<string, string> = {
      date: "2026-11-29",
      plan_slug: "p",
      step: "1",
      conditions: "",
      conditions_verified: r.status === "PASS" ? "verified" : "",
      evidence: "",
      owner: "@security",
      ...r,
    } as Record<string, string>;
    rec.prev_digest = prev;
    const author = rec.owner.trim().replace(/^@+/, "").toLowerCase();
    const payload = pipe([
      rec.date,
      rec.decision,
      rec.status,
      rec.conditions_verified,
      author,
      prev,
    ]);
    rec.signature = r.signature ?? mac(key, payload);
    prev = createHash("sha256").update(payload).digest("hex");
    cells.push(H.map((h) => rec[h]));
  }
  return formatCsv(H, cells, { eol: "\n" });
}

async function withLog(text: string, fn: (p: string) => Promise<void>, roster?: string) {
  const dir = await tempDir("dec");
  try {
    const p = await project(dir, roster);
    await Deno.writeTextFile(join(p, "references", "security-decisions.log.csv"), text);
    await fn(p);
  } finally {
    await removeTree(dir);
  }
}

const ENV = { AGENTTEAMS_DECISION_SIGNING_KEY: KEY };
const ctx = { env: ENV, now: NOW };

Deno.test("clearances: the Python-written signed log verifies and decides per the spec's order", async () => {
  const text = await Deno.readTextFile(join(VECTORS, "decisions-signed.csv"));
  await withLog(text, async (p) => {
    const c = { env: { AGENTTEAMS_DECISION_SIGNING_KEY: VECTOR_KEYS.decision }, now: NOW };
    const rows = await verifyDecisions(p, c);
    assert.deepEqual(rows.map((r) => [r.id, r.valid]), [
      ["PASS", true],
      ["CONDITIONAL PASS", true],
      ["HALT", true],
    ]);
    assert.equal((await checkClearance(p, "overwrite", c)).allowed, true);
    assert.equal((await checkClearance(p, "delete:build/out.bin", c)).allowed, true);
    const halt = await checkClearance(p, "deploy", c);
    assert.equal(halt.problem?.code, "HALTED");
    assert.equal(halt.halted, true);
    // Consuming keeps the CRLF the earlier tool wrote, adds `consumed`, keeps the chain.
    await consumeClearance(p, "overwrite", c);
    const back = await Deno.readTextFile(join(p, "references", "security-decisions.log.csv"));
    assert.ok(back.startsWith(H.join(",") + ",consumed\r\n"), JSON.stringify(back.slice(0, 140)));
    assert.equal(back.split("\r\n").length, 5);
    assert.equal((await checkClearance(p, "overwrite", c)).problem?.code, "NO_CLEARANCE");
    assert.deepEqual((await verifyDecisions(p, c)).map((r) => r.valid), [true, true, true]);
    // The wrong key: every authorizing row fails.
    const wrong = await verifyDecisions(p, { env: ENV, now: NOW });
    assert.deepEqual(wrong.map((r) => r.code), ["SIGNATURE_INVALID", "SIGNATURE_INVALID", null]);
  });
});

Deno.test("clearances: the legacy 6-column log reads; signing turns on with the key", async () => {
  const text = await Deno.readTextFile(join(VECTORS, "decisions-legacy.csv"));
  await withLog(text, async (p) => {
    assert.equal((await checkClearance(p, "rotate-logs", { env: {}, now: NOW })).allowed, true);
    // With the decision key configured, a log without the signature column is a legacy log:
    // its rows authorize nothing (no downgrade by dropping the column).
    const active = await checkClearance(p, "rotate-logs", ctx);
    assert.equal(active.problem?.code, "LEGACY_UNSIGNED");
    // A signed row is never appended to a log without a signature column.
    const before = await snapshotTree(p);
    await assertRefusal(
      () => signDecisionRow(p, { action: "x", verdict: "PASS" }, ctx),
      "CSV_COLUMNS",
      AuthzError,
    );
    assertSameTree(before, await snapshotTree(p), "a refused sign on an unsigned log");
  });
  await withLog("a,b\n1,2\n", async (p) => {
    await assertRefusal(() => checkClearance(p, "x", ctx), "CSV_COLUMNS", AuthzError);
  });
});

Deno.test("clearances: HALT first over the whole log; only an authenticated retraction with evidence clears it", async () => {
  // A HALT before a PASS still blocks; a HALT on a broader id reaches a narrower one.
  await withLog(
    signedLog([{ decision: "delete", status: "HALT" }, { decision: "delete:a", status: "PASS" }]),
    async (p) => {
      const c = await checkClearance(p, "delete:a", ctx);
      assert.equal(c.problem?.code, "HALTED");
      assert.match(c.problem!.reason, /no clearance, waiver or grant lifts a HALT/);
    },
  );
  const retract = (over: Partial<Row>) =>
    signedLog([
      { decision: "delete:a", status: "HALT" },
      { decision: "delete:a", status: "HALT-RETRACTED", evidence: "INC-4", ...over },
      { decision: "delete:a", status: "PASS" },
    ]);
  await withLog(retract({}), async (p) => {
    assert.equal((await checkClearance(p, "delete:a", ctx)).allowed, true);
  });
  await withLog(retract({ evidence: "" }), async (p) => {
    const c = await checkClearance(p, "delete:a", ctx);
    assert.equal(c.problem?.code, "HALTED");
    assert.match(c.problem!.reason, /no evidence/);
  });
  await withLog(retract({ owner: "mallory" }), async (p) => {
    assert.equal((await checkClearance(p, "delete:a", ctx)).problem?.code, "HALTED");
  });
  await withLog(retract({ signature: "0".repeat(64) }), async (p) => {
    assert.equal((await checkClearance(p, "delete:a", ctx)).problem?.code, "HALTED");
  });
  // A later HALT reopens.
  await withLog(
    signedLog([
      { decision: "delete:a", status: "HALT" },
      { decision: "delete:a", status: "HALT-RETRACTED", evidence: "INC-4" },
      { decision: "delete:a", status: "PASS" },
      { decision: "delete:a", status: "HALT" },
    ]),
    async (p) => assert.equal((await checkClearance(p, "delete:a", ctx)).problem?.code, "HALTED"),
  );
});

Deno.test("clearances: each rule of an authorizing row, one at a time", async () => {
  const cases: [string, Row[], string, string][] = [
    ["no row", [{ decision: "other", status: "PASS" }], "delete:a", "NO_CLEARANCE"],
    [
      "exact match only",
      [{ decision: "delete:a.txt", status: "PASS" }],
      "delete:a",
      "NO_CLEARANCE",
    ],
    [
      "pending",
      [{ decision: "delete:a", status: "CONDITIONAL PASS", conditions_verified: "pending" }],
      "delete:a",
      "CONDITIONS_UNVERIFIED",
    ],
    [
      "author",
      [{ decision: "delete:a", status: "PASS", owner: "mallory" }],
      "delete:a",
      "AUTHOR_NOT_APPROVED",
    ],
    [
      "signature",
      [{ decision: "delete:a", status: "PASS", signature: "ab".repeat(32) }],
      "delete:a",
      "SIGNATURE_INVALID",
    ],
    ["verdict", [{ decision: "delete:a", status: "MAYBE" }], "delete:a", "UNSUPPORTED_VERDICT"],
    ["used", [{ decision: "delete:a", status: "USED" }], "delete:a", "NO_CLEARANCE"],
    [
      "latest wins, no fallback",
      [{ decision: "delete:a", status: "PASS" }, {
        decision: "delete:a",
        status: "CONDITIONAL PASS",
        conditions_verified: "pending",
      }],
      "delete:a",
      "CONDITIONS_UNVERIFIED",
    ],
  ];
  for (const [what, rows, action, code] of cases) {
    await withLog(signedLog(rows), async (p) => {
      const c = await checkClearance(p, action, ctx);
      assert.equal(c.problem?.code, code, `${what}: ${JSON.stringify(c)}`);
      assert.equal(c.allowed, false);
    });
  }
  // The pending CONDITIONAL PASS blocks as a HALT would.
  await withLog(signedLog([cases[2][1][0]]), async (p) => {
    assert.equal((await checkClearance(p, "delete:a", ctx)).halted, true);
  });
  // Missing key while the header has `signature`: fail closed.
  await withLog(signedLog([{ decision: "delete:a", status: "PASS" }]), async (p) => {
    assert.equal(
      (await checkClearance(p, "delete:a", { env: {}, now: NOW })).problem?.code,
      "NO_SIGNING_KEY",
    );
  });
  // Scope: a row scoped to other actions does not clear this one.
  const scoped = formatCsv([...H, "scope"], [[
    "2026-11-29",
    "p",
    "1",
    "delete:a",
    "PASS",
    "",
    "verified",
    "",
    "security",
    "",
    mac(KEY, "2026-11-29|delete:a|PASS|verified|security|"),
    "delete:b",
  ]], { eol: "\n" });
  await withLog(scoped, async (p) => {
    assert.equal((await checkClearance(p, "delete:a", ctx)).problem?.code, "SCOPE_MISMATCH");
  });
});

Deno.test("clearances: a row edited after signing (every signed field), re-ordered or deleted is refused", async () => {
  const base = signedLog([{ decision: "delete:a", status: "PASS" }]);
  const line = base.split("\n")[1];
  const cells = line.split(",");
  const edits: [number, string][] = [[0, "2026-11-28"], [3, "delete:b"], [4, "CONDITIONAL PASS"], [
    6,
    "pending",
  ], [8, "@other"]];
  for (const [i, v] of edits) {
    const c2 = cells.slice();
    c2[i] = v;
    await withLog(base.replace(line, c2.join(",")), async (p) => {
      const action = i === 3 ? "delete:b" : "delete:a";
      const r = await checkClearance(p, action, { ...ctx, roster: new Set(["security", "other"]) });
      assert.equal(r.allowed, false, `field ${H[i]}`);
      assert.ok(
        ["SIGNATURE_INVALID", "CONDITIONS_UNVERIFIED"].includes(r.problem!.code),
        `${H[i]}: ${r.problem!.code}`,
      );
      if (i !== 6) assert.equal(r.problem!.code, "SIGNATURE_INVALID", H[i]);
    });
  }
  // prev_digest edited: the chain breaks at row 1.
  const c2 = cells.slice();
  c2[9] = "ff".repeat(32);
  await withLog(base.replace(line, c2.join(",")), async (p) => {
    assert.equal((await checkClearance(p, "delete:a", ctx)).problem?.code, "CHAIN_BROKEN");
  });
  const three = signedLog([
    { decision: "x", status: "PASS" },
    { decision: "y", status: "PASS" },
    { decision: "delete:a", status: "PASS" },
  ]);
  const ls = three.split("\n");
  await withLog([ls[0], ls[2], ls[1], ls[3], ""].join("\n"), async (p) => {
    const r = await checkClearance(p, "delete:a", ctx);
    assert.equal(r.problem?.code, "CHAIN_BROKEN");
    assert.equal(r.halted, true);
    assert.deepEqual(
      (await verifyDecisions(p, ctx)).map((f) => f.code),
      ["CHAIN_BROKEN", "CHAIN_BROKEN", "CHAIN_BROKEN"],
    );
    // A broken chain is never extended.
    const before = await snapshotTree(p);
    await assertRefusal(
      () => signDecisionRow(p, { action: "z", verdict: "PASS" }, ctx),
      "CHAIN_BROKEN",
      AuthzError,
    );
    assertSameTree(before, await snapshotTree(p), "a refused sign on a broken chain");
  });
  await withLog([ls[0], ls[1], ls[3], ""].join("\n"), async (p) => {
    assert.match((await checkClearance(p, "delete:a", ctx)).problem!.reason, /broken at row 2/);
  });
});

Deno.test("clearances: consumed once, replay refused; clearance check consumes nothing", async () => {
  await withLog(signedLog([{ decision: "delete:a", status: "PASS" }]), async (p) => {
    const before = await snapshotTree(p);
    assert.equal((await checkClearance(p, "delete:a", ctx)).allowed, true);
    assert.equal((await checkClearance(p, "delete:a", ctx)).allowed, true);
    assertSameTree(before, await snapshotTree(p), "check is read-only");
    await consumeClearance(p, "delete:a", ctx);
    const e = await assertRefusal(
      () => consumeClearance(p, "delete:a", ctx),
      "NO_CLEARANCE",
      AuthzError,
    );
    assert.match(e.message, /no unconsumed PASS/);
    const after = await snapshotTree(p);
    await assertRefusal(() => consumeClearance(p, "delete:a", ctx), "NO_CLEARANCE", AuthzError);
    assertSameTree(after, await snapshotTree(p), "a refused consume writes nothing");
  });
});

Deno.test("clearances: decision sign (HMAC and Ed25519) creates the earlier tool's format and verifies", async () => {
  const dir = await tempDir("dec-sign");
  try {
    const p = await project(dir);
    await signDecisionRow(p, { action: "delete:a", verdict: "PASS" }, ctx);
    const file = join(p, "references", "security-decisions.log.csv");
    const text = await Deno.readTextFile(file);
    assert.ok(text.startsWith(H.join(",") + "\n"), text);
    assert.ok(text.endsWith("\r\n"));
    await signDecisionRow(p, { action: "deploy", verdict: "HALT" }, ctx);
    const signed = await snapshotTree(p);
    await assertRefusal(
      () => signDecisionRow(p, { action: "x", verdict: "MAYBE" }, ctx),
      "UNSUPPORTED_VERDICT",
      AuthzError,
    );
    await assertRefusal(
      () => signDecisionRow(p, { action: "x", verdict: "PASS", owner: "mallory" }, ctx),
      "AUTHOR_NOT_APPROVED",
      AuthzError,
    );
    await assertRefusal(
      () => signDecisionRow(p, { action: "x", verdict: "PASS" }, { env: {}, now: NOW }),
      "NO_SIGNING_KEY",
      AuthzError,
    );
    await assertRefusal(
      () => signDecisionRow(p, { action: "x", verdict: "HALT-RETRACTED" }, ctx),
      "RETRACTION_UNPROVEN",
      AuthzError,
    );
    assertSameTree(signed, await snapshotTree(p), "refused signs append nothing");
    const signer = await installedSigner(p);
    await signDecisionRow(p, { action: "delete:b", verdict: "PASS" }, {
      env: {},
      now: NOW,
      signer,
    });
    // A CI job with public keys only verifies the Ed25519 row; the HMAC rows need the key.
    const ci = await verifyDecisions(p, { env: {}, now: NOW });
    assert.deepEqual(ci.map((f) => f.code), ["NO_SIGNING_KEY", null, null]);
    assert.deepEqual((await verifyDecisions(p, ctx)).map((f) => f.valid), [true, true, true]);
    assert.equal((await checkClearance(p, "delete:b", { env: {}, now: NOW })).allowed, true);
    // No silent downgrade: the scheme blanked, the Ed25519 signature is checked as HMAC and fails.
    const signedText = await Deno.readTextFile(file);
    await Deno.writeTextFile(file, signedText.replace(`,ed25519,${signer.keyId}`, ",,"));
    assert.equal(
      (await checkClearance(p, "delete:b", ctx)).problem?.code,
      "SIGNATURE_INVALID",
    );
    await Deno.writeTextFile(file, signedText);
    // Python recomputes the chain and the HMAC of row 1.
    const py = new Deno.Command("python3", {
      args: [
        "-c",
        "import csv,hashlib,hmac,sys\nr=list(csv.DictReader(open(sys.argv[1],newline='')))\n" +
        "p='|'.join([r[0]['date'],r[0]['decision'],r[0]['status'],r[0]['conditions_verified'],'security',''])\n" +
        "print(hmac.new(sys.argv[2].encode(),p.encode(),hashlib.sha256).hexdigest()==r[0]['signature'], r[1]['prev_digest']==hashlib.sha256(p.encode()).hexdigest())",
        file,
        KEY,
      ],
      stdout: "piped",
    }).outputSync();
    assert.equal(new TextDecoder().decode(py.stdout).trim(), "True True");
  } finally {
    await removeTree(dir);
  }
});
