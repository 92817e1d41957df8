/**
 * Release signatures in minisign's format (issue 27 item 2), both ways against the real
 * `minisign` (Debian's package; scripts/test installs it): ours verify with `minisign -V`, its
 * pre-hashed and legacy ones verify with ours. Every tampered input is refused with its code and
 * verifying writes nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generatePem } from "../../lib/crypto/ed25519.ts";
import { ReleaseError } from "../../lib/errors.ts";
import { minisignPublicKeyText, verifyMinisign } from "../../lib/release/minisign.ts";
import { signRelease, verifyRelease, writeSums } from "../../lib/release/release_dir.ts";
import { parseSums } from "../../lib/release/sums.ts";
import { runCli, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { initKeys, SIGNING_KEY_FILE } from "../../lib/crypto/keys.ts";

const dec = new TextDecoder();
const TARGETS = ["x86_64-unknown-linux-gnu", "aarch64-apple-darwin"];

/** Runs the real minisign; fails loudly when it is not installed. */
async function minisign(args: string[]): Promise<{ code: number; out: string }> {
  let r: Deno.CommandOutput;
  try {
    r = await new Deno.Command("minisign", { args, stdout: "piped", stderr: "piped" }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error("minisign is not installed: apt-get install -y minisign (scripts/test does)");
    }
    throw e;
  }
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

/** A release directory of stand-in artifacts with its SHA256SUMS. */
async function release(): Promise<string> {
  const dir = await tempDir("release");
  for (const t of TARGETS) await Deno.writeTextFile(join(dir, `agentteams-${t}`), `bin ${t}\n`);
  await Deno.writeTextFile(join(dir, "agentteams-bundle.tar.gz"), "bundle\n");
  writeSums(dir);
  return dir;
}

/** A minisign key pair made by minisign itself, unencrypted (-W). */
async function minisignPair(dir: string): Promise<{ pub: string; sec: string }> {
  const pub = join(dir, "m.pub");
  const sec = join(dir, "m.key");
  const r = await minisign(["-G", "-W", "-p", pub, "-s", sec]);
  assert.equal(r.code, 0, r.out);
  return { pub, sec };
}

async function refusedWith(p: Promise<unknown>, code: string): Promise<ReleaseError> {
  return await assertRefusal(() => p, code, ReleaseError);
}

Deno.test("minisign -V verifies a release we signed (pre-hashed), and refuses it once SHA256SUMS changes", async () => {
  const dir = await release();
  try {
    const { privatePem } = await generatePem();
    const pub = join(dir, "release.pub"); // unlisted in SHA256SUMS, so not signed
    await Deno.writeTextFile(pub, await minisignPublicKeyText(privatePem));
    await signRelease(dir, privatePem, new Date(Date.UTC(2026, 11, 2)));
    const sig = await Deno.readTextFile(join(dir, "SHA256SUMS.minisig"));
    assert.match(
      sig.split("\n")[2],
      /^trusted comment: timestamp:1796169600\tfile:SHA256SUMS\thashed$/,
    );
    const ok = await minisign(["-V", "-H", "-p", pub, "-m", join(dir, "SHA256SUMS")]);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /Signature and comment signature verified/);
    await Deno.writeTextFile(join(dir, "SHA256SUMS"), `${"0".repeat(64)}  extra\n`, {
      append: true,
    });
    const bad = await minisign(["-V", "-p", pub, "-m", join(dir, "SHA256SUMS")]);
    assert.notEqual(bad.code, 0, bad.out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("we verify minisign's own signatures: pre-hashed (default) and legacy (-l)", async () => {
  const dir = await release();
  const keys = await tempDir("minisign-keys");
  try {
    const { pub, sec } = await minisignPair(keys);
    const pubText = await Deno.readTextFile(pub);
    for (const [flags, alg] of [[[], "ED"], [["-l"], "Ed"]] as const) {
      const r = await minisign([
        "-S",
        ...flags,
        "-s",
        sec,
        "-t",
        "release v0.1.0",
        "-m",
        join(dir, "SHA256SUMS"),
      ]);
      assert.equal(r.code, 0, r.out);
      const v = await verifyRelease(dir, pubText);
      assert.equal(v.algorithm, alg);
      assert.equal(v.trustedComment, "release v0.1.0");
      assert.equal(v.files.length, 3);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(keys, { recursive: true });
  }
});

Deno.test("release verify refuses every tampered input, writing nothing", async () => {
  const keys = await tempDir("minisign-keys");
  try {
    const { privatePem } = await generatePem();
    const pub = await minisignPublicKeyText(privatePem);
    const fresh = async () => {
      const dir = await release();
      await signRelease(dir, privatePem, new Date());
      return dir;
    };
    const cases: [string, string, (dir: string) => Promise<void>][] = [
      ["a tampered binary", "RELEASE_CHECKSUM_MISMATCH", async (d) => {
        await Deno.writeTextFile(join(d, `agentteams-${TARGETS[0]}`), "evil\n");
      }],
      ["a truncated download", "RELEASE_CHECKSUM_MISMATCH", async (d) => {
        await Deno.truncate(join(d, `agentteams-${TARGETS[1]}`), 3);
      }],
      ["a target missing", "RELEASE_FILE_MISSING", async (d) => {
        await Deno.remove(join(d, `agentteams-${TARGETS[0]}`));
      }],
      [
        "a tampered SHA256SUMS (the binary's sum replaced)",
        "RELEASE_SIGNATURE_INVALID",
        async (d) => {
          const sums = join(d, "SHA256SUMS");
          await Deno.writeTextFile(join(d, `agentteams-${TARGETS[0]}`), "evil\n");
          const text = await Deno.readTextFile(sums);
          const line = text.split("\n").find((l) => l.endsWith(TARGETS[0]))!;
          const evil = "8b3a3a1cfc69a33dbcf1cd1e2d6e0e0ed5b7bc43cb0e8c0a69b5dac5f60e5d3e";
          await Deno.writeTextFile(sums, text.replace(line, `${evil}  agentteams-${TARGETS[0]}`));
        },
      ],
      ["a signature by another key", "RELEASE_WRONG_KEY", async (d) => {
        const other = (await generatePem()).privatePem;
        await signRelease(d, other, new Date());
      }],
      ["an edited trusted comment", "RELEASE_SIGNATURE_INVALID", async (d) => {
        const p = join(d, "SHA256SUMS.minisig");
        const t = await Deno.readTextFile(p);
        await Deno.writeTextFile(p, t.replace(/^trusted comment: .*$/m, "trusted comment: v9"));
      }],
      ["no signature", "RELEASE_FILE_MISSING", async (d) => {
        await Deno.remove(join(d, "SHA256SUMS.minisig"));
      }],
      ["a signature that is not minisign's", "RELEASE_MALFORMED", async (d) => {
        await Deno.writeTextFile(join(d, "SHA256SUMS.minisig"), "ab".repeat(64) + "\n");
      }],
    ];
    for (const [what, code, tamper] of cases) {
      const dir = await fresh();
      try {
        await tamper(dir);
        const before = await snapshotTree(dir);
        const e = await refusedWith(verifyRelease(dir, pub), code);
        assert.ok(e.message.length > 20, `${what}: ${e.message}`);
        assertSameTree(before, await snapshotTree(dir), what);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }
  } finally {
    await Deno.remove(keys, { recursive: true });
  }
});

Deno.test("release sign refuses a SHA256SUMS that does not match the files, writing no signature", async () => {
  const dir = await release();
  try {
    await Deno.writeTextFile(join(dir, `agentteams-${TARGETS[0]}`), "changed after the sums\n");
    const before = await snapshotTree(dir);
    await refusedWith(
      signRelease(dir, (await generatePem()).privatePem, new Date()),
      "RELEASE_CHECKSUM_MISMATCH",
    );
    assertSameTree(before, await snapshotTree(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SHA256SUMS names only plain relative paths, each once", () => {
  const h = "0".repeat(64);
  for (const bad of [`${h}  ../x\n`, `${h}  /etc/passwd\n`, `${h}  a\n${h}  a\n`, "junk\n", ""]) {
    assert.throws(
      () => parseSums(bad),
      (e) => e instanceof ReleaseError && e.code === "RELEASE_MALFORMED",
    );
  }
  assert.deepEqual([...parseSums(`${h}  a\n${h} *b\n`).keys()], ["a", "b"]);
});

Deno.test("a minisign signature over other data, or with a bit flipped, does not verify", async () => {
  const keys = await tempDir("minisign-keys");
  try {
    const { pub, sec } = await minisignPair(keys);
    const file = join(keys, "data");
    await Deno.writeTextFile(file, "data\n");
    assert.equal((await minisign(["-S", "-s", sec, "-m", file])).code, 0);
    const sig = await Deno.readTextFile(`${file}.minisig`);
    const pubText = await Deno.readTextFile(pub);
    await verifyMinisign(pubText, sig, new TextEncoder().encode("data\n"));
    await refusedWith(
      verifyMinisign(pubText, sig, new TextEncoder().encode("data!\n")),
      "RELEASE_SIGNATURE_INVALID",
    );
  } finally {
    await Deno.remove(keys, { recursive: true });
  }
});

Deno.test("real process: release sign with the keys init key, release pubkey, release verify; minisign agrees", async () => {
  const dir = await release();
  const home = await tempDir("release-home");
  try {
    const env = { HOME: home, AGENTTEAMS_KEY_DIR: join(home, "keys") };
    await initKeys({ env });
    const key = join(env.AGENTTEAMS_KEY_DIR, SIGNING_KEY_FILE);
    const pub = join(home, "release.pub");
    const signed = await runCli(["release", "sign", "--key", key, dir], { env });
    assert.equal(signed.code, 0, signed.stderr);
    assert.match(signed.stdout, /signed SHA256SUMS \(3 files/);
    const made = await runCli(["release", "pubkey", "--key", key, "--out", pub], { env });
    assert.equal(made.code, 0, made.stderr);
    const ok = await runCli(["release", "verify", "--pubkey", pub, dir], { env });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^ok: SHA256SUMS is signed by key [0-9A-F]{16} \(pre-hashed/);
    const m = await minisign(["-V", "-p", pub, "-m", join(dir, "SHA256SUMS")]);
    assert.equal(m.code, 0, m.out);
    // A key file others can read is refused before anything is signed.
    await Deno.chmod(key, 0o644);
    const before = await snapshotTree(dir);
    const loose = await runCli(["release", "sign", "--key", key, dir], { env });
    assert.equal(loose.code, 1, loose.stderr);
    assert.match(loose.stderr, /refused: UNSAFE_MODE/);
    assertSameTree(before, await snapshotTree(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
});
