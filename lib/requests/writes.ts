/**
 * `expected_writes`: which declarations a command may make, and which changed paths they cover.
 *
 * A declaration is a project-relative file, or a directory ending in `/` that covers everything
 * below it. It must lie in the entry's `writes` globs or in the agent's write scopes, and never in
 * the control plane or the brief. A protected path is refused unless the entry's own `writes`
 * globs cover it (an owned protected write, `lib/policy/owned_writes.ts`); write scopes never
 * make one writable. The write-scope and fnmatch matchers are passed in ({@link PathMatchers}),
 * so this module decides without touching the policy loader.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { declaredMatcher } from "./writes.ts";
 * const declared = declaredMatcher(["out/", "report.md"]);
 * assert.equal(declared("out/a/b.txt"), true);
 * assert.equal(declared("outside.txt"), false);
 * ```
 * @module
 */

import { type ControlPlane, controlPlaneBelow, controlPlaneHit } from "../policy/control_plane.ts";
import { entryWritesCover, protectedWriteRefused } from "../policy/owned_writes.ts";
import type { AgentPolicy, CommandEntry } from "../policy/types.ts";
import { normaliseRelative } from "./arg_paths.ts";

/** The path matchers a caller supplies (from `lib/policy/`). */
export interface PathMatchers {
  /** True when `rel` lies in one of the write scopes (file, `dir/`, or segment pattern). */
  inScopes(rel: string, scopes: readonly string[]): boolean;
  /** fnmatch: `*` crosses `/`; called with both arguments lower-cased. */
  fnmatch(rel: string, glob: string): boolean;
  /** True when `rel` is covered by `protected_paths`. */
  isProtected(rel: string): boolean;
}

/** Where a path stands against the always-refused places. */
export interface Guards {
  /** The path matchers. */
  readonly matchers: PathMatchers;
  /** The brief's project-relative path, `null` when it lies outside the project. */
  readonly briefRel: string | null;
  /** The project's control plane (the table and git's resolved paths). */
  readonly plane: ControlPlane;
}

/** A declaration after normalisation: `rel` has no trailing `/`; `dir` says it had one. */
export interface Declaration {
  /** Normalised project-relative path. */
  readonly rel: string;
  /** True for a directory declaration (covers everything below `rel`). */
  readonly dir: boolean;
}

/**
 * The first reason a normalised path may never be written by any command, whatever its entry
 * (control plane, a `.git` segment anywhere, the brief), or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { planeReason } from "./writes.ts";
 * const guards = { briefRel: "agentteams.jsonc", plane: { root: "/p", git: [] }, matchers: { inScopes: () => false, fnmatch: () => false, isProtected: () => false } };
 * assert.match(planeReason("vendor/lib/.git/config", guards) ?? "", /^lies in the control plane \(\.git: /);
 * assert.equal(planeReason("src/a.ts", guards), null);
 * ```
 */
export function planeReason(rel: string, guards: Guards): string | null {
  const plane = controlPlaneHit(rel, guards.plane);
  if (plane !== null) return `lies in the control plane (${plane.entry}: ${plane.reason})`;
  const folded = rel.toLowerCase();
  if (guards.briefRel !== null && folded === guards.briefRel.toLowerCase()) {
    return "is the brief that defines this policy";
  }
  return null;
}

/**
 * The first reason a normalised path may not be written by a command of this entry: one of
 * {@link planeReason}'s, or a protected path the entry's own `writes` globs do not cover
 * (`protectedWriteRefused`, the one rule on owned protected writes), or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { forbiddenReason } from "./writes.ts";
 * const guards = { briefRel: null, plane: { root: "/p", git: [] }, matchers: { inScopes: () => false, fnmatch: (r: string, g: string) => r === g, isProtected: (r: string) => r === "rec.json" } };
 * assert.match(forbiddenReason("rec.json", guards, []) ?? "", /^is a protected path, and /);
 * assert.equal(forbiddenReason("rec.json", guards, ["rec.json"]), null); // the entry owns it
 * ```
 */
export function forbiddenReason(
  rel: string,
  guards: Guards,
  entryWrites: readonly string[],
): string | null {
  const why = planeReason(rel, guards);
  if (why !== null) return why;
  if (
    protectedWriteRefused(rel, guards.matchers.isProtected, entryWrites, guards.matchers.fnmatch)
  ) {
    return `is a protected path, and the entry's writes globs ${
      JSON.stringify(entryWrites)
    } do not cover it (only an entry whose own writes cover a protected path may write it; ` +
      "write scopes and expected_writes never do)";
  }
  return null;
}

