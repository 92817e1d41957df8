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
 * import assert from "node:assert/strict";
 * import { checkpointPayload } from "./checkpoint.ts";
 * assert.equal(
 *   checkpointPayload({ count: 0, last: null, time: "t", key_id: "k" }),
 *   'agentteams-checkpoint-v1|{"count": 0, "key_id": "k", "last": null, "time": "t"}',
 * );
 * ```
 * @module
 */
import { canonical } from "../pycompat/canonical.ts";
import { keyIdOfKey, signHex, verifyHex } from "../crypto/ed25519.ts";
import { HeadFormatError, parseHead } from "./head.ts";
import { checkLedgerBytes, type RowChecks } from "./verify_rows.ts";
import type { LedgerProblem, LedgerTexts, VerifyCode } from "./verify.ts";

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
 * Why a checkpoint is not one `pub` signed, or `null` when it is.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs cp, pub, which it declares rather than makes.
 * import { checkpointSignatureProblem } from "./checkpoint.ts";
 * import type { Checkpoint } from "./checkpoint.ts";
 * declare const cp: Checkpoint; // from `parseCheckpoint`
 * declare const pub: CryptoKey; // from `importPublicPem`
 * await checkpointSignatureProblem(cp, pub); // null when pub signed it as it stands
 * ```
 */
export async function checkpointSignatureProblem(
  cp: Checkpoint,
  pub: CryptoKey,
): Promise<string | null> {
  if (cp.key_id !== await keyIdOfKey(pub)) {
    return `the checkpoint was signed by key ${cp.key_id}, not by the verify key given`;
  }
  if (!await verifyHex(pub, cp.signature, checkpointPayload(cp))) {
    return "the checkpoint's signature does not verify: its fields were changed, or it was " +
      "forged";
  }
  return null;
}

/**
 * Why a ledger does not extend a checkpoint (its row `count` must hash to `last`), or `null` when
 * it does. `checks` must retain hashes (or hold at most two rows beyond the checkpoint).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkpointLedgerProblem } from "./checkpoint.ts";
 * import { checkLedgerBytes } from "./verify_rows.ts";
 * const none = checkLedgerBytes(new Uint8Array(0), new Uint8Array([1]));
 * assert.equal(
 *   checkpointLedgerProblem({ count: 0, last: null, time: "t", key_id: "k", signature: "" }, none),
 *   null,
 * );
 * ```
 */
export function checkpointLedgerProblem(cp: Checkpoint, checks: RowChecks): string | null {
  if (checks.n < cp.count) {
    const fragment = checks.size - checks.completeEnd;
    if (cp.count === checks.n + 1 && fragment > 0) {
      return `the checkpoint's row ${cp.count} is past the ledger's end: the ledger holds ` +
        `${checks.n} complete rows and then a ${fragment}-byte unterminated line (a torn write ` +
        "or a cut: see plain `ledger verify` with the key)";
    }
    return `the ledger has ${checks.n} rows, fewer than the checkpoint's ${cp.count}: it was ` +
      "rolled back to an earlier state since the checkpoint (or the checkpoint is of another " +
      "ledger)";
  }
  const last = cp.count === 0 ? null : checks.hash(cp.count - 1);
  if (last !== cp.last) {
    return `row ${cp.count} is not the row the checkpoint recorded: the ledger was rewritten ` +
      "(or the checkpoint is of another ledger)";
  }
  return null;
}

/**
 * Why a checkpoint does not hold for a ledger, or `null` when the ledger extends it: the
 * signature first ({@link checkpointSignatureProblem}), then the ledger
 * ({@link checkpointLedgerProblem}).
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
  return await checkpointSignatureProblem(cp, pub) ?? checkpointLedgerProblem(cp, checks);
}

/** What {@link verifyWithPublicKey} found. */
export interface PublicVerifyReport {
  /** No problems. */
  ok: boolean;
  /** Complete rows in the ledger. */
  rows: number;
  /** Findings (ledger rows, then the head, then the checkpoint). */
  problems: LedgerProblem[];
  /** What was not checked, and observations that are not damage. */
  notes: string[];
  /** The checkpoint, when it holds. */
  checkpoint: Checkpoint | null;
}

