/**
 * What the triad's commands (`waiver`, `grant`, `decision`, `clearance`, `gate`) share: their
 * flags read as values, their permission needs, and how a read-only verify reads as an outcome.
 *
 * @module
 */
import { KeyError, PolicyError, UsageError } from "../errors.ts";
import { spentCounts } from "../authz/spent.ts";
import { keepTriadIndexes, type TriadLedger, triadWrite } from "../authz/triad_index.ts";
import type { CsvText, TriadHold } from "../authz/mod.ts";
import { readCsvText } from "../authz/csv.ts";
import { withFlock } from "../fs/flock.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import { loadCode } from "./code_dir.ts";
import { trustFor, type TrustRoots } from "../authz/trust.ts";
import { briefFlagPath } from "./needs.ts";
import { type LedgerKey, loadLedgerKey } from "../crypto/keys.ts";
import { authzPaths } from "../authz/triad_paths.ts";
import { type Finding, findingLine, type Problem } from "../authz/verdict.ts";
import { oneLine } from "./terminal.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/**
 * A string flag's value, or `null` when not given.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { stringFlag } from "./authz_common.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `waiver issue --id W-1 ...`
 * stringFlag(ctx, "id"); // "W-1"
 * ```
 */
export function stringFlag(ctx: Ctx, name: string): string | null {
  const v = ctx.parsed.flags[name];
  return typeof v === "string" ? v : null;
}

/**
 * A required string flag's value; a missing one is a usage error naming it.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { requiredFlag } from "./authz_common.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `waiver issue --id W-1 ...`
 * requiredFlag(ctx, "id"); // "W-1"
 * ```
 */
export function requiredFlag(ctx: Ctx, name: string): string {
  const v = stringFlag(ctx, name);
  if (v === null) throw new UsageError("USAGE", `${ctx.name} needs --${name}`);
  return v;
}

/**
 * `--max-uses` (required) as a number: a whole number of uses, 1 or more; anything else is a
 * usage error (`waiver issue`, `grant issue|sign`).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { maxUsesFlag } from "./authz_common.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `waiver issue --max-uses 2 ...`
 * maxUsesFlag(ctx); // 2
 * ```
 */
export function maxUsesFlag(ctx: Ctx): number {
  const raw = requiredFlag(ctx, "max-uses");
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < 1) {
    throw new UsageError(
      "USAGE",
      `--max-uses takes a whole number of uses (1 or more), got ${raw}`,
    );
  }
  return Number(raw);
}

/**
 * A positional's value (required by the command's spec).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { positional } from "./authz_common.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `gate delete:old.txt`
 * positional(ctx, "ACTION"); // "delete:old.txt"
 * ```
 */
export function positional(ctx: Ctx, name: string): string {
  const v = ctx.parsed.positionals[name];
  if (typeof v !== "string" || v === "") throw new UsageError("USAGE", `${ctx.name} needs ${name}`);
  return v;
}

/**
 * Whether the project is under the switch (`write_policy: "orchestrator-only"`), for the trust
 * roots: no brief is no switch; a brief that does not load is taken as the switch (fail closed).
 */
async function switchOf(ctx: Ctx): Promise<boolean> {
  let path: string;
  try {
    path = briefFlagPath(ctx) ?? await defaultBriefPath(ctx.project);
  } catch (e) {
    if (e instanceof PolicyError && e.code === "BRIEF_NOT_FOUND") return false;
    if (e instanceof Deno.errors.NotCapable) throw e;
    return true;
  }
  try {
    // The policy's parser is loaded only for a brief there is (a project may have none).
    const { loadPolicy } = await loadCode(() => import("../policy/brief.ts"));
    return (await loadPolicy(path, { projectRoot: ctx.project })).writePolicy ===
      "orchestrator-only";
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
    if (e instanceof Error && e.cause instanceof Deno.errors.NotCapable) throw e.cause;
    return true;
  }
}

/**
 * The trust roots a triad command reads with (`lib/authz/trust.ts`): the verify keys, the roster
 * and whether decision signing applies, from the key dir, the brief's switch and the project's
 * Claude Code settings. Each project trust root left out is noted on stderr.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { triadTrust } from "./authz_common.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // under the switch, no Edit(./references/**) rule
 * (await triadTrust(ctx)).untrusted.length; // 2: the project's verify keys and roster
 * ```
 */
export async function triadTrust(ctx: Ctx): Promise<TrustRoots> {
  const t = await trustFor(ctx.project, ctx.env, await switchOf(ctx));
  // Said only of what is there to be left out: a project with no verify keys or roster hears
  // nothing.
  const paths = authzPaths(ctx.project);
  const present = [paths.verifyKeys, paths.roster].some((p) => lstatOrNullSync(p) !== null);
  if (present) {
    for (const u of t.untrusted) ctx.note(`agentteams ${ctx.name}: warning: ${oneLine(u)}`);
  }
  return t;
}

/**
 * The context a triad command decides with: the environment, the clock and the trust roots.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { triadContext } from "./authz_common.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx;
 * (await triadContext(ctx)).signingRequired; // true under the switch
 * ```
 */
export async function triadContext(ctx: Ctx, opts: { readonly spent?: boolean } = {}): Promise<{
  readonly env: Ctx["env"];
  readonly now: Date;
  readonly roster: ReadonlySet<string>;
  readonly store: TrustRoots["store"];
  readonly signingRequired: boolean;
  readonly spent?: ReadonlyMap<string, number>;
}> {
  const t = await triadTrust(ctx);
  const key = opts.spent === true ? optionalLedgerKey(ctx) : null;
  return {
    env: ctx.env,
    now: ctx.now(),
    roster: t.roster,
    store: t.store,
    signingRequired: t.signingRequired,
    // What the proposal ledger records as spent, when its key is at hand (read-only).
    ...(key !== null ? { spent: spentCounts(ctx.project, key.hmac) } : {}),
  };
}

