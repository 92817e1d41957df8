/**
 * The run-time decision on one confinement's roots, from facts gathered by `roots_io.ts`:
 *
 * - every write root is an existing directory reached from the project root without passing
 *   through a symlink (a root swapped for a link to `~` must not widen what is writable);
 * - the private TMPDIR lies outside the project;
 * - no exec path is `/`, the home directory, or the project or an ancestor of it;
 * - exec paths and writable places (write roots, TMPDIR, and for a gate every agent's write roots)
 *   never overlap in either direction, or a command could build a binary and then run it;
 * - every path is plain (`safe_path.ts`).
 *
 * @example
 * ```ts
 * import { checkRoots } from "./roots.ts";
 * checkRoots({
 *   projectReal: "/p", homeReal: "/home/op", tmpdirReal: "/tmp/run1",
 *   writeRoots: [{ rel: "build", walk: [{ path: "/p/build", kind: "dir" }] }],
 *   foreignWriteRoots: [], exec: [{ given: "/usr/bin", real: "/usr/bin" }], foldCase: false,
 * }).writeRoots; // ["/p/build"]
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import type { EntryKind } from "../fs/entry.ts";
import { overlaps, within } from "../fs/within.ts";
import { assertSafePath } from "./safe_path.ts";

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

/** Another agent's write root, resolved, for the gate overlap check. */
export interface ForeignRootFacts {
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
  /** Real write roots, in the order given. */
  readonly writeRoots: readonly string[];
  /** Real exec paths, in the order given. */
  readonly exec: readonly string[];
}

function invalid(message: string, details: Record<string, unknown>): SandboxError {
  return new SandboxError("CONFINED_INVALID", message, { details });
}

/**
 * Decides whether the gathered roots are safe to confine a command with; returns them resolved,
 * or throws `SandboxError` (`CONFINED_PATH_UNSAFE` for a symlink on a root's path or a refused
 * character, `CONFINED_INVALID` otherwise).
 *
 * @example
 * ```ts
 * import { checkRoots } from "./roots.ts";
 * checkRoots({
 *   projectReal: "/p", homeReal: "/h", tmpdirReal: "/t", writeRoots: [], foreignWriteRoots: [],
 *   exec: [{ given: "/", real: "/" }], foldCase: false,
 * }); // throws CONFINED_INVALID: too broad
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
    if (!within(real, facts.projectReal, fold) || real === facts.projectReal) {
      throw invalid(`write root ${root.rel} does not resolve below the project root`, {
        rel: root.rel,
        path: real,
      });
    }
    writable.push({ label: `write root ${root.rel}`, real });
    roots.push(real);
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
