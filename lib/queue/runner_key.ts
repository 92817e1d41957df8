/**
 * The runner's public key where a session can read it. The key dir's copy
 * (`runner-x25519.pub.pem`, lib/crypto/keys.ts) is the operator's; inside a sandboxed agent
 * session it cannot be read, since the session settings deny reading the key dir
 * (`Read(~/.config/agentteams/keys/**)`, which Claude Code's sandbox applies to Bash too). So the
 * runner publishes the same public key at start, and again at every beat when it finds it changed,
 * into `.agentteams-status/` (which the settings deny editing), written whole and renamed over its
 * name (never through a link). A waiter takes the key dir's copy when it can read it, else the
 * published one, read without following anything (a link, hard link, FIFO or directory at its
 * name refuses it). What a session that renames the status folder away and back can do with a
 * planted key is in docs/runner.md "The runner's public key".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { publishRunnerKey, runnerPublicKey } from "./runner_key.ts";
 * import { pinDir } from "../fs/session_dir.ts";
 * import { generateSealPair, sealPairToPem } from "../crypto/x25519.ts";
 * import { queuePaths } from "./queue_paths.ts";
 * const root = Deno.makeTempDirSync();
 * Deno.mkdirSync(queuePaths(root).status);
 * const pair = await generateSealPair();
 * await publishRunnerKey(pinDir(queuePaths(root).status)!, (await sealPairToPem(pair)).publicPem);
 * const env = { AGENTTEAMS_KEY_DIR: root + "/no-such-key-dir" };
 * assert.deepEqual((await runnerPublicKey(root, env)).raw, pair.publicRaw);
 * ```
 * @module
 */
import { readRunnerPublicText, RUNNER_SEAL_PUB_FILE } from "../crypto/keys.ts";
import { sealPublicFromPem } from "../crypto/x25519.ts";
import type { Env } from "../env.ts";
import { FsSafetyError, KeyError, QueueError } from "../errors.ts";
import { type DirPin, pinDir, readNameWithin, replaceIn } from "../fs/session_dir.ts";
import { queuePaths } from "./queue_paths.ts";

/** The published key's name in the status folder (the key dir's file's own name). */
export const PUBLISHED_KEY_NAME = RUNNER_SEAL_PUB_FILE;
/** Largest published key read. */
const MAX_KEY_BYTES = 4096;

/**
 * Whether the published key in the pinned status folder is not `publicPem` (absent, another
 * key, or anything but a plain file at its name). Never follows anything there.
 */
async function publishedDiffers(status: DirPin, publicPem: string): Promise<boolean> {
  try {
    const bytes = await readNameWithin(status, PUBLISHED_KEY_NAME, MAX_KEY_BYTES);
    return bytes === null || new TextDecoder().decode(bytes) !== publicPem;
  } catch (e) {
    if (e instanceof FsSafetyError) return true;
    throw e;
  }
}

/**
 * Publishes the runner's public key into the pinned status folder when what is there is not it
 * (0644, written whole and renamed over the name: a link or file a session put there is
 * replaced, never written through). True when it wrote.
 *
 * @throws {FsSafetyError} a directory at the name, or the folder moved
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { publishRunnerKey } from "./runner_key.ts";
 * import { pinDir } from "../fs/session_dir.ts";
 * const pin = pinDir(Deno.makeTempDirSync())!;
 * assert.equal(await publishRunnerKey(pin, "-----BEGIN PUBLIC KEY-----\n"), true);
 * assert.equal(await publishRunnerKey(pin, "-----BEGIN PUBLIC KEY-----\n"), false);
 * ```
 */
export async function publishRunnerKey(status: DirPin, publicPem: string): Promise<boolean> {
  if (!await publishedDiffers(status, publicPem)) return false;
  replaceIn(status, PUBLISHED_KEY_NAME, new TextEncoder().encode(publicPem), 0o644);
  return true;
}

/** The runner's public key as a waiter read it, and from where. */
export interface RunnerPublic {
  /** The key's 32 raw bytes. */
  readonly raw: Uint8Array;
  /** `key-dir` (the operator's copy) or `status` (the runner's published copy). */
  readonly from: "key-dir" | "status";
}

/**
 * {@link runnerPublicKey}'s raw key, read once when first asked for (what a waiter seals its
 * request to and checks its result with: the same key both times).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runnerKeyOnce } from "./runner_key.ts";
 * const root = Deno.makeTempDirSync();
 * const key = runnerKeyOnce(root, { AGENTTEAMS_KEY_DIR: root + "/k" }); // nothing read yet
 * await assert.rejects(key(), (e: Error & { code?: string }) => e.code === "NO_KEY");
 * ```
 */
export function runnerKeyOnce(root: string, env: Env): () => Promise<Uint8Array> {
  let raw: Promise<Uint8Array> | null = null;
  return () => raw ??= runnerPublicKey(root, env).then((k) => k.raw);
}

/** Whether the key dir's copy could not be read here (absent, or a read the sandbox denies). */
function unreadableHere(e: unknown): boolean {
  return (e instanceof KeyError && e.code === "NO_KEY") ||
    e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.NotCapable;
}

/**
 * The runner's public key for a waiter of the project at `root`: the key dir's copy when it can
 * be read (one that is there and fails its custody check is refused, not passed over), else the
 * copy the runner published in `.agentteams-status/`.
 *
 * @throws {KeyError} `NO_KEY` (neither copy: start agentteams serve), `KEY_CUSTODY`,
 *   `KEY_MALFORMED`; {QueueError} `QUEUE_UNSAFE_PATH` (a link, FIFO, hard link or directory at
 *   the published key's name, or the status folder not a directory)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runnerPublicKey } from "./runner_key.ts";
 * const root = Deno.makeTempDirSync();
 * await assert.rejects(runnerPublicKey(root, { AGENTTEAMS_KEY_DIR: root + "/k" }),
 *   (e: Error & { code?: string }) => e.code === "NO_KEY");
 * ```
 */
export async function runnerPublicKey(root: string, env: Env): Promise<RunnerPublic> {
  let denied: unknown;
  try {
    return { raw: await sealPublicFromPem(readRunnerPublicText(env)), from: "key-dir" };
  } catch (e) {
    if (!unreadableHere(e)) throw e;
    denied = e;
  }
  const dir = queuePaths(root).status;
  let bytes: Uint8Array | null = null;
  try {
    const pin = pinDir(dir);
    if (pin !== null) bytes = await readNameWithin(pin, PUBLISHED_KEY_NAME, MAX_KEY_BYTES);
  } catch (e) {
    if (e instanceof FsSafetyError) {
      throw new QueueError(
        "QUEUE_UNSAFE_PATH",
        `${e.message}: the runner's published public key is read only from a plain file ` +
          "(remove what is there; the runner writes it again at its next beat)",
        { details: e.details },
      );
    }
    throw e;
  }
  if (bytes === null) {
    throw new KeyError(
      "NO_KEY",
      `${(denied as Error).message}; nor is it published at ${dir}/${PUBLISHED_KEY_NAME}: ` +
        "start the runner outside every agent session (agentteams serve), which publishes it",
    );
  }
  return { raw: await sealPublicFromPem(new TextDecoder().decode(bytes)), from: "status" };
}
