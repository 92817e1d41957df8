/**
 * Key custody (lib/crypto/keys.ts), in process: where the key comes from, in which order, and
 * every refusal of an unsafe key file or key dir. Each refusal also proves nothing was written.
 * (The FIFO case and `keys init` through the CLI are in keys_cli_test.ts, as real processes.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Env } from "../../lib/env.ts";
import {
  initKeys,
  keyDir,
  LEDGER_KEY_FILE,
  ledgerKeyPath,
  loadLedgerKey,
  MAX_KEY_FILE_BYTES,
  readRunnerPublicText,
  RUNNER_SEAL_KEY_FILE,
  RUNNER_SEAL_PUB_FILE,
  runnerSealPair,
  SIGNING_KEY_FILE,
  stripAsciiWhitespace,
  VERIFY_KEY_FILE,
} from "../../lib/crypto/keys.ts";
import {
  importPrivatePem,
  importPublicPem,
  keyIdOfKey,
  signHex,
  verifyHex,
} from "../../lib/crypto/ed25519.ts";
import { generateSealPair, sealPairToPem } from "../../lib/crypto/x25519.ts";
import { KeyError } from "../../lib/errors.ts";
import { hmacHex, type Sandbox, sandbox, snapshotTree, utf8 } from "../_helpers/mod.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";

const NOBODY = 65534;

/** A sandbox whose key dir exists (0700) and holds `proposal-ledger.key` with `content`. */
async function withKeyFile(
  name: string,
  content: string | Uint8Array,
  fn: (sb: Sandbox, keyPath: string) => void | Promise<void>,
  mode = 0o600,
): Promise<void> {
  const sb = await sandbox(name);
  try {
    await Deno.mkdir(sb.keyDir, { mode: 0o700 });
    await Deno.chmod(sb.keyDir, 0o700);
    const p = join(sb.keyDir, LEDGER_KEY_FILE);
    if (typeof content === "string") await Deno.writeTextFile(p, content);
    else await Deno.writeFile(p, content);
    await Deno.chmod(p, mode);
    await fn(sb, p);
  } finally {
    await sb.dispose();
  }
}

/** Asserts loading refuses with `code` and leaves the sandbox untouched. */
async function refusesLoad(
  sb: Sandbox,
  env: Env,
  code: string,
  mode: "direct" | "runner" = "direct",
) {
  const before = await snapshotTree(sb.dir);
  const e = await assertRefusal(() => loadLedgerKey({ env, mode }), code, KeyError);
  assertSameTree(before, await snapshotTree(sb.dir));
  return e;
}

Deno.test("initKeys: 0700 key dir, 0600 key files, usable Ed25519 pair, 64-hex ledger key", async () => {
  const sb = await sandbox("keys-init");
  try {
    const r = await initKeys({ env: sb.env });
    assert.equal(r.dir, sb.keyDir);
    assert.equal((await Deno.stat(sb.keyDir)).mode! & 0o777, 0o700);
    for (const [p, mode] of [[r.ledgerKeyPath, 0o600], [r.signingKeyPath, 0o600]] as const) {
      const st = await Deno.lstat(p);
      assert.ok(st.isFile, p);
      assert.equal(st.mode! & 0o777, mode, p);
    }
    // The public key may be world-readable, never writable by others.
    assert.equal((await Deno.lstat(r.verifyKeyPath)).mode! & 0o022, 0);
    assert.equal(r.ledgerKeyPath, join(sb.keyDir, LEDGER_KEY_FILE));
    assert.equal(r.signingKeyPath, join(sb.keyDir, SIGNING_KEY_FILE));
    assert.equal(r.verifyKeyPath, join(sb.keyDir, VERIFY_KEY_FILE));
    const keyText = await Deno.readTextFile(r.ledgerKeyPath);
    assert.match(keyText, /^[0-9a-f]{64}\n$/);
    const loaded = loadLedgerKey({ env: sb.env, mode: "runner" });
    assert.equal(loaded.source, "file");
    assert.equal(new TextDecoder().decode(loaded.bytes), keyText.trim());
    const priv = await importPrivatePem(await Deno.readTextFile(r.signingKeyPath));
    const pub = await importPublicPem(await Deno.readTextFile(r.verifyKeyPath));
    assert.equal(await keyIdOfKey(pub), r.keyId);
    assert.match(r.keyId, /^[0-9a-f]{16}$/);
    const sig = await signHex(priv, "payload");
    assert.ok(await verifyHex(pub, sig, "payload"));
    assert.ok(!await verifyHex(pub, sig, "payload!"));
    // Two inits make different keys.
    const sb2 = await sandbox("keys-init2");
    try {
      const r2 = await initKeys({ env: sb2.env });
      assert.notEqual(await Deno.readTextFile(r2.ledgerKeyPath), keyText);
      assert.notEqual(r2.keyId, r.keyId);
    } finally {
      await sb2.dispose();
    }
  } finally {
    await sb.dispose();
  }
});

