/**
 * Which top-level brief fields are policy, and which belong to the project-description format for
 * other purposes (team generation) and are therefore accepted and ignored. Any other top-level key
 * is refused (`BRIEF_UNKNOWN_KEY`), so a misspelt policy field never silently drops a rule.
 *
 * @example
 * ```ts
 * import { isIgnoredBriefField, POLICY_FIELDS } from "./brief_fields.ts";
 * POLICY_FIELDS.includes("agent_policies"); // true
 * isIgnoredBriefField("project_goal"); // true
 * isIgnoredBriefField("agent_polices"); // false: a typo is refused, not ignored
 * ```
 * @module
 */
import { SLUG_RE } from "../layout.ts";

/** The brief's policy fields, read and validated by this module. */
export const POLICY_FIELDS: readonly string[] = Object.freeze([
  "write_policy",
  "privilege_profile",
  "write_policy_frameworks",
  "agent_policies",
  "proposal_gates",
  "confined_programs",
  "protected_paths",
  "allow_unconfined_runs",
  "mcp_grants",
  "deletions_need_clearance",
]);

/**
 * Top-level fields of the project-description format that are not policy. The first twenty are
 * every property of the earlier implementation's `schemas/project-description.schema.json`; the
 * rest are generation fields its sources read from the same file (`retrieval_integration`,
 * `doc_site_config_file`, `host_features`, `protected_read_paths`, `workspace_write_roots`,
 * `mcp_hints`). Their values are not inspected.
 */
export const IGNORED_BRIEF_FIELDS: readonly string[] = Object.freeze([
  "project_name",
  "project_goal",
  "deliverables",
  "output_format",
  "primary_output_dir",
  "build_output_dir",
  "figures_dir",
  "existing_project_path",
  "agents_output_dir",
  "authority_sources",
  "style_reference",
  "reference_db_path",
  "reference_key_convention",
  "tools",
  "style_rules",
  "pip_package_name",
  "doc_site_tool",
  "selected_archetypes",
  "components",
  "conversion_pipeline",
  "retrieval_integration",
  "doc_site_config_file",
  "host_features",
  "protected_read_paths",
  "workspace_write_roots",
  "mcp_hints",
]);

/** Frameworks `write_policy_frameworks` may name (the earlier implementation's emitters). */
export const KNOWN_FRAMEWORKS: readonly string[] = Object.freeze([
  "claude",
  "goose",
  "codex",
  "copilot-vscode",
  "copilot-cli",
  "agents-md",
]);

/** The `agentteams_runner` MCP server's tools: the only names an `mcp_grants` entry may grant. */
export const MCP_RUNNER_TOOLS: readonly string[] = Object.freeze([
  "write_file",
  "delete_file",
  "run_command",
  "request_status",
  "read_file_hashed",
]);

/** An agent slug, as in `agent_policies`, `confined_programs` and `mcp_grants` keys (the one slug rule). */
export const AGENT_SLUG: RegExp = SLUG_RE;

/** A gate name (a `proposal_gates` key). */
export const GATE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** Keys the operator confined-programs file reserves; refused in the brief's block. */
export const RESERVED_CONFINED_KEYS: readonly string[] = Object.freeze([
  "gate_exec",
  "gate_argv_sha256",
]);

/**
 * Whether a top-level key is a known non-policy field that the brief may carry.
 *
 * @example
 * ```ts
 * import { isIgnoredBriefField } from "./brief_fields.ts";
 * isIgnoredBriefField("components"); // true
 * ```
 */
export function isIgnoredBriefField(key: string): boolean {
  return IGNORED_BRIEF_FIELDS.includes(key);
}
