/**
 * Signed waivers (lib/authz/waivers.ts): the vectors written by Python verify here; each validity
 * rule broken one at a time with its reason; every field edited after signing; consumption to the
 * limit with re-signing; a hand-lowered counter; the Ed25519 option and no scheme downgrade; what
 * we write reads back in Python with its HMAC recomputed there.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { removeTree, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { AuthzError } from "../../lib/errors.ts";
import {
  checkWaiver,
  consumeWaiver,
  issueWaiver,
  verifyWaivers,
  WAIVER_COLUMNS,
  waiverProblem,
} from "../../lib/authz/waivers.ts";
import { formatCsv } from "../../lib/authz/csv.ts";
import { installedSigner, mac, pipe, project, VECTOR_KEYS, VECTORS } from "./_fixtures.ts";

const KEY = "k-waiver";
const ENV = { AGENTTEAMS_WAIVER_SIGNING_KEY: KEY };
const NOW = new Date("2026-11-30T12:00:00Z");
/** What an HMAC waiver signs: every column but the timestamp and the signature. */
const PAYLOAD_FIELDS = WAIVER_COLUMNS.slice(1, 10);

function signed(over: Record<string, string> = {}, key = KEY): Record<string, string> {
  const r: Record<string, string> = {
    timestamp: "2026-11-29T10:00:00Z",
    waiver_id: "W-1",
    action_reviewed: "delete:old.txt",
    expires_at: "2026-12-01T00:00:00Z",
    max_uses: "2",
    uses: "0",
    approver: "alice",
    ticket_id: "OPS-1",
    reason_code: "cleanup",
    conditions_verified: "verified",
    ...over,
  };
  r.signature = mac(key, pipe(PAYLOAD_FIELDS.map((k) => r[k])));
  return r;
}

function csvOf(recs: Record<string, string>[]): string {
  return formatCsv(WAIVER_COLUMNS, recs.map((r) => WAIVER_COLUMNS.map((c) => r[c] ?? "")), {
    eol: "\n",
  });
}

const CTX = { env: ENV, now: NOW, roster: new Set(["alice"]) };

Deno.test("waivers: the Python-written vectors verify here (LF and CRLF), reasons per row", async () => {
  const dir = await tempDir("wv-vec");
  try {
    for (const f of ["waivers-lf.csv", "waivers-crlf.csv"]) {
      const p = await project(dir, "alice\n");
      await Deno.copyFile(join(VECTORS, f), join(p, "references", "security-waivers.log.csv"));
      const rows = await verifyWaivers(p, {
        env: { AGENTTEAMS_WAIVER_SIGNING_KEY: VECTOR_KEYS.waiver },
        now: NOW,
      });
      assert.deepEqual(rows.map((r) => [r.id, r.valid, r.code]), [
        ["W-7", true, null],
        ["W-8", true, null],
        ["W-9", false, "EXPIRED"],
      ], f);
      assert.equal(rows[1].action, 'delete:docs/old, "draft".md');
      await removeTree(p);
    }
  } finally {
    await removeTree(dir);
  }
});

