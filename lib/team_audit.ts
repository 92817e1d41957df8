/**
 * The AR_WRITE_POLICY audit's entry point (`deno.json` exports `./audit`; docs/audit.md): a
 * team's agent files checked against the write policy, reading files only, never a key. It loads
 * the audit's readers (yaml, smol-toml), which the rest of the library does not.
 *
 * @module
 */
export { type AuditResult, auditTeam, type AuditTeamOptions } from "./audit/audit.ts";
export type { AuditOptions, SettingsPlace } from "./audit/team.ts";
export type { FixOutcome } from "./audit/report.ts";
export type { Finding, Framework, Severity } from "./audit/finding.ts";
