/**
 * Gathers the facts `roots.ts` decides on: real paths of the project, home, TMPDIR and exec
 * entries, and what each component of each write root is (`lstat`, never following a link).
 * Roots are resolved once, here; the plan then uses exactly the checked real paths.
 *
 * @example
 * ```ts
 * import { resolveRoots } from "./roots_io.ts";
 * const roots = resolveRoots({
 *   project: "/srv/repo", home: "/root", tmpdir: "/tmp/run1",
 *   agent: { exec: ["/usr/bin"], write: ["build"] },
 * });
 * roots.writeRoots; // ["/srv/repo/build"]
 * ```
 * @module
 */

import { type EntryKind, entryKind, realPathLoose } from "../fs/entry.ts";
import { normalize } from "../fs/path.ts";
import type { ConfinedAgent } from "../policy/types.ts";
import { checkRoots, type ResolvedRoots, type WriteRootFacts } from "./roots.ts";

/** Inputs of {@link resolveRoots}. */
export interface ResolveRootsOptions {
  /** The project root (any spelling; resolved here). */
  readonly project: string;
  /** The operator's home directory (for `~/` exec entries). */
  readonly home: string;
  /** The run's private TMPDIR (must exist). */
  readonly tmpdir: string;
  /** The confinement's exec and write lists (validated by `programs_block.ts`). */
  readonly agent: ConfinedAgent;
  /** Other agents' write roots that exec paths must not overlap (a gate passes all of them). */
  readonly foreignWriteRoots?: readonly string[];
  /** Case-fold comparisons (default: on macOS). */
  readonly foldCase?: boolean;
}

/**
 * The component-by-component walk from `projectReal` down to `rel`.
 *
 * @example
 * ```ts
 * import { walkRoot } from "./roots_io.ts";
 * walkRoot("/srv/repo", "lean/.lake").walk.map((s) => s.path); // ["/srv/repo/lean", "/srv/repo/lean/.lake"]
 * ```
 */
export function walkRoot(projectReal: string, rel: string): WriteRootFacts {
  const walk: { path: string; kind: EntryKind }[] = [];
  let cur = projectReal;
  for (const seg of rel.split("/")) {
    if (seg === "") continue;
    cur = cur === "/" ? "/" + seg : cur + "/" + seg;
    const kind = entryKind(cur);
    walk.push({ path: cur, kind });
    if (kind !== "dir") break;
  }
  return { rel, walk };
}

/**
 * The home directory's real path; as given (normalized) when the process may not read it (the
 * narrow launch flags of `apply` and `run` do not grant the operator's whole home).
 */
function homeRealOf(home: string): string {
  try {
    return realPathLoose(home);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) return normalize(home).replace(/(.)\/+$/, "$1");
    throw e;
  }
}

/**
 * Resolves and checks one confinement's roots (see `roots.ts` for the rules); throws
 * `SandboxError` when they are unsafe.
 *
 * @example
 * ```ts
 * import { resolveRoots } from "./roots_io.ts";
 * resolveRoots({ project: ".", home: "/root", tmpdir: "/tmp/x", agent: { exec: ["/"], write: [] } });
 * // throws CONFINED_INVALID: "/" is too broad
 * ```
 */
export function resolveRoots(opts: ResolveRootsOptions): ResolvedRoots {
  const projectReal = Deno.realPathSync(opts.project);
  const homeReal = homeRealOf(opts.home);
  const tmpdirReal = Deno.realPathSync(opts.tmpdir);
  const expand = (p: string) =>
    p.startsWith("~/") ? (homeReal === "/" ? "" : homeReal) + p.slice(1) : p;
  return checkRoots({
    projectReal,
    homeReal,
    tmpdirReal,
    writeRoots: opts.agent.write.map((rel) => walkRoot(projectReal, rel)),
    foreignWriteRoots: (opts.foreignWriteRoots ?? []).map((rel) => ({
      rel,
      real: realPathLoose(projectReal + "/" + rel),
    })),
    exec: opts.agent.exec.map((given) => ({ given, real: realPathLoose(expand(given)) })),
    foldCase: opts.foldCase ?? Deno.build.os === "darwin",
  });
}
