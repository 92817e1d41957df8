/**
 * `agentteams release sign|verify|pubkey`: minisign-format signatures over a release's
 * `SHA256SUMS` (lib/release/).
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { resolve } from "../fs/path.ts";
import { minisignPublicKeyText } from "../release/minisign.ts";
import { signRelease, verifyRelease } from "../release/release_dir.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

const dec = new TextDecoder();

function flagPath(ctx: Ctx, name: string): string {
  const v = ctx.parsed.flags[name];
  if (typeof v !== "string") {
    throw new UsageError("USAGE", `${ctx.name} needs --${name} FILE`);
  }
  return resolve(v);
}

function dirOf(ctx: Ctx): string {
  const d = ctx.parsed.positionals.DIR;
  if (typeof d !== "string") throw new UsageError("USAGE", `${ctx.name} needs the release DIR`);
  return resolve(d);
}

/** The private key's text: a regular file, no group or other permission bits. */
function readPrivateKey(path: string): string {
  return dec.decode(
    readRegularFileSync(path, {
      maxBytes: 64 * 1024,
      forbiddenModeBits: 0o077,
      what: "signing key",
    }).bytes,
  );
}

/**
 * Runs `release sign --key FILE DIR`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { releaseSign } from "./release_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams release sign --key k.pem dist/release`
 * (await releaseSign(ctx)).text; // "signed SHA256SUMS (5 files) ... dist/release/SHA256SUMS.minisig"
 * ```
 */
export async function releaseSign(ctx: Ctx): Promise<Outcome> {
  const dir = dirOf(ctx);
  const r = await signRelease(dir, readPrivateKey(flagPath(ctx, "key")), ctx.now());
  return {
    exit: 0,
    text: `signed SHA256SUMS (${r.files.length} files, each checked first): wrote ${r.signature}`,
    json: { ok: true, files: r.files, signature: r.signature },
  };
}

/**
 * Runs `release verify --pubkey FILE DIR`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { releaseVerify } from "./release_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams release verify --pubkey release.pub dist/release`
 * (await releaseVerify(ctx)).exit; // 0
 * ```
 */
export async function releaseVerify(ctx: Ctx): Promise<Outcome> {
  const dir = dirOf(ctx);
  const pub = dec.decode(
    readRegularFileSync(flagPath(ctx, "pubkey"), { maxBytes: 64 * 1024, what: "public key" })
      .bytes,
  );
  const r = await verifyRelease(dir, pub);
  return {
    exit: 0,
    text:
      `ok: SHA256SUMS is signed by key ${r.keyId} (${
        r.algorithm === "ED" ? "pre-hashed" : "legacy"
      }` +
      ` minisign signature; trusted comment: ${JSON.stringify(r.trustedComment)}), and its ` +
      `${r.files.length} files match`,
    json: {
      ok: true,
      key_id: r.keyId,
      algorithm: r.algorithm,
      trusted_comment: r.trustedComment,
      files: r.files,
    },
  };
}

/**
 * Runs `release pubkey --key FILE [--out FILE]`: the minisign public key of a PEM signing key.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { releasePubkey } from "./release_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams release pubkey --key k.pem`
 * (await releasePubkey(ctx)).text?.startsWith("untrusted comment: minisign public key"); // true
 * ```
 */
export async function releasePubkey(ctx: Ctx): Promise<Outcome> {
  const pub = await minisignPublicKeyText(readPrivateKey(flagPath(ctx, "key")));
  const out = ctx.parsed.flags.out;
  if (typeof out === "string") {
    atomicWriteFileSync(resolve(out), pub, { mode: 0o644 });
    return {
      exit: 0,
      text: `wrote the minisign public key to ${out}`,
      json: { ok: true, pubkey: pub },
    };
  }
  return { exit: 0, text: pub.trimEnd(), json: { ok: true, pubkey: pub } };
}
