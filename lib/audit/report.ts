/**
 * The audit's outputs: the JSON report (its zod schema, exported to
 * `schemas/audit-findings.schema.json`, is in report_schema.ts, which the audit itself never
 * loads), SARIF 2.1.0 for code scanning, and the text grouped by file. Pure: findings in, text
 * out.
 *
 * @module
 */
import { sha256Hex } from "../crypto/hash.ts";
import type { AuditReport } from "./report_schema.ts";
import { type Finding, RULES } from "./finding.ts";

/** What `--fix` did to one file (the shape of the report schema's `fixes`). */
export interface FixOutcome {
  /** The file, as the findings name it. */
  readonly file: string;
  /** What happened to it. */
  readonly outcome: "fixed" | "would-fix" | "refused" | "unchanged" | "skipped-adopted";
  /** The changes made (for `fixed`), or that would be (for `would-fix`, under `--dry-run`). */
  readonly changes: readonly string[];
  /** Why not (for `refused` and `skipped-adopted`). */
  readonly reason?: string;
}

/**
 * Stable fingerprints: a hash of the code, the file and the message with its numbers taken out,
 * and the finding's rank among findings that share those, so a moved line keeps its fingerprint.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs findings, which it declares rather than makes.
 * import { fingerprints } from "./report.ts";
 * declare const findings: import("./finding.ts").Finding[];
 * fingerprints(findings).length === findings.length; // true
 * ```
 */
export function fingerprints(findings: readonly Finding[]): string[] {
  const count = new Map<string, number>();
  return findings.map((f) => {
    const base = `${f.code}\u0000${f.file}\u0000${f.message.replace(/[0-9]+/g, "#")}`;
    const n = count.get(base) ?? 0;
    count.set(base, n + 1);
    return sha256Hex(`${base}\u0000${n}`).slice(0, 32);
  });
}

/** The facts of a run the reports state. */
export interface RunFacts {
  /** The switch is on. */
  readonly switchOn: boolean;
  /** `write_policy_frameworks`. */
  readonly frameworks: readonly string[];
  /** `--strict`. */
  readonly strict: boolean;
  /** Agent files audited. */
  readonly files: number;
  /** What `--fix` did, when it ran. */
  readonly fixes?: readonly FixOutcome[];
  /** `--allow-empty`: finding no agent file is expected. */
  readonly allowEmpty?: boolean;
  /** The directories named in which no agent file was found. */
  readonly emptyDirs?: readonly string[];
}

/**
 * Whether the run fails for finding no agent file, in the whole run or in one of the directories
 * named: under the switch, or with `--strict`, an audit of nothing proves nothing (a wrong
 * directory, a framework the audit does not know), unless `--allow-empty` says that is expected.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptyFails } from "./report.ts";
 * assert.equal(emptyFails({ switchOn: true, frameworks: [], strict: false, files: 0 }), true);
 * assert.equal(emptyFails({ switchOn: false, frameworks: [], strict: false, files: 0 }), false);
 * ```
 */
export function emptyFails(facts: RunFacts): boolean {
  const empty = facts.files === 0 || (facts.emptyDirs ?? []).length > 0;
  return empty && (facts.switchOn || facts.strict) && facts.allowEmpty !== true;
}

/**
 * Whether the audit fails: an enforced error, or with `--strict` an enforced warning.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fails } from "./report.ts";
 * assert.equal(fails([], false), false);
 * ```
 */
export function fails(findings: readonly Finding[], strict: boolean): boolean {
  return failing(findings, strict).length > 0;
}

/**
 * The findings that fail the audit (see {@link fails}), in their order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { failing } from "./report.ts";
 * assert.deepEqual(failing([], true), []);
 * ```
 */
export function failing(findings: readonly Finding[], strict: boolean): Finding[] {
  return findings.filter((f) => f.enforced && (f.severity === "error" || strict));
}

/**
 * The JSON report.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonReport } from "./report.ts";
 * // No finding, but no file audited while the switch is on: not ok (see emptyFails).
 * assert.equal(jsonReport([], { switchOn: true, frameworks: [], strict: false, files: 0 }).ok, false);
 * assert.equal(jsonReport([], { switchOn: true, frameworks: [], strict: false, files: 3 }).ok, true);
 * ```
 */
export function jsonReport(findings: readonly Finding[], facts: RunFacts): AuditReport {
  const fp = fingerprints(findings);
  const report: AuditReport = {
    ok: !fails(findings, facts.strict) && !emptyFails(facts),
    switch: facts.switchOn,
    frameworks: [...facts.frameworks],
    strict: facts.strict,
    files: facts.files,
    errors: findings.filter((f) => f.severity === "error").length,
    warnings: findings.filter((f) => f.severity === "warning").length,
    findings: findings.map((f, i) => ({
      code: f.code,
      check: "AR_WRITE_POLICY" as const,
      severity: f.severity,
      enforced: f.enforced,
      framework: f.framework,
      file: f.file,
      line: f.line,
      column: f.column,
      message: f.message,
      fingerprint: fp[i],
    })),
  };
  if (facts.fixes !== undefined) {
    report.fixes = facts.fixes.map((x) => ({ ...x, changes: [...x.changes] }));
  }
  return report;
}

/**
 * The text report: findings grouped by file, then a summary line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textReport } from "./report.ts";
 * assert.equal(
 *   textReport([], { switchOn: true, frameworks: [], strict: false, files: 3 }),
 *   "audit: 3 agent file(s), 0 error(s), 0 warning(s): passes",
 * );
 * ```
 */
