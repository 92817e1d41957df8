/**
 * Operator direct-write grants, the pure half (lib/runner/direct_grants.ts): the signed payload
 * byte for byte as CPython's `json.dumps(..., sort_keys=True, separators=(",", ":"))` writes it,
 * signed with a fixed Ed25519 key (the signature pinned); and every rule a record must pass,
 * each refused with its code: a key no one trusts, a record edited after signing, expired, 31
 * days, `max_writes` 0 and 501, a gate whose definition changed since signing, a brief that no
 * longer asks for `direct`, four active grants, two for one agent; the selection by agent, path
 * and gates; the per-write limits; a direct agent's dispatch limits; the write count.
 */
import assert from "node:assert/strict";
import {
  derToPem,
  importPrivatePem,
  importPublicPem,
  signHex,
  verifyHex,
} from "../../lib/crypto/ed25519.ts";
import { parsePolicy } from "../../lib/policy/parse.ts";
import type { Policy } from "../../lib/policy/types.ts";
import {
  activeGrants,
  countDirectWrites,
  DIRECT_MAX_USES,
  directDispatchProblem,
  directGrantsLoadedRow,
  expectedBinding,
  gateDigest,
  GRANT_FIELDS,
  GrantProblem,
  selectGrant,
  type ServerIdentity,
  signedPayloadOf,
  verifyGrant,
  type VerifyGrantContext,
  writeProblem,
} from "../../lib/runner/direct_grants.ts";
import { runnerIdentity } from "../../lib/runner/direct_grants_load.ts";

/** A fixed Ed25519 key: PKCS#8 of the seed 0x01..0x20 (RFC 8410 layout). */
const SEED = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
const PKCS8 = new Uint8Array([
  ...Uint8Array.fromHex("302e020100300506032b657004220420"),
  ...SEED,
]);
const PRIVATE_PEM = derToPem(PKCS8, "PRIVATE KEY");

async function publicPemOf(): Promise<string> {
  const k = await crypto.subtle.importKey("pkcs8", PKCS8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", k);
  const pub = await crypto.subtle.importKey(
    "jwk",
    { kty: "OKP", crv: "Ed25519", x: jwk.x },
    { name: "Ed25519" },
    true,
    ["verify"],
  );
  return derToPem(new Uint8Array(await crypto.subtle.exportKey("spki", pub)), "PUBLIC KEY");
}

const SERVER: ServerIdentity = {
  server: "agentteams_runner",
  map_version: 1,
  server_sha256: "5".repeat(64),
};

function policyOf(brief: Record<string, unknown>): Policy {
  return parsePolicy(JSON.stringify(brief), {
    briefPath: "/p/agentteams.json",
    projectRoot: "/p",
    briefSha256: "0".repeat(64),
  });
}

const GATE = { argv: ["true", "{file}"], glob: "src/*.ts" };

function briefWith(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent_policies: {
      worker: { write_scopes: ["src/", "docs/notes.md"] },
      helper: { write_scopes: ["lib/"] },
      third: { write_scopes: ["third/"] },
      fourth: { write_scopes: ["fourth/"] },
    },
    proposal_gates: { lint: GATE },
    mcp_grants: {
      worker: { tools: ["request_status", "write_file", "delete_file"], approval: "direct" },
      helper: { tools: ["write_file"], approval: "direct" },
      third: { tools: ["write_file"], approval: "direct" },
      fourth: { tools: ["write_file"], approval: "direct" },
    },
    ...over,
  };
}

const NOW = new Date("2026-12-01T12:00:00Z");

function fieldsFor(policy: Policy, agent: string, over: Record<string, unknown> = {}) {
  const b = expectedBinding(policy, agent, SERVER);
  if (typeof b === "string") throw new Error(b);
  return {
    grant_id: `G-${agent}`,
    agent,
    ...b,
    issued: "2026-12-01T00:00:00+00:00",
    expires: "2026-12-08T00:00:00+00:00",
    max_writes: 5,
    key_id: "op1",
    ...over,
  };
}