/**
 * Normalises one declaration and applies the entry-independent refusals: absolute, `~`, `..`,
 * NUL, the project root, the control plane (or a directory holding part of it), `.git` and the
 * brief. Returns the declaration or a reason. Protected paths depend on the entry
 * ({@link forbiddenReason}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkDeclaration } from "./writes.ts";
 * const guards = { briefRel: null, plane: { root: "/p", git: [] }, matchers: { inScopes: () => false, fnmatch: () => false, isProtected: () => false } };
 * assert.match(String(checkDeclaration(".git/hooks/x", guards)), /lies in the control plane \(\.git: /);
 * ```
 */
export function checkDeclaration(value: string, guards: Guards): Declaration | string {
  const norm = normaliseRelative(value);
  if (!norm.ok) return norm.reason;
  if (norm.rel === ".") return "declares the whole project";
  const why = planeReason(norm.rel, guards);
  if (why !== null) return why;
  if (norm.dir) {
    const inner = controlPlaneBelow(norm.rel, guards.plane);
    if (inner !== null) return `holds part of the control plane (${inner.entry}: ${inner.reason})`;
  }
  return { rel: norm.rel, dir: norm.dir };
}

/** A representative child used to ask whether a directory's contents are writable. */
const DIR_PROBE = "x";

/**
 * True when the entry's `writes` globs or the agent's write scopes allow a path. A directory
 * declaration is asked about a representative child (`dir/x`); each changed path is checked on
 * its own again when the run is compared ({@link declaredMatcher} with `allowed`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeAllowed } from "./writes.ts";
 * const m = { inScopes: () => false, fnmatch: (r: string, g: string) => r === g, isProtected: () => false };
 * assert.equal(writeAllowed({ rel: "out.txt", dir: false }, { writes: ["out.txt"] }, { writeScopes: [] }, m), true);
 * ```
 */
export function writeAllowed(
  decl: Declaration,
  entry: Pick<CommandEntry, "writes">,
  agent: Pick<AgentPolicy, "writeScopes">,
  matchers: PathMatchers,
): boolean {
  const probe = decl.dir ? `${decl.rel}/${DIR_PROBE}` : decl.rel;
  if (entryWritesCover(probe, entry.writes, matchers.fnmatch)) return true;
  return matchers.inScopes(probe, agent.writeScopes);
}

/** Extra conditions for {@link declaredMatcher}: every covered path must pass them too. */
export interface DeclaredOptions {
  /**
   * Refuse control plane, `.git`, the brief and protected paths (those `entryWrites` does not
   * cover) even below a declared directory.
   */
  readonly guards?: Guards;
  /** The matched entry's `writes` globs: the protected paths it owns (default: none). */
  readonly entryWrites?: readonly string[];
  /** Require each covered path to be allowed on its own (entry globs or scopes). */
  readonly allowed?: (rel: string) => boolean;
}

/**
 * Builds the "is this changed path declared?" matcher: an exact declaration, or a path below a
 * declaration ending in `/`. With `guards`, a path in the control plane, `.git`, the brief or a
 * protected path `entryWrites` does not cover is never declared; with `allowed`, each path must also be writable on its own.
 * Declarations that fail normalisation declare nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { declaredMatcher } from "./writes.ts";
 * const declared = declaredMatcher(["./build/"]);
 * assert.equal(declared("build/out.o"), true);
 * assert.equal(declared("build"), false); // the directory itself is not a file below it
 * ```
 */
export function declaredMatcher(
  expectedWrites: readonly string[],
  options: DeclaredOptions = {},
): (rel: string) => boolean {
  const files = new Set<string>();
  const dirs: string[] = [];
  for (const value of expectedWrites) {
    const norm = normaliseRelative(value);
    if (!norm.ok || norm.rel === ".") continue;
    if (norm.dir) dirs.push(norm.rel + "/");
    else files.add(norm.rel);
  }
  return (rel: string): boolean => {
    if (!files.has(rel) && !dirs.some((d) => rel.startsWith(d))) return false;
    if (
      options.guards !== undefined &&
      forbiddenReason(rel, options.guards, options.entryWrites ?? []) !== null
    ) return false;
    if (options.allowed !== undefined && !options.allowed(rel)) return false;
    return true;
  };
}
