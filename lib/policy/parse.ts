/**
 * `parsePolicy`: brief text to `Policy`, without touching the file system. Parses JSON(C),
 * validates the shape, runs the policy lint and compiles the result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePolicy } from "./parse.ts";
 * const policy = parsePolicy('{\n  // comments and trailing commas are fine\n  "write_policy": "default",\n}', {
 *   briefPath: "/work/proj/agentteams.jsonc",
 *   projectRoot: "/work/proj",
 *   briefSha256: "0".repeat(64),
 * });
 * assert.equal(policy.briefRel, "agentteams.jsonc");
 * ```
 * @module
 */

import { isAbsolute, relative, resolve, sep } from "../fs/path.ts";
import { PolicyError, UsageError } from "../errors.ts";
import { compilePolicy } from "./compile.ts";
import { parseJsonSource } from "./json_source.ts";
import { briefWarnings, lintFindings, lintPolicy, literalScopes } from "./lint.ts";
import type { RawPolicy } from "./brief_schema.ts";
import type { Policy } from "./types.ts";
import { briefShapeFindings, validateBrief } from "./validate.ts";

/** Options of {@link parsePolicy}. */
export interface ParsePolicyOptions {
  /** Absolute path of the brief (used for `briefRel` and in messages). */
  readonly briefPath: string;
  /** Absolute path of the project root. */
  readonly projectRoot: string;
  /** SHA-256 hex of the brief's raw bytes. */
  readonly briefSha256: string;
  /**
   * Whether a project-relative path is an existing directory (the caller does the I/O; asked only
   * of the literal write scopes, `literalScopes`): a literal write scope naming one is warned
   * about in `Policy.warnings`. Without it, no path is.
   */
  readonly isDirectory?: (rel: string) => boolean;
}

/**
 * The literal write scopes of a brief's agents that name existing directories (what the warnings
 * name), asked of `isDirectory`.
 */
function scopeDirsOf(raw: RawPolicy, isDirectory: (rel: string) => boolean): Set<string> {
  const scopes = Object.fromEntries(
    Object.entries(raw.agent_policies ?? {}).map((
      [a, p],
    ) => [a, { writeScopes: p.write_scopes ?? [] }]),
  );
  return new Set(literalScopes(scopes).filter(isDirectory));
}

/**
 * The brief's project-relative POSIX path, or `null` when it lies outside `projectRoot` (or is the
 * root itself). Both paths must be absolute.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { briefRelative } from "./parse.ts";
 * assert.equal(briefRelative("/p/cfg/brief.json", "/p"), "cfg/brief.json");
 * assert.equal(briefRelative("/elsewhere/brief.json", "/p"), null);
 * ```
 */
export function briefRelative(briefPath: string, projectRoot: string): string | null {
  if (!isAbsolute(briefPath) || !isAbsolute(projectRoot)) {
    throw new UsageError("USAGE", "the brief path and the project root must be absolute paths", {
      details: { briefPath, projectRoot },
    });
  }
  const rel = relative(resolve(projectRoot), resolve(briefPath));
  if (rel === "" || isAbsolute(rel)) return null;
  const parts = rel.split(sep);
  if (parts[0] === "..") return null;
  return parts.join("/");
}

/**
 * Parses, validates and lints brief text into a `Policy`. Pure: no file is read (which paths are
 * directories is asked of `isDirectory`); what is warned rather than refused is in `warnings`. Throws
 * `PolicyError` (`BRIEF_SYNTAX`, `BRIEF_INVALID`, `BRIEF_UNKNOWN_KEY`, `POLICY_LINT`) whose message
 * names the file, line, column and JSON path, e.g.
 * `agentteams.jsonc:14:22: agent_policies.worker.commands[0].timeout: must be at most 7200`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePolicy } from "./parse.ts";
 * const p = parsePolicy('{"agent_policies": {"docs": {"write_scopes": ["docs/"]}}}', {
 *   briefPath: "/proj/agentteams.json",
 *   projectRoot: "/proj",
 *   briefSha256: "ab".repeat(32),
 * });
 * assert.deepEqual(p.agents.docs.writeScopes, ["docs/"]);
 * ```
 */
export function parsePolicy(text: string, opts: ParsePolicyOptions): Policy {
  const briefRel = briefRelative(opts.briefPath, opts.projectRoot);
  const name = briefRel ?? opts.briefPath;
  const src = parseJsonSource(text, name);
  const raw = validateBrief(src);
  const args = lintPolicy(raw, src, briefRel);
  const policy = compilePolicy(raw, args, {
    briefPath: resolve(opts.briefPath),
    briefRel,
    briefSha256: opts.briefSha256,
  });
  const warnings = briefWarnings(
    raw,
    src,
    opts.isDirectory === undefined ? new Set() : scopeDirsOf(raw, opts.isDirectory),
  );
  return Object.freeze({ ...policy, warnings: Object.freeze(warnings) });
}

/** What `briefFindings` reports about a brief. */
export interface BriefFindings {
  /** Every problem that would refuse the brief (empty when `parsePolicy` accepts it). */
  readonly findings: readonly PolicyError[];
  /** The lint's warnings (a literal write scope naming an existing directory). */
  readonly warnings: readonly string[];
  /** The agents the brief names (when its shape is valid). */
  readonly agents: readonly string[];
  /** The gates the brief names (when its shape is valid). */
  readonly gates: readonly string[];
}

/**
 * Every problem of a brief's text at once: the JSON syntax, then the shape (all of its problems),
 * then the lint (each unit's first), then compiling; and the warnings. `isDirectory` says whether
 * a project-relative path is an existing directory (the fact the warnings need; the caller does
 * the I/O). The brief `parsePolicy` accepts has no findings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { briefFindings } from "./parse.ts";
 * const r = briefFindings('{"write_policy": "x", "agent_polices": {}}', {
 *   briefPath: "/p/agentteams.json", projectRoot: "/p", briefSha256: "0".repeat(64),
 * }, () => false);
 * assert.deepEqual(r.findings.map((e) => e.code), ["BRIEF_UNKNOWN_KEY", "BRIEF_INVALID"]);
 * ```
 */
export function briefFindings(
  text: string,
  opts: ParsePolicyOptions,
  isDirectory: (rel: string) => boolean,
): BriefFindings {
  const briefRel = briefRelative(opts.briefPath, opts.projectRoot);
  let src;
  try {
    src = parseJsonSource(text, briefRel ?? opts.briefPath);
  } catch (e) {
    if (e instanceof PolicyError) return { findings: [e], warnings: [], agents: [], gates: [] };
    throw e;
  }
  const { raw, findings } = briefShapeFindings(src);
  if (raw === null) return { findings, warnings: [], agents: [], gates: [] };
  const agents = Object.keys(raw.agent_policies ?? {});
  const gates = Object.keys(raw.proposal_gates ?? {});
  const lint = lintFindings(raw, src, briefRel);
  const warnings = briefWarnings(raw, src, scopeDirsOf(raw, isDirectory));
  if (lint.length > 0) return { findings: lint, warnings, agents, gates };
  try {
    parsePolicy(text, opts);
  } catch (e) {
    if (!(e instanceof PolicyError)) throw e;
    return { findings: [e], warnings, agents, gates };
  }
  return { findings: [], warnings, agents, gates };
}
