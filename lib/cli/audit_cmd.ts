/**
 * `agentteams audit [DIR...] [--format text|json|sarif] [--fix] [--strict]` (alias
 * `--post-audit`): the AR_WRITE_POLICY audit of a team's agent files. The switch comes from the
 * brief (`write_policy: "orchestrator-only"`, limited by `write_policy_frameworks`); without it
 * the audit reports and exits 0. It reads files only and never needs the ledger key.
 *
 * @module
 */
import { keyDir } from "../crypto/keys.ts";
import { homeFrom } from "../env.ts";
import { UsageError } from "../errors.ts";
import { resolve } from "../fs/path.ts";
import { auditTeam } from "../audit/audit.ts";
import {
  emptyFails,
  failing,
  jsonReport,
  type RunFacts,
  sarifLog,
  textReport,
} from "../audit/report.ts";
import { loadPolicy } from "../policy/brief.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import { briefFlagPath } from "./needs.ts";
import { oneLine, stderrProgress } from "./terminal.ts";
import { VERSION } from "./version.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/** The output formats. */
export const AUDIT_FORMATS = ["text", "json", "sarif"] as const;

/** The switch as the brief gives it: on or off, and the frameworks it covers. */
async function switchOf(ctx: Ctx): Promise<{ on: boolean; frameworks: string[] }> {
  let path = briefFlagPath(ctx);
  if (path === null) {
    try {
      path = await defaultBriefPath(ctx.project);
    } catch {
      return { on: false, frameworks: [] }; // no brief: no switch, the audit only reports
    }
  }
  const policy = await loadPolicy(resolve(path), { projectRoot: ctx.project });
  return {
    on: policy.writePolicy === "orchestrator-only",
    frameworks: [...policy.writePolicyFrameworks],
  };
}

/**
 * Runs `audit`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { audit } from "./audit_cmd.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams audit` in a compliant team under the switch
 * (await audit(ctx)).exit; // 0
 * ```
 */
export async function audit(ctx: Ctx): Promise<Outcome> {
  const format = ctx.parsed.flags.format ?? "text";
  if (typeof format !== "string" || !(AUDIT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(
      "USAGE",
      `--format ${String(format)}: use one of ${AUDIT_FORMATS.join(", ")}`,
    );
  }
  const strict = ctx.parsed.flags.strict === true;
  const fix = ctx.parsed.flags.fix === true;
  const dryRun = ctx.parsed.flags["dry-run"] === true;
  if (dryRun && !fix) {
    throw new UsageError("USAGE", "--dry-run shows what --fix would change: give both");
  }
  const allowEmpty = ctx.parsed.flags["allow-empty"] === true;
  const dirs = (ctx.parsed.positionals.DIR as string[] | undefined) ?? [];
  const sw = await switchOf(ctx);
  // Machine output (json, sarif) is read by a program: no progress line beside it.
  const progress = stderrProgress("audit", "files", {
    json: ctx.json || format !== "text",
    env: ctx.env,
  });
  let r;
  try {
    r = await auditTeam(ctx.project, dirs.map((d) => resolve(d)), {
      switchOn: sw.on,
      frameworks: sw.frameworks,
      fix,
      dryRun,
      operator: operatorOf(ctx),
      onProgress: (n) => progress.tick(n),
    });
  } finally {
    progress.done();
  }
  const facts: RunFacts = {
    switchOn: sw.on,
    frameworks: sw.frameworks,
    strict,
    files: r.files,
    fixes: r.fixes,
    allowEmpty,
    emptyDirs: r.emptyDirs,
  };
  const failed = failing(r.findings, strict);
  const exit = failed.length === 0 && !emptyFails(facts) ? 0 : 1;
  // The JSON report (its fingerprints a hash per finding) is built only when it is shown.
  const json = format === "json" || ctx.json ? jsonReport(r.findings, facts) : undefined;
  const text = format === "sarif"
    ? JSON.stringify(sarifLog(r.findings, facts, VERSION, ctx.project), null, 2)
    : format === "json"
    ? JSON.stringify(json ?? jsonReport(r.findings, facts), null, 2)
    : textReport(
      // The files' own text (tool names, keys, paths) is shown, never obeyed by the terminal.
      r.findings.map((f) => ({ ...f, file: oneLine(f.file), message: oneLine(f.message) })),
      {
        ...facts,
        fixes: facts.fixes?.map((x) => ({
          ...x,
          file: oneLine(x.file),
          changes: x.changes.map(oneLine),
          reason: x.reason === undefined ? undefined : oneLine(x.reason),
        })),
      },
    );
  return {
    exit,
    text,
    json: json === undefined ? undefined : json as unknown as Record<string, unknown>,
    refusal: exit === 0 ? undefined : failed.length === 0 && emptyFails(facts)
      ? {
        code: "AR_WRITE_POLICY",
        message: `no agent file found in ${
          r.files === 0
            ? (dirs.length === 0 ? ctx.project : dirs.join(", "))
            : r.emptyDirs.join(", ")
        }, ` +
          "so nothing is proven: name the team's root or its agent folder (.claude/agents, " +
          ".github/agents, .codex/agents, a recipes folder), or pass --allow-empty if that is " +
          "expected",
      }
      : {
        code: "AR_WRITE_POLICY",
        message: `${failed.length} finding(s) fail the audit (first: ${failed[0].file}:` +
          `${failed[0].line} ${failed[0].code}); ${nextStep(fix, r.fixes)}`,
      },
  };
}

/** What to do about failing findings: `--fix` when it has not run, else by hand. */
function nextStep(fixed: boolean, fixes: readonly { outcome: string }[] | undefined): string {
  if (!fixed) return "fix them, or run agentteams audit --fix (it narrows what it can)";
  const adopted = (fixes ?? []).some((f) => f.outcome === "skipped-adopted");
  return adopted
    ? "--fix left what it says above (an adopted file is fixed when named); fix the rest by hand"
    : "--fix could not fix these (see the reasons above); fix them by hand";
}

/** The operator's key dir and home, when HOME says (the settings check's `~/` and key-dir rules). */
function operatorOf(ctx: Ctx): { keyDir: string; homeDir: string } | undefined {
  try {
    return { keyDir: keyDir(ctx.env), homeDir: homeFrom(ctx.env) };
  } catch {
    return undefined;
  }
}