Deno.test("waivers: each validity rule broken alone is refused with its own code, in order", async () => {
  const cases: [string, Record<string, string>, string, string?][] = [
    ["scope", {}, "SCOPE_MISMATCH", "delete:other.txt"],
    ["scope is exact, not a prefix", {}, "SCOPE_MISMATCH", "delete:old"],
    ["conditions pending", { conditions_verified: "pending" }, "CONDITIONS_UNVERIFIED"],
    ["approver empty", { approver: "" }, "FIELDS_MISSING"],
    ["ticket empty", { ticket_id: " " }, "FIELDS_MISSING"],
    ["reason empty", { reason_code: "" }, "FIELDS_MISSING"],
    ["approver off the roster", { approver: "mallory" }, "APPROVER_NOT_ON_ROSTER"],
    ["expiry not ISO", { expires_at: "next week" }, "EXPIRY_INVALID"],
    ["expiry without an offset", { expires_at: "2026-12-01T00:00:00" }, "EXPIRY_INVALID"],
    ["expired", { expires_at: "2026-11-30T11:59:59Z" }, "EXPIRED"],
    ["expiry equal to now", { expires_at: "2026-11-30T12:00:00Z" }, "EXPIRED"],
    ["expiry equal to now, as an offset", { expires_at: "2026-11-30T17:30:00+05:30" }, "EXPIRED"],
    ["uses at max", { uses: "2" }, "USES_EXHAUSTED"],
    ["max 0", { max_uses: "0" }, "USES_EXHAUSTED"],
    ["counter not a number", { uses: "one" }, "COUNTER_INVALID"],
  ];
  for (const [what, over, code, action] of cases) {
    const p = await waiverProblem(signed(over), action ?? "delete:old.txt", CTX);
    assert.equal(p?.code, code, `${what}: ${JSON.stringify(p)}`);
    assert.ok(p!.reason.length > 0);
  }
  // Valid as given, with Z, an offset, a roster name with @ and case.
  assert.equal(await waiverProblem(signed(), "delete:old.txt", CTX), null);
  assert.equal(
    await waiverProblem(signed({ expires_at: "2026-12-01T05:30:00+05:30" }), "DELETE:old.txt", CTX),
    null,
  );
  assert.equal(await waiverProblem(signed({ approver: "@Alice" }), "delete:old.txt", CTX), null);
  // The key: missing (fail closed), wrong.
  const noKey = await waiverProblem(signed(), "delete:old.txt", { ...CTX, env: {} });
  assert.equal(noKey?.code, "NO_SIGNING_KEY");
  const wrong = await waiverProblem(signed({}, "other"), "delete:old.txt", CTX);
  assert.equal(wrong?.code, "SIGNATURE_INVALID");
  // No roster file: only `security` approves.
  const dflt = await waiverProblem(
    signed(),
    "delete:old.txt",
    { env: ENV, now: NOW },
    "/nonexistent",
  );
  assert.equal(dflt?.code, "APPROVER_NOT_ON_ROSTER");
  assert.equal(
    await waiverProblem(
      signed({ approver: "@security" }),
      "delete:old.txt",
      { env: ENV, now: NOW },
      "/nonexistent",
    ),
    null,
  );
});

Deno.test("waivers: a row edited after signing fails on every signed field; the timestamp is not signed", async () => {
  for (const k of PAYLOAD_FIELDS) {
    const r = signed();
    // An edit that keeps every other rule satisfied, so only the signature can catch it.
    const edits: Record<string, string> = {
      waiver_id: "W-2",
      action_reviewed: "delete:old.txt ",
      expires_at: "2026-12-01T00:00:01Z",
      max_uses: "3",
      uses: "1",
      approver: "@alice",
      ticket_id: "OPS-2",
      reason_code: "other",
      conditions_verified: "VERIFIED",
    };
    r[k] = edits[k];
    const p = await waiverProblem(r, "delete:old.txt", CTX);
    // action_reviewed with a trailing space strips to the same payload: still valid.
    if (k === "action_reviewed") assert.equal(p, null, k);
    else assert.equal(p?.code, "SIGNATURE_INVALID", `${k}: ${JSON.stringify(p)}`);
  }
  const r = signed();
  r.timestamp = "2020-01-01T00:00:00Z";
  assert.equal(await waiverProblem(r, "delete:old.txt", CTX), null);
});

