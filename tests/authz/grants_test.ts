/**
 * Capability grants (lib/authz/grants.ts): the vector signed by OpenSSL's Ed25519 and Python's
 * HMAC verifies here; each validity rule broken alone with its code; every field edited after
 * signing; re-ordered and deleted chain rows; key_id and PEM problems; the team-dir roster (a
 * project-root one ignored with a warning); minting (HMAC write refused); the write roots.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { removeTree, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { AuthzError } from "../../lib/errors.ts";
import {
  appendGrant,
  GRANT_COLUMNS,
  type GrantFields,
  grantPayload,
  grantStopped,
  grantWriteRoots,
  targetProblem,
  verifyGrants,
} from "../../lib/authz/grants.ts";
import { formatCsv } from "../../lib/authz/csv.ts";
import { LEGACY_DECISION_COLUMNS, readDecisionLog } from "../../lib/authz/decisions.ts";
import { signHex } from "../../lib/crypto/ed25519.ts";
import type { OperatorSigner } from "../../lib/authz/signed.ts";
import { grantFields, installedSigner, mac, VECTOR_KEYS, VECTORS } from "./_fixtures.ts";

const NOW = new Date("2026-11-30T12:00:00Z");
const GKEY = "k-grant";
const ENV = { AGENTTEAMS_GRANT_SIGNING_KEY: GKEY };

interface World {
  project: string;
  team: string;
  signer: OperatorSigner;
}

async function world(dir: string, roster = "alice\n"): Promise<World> {
  const project = join(dir, "holder");
  const team = join(project, ".agentteams", "team");
  await Deno.mkdir(join(project, "references"), { recursive: true });
  await Deno.mkdir(join(team, "references"), { recursive: true });
  if (roster !== "") {
    await Deno.writeTextFile(join(team, "references", "security-approvers.txt"), roster);
  }
  const signer = await installedSigner(team, "op1");
  return { project, team, signer };
}

function base(over: Record<string, string> = {}): Record<string, string> {
  return {
    timestamp: "2026-11-29T10:00:00+00:00",
    grant_id: "G-1",
    issuer_team: "team-a",
    holder_team: "team-b",
    target_path: "docs/shared",
    permitted_ops: "write",
    expires_at: "2026-12-31T00:00:00Z",
    max_uses: "1",
    uses: "0",
    approver: "alice",
    ticket_id: "T-9",
    reason_code: "cross-repo",
    issuer_root: "/srv/team-a",
    prev_digest: "",
    signature: "",
    sig_scheme: "ed25519",
    key_id: "op1",
    ...over,
  };
}

/** Chains and signs rows (Ed25519 for ed25519 rows, node:crypto HMAC for the others). */
async function sign(
  rows: Record<string, string>[],
  signer: OperatorSigner,
): Promise<Record<string, string>[]> {
  let prev = "";
  const out: Record<string, string>[] = [];
  for (const r0 of rows) {
    const r: Record<string, string> = {
      ...r0,
      prev_digest: r0.prev_digest === "" ? prev : r0.prev_digest,
    };
    const payload = grantPayload(r);
    if (r0.signature === "") {
      r.signature = r.sig_scheme === "ed25519"
        ? await signHex(signer.key, "agentteams-grant-v1|" + payload)
        : mac(GKEY, payload);
    }
    prev = createHash("sha256").update(payload).digest("hex");
    out.push(r);
  }
  return out;
}

async function put(w: World, rows: Record<string, string>[]): Promise<void> {
  await Deno.writeTextFile(
    join(w.project, "references", "capability-grants.log.csv"),
    formatCsv(GRANT_COLUMNS, rows.map((r) => GRANT_COLUMNS.map((c) => r[c] ?? "")), { eol: "\n" }),
  );
}

async function codes(w: World, env: Record<string, string> = ENV): Promise<(string | null)[]> {
  return (await verifyGrants(w.project, w.team, { env, now: NOW })).findings.map((f) => f.code);
}

