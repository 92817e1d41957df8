/**
 * The run-time decision on one confinement's roots, from facts gathered by
 * `write_exec_roots_io.ts`:
 *
 * - every write root is an existing directory reached from the project root without passing
 *   through a symlink (a root swapped for a link to `~` must not widen what is writable);
 * - every granted root (a capability grant's target in another workspace, absolute) is an
 *   existing directory whose real path is itself, outside its issuer's control plane, and clear of
 *   the project, home's configuration, system trees and what the sandbox protects
 *   ({@link grantedRootProblem});
 * - the private TMPDIR lies outside the project;
 * - no exec path is `/`, the home directory, or the project or an ancestor of it;
 * - exec paths and writable places (write roots, TMPDIR, and for a gate every agent's write roots)
 *   never overlap in either direction, or a command could build a binary and then run it;
 * - every path is plain (`safe_path.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRoots } from "./write_exec_roots.ts";
 * assert.deepEqual(checkRoots({
 *   projectReal: "/p", homeReal: "/home/op", tmpdirReal: "/tmp/run1",
 *   writeRoots: [{ rel: "build", walk: [{ path: "/p/build", kind: "dir" }] }],
 *   foreignWriteRoots: [], exec: [{ given: "/usr/bin", real: "/usr/bin" }], foldCase: false,
 * }).writeRoots, ["/p/build"]);
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import type { EntryKind } from "../fs/entry.ts";
import { normalize } from "../fs/path.ts";
import { keyUnder, overlaps, within } from "../fs/within.ts";
import { controlPlaneHit, isControlPlaneName } from "../policy/control_plane.ts";
import type { GitControlPath } from "../git/context.ts";
import { assertSafePath, unsafePathChar } from "./safe_path.ts";

/** One write root and what each component below the project root is, shallowest first. */
export interface WriteRootFacts {
  /** The project-relative root, as validated. */
  readonly rel: string;
  /** One entry per path component below the project root, ending with the root itself. */
  readonly walk: readonly { readonly path: string; readonly kind: EntryKind }[];
}

/** One exec entry and its resolved real path. */
export interface ExecFacts {
  /** As written (`/opt/x` or `~/x`). */
  readonly given: string;
  /** Real path (`~` expanded, symlinks resolved as far as the path exists). */
  readonly real: string;
}

/** A write root a capability grant adds (the runner reads them once, at its start). */
export interface GrantedRoot {
  /** The absolute root, normalized. */
  readonly root: string;
  /** The issuer's workspace root it lies in: its control plane stays read-only. */
  readonly issuerRoot: string;
  /** The grant's id. */
  readonly grant: string;
  /**
   * Git's resolved paths for the issuer's workspace (its hooks directory, config files and
   * includes, wherever they are), read before each run; none when it is no git worktree.
   */
  readonly issuerGit?: readonly GitControlPath[];
}

/** A granted write root (absolute, outside the project) and what the file system says of it. */
export interface GrantedRootFacts {
  /** The root as granted: absolute and normalized. */
  readonly path: string;
  /** The grant it comes from, for messages. */
  readonly grant: string;
  /** What `lstat` says the path is. */
  readonly kind: EntryKind;
  /** Its real path (`null` when it cannot be resolved). */
  readonly real: string | null;
  /** The issuer's workspace root (the root must lie in it, outside its control plane). */
  readonly issuerRoot: string;
  /** Git's resolved paths for the issuer's workspace. */
  readonly issuerGit: readonly GitControlPath[];
}

/** A place a granted root must neither hold nor lie in, and what it is (for the message). */
export interface KeepClear {
  /** Its real path. */
  readonly path: string;
  /** What it is, e.g. `the hidden directory /h/.config/agentteams/keys`. */
  readonly what: string;
}

/**
 * System trees no grant may make writable, whoever signed it: what the operator's programs and
 * the system itself run from or are configured by.
 */
export const SYSTEM_TREES: readonly string[] = Object.freeze([
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/proc",
  "/run",
  "/sbin",
  "/sys",
  "/usr",
  "/var/lib",
  "/var/run",
  "/var/spool",
  "/Applications",
  "/Library",
  "/System",
  "/private/etc",
  "/private/var/db",
]);

/** Another agent's write root, resolved, for the gate overlap check. */ export interface ForeignRootFacts {
  /** Project-relative. */
  readonly rel: string;
  /** Real path. */
  readonly real: string;
}