Deno.test("waivers: consumed to the limit, re-signed each time; replay and a lowered counter refused", async () => {
  const dir = await tempDir("wv-consume");
  try {
    const p = await project(dir, "alice\n");
    const file = join(p, "references", "security-waivers.log.csv");
    await Deno.writeTextFile(file, csvOf([signed()]));
    await Deno.chmod(file, 0o640);
    const ctx = { env: ENV, now: NOW };
    assert.equal((await consumeWaiver(p, "delete:old.txt", ctx)).uses, 1);
    assert.equal((await consumeWaiver(p, "delete:old.txt", ctx)).uses, 2);
    const before = await snapshotTree(p);
    const e = await assertRefusal(
      () => consumeWaiver(p, "delete:old.txt", ctx),
      "USES_EXHAUSTED",
      AuthzError,
    );
    assert.match(e.message, /use limit has been reached \(2 of 2\)/);
    assertSameTree(before, await snapshotTree(p), "after the refused third use");
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o640);
    // The stored row carries uses=2 under a signature computed independently.
    const text = await Deno.readTextFile(file);
    assert.ok(text.includes(`,2,2,alice,`) || text.includes(",2,2,"), text);
    assert.ok(text.includes(signed({ uses: "2" }).signature), text);
    // Lowering the counter by hand breaks the signature.
    await Deno.writeTextFile(file, text.replace(",2,2,alice", ",2,1,alice"));
    await assertRefusal(
      () => consumeWaiver(p, "delete:old.txt", ctx),
      "SIGNATURE_INVALID",
      AuthzError,
    );
    // The latest waiver decides: an invalid newer one refuses even with a valid older one.
    await Deno.writeTextFile(
      file,
      csvOf([signed({ waiver_id: "W-old" }), signed({ waiver_id: "W-new", approver: "mallory" })]),
    );
    const c = await checkWaiver(p, "delete:old.txt", ctx);
    assert.equal(c.ok, false);
    assert.equal(c.waiverId, "W-new");
    assert.equal(c.problem?.code, "APPROVER_NOT_ON_ROSTER");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("waivers: a missing key refuses consumption and writes nothing", async () => {
  const dir = await tempDir("wv-nokey");
  try {
    const p = await project(dir, "alice\n");
    await Deno.writeTextFile(join(p, "references", "security-waivers.log.csv"), csvOf([signed()]));
    const before = await snapshotTree(p);
    await assertRefusal(
      () => consumeWaiver(p, "delete:old.txt", { env: {}, now: NOW }),
      "NO_SIGNING_KEY",
      AuthzError,
    );
    await assertRefusal(
      () => consumeWaiver(p, "delete:absent", { env: ENV, now: NOW }),
      "NO_WAIVER",
      AuthzError,
    );
    assertSameTree(before, await snapshotTree(p));
  } finally {
    await removeTree(dir);
  }
});

Deno.test("waivers: issued rows read back in Python (csv + hmac), and CRLF files stay CRLF", async () => {
  const dir = await tempDir("wv-issue");
  try {
    const p = await project(dir);
    const f = {
      waiverId: "W-1",
      action: 'delete:a, "b".txt',
      expiresAt: "2026-12-31T00:00:00Z",
      maxUses: 2,
      approver: "security",
      ticketId: "OPS-1",
      reasonCode: "line1\nline2",
    };
    await issueWaiver(p, f, { env: ENV, now: NOW });
    const issued = await snapshotTree(p);
    await assertRefusal(
      () => issueWaiver(p, f, { env: ENV, now: NOW }),
      "DUPLICATE_ID",
      AuthzError,
    );
    await assertRefusal(
      () =>
        issueWaiver(p, { ...f, waiverId: "W-2", expiresAt: "2026-01-01T00:00:00Z" }, {
          env: ENV,
          now: NOW,
        }),
      "EXPIRED",
      AuthzError,
    );
    await assertRefusal(
      () => issueWaiver(p, { ...f, waiverId: "W-3" }, { env: {}, now: NOW }),
      "NO_SIGNING_KEY",
      AuthzError,
    );
    assertSameTree(issued, await snapshotTree(p), "refused issues append nothing");
    const file = join(p, "references", "security-waivers.log.csv");
    const py = new Deno.Command("python3", {
      args: [
        "-c",
        "import csv,hmac,hashlib,sys,json\n" +
        "rows=list(csv.DictReader(open(sys.argv[1],newline='')))\n" +
        "F=['waiver_id','action_reviewed','expires_at','max_uses','uses','approver','ticket_id','reason_code','conditions_verified']\n" +
        "print(json.dumps([[r['action_reviewed'],hmac.compare_digest(r['signature'],hmac.new(sys.argv[2].encode(),'|'.join(r[k].strip() for k in F).encode(),hashlib.sha256).hexdigest())] for r in rows]))",
        file,
        KEY,
      ],
      stdout: "piped",
    }).outputSync();
    assert.equal(py.code, 0);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(py.stdout)), [[
      'delete:a, "b".txt',
      true,
    ]]);
    assert.ok(!(await Deno.readTextFile(file)).includes("\r\n"));
    // A CRLF ledger consumed stays CRLF.
    const q = await project(join(dir, "q"), "alice\n");
    const qf = join(q, "references", "security-waivers.log.csv");
    await Deno.writeTextFile(qf, csvOf([signed()]).replaceAll("\n", "\r\n"));
    await consumeWaiver(q, "delete:old.txt", { env: ENV, now: NOW });
    const back = await Deno.readTextFile(qf);
    assert.equal(back.split("\r\n").length, 3, JSON.stringify(back));
  } finally {
    await removeTree(dir);
  }
});