Deno.test("initKeys refuses to overwrite any existing key (KEY_EXISTS), bytes unchanged", async () => {
  const sb = await sandbox("keys-exists");
  try {
    await initKeys({ env: sb.env });
    const before = await snapshotTree(sb.dir);
    await assertRefusal(() => initKeys({ env: sb.env }), "KEY_EXISTS", KeyError);
    assertSameTree(before, await snapshotTree(sb.dir));
    // Only one of the three files present: still refused, and the other two are not created.
    for (const only of [LEDGER_KEY_FILE, SIGNING_KEY_FILE, VERIFY_KEY_FILE]) {
      for (const f of [LEDGER_KEY_FILE, SIGNING_KEY_FILE, VERIFY_KEY_FILE]) {
        if (f !== only) await Deno.remove(join(sb.keyDir, f)).catch(() => {});
      }
      await Deno.writeTextFile(join(sb.keyDir, only), "keep me\n", { mode: 0o600 });
      const snap = await snapshotTree(sb.dir);
      await assertRefusal(() => initKeys({ env: sb.env }), "KEY_EXISTS", KeyError);
      assertSameTree(snap, await snapshotTree(sb.dir), `with only ${only}`);
    }
    // A dangling symlink at a key path counts as existing too.
    for (const f of [LEDGER_KEY_FILE, SIGNING_KEY_FILE, VERIFY_KEY_FILE]) {
      await Deno.remove(join(sb.keyDir, f)).catch(() => {});
    }
    await Deno.symlink(join(sb.dir, "nowhere"), join(sb.keyDir, SIGNING_KEY_FILE));
    const snap = await snapshotTree(sb.dir);
    await assertRefusal(() => initKeys({ env: sb.env }), "KEY_EXISTS", KeyError);
    assertSameTree(snap, await snapshotTree(sb.dir), "dangling symlink");
  } finally {
    await sb.dispose();
  }
});

Deno.test("initKeys: a key file swapped for another before its mode is set: KEY_CUSTODY, the newcomer never chmod-ed, no other key written", async () => {
  const sb = await sandbox("keys-swapped");
  // The swap is staged at the new file's fstat, which also reports a narrowed mode (as a umask
  // would), so the mode is set by name after checking the name still leads to the file.
  const proto = Deno.FsFile.prototype as unknown as {
    statSync: (this: Deno.FsFile) => Deno.FileInfo;
  };
  const real = proto.statSync;
  try {
    const ledgerPath = join(sb.keyDir, LEDGER_KEY_FILE);
    proto.statSync = function (this: Deno.FsFile) {
      proto.statSync = real;
      const st = real.call(this);
      Deno.removeSync(ledgerPath);
      Deno.writeTextFileSync(ledgerPath, "theirs\n", { mode: 0o640 });
      Deno.chmodSync(ledgerPath, 0o640);
      return { ...st, mode: 0 };
    };
    await assertRefusal(() => initKeys({ env: sb.env }), "KEY_CUSTODY", KeyError);
    assert.equal(Deno.readTextFileSync(ledgerPath), "theirs\n");
    assert.equal((Deno.statSync(ledgerPath).mode ?? 0) & 0o7777, 0o640);
    assert.deepEqual([...Deno.readDirSync(sb.keyDir)].map((e) => e.name), [LEDGER_KEY_FILE]);
  } finally {
    proto.statSync = real;
    await sb.dispose();
  }
});

