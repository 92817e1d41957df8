/**
 * Turns validated, linted policy fields into the frozen, camelCase `Policy` the rest of the tool
 * consumes, applying defaults. Per-agent and per-gate maps have a null prototype, so a slug such as
 * `constructor` or `toString` never finds an inherited value.
 *
 * @example
 * ```ts
 * import { compilePolicy } from "./compile.ts";
 * const policy = compilePolicy({ write_policy: "default" }, new Map(), {
 *   briefPath: "/p/agentteams.jsonc",
 *   briefRel: "agentteams.jsonc",
 *   briefSha256: "0".repeat(64),
 * });
 * policy.writePolicy; // "default"
 * ```
 * @module
 */

import type { CompiledArgs } from "./lint.ts";
import { normalizeCwd } from "./pattern_rules.ts";
import type { RawCommandEntry, RawPolicy } from "./brief_schema.ts";
import { PolicyError } from "../errors.ts";
import { type NetworkRule, parseNetworkRules } from "./network_rules.ts";
import {
  type AgentPolicy,
  type CommandEntry,
  type ConfinedAgent,
  DEFAULT_COMMAND_TIMEOUT,
  DEFAULT_SIZE_CAP,
  type GateDef,
  type McpGrant,
  type Policy,
} from "./types.ts";

/** Where the brief came from. */
export interface BriefMeta {
  /** Absolute path of the brief. */
  readonly briefPath: string;
  /** Project-relative POSIX path, or `null` when outside the project. */
  readonly briefRel: string | null;
  /** SHA-256 hex of the brief's raw bytes. */
  readonly briefSha256: string;
}

function frozenList<T>(items: readonly T[]): readonly T[] {
  return Object.freeze([...items]);
}

function frozenMap<T>(entries: [string, T][]): Readonly<Record<string, T>> {
  const out: Record<string, T> = Object.create(null);
  for (const [k, v] of entries) out[k] = v;
  return Object.freeze(out);
}

/** A network list `lintPolicy` already checked: parsing it again cannot fail. */
function allowList(sources: readonly string[]): readonly NetworkRule[] {
  const parsed = parseNetworkRules(sources);
  if (!parsed.ok) throw new PolicyError("POLICY_LINT", parsed.problem);
  return frozenList(parsed.rules);
}

function command(entry: RawCommandEntry, patterns: readonly RegExp[]): CommandEntry {
  return Object.freeze({
    prefix: frozenList(entry.prefix),
    args: frozenList(entry.args ?? []),
    argPatterns: frozenList(patterns),
    variadic: entry.variadic ?? false,
    cwd: normalizeCwd(entry.cwd ?? "."),
    writes: frozenList(entry.writes ?? []),
    stdinGates: entry.stdin_gates === undefined ? null : frozenList(entry.stdin_gates),
    timeout: entry.timeout ?? DEFAULT_COMMAND_TIMEOUT,
    network: entry.network === true,
    networkAllow: Array.isArray(entry.network) ? allowList(entry.network) : null,
  });
}

/**
 * Builds the `Policy` from validated fields and the patterns `lintPolicy` compiled.
 *
 * @example
 * ```ts
 * import { compilePolicy } from "./compile.ts";
 * const p = compilePolicy({}, new Map(), { briefPath: "/b.json", briefRel: null, briefSha256: "" });
 * p.allowUnconfinedRuns; // false
 * ```
 */
export function compilePolicy(raw: RawPolicy, args: CompiledArgs, meta: BriefMeta): Policy {
  const agents = frozenMap<AgentPolicy>(
    Object.entries(raw.agent_policies ?? {}).map(([name, pol]) => {
      const patterns = args.get(name) ?? [];
      return [
        name,
        Object.freeze({
          writeScopes: frozenList(pol.write_scopes ?? []),
          commands: frozenList((pol.commands ?? []).map((c, i) => command(c, patterns[i] ?? []))),
          ...(pol.dispatch !== undefined ? { dispatch: pol.dispatch } : {}),
        }),
      ];
    }),
  );
  const gates = frozenMap<GateDef>(
    Object.entries(raw.proposal_gates ?? {}).map(([name, g]) => [
      name,
      Object.freeze({
        name,
        glob: g.glob ?? null,
        argv: frozenList(g.argv),
        exec: g.exec === undefined ? null : frozenList(g.exec),
      }),
    ]),
  );
  const confined = raw.confined_programs === undefined ? null : Object.freeze({
    agents: frozenMap<ConfinedAgent>(
      Object.entries(raw.confined_programs).map(([name, c]) => [
        name,
        Object.freeze({
          exec: frozenList(c.exec),
          write: frozenList(c.write),
        }),
      ]),
    ),
    source: "brief" as const,
    fileSha256: null,
  });
  const grants = frozenMap<McpGrant>(
    Object.entries(raw.mcp_grants ?? {}).map(([name, g]) => [
      name,
      Object.freeze({
        tools: frozenList(g.tools),
        approval: g.approval ?? "staged",
      }),
    ]),
  );
  return Object.freeze({
    briefPath: meta.briefPath,
    briefRel: meta.briefRel,
    briefSha256: meta.briefSha256,
    writePolicy: raw.write_policy ?? "default",
    privilegeProfile: raw.privilege_profile ?? null,
    writePolicyFrameworks: frozenList(raw.write_policy_frameworks ?? []),
    agents,
    gates,
    confinedPrograms: confined,
    protectedPaths: frozenList(raw.protected_paths ?? []),
    allowUnconfinedRuns: raw.allow_unconfined_runs ?? false,
    deletionsNeedClearance: raw.deletions_need_clearance ?? false,
    mcpGrants: grants,
    sizeCap: DEFAULT_SIZE_CAP,
  });
}
