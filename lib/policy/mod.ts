/**
 * The brief and its policy: loading (JSON/JSONC, the shape check), the policy lint, write-scope patterns,
 * fnmatch globs, Python argument patterns and the control plane.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /work/proj with its brief
 * import { defaultBriefPath, inWriteScopes, loadPolicy } from "./mod.ts";
 * const root = "/work/proj";
 * const policy = await loadPolicy(await defaultBriefPath(root), { projectRoot: root });
 * inWriteScopes("docs/guide.md", policy.agents.writer?.writeScopes ?? []);
 * ```
 * @module
 */

export * from "./types.ts";
export * from "./control_plane.ts";
export { loadPolicy } from "./brief.ts";
export { defaultBriefPath, MAX_BRIEF_BYTES, readBriefBytes } from "./brief_file.ts";
export type { UnreadableReason } from "./brief_file.ts";
export { briefFindings, briefRelative, parsePolicy } from "./parse.ts";
export { briefTemplate, type FoundAgent } from "./brief_template.ts";
export { mergeDenyRules, mergeSessionSettings } from "./session_settings_merge.ts";
export type { ParsePolicyOptions } from "./parse.ts";
export {
  AGENT_SLUG,
  GATE_NAME,
  IGNORED_BRIEF_FIELDS,
  isIgnoredBriefField,
  KNOWN_FRAMEWORKS,
  MCP_RUNNER_TOOLS,
  POLICY_FIELDS,
  RESERVED_CONFINED_KEYS,
} from "./brief_fields.ts";
export { lintPolicy } from "./lint.ts";
export { DEFAULT_BRIEF_NAMES } from "../layout.ts";
export type { CompiledArgs } from "./lint.ts";
export { inWriteScopes, scopeMatches, scopePatternProblem } from "./scope.ts";
export { fnmatch, fnmatchCase, hasWildcard } from "../pycompat/fnmatch.ts";
export { protectedMatch } from "./protected_match.ts";
export { entryWritesCover, type GlobMatch, protectedWriteRefused } from "./owned_writes.ts";
export {
  compileArgPattern,
  MAX_ARG_PATTERN_LENGTH,
  MAX_REPEAT_COUNT,
  translatePythonRegex,
} from "../pycompat/pyre.ts";
export { PROBE_FORMS, PROBE_STEMS, probeArgPattern, probeStrings } from "./probes.ts";
export type { ProbeForm, ProbeHit, ProbeKind } from "./probes.ts";
export { LAUNCHERS, programBaseName, programProblem, SHELLS } from "./program_rules.ts";
export {
  cwdProblem,
  matchPatternProblem,
  normalizeCwd,
  writesGlobProblem,
} from "./pattern_rules.ts";
export {
  errorAt,
  formatJsonPath,
  MAX_JSON_DEPTH,
  parseJsonSource,
  positionAt,
} from "./json_source.ts";
export type { JsonPath, JsonSource, Position } from "./json_source.ts";
export { agentPolicyOf, unknownAgentMessage } from "./agents.ts";
export { checkBrief } from "./brief.ts";
export { briefJsonSchema } from "./brief_schema.ts";
export { literalDirScopeHint, literalScopeAbove } from "./scope.ts";
export {
  bindsBash,
  hooksEmpty,
  SESSION_SETTINGS_FILES,
  sessionSettingsFindings,
  type SessionSettingsInput,
  type SettingsFinding,
  type SettingsText,
  writeDenied,
} from "./session_settings.ts";
export {
  MAX_SETTINGS_BYTES,
  readHostSettings,
  readSessionSettings,
} from "./session_settings_read.ts";
export { claudeHostSettingsPaths } from "./claude_host_paths.ts";
export {
  DEFAULT_PORTS,
  hostAllowed,
  type NetworkRule,
  normalizeHost,
  parseNetworkRule,
  parseNetworkRules,
} from "./network_rules.ts";