/**
 * The ledger key when one can be loaded (direct mode), else `null`: a read-only check without a
 * key reads the rows alone.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { optionalLedgerKey } from "./authz_common.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // no key file, no key variable
 * optionalLedgerKey(ctx); // null
 * ```
 */
export function optionalLedgerKey(ctx: Ctx): LedgerKey | null {
  try {
    return loadLedgerKey({ env: ctx.env, mode: "direct" });
  } catch (e) {
    if (e instanceof KeyError) return null;
    throw e;
  }
}

/**
 * A read-only verify's outcome: one line per row, exit 1 when any row is invalid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findingsOutcome } from "./authz_common.ts";
 * assert.equal(findingsOutcome("waiver", []).text, "ok: no waiver rows (the ledger does not exist yet)");
 * ```
 */
export function findingsOutcome(
  what: string,
  findings: readonly Finding[],
  opts: { readonly strict?: boolean } = {},
): Outcome {
  // A spent row (a waiver used up) is reported as spent, and fails the verify only when strict.
  const bad = findings.filter((f) => !f.valid && (f.spent !== true || opts.strict === true));
  const spent = findings.filter((f) => !f.valid && f.spent === true).length;
  const lines = findings.map((f) => oneLine(findingLine(f)));
  const json = { ok: bad.length === 0, rows: findings };
  if (findings.length === 0) {
    return { exit: 0, text: `ok: no ${what} rows (the ledger does not exist yet)`, json };
  }
  if (bad.length > 0) {
    return {
      exit: 1,
      text: lines.join("\n"),
      json,
      refusal: {
        code: bad[0].code ?? "INVALID",
        message: `${bad.length} of ${findings.length} ${what} row(s) invalid (first: line ` +
          `${bad[0].line}: ${bad[0].reason})`,
      },
    };
  }
  const valid = findings.length - spent;
  return {
    exit: 0,
    text: [
      ...lines,
      `ok: ${valid} ${what} row(s) valid` + (spent > 0 ? `, ${spent} spent (used up)` : ""),
    ].join("\n"),
    json,
  };
}

/**
 * A check's refusal: exit 1, `text` for stdout, the problem as the refusal line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { problemOutcome } from "./authz_common.ts";
 * const p = { code: "NO_WAIVER", reason: "no waiver names \"x\"" } as const;
 * assert.equal(problemOutcome(`no: ${p.reason}`, p, { ok: false }).refusal?.code, "NO_WAIVER");
 * ```
 */
export function problemOutcome(
  text: string,
  problem: Problem,
  json: Record<string, unknown>,
): Outcome {
  return { exit: 1, text, json, refusal: { code: problem.code, message: problem.reason } };
}

/**
 * A write to the decision log or the waiver ledger by an operator's command: `write` is given the
 * hold (`lib/authz/triad_hold.ts`) when the ledger key is at hand, and passes it to the writer,
 * which under its lock refuses the ledger as it read it when it no longer extends its index
 * (`LEDGER_ROLLED_BACK`, nothing written) and keeps the index and anchor of what it wrote; without
 * the key the index is removed (no gate reads one).
 *
 * @throws {AuthzError} `LEDGER_ROLLED_BACK`; what `write` throws
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { operatorTriadWrite } from "./authz_common.ts";
 * import { signDecisionRow } from "../authz/decisions.ts";
 * import type { DecisionFields } from "../authz/decisions.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `decision sign`
 * declare const fields: DecisionFields; // the row's action and verdict
 * const env = ctx.env, now = ctx.now();
 * await operatorTriadWrite(ctx, "decisions", (hold) =>
 *   signDecisionRow(ctx.project, fields, { env, now, hold }));
 * ```
 */
export async function operatorTriadWrite<T>(
  ctx: Ctx,
  which: TriadLedger,
  write: (hold: TriadHold | null) => Promise<T>,
): Promise<T> {
  return await triadWrite(ctx.project, optionalLedgerKey(ctx)?.hmac ?? null, which, write);
}

/**
 * `decision accept` / `waiver accept`: under the project's lock, the ledger is read once and
 * `verify` judges those bytes; when it passed, they are what the gate holds the ledger to (their
 * index kept and anchored with the ledger key, which it needs); a verify that failed accepts
 * nothing. One read for both, and no operator write between them: a row cut after the verify is
 * never anchored unseen.
 *
 * @throws {KeyError} no ledger key
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { acceptVerified } from "./authz_common.ts";
 * import { decisionVerify } from "./clearance_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `decision accept`
 * (await acceptVerified(ctx, "decisions", (read) => decisionVerify(ctx, read))).text; // "...\naccepted: ..."
 * ```
 */
export function acceptVerified(
  ctx: Ctx,
  which: TriadLedger,
  verify: (read: CsvText | null) => Promise<Outcome>,
): Promise<Outcome> {
  const file = authzPaths(ctx.project)[which];
  return withFlock(ctx.project, { target: "directory" }, async () => {
    const read = readCsvText(file);
    const out = await verify(read);
    if (out.exit !== 0) {
      return {
        ...out,
        text: `${out.text ?? ""}\nnot accepted: ${file} does not verify; mend it first`,
      };
    }
    const key = loadLedgerKey({ env: ctx.env, mode: "direct" });
    await keepTriadIndexes(ctx.project, key.hmac, which, read);
    return {
      ...out,
      text: `${out.text ?? ""}\naccepted: ${file} as it is now is what the gate holds it to`,
      ...(out.json !== undefined ? { json: { ...out.json, accepted: true } } : {}),
    };
  });
}
