/**
 * Matching a command request against the agent's allowlist. Pure: it decides from the request,
 * the agent's policy and the supplied path matchers, and returns the entry that allows the
 * request or throws the closest {@link RequestError}.
 *
 * Request-wide refusals come first (malformed argv, NUL, a `..` segment in any argument, glued to
 * an option too, see `hasParentSegment`; a bad cwd or declaration shape). Then every entry is
 * tried; the request is allowed when one entry passes prefix, arity, patterns, pinned cwd, stdin
 * and declared writes. When none does, the refusal of the entry that got furthest is reported.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs an agent's policy, which it declares rather than makes.
 * import { matchRequest } from "./match.ts";
 * declare const args: Parameters<typeof matchRequest>; // the request, the agent's policy, the guards
 * const { entry, cwd, writes } = matchRequest(...args);
 * ```
 * @module
 */

import { RequestError } from "../errors.ts";
import type { AgentPolicy, CommandEntry } from "../policy/types.ts";
import { matchArgv } from "./argv.ts";
import { hasParentSegment, normaliseCwd } from "./arg_paths.ts";
import {
  checkDeclaration,
  type Declaration,
  forbiddenReason,
  type Guards,
  writeAllowed,
} from "./writes.ts";

/** The fields of a command request this module judges. */
export interface RequestFields {
  /** The argument vector; `argv[0]` is the program. */
  readonly argv: readonly string[];
  /** The requested working directory (default `.`). */
  readonly cwd?: string;
  /** Paths the command declares it will write. */
  readonly expectedWrites?: readonly string[];
  /** True when the request carries `stdin_from_content`. */
  readonly hasStdin: boolean;
}

/** What an allowed request matched. */
export interface RequestMatch {
  /** The allowlist entry that allows the request. */
  readonly entry: CommandEntry;
  /** Its index in the agent's `commands`. */
  readonly index: number;
  /** The normalised working directory (project-relative, `.` for the root). */
  readonly cwd: string;
  /** The normalised declarations. */
  readonly writes: readonly Declaration[];
}

type Code = "ARGV_NOT_ALLOWED" | "CWD_NOT_ALLOWED" | "STDIN_NOT_ALLOWED" | "WRITES_NOT_ALLOWED";

interface Miss {
  readonly code: Code;
  readonly reason: string;
  /** Lexicographic closeness: `[stage, progress]`. */
  readonly rank: readonly [number, number];
}

function closer(a: Miss, b: Miss): boolean {
  return a.rank[0] !== b.rank[0] ? a.rank[0] > b.rank[0] : a.rank[1] > b.rank[1];
}

function refuse(code: ConstructorParameters<typeof RequestError>[0], message: string): never {
  throw new RequestError(code, message);
}

function checkArgvShape(argv: unknown): readonly string[] {
  if (!Array.isArray(argv) || argv.length === 0) {
    refuse("ARTIFACT_INVALID", "argv must be a non-empty list of strings");
  }
  for (const arg of argv) {
    if (typeof arg !== "string") refuse("ARTIFACT_INVALID", "argv must hold strings only");
  }
  const strings = argv as readonly string[];
  strings.forEach((arg, i) => {
    if (arg.includes("\0")) refuse("ARGV_NOT_ALLOWED", `argument ${i} contains NUL`);
  });
  strings.forEach((arg, i) => {
    if (hasParentSegment(arg)) {
      refuse("PARENT_SEGMENT", `argument ${i} ${JSON.stringify(arg)} has a .. path segment`);
    }
  });
  return strings;
}

