/**
 * The loaded, validated policy: what the brief registers for each agent. Produced only by
 * `loadPolicy` (see `brief.ts`), so every value here has passed the schema and the policy lint.
 *
 * The brief itself is snake_case JSON(C); these types are its camelCase, compiled form.
 *
 * @module
 */
import type { NetworkRule } from "./network_rules.ts";

/** `write_policy`: only `orchestrator-only` turns the switch on. */
export type WritePolicy = "default" | "orchestrator-only";

/** `privilege_profile` of the brief. */
export type PrivilegeProfile = "cooperative" | "confined" | "exclusive";

/** One allowlisted command shape of an agent (`agent_policies.<agent>.commands[i]`). */
export interface CommandEntry {
  /** Literal argv prefix; `prefix[0]` is the program (a bare name or an absolute path). */
  readonly prefix: readonly string[];
  /** Python-style regular expressions, one per remaining argument (as written in the brief). */
  readonly args: readonly string[];
  /** `args` compiled once at load, anchored for a whole-string match. */
  readonly argPatterns: readonly RegExp[];
  /** When true, the last pattern covers one or more trailing arguments. */
  readonly variadic: boolean;
  /** The pinned working directory, project-relative POSIX (`.` is the project root). */
  readonly cwd: string;
  /** fnmatch globs (case-insensitive, `*` crosses `/`) the command may write. */
  readonly writes: readonly string[];
  /** Gates that vet `stdin_from_content`; `null` when the entry takes no stdin. */
  readonly stdinGates: readonly string[] | null;
  /** Seconds, 1..7200 (default 600). */
  readonly timeout: number;
  /** The host network shared inside the sandbox (`network: true`; default false). */
  readonly network: boolean;
  /**
   * `network: [...]`: the only names the command may reach, through the run's proxy (its own
   * network namespace otherwise has no route out); `null` without a list.
   */
  readonly networkAllow: readonly NetworkRule[] | null;
}

/** `agent_policies.<agent>`. */
export interface AgentPolicy {
  /** Write scopes: a file, a directory ending in `/`, or a segment pattern. */
  readonly writeScopes: readonly string[];
  /** Allowlisted command shapes. */
  readonly commands: readonly CommandEntry[];
  /**
   * `operator`: a nonce for the agent is issued only to the operator (`dispatch --direct`), never
   * through the runner's queue (`DISPATCH_OPERATOR_ONLY`); absent or `queue`: through either.
   */
  readonly dispatch?: "queue" | "operator";
}

/** `proposal_gates.<name>`. */
export interface GateDef {
  /** The gate's name (its key in `proposal_gates`). */
  readonly name: string;
  /** fnmatch glob (case-insensitive, `*` crosses `/`); `null` when the gate runs only on request. */
  readonly glob: string | null;
  /** The gate's argv; `{file}` / `{path}` are whole-argument placeholders. */
  readonly argv: readonly string[];
  /** Programs the gate may execute under confinement; `null` when not declared. */
  readonly exec: readonly string[] | null;
}

/** One agent's confined-programs entry. */
export interface ConfinedAgent {
  /** Absolute (or `~/`) programs and directories of programs the agent's commands may execute. */
  readonly exec: readonly string[];
  /** Project-relative literal directories the agent's commands may write. */
  readonly write: readonly string[];
}

/** The confined-programs block, from the brief or from the operator-owned file. */
export interface ConfinedPrograms {
  /** Per-agent entries. */
  readonly agents: Readonly<Record<string, ConfinedAgent>>;
  /** Where the block came from. */
  readonly source: "brief" | "operator-file";
  /** SHA-256 hex of the operator file's raw bytes, `null` for the brief. */
  readonly fileSha256: string | null;
}

/** `mcp_grants.<agent>`: an agent that writes and runs only through the runner's MCP server. */
export interface McpGrant {
  /** Tools of the `agentteams_runner` server it may call (distinct, at least one). */
  readonly tools: readonly string[];
  /** `staged` (the orchestrator approves each write) or `direct` (needs a signed operator grant). */
  readonly approval: "staged" | "direct";
}

/** The whole policy of one brief. */
export interface Policy {
  /** Absolute path of the brief file. */
  readonly briefPath: string;
  /** The brief's project-relative POSIX path, `null` when it lies outside the project. */
  readonly briefRel: string | null;
  /** SHA-256 hex of the brief's raw bytes (the runner pins it). */
  readonly briefSha256: string;
  /** `write_policy` (default `default`). */
  readonly writePolicy: WritePolicy;
  /** `privilege_profile`, `null` when absent. */
  readonly privilegeProfile: PrivilegeProfile | null;
  /** `write_policy_frameworks`. */
  readonly writePolicyFrameworks: readonly string[];
  /** `agent_policies`. */
  readonly agents: Readonly<Record<string, AgentPolicy>>;
  /** `proposal_gates`. */
  readonly gates: Readonly<Record<string, GateDef>>;
  /** `confined_programs`, `null` when neither the brief nor an operator file sets it. */
  readonly confinedPrograms: ConfinedPrograms | null;
  /** `protected_paths`: fnmatch patterns; one without wildcards covers everything below it. */
  readonly protectedPaths: readonly string[];
  /** `allow_unconfined_runs` (default false). */
  readonly allowUnconfinedRuns: boolean;
  /**
   * `deletions_need_clearance` (default false): a deletion proposal acts only with a clearance or
   * waiver for `delete:<path>`. Optional only so that policies built by hand stay valid.
   */
  readonly deletionsNeedClearance?: boolean;
  /**
   * `mcp_grants` (empty when absent). Optional only so that policies built by hand elsewhere stay
   * valid; `parsePolicy` always sets it.
   */
  readonly mcpGrants?: Readonly<Record<string, McpGrant>>;
  /** Proposal content cap in bytes (256 KiB). */
  readonly sizeCap: number;
  /**
   * Lint warnings: what the brief most likely gets wrong without being unsafe (a literal write
   * scope naming an existing directory), each naming the file, line and JSON path; the CLI prints
   * them on stderr. Optional only so that policies built by hand stay valid.
   */
  readonly warnings?: readonly string[];
}

/** Proposal content above this many bytes is refused. */
export const DEFAULT_SIZE_CAP = 256 * 1024;
/** Default command timeout in seconds. */
export const DEFAULT_COMMAND_TIMEOUT = 600;
/** Longest command timeout in seconds. */
export const MAX_COMMAND_TIMEOUT = 7200;
/** Gate timeout in seconds. */
export const GATE_TIMEOUT = 120;
