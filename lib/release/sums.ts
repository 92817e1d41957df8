/**
 * A release directory: its artifacts, `SHA256SUMS` over them (the `sha256sum` format: 64 hex, two
 * spaces, the file's path relative to the directory) and `SHA256SUMS.minisig`, minisign's
 * signature over that file (./minisign.ts). Signing covers the list, the list covers each file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSums, sumsText } from "./sums.ts";
 * const text = sumsText(new Map([["agentteams-x86_64-unknown-linux-gnu", "ab".repeat(32)]]));
 * assert.equal(parseSums(text).get("agentteams-x86_64-unknown-linux-gnu"), "ab".repeat(32));
 * ```
 * @module
 */
import { createHash } from "node:crypto";
import { ReleaseError } from "../errors.ts";
import { isPlainRel } from "../fs/rel_path.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { join } from "../fs/path.ts";

/** The checksum list's file name. */
export const SUMS_FILE = "SHA256SUMS";
/** Its signature's file name (minisign's default: the file's name and `.minisig`). */
export const SIG_FILE = "SHA256SUMS.minisig";
/** The largest artifact read (a compiled binary is ~100 MB). */
export const MAX_ARTIFACT_BYTES = 1024 * 1024 * 1024;

const LINE = /^([0-9a-f]{64}) [ *](.+)$/;

/**
 * Parses a `SHA256SUMS` text: one `HEX  NAME` line per file (a `*` for the second space, as
 * `sha256sum -b` writes, is accepted), names plain relative paths, each once.
 *
 * @throws {ReleaseError} `RELEASE_MALFORMED` naming the first bad line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSums } from "./sums.ts";
 * assert.equal(parseSums(`${"0".repeat(64)}  a\n`).size, 1);
 * ```
 */
export function parseSums(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  lines.forEach((line, i) => {
    const m = LINE.exec(line);
    const where = `${SUMS_FILE} line ${i + 1} (${JSON.stringify(line.slice(0, 80))})`;
    if (m === null) {
      throw new ReleaseError("RELEASE_MALFORMED", `${where} is not "SHA256  NAME"`);
    }
    if (!isPlainRel(m[2]) || m[2] === SUMS_FILE || m[2] === SIG_FILE) {
      throw new ReleaseError(
        "RELEASE_MALFORMED",
        `${where} names a path that is not a plain relative path inside the release`,
      );
    }
    if (out.has(m[2])) {
      throw new ReleaseError("RELEASE_MALFORMED", `${where} lists ${m[2]} a second time`);
    }
    out.set(m[2], m[1]);
  });
  if (out.size === 0) throw new ReleaseError("RELEASE_MALFORMED", `${SUMS_FILE} lists no file`);
  return out;
}

/**
 * The `SHA256SUMS` text for name → SHA-256 hex, sorted by name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sumsText } from "./sums.ts";
 * assert.equal(sumsText(new Map([["b", "1".repeat(64)], ["a", "0".repeat(64)]])).startsWith("0000"), true);
 * ```
 */
export function sumsText(sums: ReadonlyMap<string, string>): string {
  return [...sums].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([n, h]) => `${h}  ${n}\n`)
    .join("");
}

/**
 * The SHA-256 hex of a release file (a regular file, not a link), or a `RELEASE_FILE_MISSING`
 * refusal naming it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileSha256 } from "./sums.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a`, "abc");
 * assert.equal(fileSha256(dir, "a"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
 * ```
 */
export function fileSha256(dir: string, name: string): string {
  let bytes: Uint8Array;
  try {
    bytes = readRegularFileSync(join(dir, name), {
      maxBytes: MAX_ARTIFACT_BYTES,
      what: "release file",
    }).bytes;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new ReleaseError(
        "RELEASE_FILE_MISSING",
        `${name} is listed in ${SUMS_FILE} but is not in ${dir} (an incomplete download?)`,
      );
    }
    throw e;
  }
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Checks every file `sums` lists against its SHA-256 in `dir`.
 *
 * @throws {ReleaseError} `RELEASE_FILE_MISSING` for a listed file that is absent;
 *   `RELEASE_CHECKSUM_MISMATCH` for one whose bytes are not those listed (changed, truncated).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkSums, sumsText } from "./sums.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a`, "abc");
 * assert.deepEqual(
 *   checkSums(dir, new Map([["a", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"]])),
 *   ["a"],
 * );
 * ```
 */
export function checkSums(dir: string, sums: ReadonlyMap<string, string>): string[] {
  const checked: string[] = [];
  for (const [name, want] of sums) {
    const got = fileSha256(dir, name);
    if (got !== want) {
      throw new ReleaseError(
        "RELEASE_CHECKSUM_MISMATCH",
        `${name} has SHA-256 ${got}, not the ${want} ${SUMS_FILE} lists: it was changed or ` +
          "truncated; download it again",
      );
    }
    checked.push(name);
  }
  return checked;
}

/**
 * The release files of a directory to list in `SHA256SUMS`: every regular file at its top,
 * sorted, except the list and its signature (a link or a folder is refused: a release is flat).
 *
 * @throws {ReleaseError} `RELEASE_MALFORMED` for an entry that is not a regular file, or no file.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { releaseFiles } from "./sums.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/b`, "");
 * Deno.writeTextFileSync(`${dir}/SHA256SUMS`, "");
 * assert.deepEqual(releaseFiles(dir), ["b"]);
 * ```
 */
export function releaseFiles(dir: string): string[] {
  const names: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (e.name === SUMS_FILE || e.name === SIG_FILE) continue;
    if (!e.isFile) {
      throw new ReleaseError(
        "RELEASE_MALFORMED",
        `${join(dir, e.name)} is not a regular file; a release directory holds only its files`,
      );
    }
    names.push(e.name);
  }
  if (names.length === 0) throw new ReleaseError("RELEASE_MALFORMED", `${dir} holds no file`);
  return names.sort();
}