Deno.test("initKeys refuses an unsafe existing key dir (group bits, symlink, other owner)", async () => {
  const sb = await sandbox("keys-init-unsafe");
  try {
    await Deno.mkdir(sb.keyDir);
    await Deno.chmod(sb.keyDir, 0o750);
    let before = await snapshotTree(sb.dir);
    await assertRefusal(() => initKeys({ env: sb.env }), "KEY_CUSTODY", KeyError);
    assertSameTree(before, await snapshotTree(sb.dir));

    await Deno.remove(sb.keyDir);
    const real = join(sb.dir, "real-keys");
    await Deno.mkdir(real, { mode: 0o700 });
    await Deno.symlink(real, sb.keyDir);
    before = await snapshotTree(sb.dir);
    await assertRefusal(() => initKeys({ env: sb.env }), "KEY_CUSTODY", KeyError);
    assertSameTree(before, await snapshotTree(sb.dir));

    await Deno.remove(sb.keyDir);
    await Deno.mkdir(sb.keyDir, { mode: 0o700 });
    await Deno.chown(sb.keyDir, NOBODY, NOBODY);
    before = await snapshotTree(sb.dir);
    await assertRefusal(() => initKeys({ env: sb.env }), "KEY_CUSTODY", KeyError);
    assertSameTree(before, await snapshotTree(sb.dir));
  } finally {
    await sb.dispose();
  }
});

Deno.test("key dir: AGENTTEAMS_KEY_DIR, else ~/.config/agentteams/keys; relative refused", async () => {
  assert.equal(keyDir({ HOME: "/home/op" }), "/home/op/.config/agentteams/keys");
  assert.equal(keyDir({ HOME: "/home/op", AGENTTEAMS_KEY_DIR: "/k/" }), "/k");
  assert.equal(
    keyDir({ HOME: "/home/op", AGENTTEAMS_KEY_DIR: "" }),
    "/home/op/.config/agentteams/keys",
  );
  assert.equal(ledgerKeyPath({ AGENTTEAMS_KEY_DIR: "/k" }), "/k/proposal-ledger.key");
  await assertRefusal(() => keyDir({ AGENTTEAMS_KEY_DIR: "rel/keys" }), "KEY_CUSTODY", KeyError);
  await assertRefusal(() => keyDir({}), "NO_KEY", KeyError);
  await assertRefusal(() => keyDir({ HOME: "relative" }), "NO_KEY", KeyError);
  // The default location works end to end.
  const sb = await sandbox("keys-home");
  try {
    const env = { HOME: sb.home };
    const r = await initKeys({ env });
    assert.equal(r.dir, join(sb.home, ".config", "agentteams", "keys"));
    assert.equal((await Deno.stat(r.dir)).mode! & 0o777, 0o700);
    assert.equal(loadLedgerKey({ env, mode: "runner" }).path, r.ledgerKeyPath);
  } finally {
    await sb.dispose();
  }
});

Deno.test("loadLedgerKey: NO_KEY when there is no file and no variable", async () => {
  const sb = await sandbox("keys-none");
  try {
    await refusesLoad(sb, sb.env, "NO_KEY");
    await refusesLoad(sb, sb.env, "NO_KEY", "runner");
    await refusesLoad(sb, { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: "" }, "NO_KEY");
    await Deno.mkdir(sb.keyDir, { mode: 0o700 });
    await refusesLoad(sb, sb.env, "NO_KEY");
  } finally {
    await sb.dispose();
  }
});

Deno.test("loadLedgerKey: direct-mode env fallback order, unstripped", async () => {
  const sb = await sandbox("keys-env");
  try {
    const both = {
      ...sb.env,
      AGENTTEAMS_PROPOSAL_LEDGER_KEY: "ledger-key",
      AGENTTEAMS_DECISION_SIGNING_KEY: "decision-key",
    };
    const a = loadLedgerKey({ env: both, mode: "direct" });
    assert.equal(a.source, "env");
    assert.equal(a.envName, "AGENTTEAMS_PROPOSAL_LEDGER_KEY");
    assert.equal(a.path, null);
    assert.equal(a.hmac.hex("m"), hmacHex("ledger-key", "m"));

    const b = loadLedgerKey({
      env: { ...sb.env, AGENTTEAMS_DECISION_SIGNING_KEY: "decision-key" },
      mode: "direct",
    });
    assert.equal(b.envName, "AGENTTEAMS_DECISION_SIGNING_KEY");
    assert.equal(b.hmac.hex("m"), hmacHex("decision-key", "m"));

    // An empty first variable falls through to the second.
    const c = loadLedgerKey({
      env: { ...both, AGENTTEAMS_PROPOSAL_LEDGER_KEY: "" },
      mode: "direct",
    });
    assert.equal(c.envName, "AGENTTEAMS_DECISION_SIGNING_KEY");

    // Environment keys are used as given (the earlier tool did not strip them).
    const d = loadLedgerKey({
      env: { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: " k\n" },
      mode: "direct",
    });
    assert.deepEqual(d.bytes, utf8(" k\n"));
    // Nothing was created on the way.
    assert.equal(await Deno.lstat(sb.keyDir).catch(() => null), null);
  } finally {
    await sb.dispose();
  }
});