Deno.test("waivers: Ed25519 rows verify with public keys only, re-sign by their own scheme, never downgrade", async () => {
  const dir = await tempDir("wv-ed");
  try {
    const p = await project(dir);
    const signer = await installedSigner(p);
    const f = {
      waiverId: "W-ed",
      action: "delete:x",
      expiresAt: "2026-12-31T00:00:00Z",
      maxUses: 2,
      approver: "security",
      ticketId: "T",
      reasonCode: "r",
    };
    const rec = await issueWaiver(p, f, { env: {}, now: NOW, signer });
    assert.equal(rec.sig_scheme, "ed25519");
    assert.equal(rec.key_id, signer.keyId);
    // No HMAC key at all: still verifies (a CI job holding public keys only).
    const rows = await verifyWaivers(p, { env: {}, now: NOW });
    assert.deepEqual(rows.map((r) => r.valid), [true]);
    // Consuming without the operator key is refused, nothing written; HMAC is never a fallback.
    const before = await snapshotTree(p);
    await assertRefusal(
      () => consumeWaiver(p, "delete:x", { env: ENV, now: NOW }),
      "NO_SIGNING_KEY",
      AuthzError,
    );
    assertSameTree(before, await snapshotTree(p));
    await consumeWaiver(p, "delete:x", { env: {}, now: NOW, signer });
    const after = await verifyWaivers(p, { env: {}, now: NOW });
    assert.deepEqual(after.map((r) => r.valid), [true]);
    const file = join(p, "references", "security-waivers.log.csv");
    const text = await Deno.readTextFile(file);
    assert.match(text, /,ed25519,/);
    // Downgrade: the scheme blanked (an HMAC key holder re-signing it as HMAC is a new row, and
    // the Ed25519 signature no longer verifies as anything).
    await Deno.writeTextFile(file, text.replace(`,ed25519,${signer.keyId}`, ",,"));
    const down = await verifyWaivers(p, { env: ENV, now: NOW });
    assert.equal(down[0].code, "SIGNATURE_INVALID");
    // A key_id that escapes the store, and a PEM that is not Ed25519.
    await Deno.writeTextFile(file, text.replace(`,ed25519,${signer.keyId}`, ",ed25519,../x"));
    assert.equal((await verifyWaivers(p, { env: {}, now: NOW }))[0].code, "KEY_ID_INVALID");
    const rsa = new Deno.Command("openssl", {
      args: ["genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:1024"],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const pubRsa = new Deno.Command("openssl", {
      args: ["pkey", "-pubout"],
      stdin: "piped",
      stdout: "piped",
    })
      .spawn();
    const w = pubRsa.stdin.getWriter();
    await w.write(rsa.stdout);
    await w.close();
    const rsaPub = new TextDecoder().decode((await pubRsa.output()).stdout);
    await Deno.writeTextFile(
      join(p, "references", "authorized-verify-keys", "rsa.pub.pem"),
      rsaPub,
    );
    await Deno.writeTextFile(file, text.replace(`,ed25519,${signer.keyId}`, ",ed25519,rsa"));
    assert.equal((await verifyWaivers(p, { env: {}, now: NOW }))[0].code, "VERIFY_KEY_INVALID");
    await Deno.writeTextFile(file, text.replace(`,ed25519,${signer.keyId}`, ",rot13,x"));
    assert.equal((await verifyWaivers(p, { env: {}, now: NOW }))[0].code, "SCHEME_UNKNOWN");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("waivers: a ledger with a BOM verifies and keeps it; an unterminated quote is refused with its line, nothing written", async () => {
  const dir = await tempDir("wv-bom");
  try {
    const p = await project(dir, "alice\n");
    const file = join(p, "references", "security-waivers.log.csv");
    await Deno.writeTextFile(file, "\ufeff" + csvOf([signed()]));
    const rows = await verifyWaivers(p, { env: ENV, now: NOW });
    assert.deepEqual(rows.map((r) => r.valid), [true]);
    await consumeWaiver(p, "delete:old.txt", { env: ENV, now: NOW });
    const back = await Deno.readFile(file);
    assert.deepEqual([...back.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    await Deno.writeTextFile(file, csvOf([signed()]) + '2026-11-29T10:00:00Z,"W-2,open\n');
    const before = await snapshotTree(p);
    const e = await assertRefusal(
      () => verifyWaivers(p, { env: ENV, now: NOW }),
      "CSV_MALFORMED",
      AuthzError,
    );
    assert.match(e.message, /line 3: a quoted field is never closed/);
    await assertRefusal(
      () => consumeWaiver(p, "delete:old.txt", { env: ENV, now: NOW }),
      "CSV_MALFORMED",
      AuthzError,
    );
    assertSameTree(before, await snapshotTree(p));
  } finally {
    await removeTree(dir);
  }
});
