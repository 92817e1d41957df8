/**
 * The surface of `lib/audit/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { type AuditResult, auditTeam, type AuditTeamOptions } from "./audit.ts";
export { AUDIT_ENV } from "./audit_env.ts";
export type { Finding, Framework, Severity } from "./finding.ts";
export {
  emptyFails,
  failing,
  type FixOutcome,
  jsonReport,
  type RunFacts,
  sarifLog,
  textReport,
} from "./report.ts";
export { auditJsonSchema } from "./report_schema.ts";
export { auditRootOf } from "./root.ts";
export type { AuditOptions, SettingsPlace } from "./team.ts";
export {
  agentFileKind,
  type AuditEntry,
  exemptFiles,
  isAgentEntry,
  kindOfPath,
  slugOf,
} from "./team.ts";
export { WRITE_POLICY_REFERENCE } from "./fix.ts";
export { walkTeam } from "./walk.ts";
export { claudeLookDirs } from "./hosts/claude_dirs.ts";