Deno.test("loadLedgerKey: a key file, once present, wins and the environment is ignored", async () => {
  await withKeyFile("keys-file-wins", "file-key\n", async (sb, p) => {
    const env = {
      ...sb.env,
      AGENTTEAMS_PROPOSAL_LEDGER_KEY: "env-key",
      AGENTTEAMS_DECISION_SIGNING_KEY: "other-env-key",
    };
    const k = loadLedgerKey({ env, mode: "direct" });
    assert.equal(k.source, "file");
    assert.equal(k.path, p);
    assert.equal(k.envName, null);
    assert.equal(k.hmac.hex("m"), hmacHex("file-key", "m"));
    // Even a broken key file is not bypassed by the environment: the refusal stands.
    await Deno.chmod(p, 0o644);
    await refusesLoad(sb, env, "KEY_CUSTODY");
    await Deno.writeTextFile(p, "   \n");
    await Deno.chmod(p, 0o600);
    await refusesLoad(sb, env, "KEY_EMPTY");
  });
});

Deno.test("loadLedgerKey: runner mode refuses every key variable and needs the file", async () => {
  await withKeyFile("keys-runner", "runner-key\n", async (sb) => {
    for (
      const name of [
        "AGENTTEAMS_PROPOSAL_LEDGER_KEY",
        "AGENTTEAMS_DECISION_SIGNING_KEY",
        "AGENTTEAMS_WAIVER_SIGNING_KEY",
        "AGENTTEAMS_GRANT_SIGNING_KEY",
      ]
    ) {
      const e = await refusesLoad(sb, { ...sb.env, [name]: "x" }, "KEY_ENV_IN_RUNNER", "runner");
      assert.match(e.message, new RegExp(name));
      // Set but empty is still set.
      await refusesLoad(sb, { ...sb.env, [name]: "" }, "KEY_ENV_IN_RUNNER", "runner");
    }
    const k = loadLedgerKey({ env: sb.env, mode: "runner" });
    assert.equal(k.source, "file");
    assert.equal(k.hmac.hex("m"), hmacHex("runner-key", "m"));
  });
  const sb = await sandbox("keys-runner-nofile");
  try {
    await refusesLoad(sb, sb.env, "NO_KEY", "runner");
  } finally {
    await sb.dispose();
  }
});

Deno.test("AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE: inside the key dir only", async () => {
  await withKeyFile("keys-named", "named\n", async (sb) => {
    const inside = join(sb.keyDir, "custom.key");
    await Deno.writeTextFile(inside, "custom\n", { mode: 0o600 });
    await Deno.chmod(inside, 0o600);
    for (const named of ["custom.key", inside, join(sb.keyDir, "sub", "..", "custom.key")]) {
      const k = loadLedgerKey({
        env: { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE: named },
        mode: "direct",
      });
      assert.equal(k.path, inside, named);
      assert.equal(k.hmac.hex("m"), hmacHex("custom", "m"));
    }
    // Outside: absolute elsewhere, a sibling sharing the prefix, `..` escapes, the dir itself.
    const evil = sb.keyDir + "-evil";
    await Deno.mkdir(evil, { mode: 0o700 });
    await Deno.writeTextFile(join(evil, "k"), "evil\n", { mode: 0o600 });
    await Deno.writeTextFile(join(sb.dir, "outside.key"), "outside\n", { mode: 0o600 });
    for (
      const named of [
        join(sb.dir, "outside.key"),
        "../outside.key",
        join(evil, "k"),
        "../keys-evil/k",
        "sub/../../outside.key",
        sb.keyDir,
        ".",
        "/etc/hostname",
      ]
    ) {
      await refusesLoad(
        sb,
        { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE: named },
        "KEY_OUTSIDE_KEY_DIR",
      );
    }
    // Named but missing: refused, with no fallback to the environment.
    await refusesLoad(
      sb,
      {
        ...sb.env,
        AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE: "missing.key",
        AGENTTEAMS_PROPOSAL_LEDGER_KEY: "env",
      },
      "NO_KEY",
    );
    // A subdirectory of the key dir is held to the same custody rules.
    const sub = join(sb.keyDir, "sub");
    await Deno.mkdir(sub, { mode: 0o700 });
    await Deno.writeTextFile(join(sub, "k"), "sub\n", { mode: 0o600 });
    const env = { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE: "sub/k" };
    assert.equal(loadLedgerKey({ env, mode: "direct" }).hmac.hex("m"), hmacHex("sub", "m"));
    await Deno.chmod(sub, 0o755);
    await refusesLoad(sb, env, "KEY_CUSTODY");
    await Deno.chmod(sub, 0o700);
    // ... and a symlinked subdirectory is refused even though its target is a fine 0700 dir.
    const elsewhere = join(sb.dir, "elsewhere");
    await Deno.mkdir(elsewhere, { mode: 0o700 });
    await Deno.writeTextFile(join(elsewhere, "k"), "elsewhere\n", { mode: 0o600 });
    await Deno.symlink(elsewhere, join(sb.keyDir, "link"));
    await refusesLoad(
      sb,
      { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY_FILE: "link/k" },
      "KEY_CUSTODY",
    );
  });
});

