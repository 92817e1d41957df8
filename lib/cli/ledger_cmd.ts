/**
 * `agentteams ledger verify|show|repair|checkpoint`.
 *
 * @module
 */
import { entryKind } from "../fs/entry.ts";
import { keyDir, loadLedgerKey, SIGNING_KEY_FILE, VERIFY_KEY_FILE } from "../crypto/keys.ts";
import { importPrivatePem, importPublicPem, keyIdOfKey } from "../crypto/ed25519.ts";
import { KeyError, LedgerError, UsageError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import {
  checkpointProblem,
  parseCheckpoint,
  signCheckpoint,
  verifyWithPublicKey,
} from "../ledger/checkpoint.ts";
import { repairTornTail } from "../ledger/repair.ts";
import { utcSeconds } from "../ledger/row.ts";
import { problemLine } from "../ledger/problem_line.ts";
import { checkStatePath, statePaths } from "../layout.ts";
import {
  assessLedger,
  readLedgerTexts,
  verifyLedgerAt,
  type VerifyReport,
} from "../ledger/verify.ts";
import { queueReason, relay } from "./queue_mode.ts";
import { checkLedgerBytes } from "../ledger/verify_rows.ts";
import { join, resolve } from "../fs/path.ts";
import { oneLine, stderrProgress } from "./terminal.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

const dec = new TextDecoder();

function readText(path: string, what: string, maxBytes = 64 * 1024): string {
  return dec.decode(readRegularFileSync(path, { maxBytes, what }).bytes);
}

/**
 * Runs `ledger verify [--checkpoint FILE] [--verify-key PEM]`, or `ledger verify --pubkey PEM
 * --checkpoint FILE` (no ledger key: the chain, the head's count and the signed checkpoint).
 *
 * @example
 * ```ts
 * import { ledgerVerify } from "./ledger_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams ledger verify` in /work/p
 * (await ledgerVerify(ctx)).text; // "ok: 12 rows verify"
 * ```
 */
export async function ledgerVerify(ctx: Ctx): Promise<Outcome> {
  if (ctx.parsed.flags.pubkey !== undefined) return await verifyPublicly(ctx);
  if ((await queueReason(ctx)) !== null) {
    if (ctx.parsed.flags.checkpoint !== undefined) {
      throw new UsageError(
        "USAGE",
        "ledger verify --checkpoint needs the ledger key, which only the runner holds here: " +
          "run it with --direct where the key is (outside every agent session)",
      );
    }
    return verifyOutcome(await relay(ctx, { kind: "verify-ledger" }) as unknown as Verified, null);
  }
  const key = loadLedgerKey({ env: ctx.env, mode: "direct" });
  refuseNoLedger(ctx);
  const cpPath = ctx.parsed.flags.checkpoint;
  let report;
  let checkpointNote: string | null = null;
  if (typeof cpPath === "string") {
    const texts = readLedgerTexts(ctx.project);
    const checks = texts.ledger === null ? undefined : checkLedgerBytes(texts.ledger, key.bytes);
    report = assessLedger(texts, key, checks);
    const cp = parseCheckpoint(readText(resolve(cpPath), "checkpoint"));
    const pubPath = typeof ctx.parsed.flags["verify-key"] === "string"
      ? resolve(ctx.parsed.flags["verify-key"] as string)
      : join(keyDir(ctx.env), VERIFY_KEY_FILE);
    const pub = await importPublicPem(readText(pubPath, "verify key"));
    const problem = cp === null
      ? "the checkpoint file is not a checkpoint"
      : await checkpointProblem(
        cp,
        pub,
        checks ?? checkLedgerBytes(new Uint8Array(0), key.bytes),
      );
    if (problem !== null) {
      report.problems.push({
        code: "CHECKPOINT_MISMATCH",
        row: cp?.count ?? null,
        message: problem,
      });
      report.ok = false;
    } else checkpointNote = `the ledger extends the checkpoint of ${cp!.count} rows (${cp!.time})`;
  } else {
    const progress = stderrProgress("ledger verify", "rows", ctx);
    try {
      report = verifyLedgerAt(ctx.project, key, { onRows: (n) => progress.tick(n) });
    } finally {
      progress.done();
    }
  }
  return verifyOutcome(report, checkpointNote);
}

/**
 * No ledger, head or dispatch store at all is "nothing here", not "everything verifies": a wrong
 * --project, or a deleted .agentteams, must not look like success.
 */
function refuseNoLedger(ctx: Ctx): void {
  const state = statePaths(ctx.project);
  const none = [state.ledger, state.head, state.dispatches].every((p) =>
    entryKind(p) === "missing"
  );
  if (none && ctx.parsed.flags["allow-empty"] !== true) {
    throw new LedgerError(
      "NO_LEDGER",
      `no ledger here: ${state.ledger} does not exist (is --project right? a project has none ` +
        "until its first dispatch; --allow-empty accepts that)",
    );
  }
}

/**
 * `ledger verify --pubkey PEM --checkpoint FILE`: no ledger key, so it runs where no secret is
 * (a CI job, an auditor); the chain, the head's count and last hash, and the signed checkpoint.
 */
async function verifyPublicly(ctx: Ctx): Promise<Outcome> {
  const { pubkey, checkpoint } = ctx.parsed.flags;
  if (typeof pubkey !== "string" || typeof checkpoint !== "string") {
    throw new UsageError(
      "USAGE",
      "ledger verify --pubkey PEM needs --checkpoint FILE: without the ledger key, a signed " +
        "checkpoint is what the ledger is checked against",
    );
  }
  if (ctx.parsed.flags["verify-key"] !== undefined) {
    throw new UsageError(
      "USAGE",
      "give the checkpoint's public key once: --pubkey (no ledger key) or --verify-key (with it)",
    );
  }
  refuseNoLedger(ctx);
  const pub = await importPublicPem(readText(resolve(pubkey), "public key"));
  const cp = parseCheckpoint(readText(resolve(checkpoint), "checkpoint"));
  const r = await verifyWithPublicKey(readLedgerTexts(ctx.project), cp, pub);
  const note = r.checkpoint === null
    ? null
    : `the ledger extends the checkpoint of ${r.checkpoint.count} rows (${r.checkpoint.time})`;
  return verifyOutcome(r, note);
}

/** What a verification reports, the runner's included. */
type Verified = Pick<VerifyReport, "ok" | "rows" | "problems" | "notes">;

/** A verification as the CLI prints it, in direct and queue mode alike. */
function verifyOutcome(report: Verified, checkpointNote: string | null): Outcome {
  const lines = report.problems.map(problemLine);
  for (const n of report.notes) lines.push(`note: ${n}`);
  if (checkpointNote !== null) lines.push(checkpointNote);
  if (report.ok) lines.unshift(`ok: ${report.rows} rows verify`);
  const json = { ok: report.ok, rows: report.rows, problems: report.problems, notes: report.notes };
  if (!report.ok) {
    const first = report.problems[0];
    return {
      exit: 1,
      text: lines.join("\n"),
      json: { ...json, error: { code: first.code, message: first.message, row: first.row } },
      refusal: { code: first.code, message: first.message },
    };
  }
  return { exit: 0, text: lines.join("\n"), json };
}

/**
 * Runs `ledger show [--tail N]`: prints rows without verifying them.
 *
 * @example
 * ```ts
 * import { ledgerShow } from "./ledger_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams ledger show --tail 1`
 * (await ledgerShow(ctx)).json?.rows;
 * // [{ row: 12, action: "issue-dispatch", agent: "worker", time: "...", mac: "...", ... }]
 * ```
 */
export function ledgerShow(ctx: Ctx): Promise<Outcome> {
  const tailFlag = ctx.parsed.flags.tail;
  let tail: number | null = null;
  if (typeof tailFlag === "string") {
    if (!/^[0-9]+$/.test(tailFlag)) throw new UsageError("USAGE", "--tail takes a row count");
    tail = Number(tailFlag);
  }
  const paths = statePaths(ctx.project);
  if (!checkStatePath(paths.dir, "dir") || !checkStatePath(paths.ledger, "file")) {
    return Promise.resolve({ exit: 0, text: "(no ledger yet)", json: { ok: true, rows: [] } });
  }
  const text = readText(paths.ledger, "ledger", 2 * 1024 * 1024 * 1024 - 1);
  const all = text.split("\n");
  const fragment = all.pop();
  const start = tail === null ? 0 : Math.max(0, all.length - tail);
  const rows: Record<string, unknown>[] = [];
  const out: string[] = [];
  for (let i = start; i < all.length; i++) {
    let row: Record<string, unknown>;
    try {
      const v = JSON.parse(all[i]);
      row = typeof v === "object" && v !== null && !Array.isArray(v) ? v : { unparsed: all[i] };
    } catch {
      row = { unparsed: all[i] };
    }
    rows.push({ row: i + 1, ...row });
    const { action, agent, time, mac: _m, prev: _p, ...rest } = row;
    // Row text is partly the agent's (a rationale, a path, a gate's output in a reason): each
    // field is shown as one line, so none can move the cursor or pass for another row.
    const show = (v: unknown) => oneLine(typeof v === "string" ? v : JSON.stringify(v) ?? "");
    const detail = Object.entries(rest).map(([k, v]) => `${oneLine(k)}=${show(v)}`).join(" ");
    out.push(
      `${i + 1}\t${show(time ?? "?")}\t${show(action ?? "?")}\t${show(agent ?? "")}\t${detail}`,
    );
  }
  if (fragment) out.push(`(an unterminated fragment of ${fragment.length} bytes follows)`);
  return Promise.resolve({ exit: 0, text: out.join("\n"), json: { ok: true, rows } });
}

/**
 * Runs `ledger repair --torn-tail`.
 *
 * @example
 * ```ts
 * import { ledgerRepair } from "./ledger_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams ledger repair --torn-tail`
 * (await ledgerRepair(ctx)).json?.removed_bytes; // 17: the torn tail's size
 * ```
 */
export async function ledgerRepair(ctx: Ctx): Promise<Outcome> {
  if (ctx.parsed.flags["torn-tail"] !== true) {
    throw new UsageError("USAGE", "ledger repair needs --torn-tail (the only repair there is)");
  }
  const key = loadLedgerKey({ env: ctx.env, mode: "direct" });
  const r = await repairTornTail(ctx.project, key, { now: ctx.now });
  return {
    exit: 0,
    text:
      (r.restoredNewline
        ? `kept the complete signed last row (sha256 ${r.fragmentSha256}) by restoring its newline`
        : `removed a ${r.removedBytes}-byte torn tail (sha256 ${r.fragmentSha256})`) +
      `; recorded a ledger-repair row (row ${r.row.count})`,
    json: {
      ok: true,
      removed_bytes: r.removedBytes,
      fragment_sha256: r.fragmentSha256,
      restored_newline: r.restoredNewline,
    },
  };
}

/**
 * Runs `ledger checkpoint [--out FILE]`.
 *
 * @example
 * ```ts
 * import { ledgerCheckpoint } from "./ledger_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams ledger checkpoint --out cp.json`
 * (await ledgerCheckpoint(ctx)).text; // "wrote a checkpoint of 12 rows to cp.json"
 * ```
 */
export async function ledgerCheckpoint(ctx: Ctx): Promise<Outcome> {
  const key = loadLedgerKey({ env: ctx.env, mode: "direct" });
  const texts = readLedgerTexts(ctx.project);
  const checks = texts.ledger === null ? undefined : checkLedgerBytes(texts.ledger, key.bytes);
  const report = assessLedger(texts, key, checks);
  if (!report.ok) {
    const p = report.problems[0];
    throw new LedgerError(
      "LEDGER_TAMPERED",
      `refusing to checkpoint a ledger that does not verify (${p.code}: ${p.message})`,
    );
  }
  const dir = keyDir(ctx.env);
  let priv: CryptoKey;
  let pub: CryptoKey;
  try {
    priv = await importPrivatePem(
      dec.decode(
        readRegularFileSync(join(dir, SIGNING_KEY_FILE), {
          maxBytes: 64 * 1024,
          forbiddenModeBits: 0o077,
          what: "signing key",
        }).bytes,
      ),
    );
    pub = await importPublicPem(readText(join(dir, VERIFY_KEY_FILE), "verify key"));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new KeyError("NO_KEY", `no signing key in ${dir} (run: agentteams keys init)`);
    }
    throw e;
  }
  const count = report.rows;
  const cp = await signCheckpoint({
    count,
    last: count === 0 ? null : checks!.hash(count - 1),
    time: utcSeconds(ctx.now()),
    key_id: await keyIdOfKey(pub),
  }, priv);
  const text = JSON.stringify(cp, null, 2) + "\n";
  const out = ctx.parsed.flags.out;
  if (typeof out === "string") {
    atomicWriteFileSync(resolve(out), text, { mode: 0o644 });
    return {
      exit: 0,
      text: `wrote a checkpoint of ${count} rows to ${out}`,
      json: { ok: true, ...cp },
    };
  }
  return { exit: 0, text: text.trimEnd(), json: { ok: true, ...cp } };
}