function entryMiss(
  req: RequestFields,
  cwd: string,
  writes: readonly Declaration[],
  entry: CommandEntry,
  agent: AgentPolicy,
  guards: Guards,
): Miss | null {
  const verdict = matchArgv(req.argv, entry);
  if (!verdict.ok) return { code: "ARGV_NOT_ALLOWED", reason: verdict.reason, rank: verdict.rank };
  const pinned = normaliseCwd(entry.cwd);
  if (!pinned.ok || pinned.rel !== cwd) {
    const want = pinned.ok ? pinned.rel : entry.cwd;
    return {
      code: "CWD_NOT_ALLOWED",
      reason: `cwd ${JSON.stringify(cwd)} is not the entry's pinned cwd ${JSON.stringify(want)}`,
      rank: [3, 0],
    };
  }
  if (req.hasStdin && entry.stdinGates === null) {
    return {
      code: "STDIN_NOT_ALLOWED",
      reason: "this entry registers no stdin_gates, so it takes no stdin_from_content",
      rank: [4, 0],
    };
  }
  for (let i = 0; i < writes.length; i++) {
    const shown = writes[i].rel + (writes[i].dir ? "/" : "");
    // A protected path only the entry's own writes globs make writable (an owned protected write).
    const why = forbiddenReason(writes[i].rel, guards, entry.writes);
    if (why !== null) {
      return {
        code: "WRITES_NOT_ALLOWED",
        reason: `expected write ${JSON.stringify(shown)} ${why}`,
        rank: [5, i],
      };
    }
    if (!writeAllowed(writes[i], entry, agent, guards.matchers)) {
      return {
        code: "WRITES_NOT_ALLOWED",
        reason: `expected write ${
          JSON.stringify(shown)
        } is neither in the entry's writes globs nor in the agent's write scopes`,
        rank: [5, i],
      };
    }
  }
  return null;
}

/**
 * Finds the allowlist entry that allows a request, or throws the closest refusal
 * (`ARTIFACT_INVALID`, `UNKNOWN_AGENT`, `ARGV_NOT_ALLOWED`, `PARENT_SEGMENT`, `CWD_NOT_ALLOWED`,
 * `STDIN_NOT_ALLOWED`, `WRITES_NOT_ALLOWED`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { matchRequest } from "./match.ts";
 * const entry = {
 *   prefix: ["make"], args: ["test"], argPatterns: [/^test$/], variadic: false, cwd: ".",
 *   writes: [], stdinGates: null, timeout: 600, network: false, networkAllow: null,
 * };
 * const guards = {
 *   briefRel: "agentteams.jsonc",
 *   plane: { root: "/work/p", git: [] },
 *   matchers: { inScopes: () => false, fnmatch: () => false, isProtected: () => false },
 * };
 * assert.equal(matchRequest({ argv: ["make", "test"], hasStdin: false }, { writeScopes: [], commands: [entry] }, guards)
 *   .index, 0);
 * ```
 */
export function matchRequest(
  req: RequestFields,
  agent: AgentPolicy | undefined,
  guards: Guards,
): RequestMatch {
  if (agent === undefined) refuse("UNKNOWN_AGENT", "the agent has no agent_policies entry");
  checkArgvShape(req.argv);
  const cwd = normaliseCwd(req.cwd);
  if (!cwd.ok) refuse("CWD_NOT_ALLOWED", `cwd ${JSON.stringify(req.cwd)} ${cwd.reason}`);
  const writes: Declaration[] = [];
  for (const value of req.expectedWrites ?? []) {
    if (typeof value !== "string") refuse("ARTIFACT_INVALID", "expected_writes must hold strings");
    const decl = checkDeclaration(value, guards);
    if (typeof decl === "string") {
      refuse("WRITES_NOT_ALLOWED", `expected write ${JSON.stringify(value)} ${decl}`);
    }
    writes.push(decl);
  }
  let best: Miss | null = null;
  for (let index = 0; index < agent.commands.length; index++) {
    const entry = agent.commands[index];
    const miss = entryMiss(req, cwd.rel, writes, entry, agent, guards);
    if (miss === null) return { entry, index, cwd: cwd.rel, writes };
    if (best === null || closer(miss, best)) best = miss;
  }
  if (best === null) refuse("ARGV_NOT_ALLOWED", "the agent has no allowlisted commands");
  refuse(best.code, best.reason);
}