Deno.test("key file custody: group/other mode bits refused, 0400 accepted", async () => {
  for (const mode of [0o640, 0o604, 0o660, 0o644, 0o620, 0o602, 0o610, 0o601, 0o777]) {
    await withKeyFile("keys-mode", "k\n", async (sb) => {
      const e = await refusesLoad(sb, sb.env, "KEY_CUSTODY");
      assert.match(e.message, /mode/);
    }, mode);
  }
  for (const mode of [0o600, 0o400, 0o700]) {
    await withKeyFile("keys-mode-ok", "k\n", (sb) => {
      assert.equal(loadLedgerKey({ env: sb.env, mode: "direct" }).hmac.hex("m"), hmacHex("k", "m"));
    }, mode);
  }
});

Deno.test("key file custody: symlink, dangling symlink, directory, other owner", async () => {
  await withKeyFile("keys-symlink", "k\n", async (sb, p) => {
    // A symlink to a perfectly good 0600 file inside the key dir is still refused.
    const real = join(sb.keyDir, "real.key");
    await Deno.rename(p, real);
    await Deno.symlink(real, p);
    const e = await refusesLoad(
      sb,
      { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: "env" },
      "KEY_CUSTODY",
    );
    assert.match(e.message, /symlink/);
    // A dangling symlink is refused, not treated as absent (no env fallback).
    await Deno.remove(p);
    await Deno.symlink(join(sb.dir, "nothing"), p);
    await refusesLoad(sb, { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: "env" }, "KEY_CUSTODY");
    // A directory in its place.
    await Deno.remove(p);
    await Deno.mkdir(p, { mode: 0o700 });
    await refusesLoad(sb, sb.env, "KEY_CUSTODY");
  });
  await withKeyFile("keys-owner", "k\n", async (sb, p) => {
    await Deno.chown(p, NOBODY, NOBODY);
    const e = await refusesLoad(sb, sb.env, "KEY_CUSTODY");
    assert.match(e.message, /owned by uid 65534/);
  });
});

Deno.test("key dir custody: group or other bits, symlink, other owner", async () => {
  for (const mode of [0o750, 0o710, 0o701, 0o705, 0o755, 0o770]) {
    await withKeyFile("keys-dirmode", "k\n", async (sb) => {
      await Deno.chmod(sb.keyDir, mode);
      const e = await refusesLoad(sb, sb.env, "KEY_CUSTODY");
      assert.match(e.message, /key dir/);
    });
  }
  await withKeyFile("keys-dirlink", "k\n", async (sb) => {
    const moved = join(sb.dir, "moved-keys");
    await Deno.rename(sb.keyDir, moved);
    await Deno.symlink(moved, sb.keyDir);
    await refusesLoad(sb, sb.env, "KEY_CUSTODY");
  });
  await withKeyFile("keys-dirowner", "k\n", async (sb) => {
    await Deno.chown(sb.keyDir, NOBODY, NOBODY);
    await refusesLoad(sb, sb.env, "KEY_CUSTODY");
  });
});

Deno.test("key file content: empty and whitespace-only refused (KEY_EMPTY)", async () => {
  for (const content of ["", "\n", " ", " \t\r\n\v\f ", "\n\n\n"]) {
    await withKeyFile("keys-empty", content, async (sb) => {
      await refusesLoad(sb, { ...sb.env, AGENTTEAMS_PROPOSAL_LEDGER_KEY: "env" }, "KEY_EMPTY");
    });
  }
});