export function textReport(findings: readonly Finding[], facts: RunFacts): string {
  const lines: string[] = [];
  for (const x of facts.fixes ?? []) {
    if (x.outcome === "fixed") lines.push(`fixed ${x.file}: ${x.changes.join("; ")}`);
    if (x.outcome === "would-fix") lines.push(`would fix ${x.file}: ${x.changes.join("; ")}`);
    if (x.outcome === "refused") lines.push(`not fixed ${x.file}: ${x.reason ?? ""}`);
    if (x.outcome === "skipped-adopted") lines.push(`not fixed ${x.file}: ${x.reason ?? ""}`);
  }
  let file = "";
  for (const f of findings) {
    if (f.file !== file) {
      file = f.file;
      lines.push(file);
    }
    const tag = f.enforced ? f.severity : `${f.severity} (not enforced)`;
    lines.push(`  ${f.line}:${f.column} ${tag} ${f.code}: ${f.message}`);
  }
  const errors = findings.filter((f) => f.severity === "error").length;
  const warnings = findings.filter((f) => f.severity === "warning").length;
  const verdict = fails(findings, facts.strict) || emptyFails(facts)
    ? "fails"
    : facts.switchOn
    ? "passes"
    : 'reported only (the brief has no write_policy "orchestrator-only")';
  lines.push(
    `audit: ${facts.files} agent file(s), ${errors} error(s), ${warnings} warning(s): ${verdict}` +
      (facts.files === 0 || (facts.emptyDirs ?? []).length > 0 ? ` (${EMPTY_NOTE(facts)})` : ""),
  );
  return lines.join("\n");
}

/** What the reports say when no agent file was found. */
function EMPTY_NOTE(facts: RunFacts): string {
  const dirs = facts.emptyDirs ?? [];
  const where = facts.files === 0 || dirs.length === 0
    ? "no agent files found"
    : `no agent files found in ${dirs.join(", ")}`;
  return emptyFails(facts)
    ? `${where}: is this the team's directory? Name the team's root or its ` +
      "agent folder (.claude/agents, .github/agents, .codex/agents, a recipes folder); " +
      "--allow-empty accepts a team with none"
    : `${where}: is this the team's directory?`;
}

/** The SARIF level of a finding. */
function level(f: Finding): "error" | "warning" | "note" {
  if (!f.enforced) return "note";
  return f.severity;
}

/**
 * The SARIF 2.1.0 log: one run, the rule table as the driver's rules, each finding a result with
 * its physical location and a partial fingerprint stable across runs and line moves.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sarifLog } from "./report.ts";
 * const log = sarifLog([], { switchOn: true, frameworks: [], strict: false, files: 0 }, "0.1.0");
 * assert.equal(log.version, "2.1.0");
 * ```
 */
export function sarifLog(
  findings: readonly Finding[],
  facts: RunFacts,
  version: string,
  srcRoot?: string,
): { version: "2.1.0"; $schema: string; runs: unknown[] } {
  const ids = Object.keys(RULES).sort();
  const index = new Map(ids.map((id, i) => [id, i]));
  const fp = fingerprints(findings);
  const rules = ids.map((id) => ({
    id,
    name: id.toLowerCase().replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()).replace(
      /^./,
      (c) => c.toUpperCase(),
    ),
    shortDescription: { text: RULES[id].short },
    fullDescription: { text: RULES[id].full },
    help: { text: RULES[id].help },
    defaultConfiguration: { level: RULES[id].severity },
    properties: { tags: ["security", "AR_WRITE_POLICY"] },
  }));
  const results = findings.map((f, i) => ({
    ruleId: f.code,
    ruleIndex: index.get(f.code) ?? 0,
    level: level(f),
    message: { text: f.message },
    locations: [{
      physicalLocation: {
        artifactLocation: srcRoot === undefined
          ? { uri: encodeUri(f.file) }
          : { uri: encodeUri(f.file), uriBaseId: "SRCROOT" },
        region: { startLine: f.line, startColumn: f.column },
      },
    }],
    partialFingerprints: { "agentteamsFinding/v1": fp[i] },
  }));
  const run: Record<string, unknown> = {
    tool: {
      driver: {
        name: "agentteams",
        version,
        semanticVersion: version,
        informationUri: "https://github.com/jlcatonjr/agentteams",
        rules,
      },
    },
    columnKind: "utf16CodeUnits",
    results,
    properties: { switch: facts.switchOn, strict: facts.strict, files: facts.files },
  };
  if (facts.files === 0 || (facts.emptyDirs ?? []).length > 0) {
    // No result can carry it (a result needs a file): the run's invocation says it.
    run.invocations = [{
      executionSuccessful: !emptyFails(facts),
      toolExecutionNotifications: [{
        level: emptyFails(facts) ? "error" : "warning",
        message: { text: EMPTY_NOTE(facts) },
      }],
    }];
  }
  if (srcRoot !== undefined) {
    run.originalUriBaseIds = {
      SRCROOT: { uri: "file://" + encodeUri(srcRoot.endsWith("/") ? srcRoot : srcRoot + "/") },
    };
  }
  return {
    version: "2.1.0",
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    runs: [run],
  };
}

function encodeUri(path: string): string {
  return path.split("/").map((s) => encodeURIComponent(s)).join("/");
}