async function signed(fields: Record<string, unknown>): Promise<Record<string, unknown>> {
  const key = await importPrivatePem(PRIVATE_PEM);
  return { ...fields, signature: await signHex(key, signedPayloadOf(fields)) };
}

async function ctxFor(policy: Policy, now = NOW): Promise<VerifyGrantContext> {
  const pub = await importPublicPem(await publicPemOf());
  return {
    policy,
    server: SERVER,
    now,
    keyFor: (id) =>
      id === "op1" ? Promise.resolve(pub) : Promise.reject(new Error(`no verify key for ${id}`)),
    verify: verifyHex,
  };
}

async function refusedWith(
  record: Record<string, unknown>,
  ctx: VerifyGrantContext,
  code: string,
  re: RegExp,
): Promise<void> {
  const e = await verifyGrant(record, ctx).then(
    () => assert.fail(`verified: ${JSON.stringify(record).slice(0, 200)}`),
    (e) => e,
  );
  assert.ok(e instanceof GrantProblem, String(e));
  assert.equal(e.code, code, e.message);
  assert.match(e.message, re);
  assert.ok([...e.message].length <= 200, e.message);
}

Deno.test("vector: the signed payload is CPython's json.dumps, byte for byte; the signature pinned", async () => {
  const policy = policyOf(briefWith());
  const fields = fieldsFor(policy, "worker", {
    grant_id: "G-\u00e9-1",
    issued: "2026-12-01T00:00:00+00:00",
    expires: "2026-12-08T00:00:00+00:00",
  });
  const payload = signedPayloadOf(fields);
  // The earlier tool's own encoding, from a live CPython.
  const py = new Deno.Command("python3", {
    args: [
      "-I",
      "-S",
      "-c",
      "import json,sys; r=json.loads(sys.stdin.read()); " +
      "print('agentteams-mcp-direct-grant-v1|' + json.dumps(r, sort_keys=True, " +
      "separators=(',',':'), ensure_ascii=True), end='')",
    ],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const w = py.stdin.getWriter();
  await w.write(new TextEncoder().encode(JSON.stringify(fields)));
  await w.close();
  const out = await py.output();
  assert.equal(out.code, 0);
  assert.equal(payload, new TextDecoder().decode(out.stdout));
  assert.ok(payload.startsWith('agentteams-mcp-direct-grant-v1|{"agent":"worker","approval":'));
  assert.ok(payload.includes('"grant_id":"G-\\u00e9-1"'), payload);
  assert.ok(payload.includes(`"gates":{"lint":"${gateDigest(policy.gates.lint)}"}`), payload);
  assert.ok(
    payload.includes('"tools":["write_file","delete_file","request_status"]'),
    "tools in the server's order",
  );
  assert.ok(payload.includes('"write_scopes":["docs/notes.md","src/"]'), "scopes sorted");
  // Only the 13 fields are signed: a signature (or any other member) is not.
  assert.equal(signedPayloadOf({ ...fields, signature: "x", extra: 1 }), payload);
  assert.equal(GRANT_FIELDS.length, 13);

  // The gate digest: sha256 of json.dumps(definition, sort_keys=True) (spaced separators).
  const gpy = new Deno.Command("python3", {
    args: [
      "-I",
      "-S",
      "-c",
      "import json,hashlib; print(hashlib.sha256(json.dumps(" +
      '{"glob": "src/*.ts", "argv": ["true", "{file}"]}, sort_keys=True).encode()).hexdigest(), end="")',
    ],
    stdout: "piped",
  }).outputSync();
  assert.equal(gateDigest(policy.gates.lint), new TextDecoder().decode(gpy.stdout));

  // The exact bytes, as stored beside this test.
  const stored = await Deno.readTextFile(
    new URL("./fixtures/direct_grant_payload.txt", import.meta.url),
  );
  assert.equal(payload, stored);
  // Ed25519 is deterministic: the fixed key's signature of these bytes, as OpenSSL 3 made it
  // (`openssl pkeyutl -sign -rawin`, an implementation other than WebCrypto's).
  const sig = await signHex(await importPrivatePem(PRIVATE_PEM), payload);
  const pinned =
    (await Deno.readTextFile(new URL("./fixtures/direct_grant_sig.txt", import.meta.url)))
      .trim();
  assert.equal(sig, pinned);
  assert.equal(await verifyHex(await importPublicPem(await publicPemOf()), pinned, payload), true);
});

Deno.test("verify: a signed record bound to the live brief verifies", async () => {
  const policy = policyOf(briefWith());
  const g = await verifyGrant(await signed(fieldsFor(policy, "worker")), await ctxFor(policy));
  assert.equal(g.grant_id, "G-worker");
  assert.equal(g.max_writes, 5);
  assert.deepEqual(g.write_scopes, ["docs/notes.md", "src/"]);
});

Deno.test("verify: each rule refuses with its code", async () => {
  const policy = policyOf(briefWith());
  const ctx = await ctxFor(policy);
  const good = await signed(fieldsFor(policy, "worker"));

  await t("unknown key", async () => {
    await refusedWith(
      await signed(fieldsFor(policy, "worker", { key_id: "stranger" })),
      ctx,
      "DIRECT_GRANT_INVALID",
      /can't be verified: no verify key for stranger/,
    );
  });
  await t("signed by another key", async () => {
    const other = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
      "sign",
      "verify",
    ]) as CryptoKeyPair;
    const fields = fieldsFor(policy, "worker");
    const forged = {
      ...fields,
      signature: await signHex(other.privateKey, signedPayloadOf(fields)),
    };
    await refusedWith(forged, ctx, "DIRECT_GRANT_INVALID", /signature doesn't verify/);
  });
  await t("edited after signing", async () => {
    await refusedWith({ ...good, max_writes: 500 }, ctx, "DIRECT_GRANT_INVALID", /signature/);
    await refusedWith(
      { ...good, write_scopes: ["./"] },
      ctx,
      "DIRECT_GRANT_INVALID",
      /signature doesn't verify/,
    );
  });
  await t("expired", async () => {
    await refusedWith(
      await signed(fieldsFor(policy, "worker", {
        issued: "2026-11-20T00:00:00+00:00",
        expires: "2026-12-01T12:00:00+00:00",
      })),
      ctx,
      "DIRECT_GRANT_EXPIRED",
      /expired/,
    );
  });
  await t("31 days", async () => {
    await refusedWith(
      await signed(fieldsFor(policy, "worker", { expires: "2027-01-01T00:00:01+00:00" })),
      ctx,
      "DIRECT_GRANT_INVALID",
      /longer than 30 days/,
    );
    // 30 days exactly passes.
    await verifyGrant(
      await signed(fieldsFor(policy, "worker", { expires: "2026-12-31T00:00:00+00:00" })),
      ctx,
    );
  });
  await t("issued in the future", async () => {
    await refusedWith(
      await signed(fieldsFor(policy, "worker", { issued: "2026-12-01T12:06:00+00:00" })),
      ctx,
      "DIRECT_GRANT_INVALID",
      /starts in the future/,
    );
  });
  await t("max_writes 0 and 501 (and not a whole number)", async () => {
    for (const mw of [0, 501, "5"]) {
      await refusedWith(
        await signed(fieldsFor(policy, "worker", { max_writes: mw })),
        ctx,
        "DIRECT_GRANT_INVALID",
        /max_writes must be 1-500/,
      );
    }
    // A float has no exact payload: refused before any key is asked.
    await refusedWith({ ...good, max_writes: 2.5 }, ctx, "DIRECT_GRANT_INVALID", /cannot sign/);
    for (const mw of [1, 500]) {
      await verifyGrant(await signed(fieldsFor(policy, "worker", { max_writes: mw })), ctx);
    }
  });
  await t("a gate's definition changed since signing", async () => {
    const edited = policyOf(briefWith({ proposal_gates: { lint: { ...GATE, argv: ["true"] } } }));
    await refusedWith(
      good,
      await ctxFor(edited),
      "DIRECT_GRANT_INVALID",
      /gates no longer matches/,
    );
    const added = policyOf(briefWith({ proposal_gates: { lint: GATE, more: GATE } }));
    await refusedWith(good, await ctxFor(added), "DIRECT_GRANT_INVALID", /gates no longer matches/);
  });
  await t("the brief changed: scopes, tools, approval", async () => {
    const b = briefWith();
    const scopes = policyOf({
      ...b,
      agent_policies: { ...b.agent_policies as object, worker: { write_scopes: ["src/"] } },
    });
    await refusedWith(good, await ctxFor(scopes), "DIRECT_GRANT_INVALID", /write_scopes no longer/);
    const tools = policyOf({
      ...b,
      mcp_grants: { worker: { tools: ["write_file"], approval: "direct" } },
    });
    await refusedWith(good, await ctxFor(tools), "DIRECT_GRANT_INVALID", /tools no longer/);
    const staged = policyOf({
      ...b,
      mcp_grants: { worker: { tools: ["request_status", "write_file", "delete_file"] } },
    });
    await refusedWith(good, await ctxFor(staged), "DIRECT_GRANT_INVALID", /approval "direct"/);
  });
  await t("another server build", async () => {
    const other = { ...ctx, server: { ...SERVER, server_sha256: "6".repeat(64) } };
    await refusedWith(good, other, "DIRECT_GRANT_INVALID", /server_sha256 no longer/);
    // This build's own identity is what the runner binds.
    assert.match(runnerIdentity().server_sha256, /^[0-9a-f]{64}$/);
  });
  await t("malformed fields", async () => {
    const { max_writes: _, ...missing } = good;
    await refusedWith(missing, ctx, "DIRECT_GRANT_INVALID", /missing max_writes/);
    await refusedWith(
      { ...good, key_id: "../op1" },
      ctx,
      "DIRECT_GRANT_INVALID",
      /malformed key_id/,
    );
    await refusedWith(
      await signed(fieldsFor(policy, "worker", { expires: "2026-12-08T00:00:00" })),
      ctx,
      "DIRECT_GRANT_INVALID",
      /malformed times/,
    );
  });
  // No gate and a directory scope: never direct.
  {
    const ungated = policyOf(briefWith({ proposal_gates: {} }));
    assert.match(String(expectedBinding(ungated, "worker", SERVER)), /at least one gate/);
  }
});

/** A named block (the rules above read as a list). */
async function t(_name: string, fn: () => Promise<void>): Promise<void> {
  await fn();
}

Deno.test("active grants: 4 active activate none; two for one agent activate neither", async () => {
  const policy = policyOf(briefWith());
  const ctx = await ctxFor(policy);
  const three = [
    await signed(fieldsFor(policy, "worker")),
    await signed(fieldsFor(policy, "helper")),
    await signed(fieldsFor(policy, "third")),
  ];
  const ok = await activeGrants(three, ctx);
  assert.deepEqual([...ok.byAgent.keys()].sort(), ["helper", "third", "worker"]);
  assert.deepEqual(ok.problems, []);

  const four = await activeGrants([...three, await signed(fieldsFor(policy, "fourth"))], ctx);
  assert.equal(four.byAgent.size, 0);
  assert.match(
    four.problems.join("\n"),
    /4 active direct grants exceed the cap of 3; none is used/,
  );

  const twice = await activeGrants(
    [...three, await signed(fieldsFor(policy, "worker", { grant_id: "G-again" }))],
    ctx,
  );
  assert.deepEqual([...twice.byAgent.keys()].sort(), ["helper", "third"]);
  assert.match(twice.problems.join("\n"), /more than one grant for worker/);

  // A refused record is a problem, the others stay active.
  const bad = await activeGrants([...three.slice(0, 2), { ...three[2], max_writes: 9 }], ctx);
  assert.equal(bad.byAgent.size, 2);
  assert.match(bad.problems[0], /^DIRECT_GRANT_INVALID: grant "G-third": the signature/);
});

Deno.test("selection: the agent's grant, the path in its scopes, every gate bound", async () => {
  const policy = policyOf(briefWith());
  const active = await activeGrants(
    [await signed(fieldsFor(policy, "worker"))],
    await ctxFor(policy),
  );
  const lint = policy.gates.lint;
  assert.equal(selectGrant(active, "worker", "src/a.ts", [lint])?.grant_id, "G-worker");
  assert.equal(selectGrant(active, "worker", "docs/notes.md", [])?.grant_id, "G-worker");
  assert.equal(selectGrant(active, "worker", "docs/other.md", []), null, "out of scope");
  assert.equal(selectGrant(active, "helper", "lib/a.ts", []), null, "no grant");
  const changed = { ...lint, argv: ["false"] };
  assert.equal(selectGrant(active, "worker", "src/a.ts", [changed]), null, "gate changed");
  const unknown = { ...lint, name: "other" };
  assert.equal(selectGrant(active, "worker", "src/a.ts", [unknown]), null, "gate not bound");
});

Deno.test("per write: expiry and max_writes; a direct agent's dispatch; the count", async () => {
  const policy = policyOf(briefWith());
  const g = await verifyGrant(
    await signed(fieldsFor(policy, "worker", { max_writes: 2 })),
    await ctxFor(policy),
  );
  assert.equal(writeProblem(g, 1, NOW), null);
  assert.equal(writeProblem(g, 2, NOW)?.code, "DIRECT_GRANT_SPENT");
  assert.equal(writeProblem(g, 0, new Date("2026-12-08T00:00:00Z"))?.code, "DIRECT_GRANT_EXPIRED");

  const in4h = "2026-12-01T16:00:00+00:00";
  assert.equal(directDispatchProblem({ maxUses: DIRECT_MAX_USES, expires: in4h }, NOW), null);
  assert.equal(
    directDispatchProblem({ maxUses: 10, expires: "2026-12-01T16:01:00+00:00" }, NOW),
    null,
  );
  assert.match(String(directDispatchProblem({ maxUses: 11, expires: in4h }, NOW)), /11 uses/);
  assert.match(
    String(directDispatchProblem({ maxUses: 10, expires: "2026-12-01T16:01:01+00:00" }, NOW)),
    /4 hours/,
  );
  assert.notEqual(
    directDispatchProblem({ maxUses: 25, expires: "2026-12-02T12:00:00+00:00" }, NOW),
    null,
  );

  const n = countDirectWrites([
    { action: "apply-direct", grant: "G-1" },
    { action: "apply-direct", grant: "G-1" },
    { action: "apply-direct", grant: "G-2" },
    { action: "apply-proposal", grant: "G-1" },
    { action: "apply-direct" },
  ]);
  assert.deepEqual([...n.entries()].sort(), [["G-1", 2], ["G-2", 1]]);

  const row = directGrantsLoadedRow(["G-2", "G-1"], ["f2", "f1"], [
    ..."x".repeat(12).split("").map((_, i) => `problem ${i}`),
    "y".repeat(300),
  ]);
  assert.deepEqual(row.active, ["G-1", "G-2"]);
  assert.deepEqual(row.key_fingerprints, ["f1", "f2"]);
  assert.equal(row.problems.length, 10);
  assert.ok(!("agent" in row));
});