Deno.test("key file size: 64 KiB accepted, one byte more refused (KEY_TOO_LARGE)", async () => {
  await withKeyFile("keys-max", new Uint8Array(MAX_KEY_FILE_BYTES).fill(0x6b), (sb) => {
    const k = loadLedgerKey({ env: sb.env, mode: "direct" });
    assert.equal(k.bytes.length, MAX_KEY_FILE_BYTES);
  });
  await withKeyFile("keys-big", new Uint8Array(MAX_KEY_FILE_BYTES + 1).fill(0x6b), async (sb) => {
    await refusesLoad(sb, sb.env, "KEY_TOO_LARGE");
  });
});

Deno.test('key bytes: surrounding ASCII whitespace stripped; file "k\\n" = env "k"', async () => {
  const envKey = loadLedgerKey({
    env: { HOME: "/nonexistent", AGENTTEAMS_PROPOSAL_LEDGER_KEY: "k" },
    mode: "direct",
  });
  for (const content of ["k\n", "k", " k ", "\t\r\nk\n\v\f", "k\r\n"]) {
    await withKeyFile("keys-strip", content, (sb) => {
      const fileKey = loadLedgerKey({ env: sb.env, mode: "direct" });
      assert.deepEqual(fileKey.bytes, utf8("k"), JSON.stringify(content));
      assert.equal(fileKey.hmac.hex("row"), envKey.hmac.hex("row"));
    });
  }
  // Inner whitespace and non-ASCII spaces are part of the key (Python's bytes.strip()).
  await withKeyFile("keys-inner", "a b\u00a0\n", (sb) => {
    assert.deepEqual(loadLedgerKey({ env: sb.env, mode: "direct" }).bytes, utf8("a b\u00a0"));
  });
  assert.deepEqual(stripAsciiWhitespace(utf8(" \t a \n")), utf8("a"));
  assert.deepEqual(stripAsciiWhitespace(utf8("   ")), new Uint8Array(0));
  assert.deepEqual(stripAsciiWhitespace(utf8("\u00a0a")), utf8("\u00a0a"));
});

Deno.test("runnerSealPair: half a pair (KEY_CUSTODY), halves of two pairs (KEY_MALFORMED), a public key others may write (KEY_CUSTODY); nothing written", async () => {
  const sb = await sandbox("keys-seal-pair");
  try {
    await Deno.mkdir(sb.keyDir, { mode: 0o700 });
    await Deno.chmod(sb.keyDir, 0o700);
    const priv = join(sb.keyDir, RUNNER_SEAL_KEY_FILE);
    const pub = join(sb.keyDir, RUNNER_SEAL_PUB_FILE);
    const pems = await sealPairToPem(await generateSealPair());
    const refuses = async (what: string, code: string) => {
      const before = await snapshotTree(sb.dir);
      await assertRefusal(() => runnerSealPair(sb.env), code, KeyError, what);
      assertSameTree(before, await snapshotTree(sb.dir), `after ${what}`);
    };
    // One half without the other: refused, and the missing half is not made anew.
    await Deno.writeTextFile(priv, pems.privatePem, { mode: 0o600 });
    await refuses("the private half alone", "KEY_CUSTODY");
    await Deno.remove(priv);
    await Deno.writeTextFile(pub, pems.publicPem, { mode: 0o644 });
    await refuses("the public half alone", "KEY_CUSTODY");
    // The private half of this pair beside the public half of another.
    const other = await sealPairToPem(await generateSealPair());
    await Deno.writeTextFile(priv, other.privatePem, { mode: 0o600 });
    await refuses("halves of two pairs", "KEY_MALFORMED");
    // The right pair, but a public key file others may write: neither runner nor waiter reads it.
    await Deno.writeTextFile(priv, pems.privatePem);
    await Deno.chmod(pub, 0o666);
    await refuses("a public key file 0666", "KEY_CUSTODY");
    const before = await snapshotTree(sb.dir);
    assertRefusal(() => readRunnerPublicText(sb.env), "KEY_CUSTODY", KeyError);
    assertSameTree(before, await snapshotTree(sb.dir), "after the waiter's read");
    // The controls: mended, the pair loads and is the one written.
    await Deno.chmod(pub, 0o644);
    assert.equal(readRunnerPublicText(sb.env), pems.publicPem);
    assert.equal((await runnerSealPair(sb.env)).publicRaw.length, 32);
  } finally {
    await sb.dispose();
  }
});
