/**
 * Writing, signing and verifying a release directory (the I/O around ./sums.ts and
 * ./minisign.ts): `writeSums` lists its files, `signRelease` checks the list against the files
 * and then signs it, `verifyRelease` checks the signature and then every file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signRelease, verifyRelease, writeSums } from "./release_dir.ts";
 * import { minisignPublicKeyText } from "./minisign.ts";
 * import { generatePem } from "../crypto/ed25519.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/agentteams-x86_64-unknown-linux-gnu`, "binary");
 * writeSums(dir);
 * const { privatePem } = await generatePem();
 * await signRelease(dir, privatePem, new Date(0));
 * assert.equal((await verifyRelease(dir, await minisignPublicKeyText(privatePem))).files.length, 1);
 * ```
 * @module
 */
import { ReleaseError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { join } from "../fs/path.ts";
import { signMinisign, verifyMinisign } from "./minisign.ts";
import {
  checkSums,
  fileSha256,
  parseSums,
  releaseFiles,
  SIG_FILE,
  SUMS_FILE,
  sumsText,
} from "./sums.ts";

const dec = new TextDecoder("utf-8", { fatal: true });

function readSmall(dir: string, name: string, what: string): Uint8Array {
  try {
    return readRegularFileSync(join(dir, name), { maxBytes: 1024 * 1024, what }).bytes;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new ReleaseError("RELEASE_FILE_MISSING", `${dir} has no ${name}`);
    }
    throw e;
  }
}

function text(bytes: Uint8Array, what: string): string {
  try {
    return dec.decode(bytes);
  } catch {
    throw new ReleaseError("RELEASE_MALFORMED", `${what} is not UTF-8 text`);
  }
}

/**
 * Writes `SHA256SUMS` in `dir` over every other file there (atomically); returns the names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeSums } from "./release_dir.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a`, "abc");
 * assert.deepEqual(writeSums(dir), ["a"]);
 * ```
 */
export function writeSums(dir: string): string[] {
  const names = releaseFiles(dir);
  const sums = new Map(names.map((n) => [n, fileSha256(dir, n)]));
  atomicWriteFileSync(join(dir, SUMS_FILE), sumsText(sums), { mode: 0o644 });
  return names;
}

/**
 * Signs `dir`'s `SHA256SUMS` with a PKCS#8 PEM Ed25519 key, writing `SHA256SUMS.minisig`
 * (pre-hashed minisign format; trusted comment `timestamp:<unix>\tfile:SHA256SUMS\thashed`, as
 * minisign writes it). The list is checked against the files first: a list that does not match
 * is never signed.
 *
 * @throws {ReleaseError} as {@link checkSums}, and `RELEASE_FILE_MISSING` without `SHA256SUMS`.
 * @example
 * ```ts ignore
 * // Not run: it needs dir, which it declares rather than makes.
 * import { signRelease } from "./release_dir.ts";
 * declare const dir: string, privatePem: string;
 * (await signRelease(dir, privatePem, new Date())).files; // ["agentteams-...", ...]
 * ```
 */
export async function signRelease(
  dir: string,
  privatePem: string,
  now: Date,
): Promise<{ files: string[]; signature: string }> {
  const sumsBytes = readSmall(dir, SUMS_FILE, "checksum list");
  const files = checkSums(dir, parseSums(text(sumsBytes, SUMS_FILE)));
  const comment = `timestamp:${Math.floor(now.getTime() / 1000)}\tfile:${SUMS_FILE}\thashed`;
  const sig = await signMinisign(privatePem, sumsBytes, comment);
  const path = join(dir, SIG_FILE);
  atomicWriteFileSync(path, sig, { mode: 0o644 });
  return { files, signature: path };
}

/** What {@link verifyRelease} found. */
export interface VerifiedRelease {
  /** The files listed and checked. */
  files: string[];
  /** The signing key's id, as minisign prints it. */
  keyId: string;
  /** `ED` (pre-hashed) or `Ed` (legacy). */
  algorithm: "ED" | "Ed";
  /** The signed trusted comment. */
  trustedComment: string;
}

/**
 * Verifies `dir`: `SHA256SUMS.minisig` over `SHA256SUMS` under the minisign public key, then
 * every file the list names against its SHA-256. Nothing is written.
 *
 * @throws {ReleaseError} `RELEASE_FILE_MISSING`, `RELEASE_MALFORMED`, `RELEASE_WRONG_KEY`,
 *   `RELEASE_SIGNATURE_INVALID`, `RELEASE_CHECKSUM_MISMATCH`.
 * @example
 * ```ts ignore
 * // Not run: it needs dir, which it declares rather than makes.
 * import { verifyRelease } from "./release_dir.ts";
 * declare const dir: string, publicKeyText: string;
 * (await verifyRelease(dir, publicKeyText)).algorithm; // "ED"
 * ```
 */
export async function verifyRelease(dir: string, publicKeyText: string): Promise<VerifiedRelease> {
  const sig = text(readSmall(dir, SIG_FILE, "signature"), SIG_FILE);
  const sumsBytes = readSmall(dir, SUMS_FILE, "checksum list");
  const v = await verifyMinisign(publicKeyText, sig, sumsBytes);
  const files = checkSums(dir, parseSums(text(sumsBytes, SUMS_FILE)));
  return { files, keyId: v.keyId, algorithm: v.algorithm, trustedComment: v.trustedComment };
}