/**
 * Any key works for the chain: the row checker's chain bits and hashes do not depend on it (only
 * its MAC bits do, and they are not read here).
 */
const NO_KEY = new Uint8Array([0]);

/**
 * Verifies a ledger with a public key only, no HMAC key: that each row's `prev` is the SHA-256
 * of the line before it, that the head's count and last hash are the ledger's (its MAC is not
 * checked), and that the ledger extends the Ed25519-signed checkpoint `cp`. The rows' MACs, the
 * head's MAC and the dispatch store are not checked: they need the key (plain `ledger verify`).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs root, which it declares rather than makes.
 * import { parseCheckpoint, verifyWithPublicKey } from "./checkpoint.ts";
 * import { readLedgerTexts } from "./verify.ts";
 * declare const root: string, cpText: string, pub: CryptoKey;
 * (await verifyWithPublicKey(readLedgerTexts(root), parseCheckpoint(cpText), pub)).ok;
 * ```
 */
export async function verifyWithPublicKey(
  texts: LedgerTexts,
  cp: Checkpoint | null,
  pub: CryptoKey,
): Promise<PublicVerifyReport> {
  const problems: LedgerProblem[] = [];
  const add = (code: VerifyCode, row: number | null, message: string) =>
    problems.push({ code, row, message });
  const notes = [
    "public-key mode: the rows' and the head's MACs and the dispatch store were not checked " +
    "(they need the ledger key)",
  ];
  const c = checkLedgerBytes(texts.ledger ?? new Uint8Array(0), NO_KEY);
  for (let i = 0; i < c.n; i++) {
    const p = c.problems.get(i);
    if (p !== undefined) {
      add(p.tooLarge ? "ROW_TOO_LARGE" : "ROW_MALFORMED", i + 1, p.message);
    } else if (!c.chainOk[i] && !c.problems.has(i - 1)) {
      add(
        "CHAIN_BROKEN",
        i + 1,
        i === 0
          ? "the first row's prev is not empty: rows were removed from the start"
          : `the row's prev is not the SHA-256 of row ${i}: row ${i} was edited, or rows ` +
            "were removed, reordered or inserted there",
      );
    }
  }
  const fragment = c.size - c.completeEnd;
  if (fragment > 0) {
    add(
      "TORN_TAIL",
      c.n + 1,
      `the ledger ends with a ${fragment}-byte unterminated line after ${c.n} rows (plain ` +
        "`ledger verify`, with the key, tells an interrupted write from a cut)",
    );
  }
  const lastHash = c.n === 0 ? null : c.hash(c.n - 1);
  if (texts.head === null) {
    if (c.n > 0) add("HEAD_MISSING", null, "the ledger head is missing");
  } else {
    try {
      const head = parseHead(texts.head);
      if (head.count !== c.n || head.last !== lastHash) {
        add(
          "HEAD_MISMATCH",
          null,
          `the head records ${head.count} rows, but the ledger holds ${c.n}` +
            (head.count === c.n ? " ending in another row" : ""),
        );
      }
    } catch (e) {
      if (!(e instanceof HeadFormatError)) throw e;
      add("HEAD_MALFORMED", null, `the head is malformed: ${e.message}`);
    }
  }
  const cpProblem = cp === null
    ? "the checkpoint file is not a checkpoint"
    : await checkpointSignatureProblem(cp, pub) ?? checkpointLedgerProblem(cp, c);
  if (cpProblem !== null) add("CHECKPOINT_MISMATCH", cp?.count ?? null, cpProblem);
  else if (cp !== null && c.n > cp.count) {
    notes.push(
      `rows ${cp.count + 1}..${c.n}, appended since the checkpoint, chain onto it; who wrote ` +
        "them is for their MACs to say",
    );
  }
  return {
    ok: problems.length === 0,
    rows: c.n,
    problems,
    notes,
    checkpoint: cpProblem === null ? cp : null,
  };
}