/** Everything {@link checkRoots} decides on. */
export interface RootFacts {
  /** Real path of the project root. */
  readonly projectReal: string;
  /** Real path of the home directory. */
  readonly homeReal: string;
  /** Real path of the run's private TMPDIR. */
  readonly tmpdirReal: string;
  /** The confinement's own write roots. */
  readonly writeRoots: readonly WriteRootFacts[];
  /** Write roots granted from other workspaces (capability grants; the runner's only). */
  readonly grantedRoots?: readonly GrantedRootFacts[];
  /** What a granted root must keep clear of (hidden dirs, the operator file's folder, PATH). */
  readonly grantKeepClear?: readonly KeepClear[];
  /** Write roots of other agents that exec paths must not overlap (used for gates). */
  readonly foreignWriteRoots: readonly ForeignRootFacts[];
  /** Exec entries. */
  readonly exec: readonly ExecFacts[];
  /** Compare paths case-folded (macOS). */
  readonly foldCase: boolean;
}

/** The checked roots, as absolute real paths: pass exactly these to the plan. */
export interface ResolvedRoots {
  /** Real project root. */
  readonly projectReal: string;
  /** Real home directory. */
  readonly homeReal: string;
  /** Real private TMPDIR. */
  readonly tmpdir: string;
  /** Real write roots, in the order given, then the granted roots. */
  readonly writeRoots: readonly string[];
  /** Real exec paths, in the order given. */
  readonly exec: readonly string[];
}

function invalid(message: string, details: Record<string, unknown>): SandboxError {
  return new SandboxError("CONFINED_INVALID", message, { details });
}

/** The places a granted root must keep clear of, real paths. */
export interface GrantedRootBounds {
  readonly projectReal: string;
  readonly homeReal: string;
  readonly tmpdirReal: string;
  /** The hidden directories, the operator's confined-programs folder, the PATH directories. */
  readonly keepClear: readonly KeepClear[];
  readonly foldCase: boolean;
}

/**
 * Why a granted write root cannot widen a confinement, or `null` when it can. A grant reaches
 * into another workspace: the root must be a real directory named as it is (a symlink anywhere on
 * the path could be swapped to reach elsewhere), lie in its issuer's workspace but outside that
 * workspace's control plane (its table entries, `.git` names anywhere, git's resolved paths) and
 * clear of everything the operator runs or the sandbox protects: not `/`, no system tree
 * ({@link SYSTEM_TREES}), not holding the home directory nor inside one of its dot-directories
 * (`~/.config`, `~/.ssh`, `~/.local`: configuration the operator's programs obey), and neither
 * holding nor inside the project (its own write roots are the brief's), the private TMPDIR, or a
 * {@link KeepClear} place (a hidden directory such as the key dir, whose writable parent could
 * have it renamed and replaced; the operator's confined-programs folder; a PATH directory).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantedRootProblem } from "./write_exec_roots.ts";
 * const bounds = { projectReal: "/p", homeReal: "/home/op", tmpdirReal: "/tmp/r", keepClear: [], foldCase: false };
 * const g = { path: "/srv/a/docs", grant: "G-1", kind: "dir" as const, real: "/srv/a/docs", issuerRoot: "/srv/a", issuerGit: [] };
 * assert.equal(grantedRootProblem(g, bounds), null);
 * // It holds the home directory.
 * assert.equal(grantedRootProblem({ ...g, path: "/home", real: "/home", issuerRoot: "/" }, bounds)?.code, "CONFINED_INVALID");
 * ```
 */
export function grantedRootProblem(
  g: GrantedRootFacts,
  bounds: GrantedRootBounds,
): { code: "CONFINED_INVALID" | "CONFINED_PATH_UNSAFE"; message: string } | null {
  const place = grantedPlaceProblem(g, bounds);
  if (place !== null) return place;
  const label = `granted write root ${g.path} (grant ${g.grant})`;
  if (g.kind === "symlink" || (g.real !== null && !samePath(g.real, g.path, bounds.foldCase))) {
    return {
      code: "CONFINED_PATH_UNSAFE",
      message: `${label} passes through a symlink (it resolves to ${g.real ?? "nothing"}); ` +
        "grant the real path",
    };
  }
  if (g.kind !== "dir" || g.real === null) {
    return {
      code: "CONFINED_INVALID",
      message: `${label} is not an existing directory (it is ${g.kind})`,
    };
  }
  return null;
}