Deno.test("grants: the OpenSSL/Python vector verifies; its write grant widens; no HMAC key fails the HMAC row only", async () => {
  const dir = await tempDir("gr-vec");
  try {
    const w = await world(dir);
    await Deno.copyFile(
      join(VECTORS, "op1.pub.pem"),
      join(w.team, "references", "authorized-verify-keys", "op1.pub.pem"),
    );
    await Deno.copyFile(
      join(VECTORS, "grants.csv"),
      join(w.project, "references", "capability-grants.log.csv"),
    );
    const env = { AGENTTEAMS_GRANT_SIGNING_KEY: VECTOR_KEYS.grant };
    assert.deepEqual(await codes(w, env), [null, null]);
    assert.deepEqual(await codes(w, {}), [null, "NO_SIGNING_KEY"]);
    const roots = await grantWriteRoots(w.project, w.team, { env, now: NOW });
    assert.deepEqual(roots.roots, ["/srv/team-a/docs/shared"]);
    assert.deepEqual(roots.active, ["G-1"]);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("grants: each validity rule broken alone is refused with its code", async () => {
  const dir = await tempDir("gr-rules");
  try {
    const w = await world(dir);
    const cases: [string, Record<string, string>, string][] = [
      ["approver empty", { approver: "" }, "FIELDS_MISSING"],
      ["HMAC write grant", { sig_scheme: "", key_id: "" }, "SCHEME_INSUFFICIENT"],
      ["unknown scheme", { sig_scheme: "rsa", permitted_ops: "read" }, "SCHEME_UNKNOWN"],
      ["bad signature", { signature: "ab".repeat(64) }, "SIGNATURE_INVALID"],
      ["key_id ../x", { key_id: "../x" }, "KEY_ID_INVALID"],
      ["no such key", { key_id: "op2" }, "VERIFY_KEY_INVALID"],
      ["expired (Z)", { expires_at: "2026-11-30T12:00:00Z" }, "EXPIRED"],
      ["expired (naive = UTC)", { expires_at: "2026-11-30T12:00:00" }, "EXPIRED"],
      ["expired (offset)", { expires_at: "2026-11-30T13:00:00+01:00" }, "EXPIRED"],
      ["expiry not a time", { expires_at: "soon" }, "EXPIRY_INVALID"],
      ["uses exhausted", { uses: "1" }, "USES_EXHAUSTED"],
      ["counter", { max_uses: "x" }, "COUNTER_INVALID"],
      ["approver off the roster", { approver: "mallory" }, "APPROVER_NOT_ON_ROSTER"],
      ["~ target", { target_path: "~/x" }, "TARGET_REFUSED"],
      [".. escape", { target_path: "docs/../../x" }, "TARGET_REFUSED"],
      ["outside issuer_root", { target_path: "/etc/cron.d" }, "TARGET_REFUSED"],
      ["root target", { target_path: "/" }, "TARGET_REFUSED"],
    ];
    for (const [what, over, code] of cases) {
      await put(w, await sign([base(over)], w.signer));
      assert.deepEqual(await codes(w), [code], what);
    }
    // Valid as given; naive and offset expiries in the future are valid.
    for (const e of ["2026-12-31T00:00:00Z", "2026-11-30T13:00:00", "2026-11-30T12:30:00+00:00"]) {
      await put(w, await sign([base({ expires_at: e })], w.signer));
      assert.deepEqual(await codes(w), [null], e);
    }
    // A PEM that is not Ed25519 in the store.
    await Deno.writeTextFile(
      join(w.team, "references", "authorized-verify-keys", "bad.pub.pem"),
      "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    );
    await put(w, await sign([base({ key_id: "bad" })], w.signer));
    assert.deepEqual(await codes(w), ["VERIFY_KEY_INVALID"]);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("grants: every field edited after signing; re-ordered and deleted chain rows", async () => {
  const dir = await tempDir("gr-edit");
  try {
    const w = await world(dir);
    const signed = await sign([base()], w.signer);
    const edits: Record<string, string> = {
      grant_id: "G-2",
      issuer_team: "team-x",
      holder_team: "team-y",
      target_path: "docs/other",
      permitted_ops: "write;read",
      expires_at: "2027-01-01T00:00:00Z",
      max_uses: "5",
      uses: "0 ",
      approver: "ALICE",
      ticket_id: "T-1",
      reason_code: "r2",
      issuer_root: "/srv/team-x",
      key_id: "op1 ",
    };
    for (const [k, v] of Object.entries(edits)) {
      await put(w, [{ ...signed[0], [k]: v }]);
      const got = await codes(w);
      // Values are stripped before signing (as the earlier tool did): padding is no edit.
      if (k === "uses" || k === "key_id") assert.deepEqual(got, [null], k);
      else assert.deepEqual(got, ["SIGNATURE_INVALID"], k);
    }
    const three = await sign([
      base(),
      base({ grant_id: "G-2", permitted_ops: "read", sig_scheme: "", key_id: "" }),
      base({ grant_id: "G-3" }),
    ], w.signer);
    await put(w, three);
    assert.deepEqual(await codes(w), [null, null, null]);
    await put(w, [three[0], three[2], three[1]]);
    assert.deepEqual(await codes(w), [null, "CHAIN_BROKEN", "CHAIN_BROKEN"]);
    await put(w, [three[0], three[2]]);
    assert.deepEqual(await codes(w), [null, "CHAIN_BROKEN"]);
    await put(w, [three[1], three[2]]);
    assert.deepEqual(await codes(w), ["CHAIN_BROKEN", "CHAIN_BROKEN"]);
    // A broken chain adds no write root at all for the rows it taints.
    await put(w, [three[0], three[2], three[1]]);
    const roots = await grantWriteRoots(w.project, w.team, { env: ENV, now: NOW });
    assert.deepEqual(roots.active, ["G-1"]);
    assert.equal(roots.problems.length, 2);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("grants: the roster comes from the team dir only; a project-root roster is ignored with a warning", async () => {
  const dir = await tempDir("gr-roster");
  try {
    const w = await world(dir, "");
    await Deno.writeTextFile(join(w.project, "references", "security-approvers.txt"), "alice\n");
    await put(w, await sign([base()], w.signer));
    const r = await verifyGrants(w.project, w.team, { env: ENV, now: NOW });
    assert.equal(r.findings[0].code, "APPROVER_NOT_ON_ROSTER");
    assert.match(r.findings[0].reason, /no approver roster in the team dir/);
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0], /is ignored for grants/);
    // No `security` fallback either.
    await put(w, await sign([base({ approver: "security" })], w.signer));
    assert.deepEqual(await codes(w), ["APPROVER_NOT_ON_ROSTER"]);
  } finally {
    await removeTree(dir);
  }
});

Deno.test("grants: minting: Ed25519 write grants chain; an HMAC write grant and an unsafe target are refused, nothing written", async () => {
  const dir = await tempDir("gr-mint");
  try {
    const w = await world(dir);
    const f = grantFields();
    const mint = (
      g: GrantFields,
      signer: OperatorSigner | null,
      env: Record<string, string> = ENV,
    ) => appendGrant(w.project, w.team, g, { env, now: NOW }, signer);
    const before = await snapshotTree(w.project);
    await assertRefusal(() => mint(f, null), "SCHEME_INSUFFICIENT", AuthzError);
    await assertRefusal(
      () => mint({ ...f, targetPath: "../x" }, w.signer),
      "TARGET_REFUSED",
      AuthzError,
    );
    await assertRefusal(
      () => mint({ ...f, approver: "mallory" }, w.signer),
      "APPROVER_NOT_ON_ROSTER",
      AuthzError,
    );
    assertSameTree(before, await snapshotTree(w.project), "refused mints");
    await mint(f, w.signer, {});
    await mint({ ...f, grantId: "G-2", permittedOps: "read", issuerRoot: "" }, null);
    await assertRefusal(() => mint(f, w.signer), "DUPLICATE_ID", AuthzError);
    assert.deepEqual(await codes(w), [null, null]);
    const text = await Deno.readTextFile(
      join(w.project, "references", "capability-grants.log.csv"),
    );
    assert.ok(text.startsWith(GRANT_COLUMNS.join(",") + "\n"));
    assert.equal(text.split("\n").length, 4);
    // Python reads what we wrote: the chain and the HMAC row recomputed there.
    const py = new Deno.Command("python3", {
      args: [
        "-c",
        "import csv,hashlib,hmac,sys\n" +
        "r=list(csv.DictReader(open(sys.argv[1],newline='')))\n" +
        "F=['grant_id','issuer_team','holder_team','target_path','permitted_ops','expires_at','max_uses','uses','approver','ticket_id','reason_code','prev_digest']\n" +
        "def pl(g):\n v=[g[k] for k in F]\n" +
        " if g['issuer_root'].strip(): v.append(g['issuer_root'])\n" +
        " for k in ['sig_scheme','key_id']:\n  if g[k].strip(): v.append(k+'='+g[k].strip())\n" +
        " return '|'.join(x.strip() for x in v)\n" +
        "print(r[1]['prev_digest']==hashlib.sha256(pl(r[0]).encode()).hexdigest(), " +
        "hmac.new(sys.argv[2].encode(),pl(r[1]).encode(),hashlib.sha256).hexdigest()==r[1]['signature'])",
        join(w.project, "references", "capability-grants.log.csv"),
        GKEY,
      ],
      stdout: "piped",
    }).outputSync();
    assert.equal(new TextDecoder().decode(py.stdout).trim(), "True True");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("grants: target rules (property-free table)", () => {
  assert.equal(targetProblem("docs/a", ""), null);
  assert.equal(targetProblem("/srv/a/docs", "/srv/a"), null);
  assert.equal(targetProblem("/srv/ab", "/srv/a")?.code, "TARGET_REFUSED");
  assert.equal(targetProblem("/srv/a/docs", "relative")?.code, "TARGET_REFUSED");
  assert.equal(targetProblem("~", "/srv/a")?.code, "TARGET_REFUSED");
  assert.equal(targetProblem("..", "/srv/a")?.code, "TARGET_REFUSED");
  assert.equal(targetProblem("/srv/a/../b", "/srv/a")?.code, "TARGET_REFUSED");
});

Deno.test("grants: a HALT stops a granted write however it spells the path (./, trailing /, absolute, a parent, case); a sibling's does not", async () => {
  const dir = await tempDir("gr-halt-spelling");
  try {
    const w = await world(dir);
    await put(w, await sign([base()], w.signer));
    const log = join(w.project, "references", "security-decisions.log.csv");
    const halted = async (action: string) => {
      await Deno.writeTextFile(
        log,
        formatCsv(
          LEGACY_DECISION_COLUMNS,
          [["2026-11-29T10:00:00Z", "security", action, "HALT", "", ""]],
          { eol: "\n" },
        ),
      );
      const g = await grantWriteRoots(w.project, w.team, { env: ENV, now: NOW });
      return g.roots.length === 0 && g.problems.some((p) => /^G-1: HALTED: /.test(p));
    };
    for (
      const a of [
        "write:docs/shared",
        "write:./docs/shared/",
        "write:docs//shared",
        "write:/srv/team-a/docs/shared",
        "write:docs",
        "write:/srv/team-a",
        "WRITE:Docs/Shared",
        "grant:G-1",
      ]
    ) {
      assert.equal(await halted(a), true, `a HALT on ${a} did not stop G-1`);
    }
    for (const a of ["write:docs/other", "write:doc", "write:docs/shared2", "delete:docs/shared"]) {
      assert.equal(await halted(a), false, `a HALT on ${a} stopped G-1`);
    }
  } finally {
    await removeTree(dir);
  }
});

Deno.test("grantStopped: an expiry passed since the start stops a grant (the runner asks before each run)", async () => {
  const g = {
    root: "/srv/team-a/docs/shared",
    issuerRoot: "/srv/team-a",
    grant: "G-1",
    actions: ["write:docs/shared", "grant:G-1"],
    expiresAt: "2026-11-30T12:00:00Z",
  };
  const none = readDecisionLog("/nonexistent-holder");
  const before = new Date("2026-11-30T11:59:59Z");
  assert.equal(await grantStopped(none, g, { env: {}, now: before }, "/nonexistent-holder"), null);
  const at = await grantStopped(none, g, { env: {}, now: NOW }, "/nonexistent-holder");
  assert.match(at ?? "", /^EXPIRED: /);
});
