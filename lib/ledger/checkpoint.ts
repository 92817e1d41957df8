/**
 * Checkpoints: an Ed25519-signed statement `{count, last, time, key_id}` that the ledger had
 * `count` rows ending in the line whose SHA-256 is `last`. Kept outside the project (or in CI),
 * a checkpoint proves later that the ledger only grew: `ledger verify --checkpoint FILE` checks
 * the signature and that row `count` still hashes to `last`. Unlike the HMAC head, a checkpoint
 * cannot be re-made by someone who holds only the ledger key.
 *
 * Signed payload: `agentteams-checkpoint-v1|` + canonical `{count, key_id, last, time}`.
 *
 * @example
 * ```ts
 * import { checkpointPayload } from "./checkpoint.ts";
 * checkpointPayload({ count: 0, last: null, time: "t", key_id: "k" });
 * // 'agentteams-checkpoint-v1|{"count": 0, "key_id": "k", "last": null, "time": "t"}'
 * ```
 * @module
 */
import { canonical } from "../canonical.ts";
import { keyIdOfKey, signHex, verifyHex } from "../crypto/ed25519.ts";
import type { RowChecks } from "./verify_rows.ts";

/** The purpose tag that starts every checkpoint payload. */
export const CHECKPOINT_PURPOSE = "agentteams-checkpoint-v1";

/** The signed fields. */
export interface CheckpointBody {
  /** Rows at the time. */
  count: number;
  /** SHA-256 hex of row `count`, `null` when `count` is 0. */
  last: string | null;
  /** When it was made (UTC seconds). */
  time: string;
  /** Id of the signing key (first 16 hex of SHA-256 of its SPKI). */
  key_id: string;
}

/** A checkpoint file's content. */
export interface Checkpoint extends CheckpointBody {
  /** Ed25519 signature, 128 hex. */
  signature: string;
}

/**
 * The exact bytes signed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkpointPayload } from "./checkpoint.ts";
 * assert.equal(checkpointPayload({ count: 1, last: "ab", time: "t", key_id: "k" }).startsWith("agentteams-"), true);
 * ```
 */
export function checkpointPayload(b: CheckpointBody): string {
  return `${CHECKPOINT_PURPOSE}|` +
    canonical({ count: b.count, key_id: b.key_id, last: b.last, time: b.time });
}

/**
 * Signs a checkpoint body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signCheckpoint } from "./checkpoint.ts";
 * import { generatePem, importPrivatePem } from "../crypto/ed25519.ts";
 * const { privatePem, keyId } = await generatePem();
 * const cp = await signCheckpoint(
 *   { count: 0, last: null, time: "2026-11-29T18:02:10+00:00", key_id: keyId },
 *   await importPrivatePem(privatePem),
 * );
 * assert.equal(cp.signature.length, 128);
 * ```
 */
export async function signCheckpoint(b: CheckpointBody, key: CryptoKey): Promise<Checkpoint> {
  return { ...b, signature: await signHex(key, checkpointPayload(b)) };
}

/**
 * Parses a checkpoint file's text; `null` when it is not one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCheckpoint } from "./checkpoint.ts";
 * assert.equal(parseCheckpoint("{}"), null);
 * ```
 */
export function parseCheckpoint(text: string): Checkpoint | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (
    typeof o.count !== "number" || !Number.isSafeInteger(o.count) || o.count < 0 ||
    !(o.last === null || (typeof o.last === "string" && /^[0-9a-f]{64}$/.test(o.last))) ||
    typeof o.time !== "string" || typeof o.key_id !== "string" ||
    typeof o.signature !== "string" || Object.keys(o).length !== 5
  ) return null;
  return {
    count: o.count,
    last: o.last as string | null,
    time: o.time,
    key_id: o.key_id,
    signature: o.signature,
  };
}

/**
 * Why a checkpoint does not hold for a ledger, or `null` when the ledger extends it. `checks`
 * must retain hashes (or hold at most two rows beyond the checkpoint).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs cp, pub, checks, which it declares rather than makes.
 * import { checkpointProblem } from "./checkpoint.ts";
 * import type { Checkpoint } from "./checkpoint.ts";
 * import type { RowChecks } from "./verify_rows.ts";
 * declare const cp: Checkpoint; // from `parseCheckpoint`
 * declare const pub: CryptoKey; // from `importPublicPem`
 * declare const checks: RowChecks; // from `checkLedgerBytes`
 * await checkpointProblem(cp, pub, checks); // null when the ledger only grew since
 * ```
 */
export async function checkpointProblem(
  cp: Checkpoint,
  pub: CryptoKey,
  checks: RowChecks,
): Promise<string | null> {
  if (cp.key_id !== await keyIdOfKey(pub)) {
    return `the checkpoint was signed by key ${cp.key_id}, not by the verify key given`;
  }
  if (!await verifyHex(pub, cp.signature, checkpointPayload(cp))) {
    return "the checkpoint's signature does not verify";
  }
  if (checks.n < cp.count) {
    return `the ledger has ${checks.n} rows, fewer than the checkpoint's ${cp.count}`;
  }
  const last = cp.count === 0 ? null : checks.hash(cp.count - 1);
  if (last !== cp.last) {
    return `row ${cp.count} is not the row the checkpoint recorded: the ledger was rewritten`;
  }
  return null;
}