/**
 * The clauses of {@link grantedRootProblem} that need no look at the file system: where the root
 * lies (everything but "a real directory, no symlink"). The runner asks them first, before it
 * may read the root at all: a root they refuse is never granted to the runner's own flags.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantedPlaceProblem } from "./write_exec_roots.ts";
 * const bounds = { projectReal: "/p", homeReal: "/home/op", tmpdirReal: "/tmp/r", keepClear: [], foldCase: false };
 * // A system tree.
 * assert.equal(
 *   grantedPlaceProblem({ path: "/etc/cron.d", grant: "G-1", issuerRoot: "/etc", issuerGit: [] }, bounds)?.code,
 *   "CONFINED_INVALID",
 * );
 * ```
 */
export function grantedPlaceProblem(
  g: Pick<GrantedRootFacts, "path" | "grant" | "issuerRoot" | "issuerGit">,
  bounds: GrantedRootBounds,
): { code: "CONFINED_INVALID" | "CONFINED_PATH_UNSAFE"; message: string } | null {
  const fold = bounds.foldCase;
  const label = `granted write root ${g.path} (grant ${g.grant})`;
  const bad = (message: string) => ({ code: "CONFINED_INVALID" as const, message });
  if (g.path === "" || unsafePathChar(g.path) !== null) {
    return {
      code: "CONFINED_PATH_UNSAFE",
      message: `${label} holds a character a sandbox path may not`,
    };
  }
  const plain = (p: string) =>
    p.startsWith("/") && normalize(p) === p && (p === "/" || !p.endsWith("/"));
  if (!plain(g.path)) return bad(`${label} must be absolute and normalized`);
  if (g.path === "/" || within(bounds.homeReal, g.path, fold)) {
    return bad(`${label} is too broad: it holds the home directory ${bounds.homeReal}`);
  }
  const named = g.path.split("/").find((seg) => seg !== "" && isControlPlaneName(seg));
  if (named !== undefined) return bad(`${label} lies in ${named}, which is control plane`);
  if (!plain(g.issuerRoot) || !within(g.path, g.issuerRoot, fold)) {
    return bad(`${label} does not lie in its issuer's workspace ${g.issuerRoot}`);
  }
  if (g.path !== g.issuerRoot) {
    const hit = controlPlaneHit(keyUnder(g.issuerRoot, g.path), {
      root: g.issuerRoot,
      git: g.issuerGit,
    });
    if (hit !== null) {
      return bad(`${label} lies in the issuer's control plane (${hit.entry}: ${hit.reason})`);
    }
  }
  const system = SYSTEM_TREES.find((t) => overlaps(g.path, t, fold));
  if (system !== undefined) return bad(`${label} overlaps the system tree ${system}`);
  if (within(g.path, bounds.homeReal, fold)) {
    const dotted = keyUnder(bounds.homeReal, g.path).split("/").find((seg) => seg.startsWith("."));
    if (dotted !== undefined) {
      return bad(
        `${label} lies in ~/${dotted}, a hidden directory of home (configuration the ` +
          "operator's programs obey)",
      );
    }
  }
  const clash: KeepClear[] = [
    { path: bounds.projectReal, what: "the project" },
    { path: bounds.tmpdirReal, what: "the private TMPDIR" },
    ...bounds.keepClear,
  ];
  for (const c of clash) {
    if (overlaps(g.path, c.path, fold)) return bad(`${label} overlaps ${c.what} (${c.path})`);
  }
  return null;
}

