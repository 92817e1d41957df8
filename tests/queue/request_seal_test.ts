/**
 * Requests sealed to the runner (issue 22, Q7's nonce half): a request as it lies in the queue
 * holds no nonce, no agent, no artifact and no kind; the runner's `openRequest` refuses, each with
 * its code, a plain request, one sealed to another key, a cut box, a box replayed under another
 * id or channel, and one whose reply key was swapped. The runner's published public key: read
 * from the key dir when it is there, else from the status folder, never through a link.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generateSealPair, publicB64, sealPairToPem } from "../../lib/crypto/x25519.ts";
import { runnerSealPair } from "../../lib/crypto/keys.ts";
import { canonicalBytes } from "../../lib/pycompat/canonical.ts";
import { sealRequestTo } from "../../lib/crypto/seal.ts";
import { pinDir } from "../../lib/fs/session_dir.ts";
import { submitRequest } from "../../lib/queue/client.ts";
import { ensureRunnerDirs } from "../../lib/queue/dirs.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { openRequest, runnerKeyTag, sealRequest } from "../../lib/queue/request_seal.ts";
import {
  PUBLISHED_KEY_NAME,
  publishRunnerKey,
  runnerPublicKey,
} from "../../lib/queue/runner_key.ts";

const ID = "0123456789abcdef0123456789abcdef";
const OTHER_ID = "fedcba9876543210fedcba9876543210";
const NONCE = "n0nce-" + "q".repeat(38);

function parse(bytes: Uint8Array): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(bytes));
}

async function refusedWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (e: Error & { code?: string }) => {
    assert.equal(e.code, code, e.message);
    return true;
  });
}

Deno.test("a request read off the disk holds no nonce, no agent, no artifact, no kind", async () => {
  const root = Deno.makeTempDirSync();
  const paths = queuePaths(root);
  ensureRunnerDirs(paths);
  const runner = await generateSealPair();
  const artifact = {
    kind: "change-proposal",
    dispatch: NONCE,
    agent: "secret-agent",
    path: "src/a.txt",
    content: "the new content",
    base_sha256: "a".repeat(64),
    rationale: "why",
  };
  const s = await submitRequest(
    root,
    { kind: "apply-proposal", artifact, dry_run: false },
    "orchestrator",
    { runnerPublic: () => Promise.resolve(runner.publicRaw), waitMs: 1000 },
  );
  const bytes = Deno.readFileSync(join(paths.requests, `${s.id}.json`));
  const text = new TextDecoder().decode(bytes);
  for (const secret of [NONCE, "secret-agent", "the new content", "apply-proposal", "src/a.txt"]) {
    assert.ok(!text.includes(secret), `the queued bytes carry ${secret}: ${text}`);
  }
  // Not base64 of it either (the box is ciphertext, not an encoding).
  assert.ok(!text.includes(btoa(NONCE).slice(0, 20)));
  assert.deepEqual(Object.keys(parse(bytes)).sort(), ["box", "eph", "reply_key", "to", "v"]);
  // The runner opens it to the very request, its waiter's reply key and deadline added.
  const opened = await openRequest(parse(bytes), { runner, id: s.id, channel: "orchestrator" });
  const o = opened as Record<string, unknown>;
  assert.deepEqual({ ...o.artifact as object }, artifact);
  assert.equal(o.kind, "apply-proposal");
  assert.equal(o.reply_key, publicB64(s.pair.publicRaw));
  assert.equal(typeof o.expires, "string");
});

Deno.test("openRequest refuses each broken request with its code, opening nothing", async () => {
  const runner = await generateSealPair();
  const other = await generateSealPair();
  const waiter = await generateSealPair();
  const request = { kind: "verify-ledger" };
  const at = { runner, id: ID, channel: "orchestrator" as const };
  const good = parse(
    await sealRequest(request, {
      waiter,
      runnerPublic: runner.publicRaw,
      id: ID,
      channel: "orchestrator",
    }),
  );
  // The good one opens (the cases below differ from it in one thing each).
  assert.equal((await openRequest(good, at) as { kind: string }).kind, "verify-ledger");

  // Plain JSON, as earlier versions wrote it.
  await refusedWith(
    openRequest({ ...request, reply_key: publicB64(waiter.publicRaw) }, at),
    "REQUEST_NOT_SEALED",
  );
  // An extra field beside the box.
  await refusedWith(openRequest({ ...good, kind: "verify-ledger" }, at), "REQUEST_NOT_SEALED");

  // Sealed to another key (a waiter that read a planted or stale key).
  const toOther = parse(
    await sealRequest(request, {
      waiter,
      runnerPublic: other.publicRaw,
      id: ID,
      channel: "orchestrator",
    }),
  );
  await refusedWith(openRequest(toOther, at), "REQUEST_WRONG_KEY");
  // ... with its `to` rewritten to this runner's: the box still does not open.
  await refusedWith(
    openRequest({ ...toOther, to: runnerKeyTag(runner.publicRaw) }, at),
    "REQUEST_SEAL_BROKEN",
  );

  // A truncated box (still base64) and one with a byte changed.
  const box = good.box as string;
  await refusedWith(
    openRequest({ ...good, box: box.slice(0, box.length - 4) }, at),
    "REQUEST_SEAL_BROKEN",
  );
  const flipped = (box[0] === "A" ? "B" : "A") + box.slice(1);
  await refusedWith(openRequest({ ...good, box: flipped }, at), "REQUEST_SEAL_BROKEN");

  // Replayed under another id, or moved to the other channel.
  await refusedWith(openRequest(good, { ...at, id: OTHER_ID }), "REQUEST_SEAL_BROKEN");
  await refusedWith(openRequest(good, { ...at, channel: "mcp" }), "REQUEST_SEAL_BROKEN");

  // Another waiter's reply key put in (to steal the result): the sender key no longer matches.
  const thief = await generateSealPair();
  await refusedWith(
    openRequest({ ...good, reply_key: publicB64(thief.publicRaw) }, at),
    "REQUEST_SEAL_BROKEN",
  );

  // A box that opens but names another reply key inside than its file's.
  const clear = {
    v: 2,
    to: runnerKeyTag(runner.publicRaw),
    reply_key: publicB64(waiter.publicRaw),
  };
  const inner = { ...request, reply_key: publicB64(thief.publicRaw) };
  const sealed = await sealRequestTo({
    waiter,
    runnerPublic: runner.publicRaw,
    context: `orchestrator:${ID}`,
    clear: canonicalBytes(clear),
    request: new TextEncoder().encode(JSON.stringify(inner)),
  });
  await refusedWith(openRequest({ ...clear, ...sealed }, at), "REQUEST_INVALID");
});

Deno.test("the runner's public key: the key dir's copy first, else the published one, never through a link", async () => {
  const root = Deno.makeTempDirSync();
  const paths = queuePaths(root);
  ensureRunnerDirs(paths);
  const status = pinDir(paths.status)!;
  const keyDir = join(root, "keys");
  Deno.mkdirSync(keyDir, { mode: 0o700 });
  const env = { AGENTTEAMS_KEY_DIR: keyDir };
  const published = join(paths.status, PUBLISHED_KEY_NAME);

  // Neither copy: NO_KEY, saying where the published one would be.
  const none = { AGENTTEAMS_KEY_DIR: join(root, "no-keys") };
  await assert.rejects(runnerPublicKey(root, none), (e: Error & { code?: string }) => {
    assert.equal(e.code, "NO_KEY");
    assert.match(e.message, /agentteams serve/);
    assert.ok(e.message.includes(published), e.message);
    return true;
  });

  const pair = await runnerSealPair(env);
  const pem = Deno.readTextFileSync(join(keyDir, PUBLISHED_KEY_NAME));
  assert.equal(await publishRunnerKey(status, pem), true);
  assert.equal(await publishRunnerKey(status, pem), false, "an unchanged key is not rewritten");
  assert.equal(Deno.statSync(published).mode! & 0o777, 0o644);

  // The key dir readable: its copy, even with another key planted in the status folder.
  const planted = (await sealPairToPem(await generateSealPair())).publicPem;
  Deno.writeTextFileSync(published, planted);
  const fromDir = await runnerPublicKey(root, env);
  assert.equal(fromDir.from, "key-dir");
  assert.deepEqual(fromDir.raw, pair.publicRaw);

  // The key dir's copy there but failing its custody check: refused, not passed over.
  Deno.chmodSync(join(keyDir, PUBLISHED_KEY_NAME), 0o666);
  await refusedWith(runnerPublicKey(root, env), "KEY_CUSTODY");
  Deno.chmodSync(join(keyDir, PUBLISHED_KEY_NAME), 0o644);

  // The key dir out of reach (as in a sandboxed session): the published copy.
  assert.equal(await publishRunnerKey(status, pem), true, "the planted key is replaced");
  const fromStatus = await runnerPublicKey(root, none);
  assert.equal(fromStatus.from, "status");
  assert.deepEqual(fromStatus.raw, pair.publicRaw);

  // A symlink or a hard link at the published name: refused, never followed.
  const elsewhere = join(root, "elsewhere.pem");
  Deno.writeTextFileSync(elsewhere, pem);
  for (const make of [Deno.symlinkSync, Deno.linkSync]) {
    Deno.removeSync(published);
    make(elsewhere, published);
    await refusedWith(runnerPublicKey(root, none), "QUEUE_UNSAFE_PATH");
  }
  // The runner's publication replaces the link; its target is left as it was.
  Deno.removeSync(published);
  Deno.symlinkSync(elsewhere, published);
  assert.equal(await publishRunnerKey(status, planted), true);
  assert.equal(Deno.lstatSync(published).isSymlink, false);
  assert.equal(Deno.readTextFileSync(elsewhere), pem, "the link's target was written");
  // A directory at the name: the runner cannot publish (it is told), the waiter refuses.
  Deno.removeSync(published);
  Deno.mkdirSync(published);
  await assert.rejects(publishRunnerKey(status, pem));
  await refusedWith(runnerPublicKey(root, none), "QUEUE_UNSAFE_PATH");
});