function samePath(a: string, b: string, fold: boolean): boolean {
  return fold ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * The sandbox's rule for one confined agent's write root, on its walk from the project root
 * (`walkRoot`): every step an existing real directory (no symlink, no refused character), and the
 * root below the project root. `null` when it passes; else the `SandboxError` a confined run throws
 * (`CONFINED_PATH_UNSAFE` for a symlink or a refused character, `CONFINED_INVALID` otherwise).
 * `brief check` and `doctor` ask it up front (`write_exec_roots_io.ts` `confinedWriteProblems`),
 * every confined run through {@link checkRoots}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeRootProblem } from "./write_exec_roots.ts";
 * // Not an existing directory.
 * assert.equal(
 *   writeRootProblem({ rel: "out", walk: [{ path: "/p/out", kind: "missing" }] }, "/p", false)?.code,
 *   "CONFINED_INVALID",
 * );
 * ```
 */
export function writeRootProblem(
  root: WriteRootFacts,
  projectReal: string,
  fold: boolean,
): SandboxError | null {
  try {
    if (root.walk.length === 0) {
      throw invalid(`write root ${root.rel}: nothing to resolve`, { rel: root.rel });
    }
    for (const step of root.walk) {
      assertSafePath(step.path, `write root ${root.rel}`, { path: step.path });
      if (step.kind === "symlink") {
        throw new SandboxError(
          "CONFINED_PATH_UNSAFE",
          `write root ${root.rel} passes through a symlink at ${step.path}; refused`,
          { details: { rel: root.rel, path: step.path } },
        );
      }
      if (step.kind !== "dir") {
        throw invalid(
          `write root ${root.rel} is not an existing directory (${step.path} is ${step.kind})`,
          { rel: root.rel, path: step.path },
        );
      }
    }
    const real = root.walk[root.walk.length - 1].path;
    if (!within(real, projectReal, fold) || real === projectReal) {
      throw invalid(`write root ${root.rel} does not resolve below the project root`, {
        rel: root.rel,
        path: real,
      });
    }
    return null;
  } catch (e) {
    if (e instanceof SandboxError) return e;
    throw e;
  }
}

/**
 * Decides whether the gathered roots are safe to confine a command with; returns them resolved,
 * or throws `SandboxError` (`CONFINED_PATH_UNSAFE` for a symlink on a root's path or a refused
 * character, `CONFINED_INVALID` otherwise).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRoots } from "./write_exec_roots.ts";
 * assert.throws(() =>
 *   checkRoots({
 *     projectReal: "/p", homeReal: "/h", tmpdirReal: "/t", writeRoots: [], foreignWriteRoots: [],
 *     exec: [{ given: "/", real: "/" }], foldCase: false,
 *   }), { code: "CONFINED_INVALID", message: /too broad/ });
 * ```
 */
export function checkRoots(facts: RootFacts): ResolvedRoots {
  const fold = facts.foldCase;
  assertSafePath(facts.projectReal, "project root");
  assertSafePath(facts.tmpdirReal, "TMPDIR");
  if (overlaps(facts.tmpdirReal, facts.projectReal, fold)) {
    throw invalid(`the private TMPDIR ${facts.tmpdirReal} overlaps the project; refused`, {
      path: facts.tmpdirReal,
    });
  }
  const writable: { label: string; real: string }[] = [];
  const roots: string[] = [];
  for (const root of facts.writeRoots) {
    const problem = writeRootProblem(root, facts.projectReal, fold);
    if (problem !== null) throw problem;
    const real = root.walk[root.walk.length - 1].path;
    writable.push({ label: `write root ${root.rel}`, real });
    roots.push(real);
  }
  for (const g of facts.grantedRoots ?? []) {
    const problem = grantedRootProblem(g, { ...facts, keepClear: facts.grantKeepClear ?? [] });
    if (problem !== null) {
      throw new SandboxError(problem.code, problem.message, {
        details: { path: g.path, grant: g.grant },
      });
    }
    writable.push({ label: `granted write root ${g.path}`, real: g.path });
    roots.push(g.path);
  }
  writable.push({ label: "the private TMPDIR", real: facts.tmpdirReal });
  for (const f of facts.foreignWriteRoots) {
    writable.push({ label: `write root ${f.rel} of another agent`, real: f.real });
  }
  const exec: string[] = [];
  for (const e of facts.exec) {
    assertSafePath(e.real, `exec path ${e.given}`, { path: e.given });
    if (e.real === "/" || within(facts.projectReal, e.real, fold) || e.real === facts.homeReal) {
      throw invalid(
        `exec path ${e.given} is too broad (the file system root, home, or the project or an ` +
          "ancestor of it)",
        { path: e.given, real: e.real },
      );
    }
    for (const w of writable) {
      if (overlaps(e.real, w.real, fold)) {
        throw invalid(
          `exec path ${e.given} and ${w.label} overlap; a command could build a binary there and ` +
            "run it",
          { path: e.given, real: e.real, writable: w.real },
        );
      }
    }
    exec.push(e.real);
  }
  return Object.freeze({
    projectReal: facts.projectReal,
    homeReal: facts.homeReal,
    tmpdir: facts.tmpdirReal,
    writeRoots: Object.freeze(roots),
    exec: Object.freeze(exec),
  });
}
