/**
 * Gathers the facts `write_exec_roots.ts` decides on: real paths of the project, home, TMPDIR and
 * exec entries, and what each component of each write root is (`lstat`, never following a link).
 * Roots are resolved once, here; the plan then uses exactly the checked real paths.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveRoots } from "./write_exec_roots_io.ts";
 * const project = Deno.realPathSync(Deno.makeTempDirSync());
 * const tmpdir = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${project}/build`);
 * const roots = resolveRoots({
 *   project, home: "/root", tmpdir, agent: { exec: ["/usr/bin"], write: ["build"] },
 * });
 * assert.deepEqual(roots.writeRoots, [`${project}/build`]);
 * Deno.removeSync(project, { recursive: true });
 * Deno.removeSync(tmpdir);
 * ```
 * @module
 */

import { type EntryKind, entryKind, realPathLoose } from "../fs/entry.ts";
import { dirname, normalize } from "../fs/path.ts";
import { confinedFilePath } from "./operator_file.ts";
import type { ConfinedAgent, ConfinedPrograms } from "../policy/types.ts";
import { SandboxError } from "../errors.ts";
import {
  checkRoots,
  type GrantedRoot,
  type GrantedRootFacts,
  type KeepClear,
  type ResolvedRoots,
  type WriteRootFacts,
  writeRootProblem,
} from "./write_exec_roots.ts";

/** Inputs of {@link resolveRoots}. */
export interface ResolveRootsOptions {
  /** The project root (any spelling; resolved here). */
  readonly project: string;
  /** The operator's home directory (for `~/` exec entries). */
  readonly home: string;
  /** The run's private TMPDIR (must exist). */
  readonly tmpdir: string;
  /** The confinement's exec and write lists (validated by `confined_programs.ts`). */
  readonly agent: ConfinedAgent;
  /**
   * Other agents' write roots that exec paths must not overlap (a gate passes all of them):
   * project-relative, or absolute (granted roots). An absolute one the process may not read is
   * compared as written ({@link foreignRootReal}).
   */
  readonly foreignWriteRoots?: readonly string[];
  /** Write roots capability grants add (the runner's), absolute. */
  readonly grantedRoots?: readonly GrantedRoot[];
  /** What a granted root must keep clear of ({@link grantKeepClear}). */
  readonly grantKeepClear?: readonly KeepClear[];
  /** Case-fold comparisons (default: on macOS). */
  readonly foldCase?: boolean;
}

/**
 * The component-by-component walk from `projectReal` down to `rel`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { walkRoot } from "./write_exec_roots_io.ts";
 * const p = Deno.realPathSync(Deno.makeTempDirSync());
 * Deno.mkdirSync(`${p}/lean`);
 * assert.deepEqual(walkRoot(p, "lean/.lake").walk, [
 *   { path: `${p}/lean`, kind: "dir" },
 *   { path: `${p}/lean/.lake`, kind: "missing" },
 * ]);
 * Deno.removeSync(p, { recursive: true });
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
 * What the file system says of one granted root: `lstat` of the path and its real path (`null`
 * when it cannot be resolved).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantedRootFacts } from "./write_exec_roots_io.ts";
 * const a = Deno.realPathSync(Deno.makeTempDirSync());
 * assert.equal(grantedRootFacts({ root: a, issuerRoot: a, grant: "G-1" }).kind, "dir");
 * assert.equal(grantedRootFacts({ root: `${a}/docs`, issuerRoot: a, grant: "G-1" }).kind, "missing");
 * Deno.removeSync(a);
 * ```
 */
export function grantedRootFacts(g: GrantedRoot): GrantedRootFacts {
  const kind = entryKind(g.root);
  let real: string | null = null;
  if (kind !== "missing") {
    try {
      real = Deno.realPathSync(g.root);
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable) throw e;
    }
  }
  return {
    path: g.root,
    grant: g.grant,
    kind,
    real,
    issuerRoot: g.issuerRoot,
    issuerGit: g.issuerGit ?? [],
  };
}

/**
 * The real paths of the hidden directories that exist (a missing one hides nothing, and a missing
 * key dir's parents, the key given in the environment, need not be resolvable under narrow
 * launch flags).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { existingHidden } from "./write_exec_roots_io.ts";
 * assert.deepEqual(existingHidden(["/surely-not-here-7f2/keys"]), []);
 * ```
 */
export function existingHidden(dirs: readonly string[]): string[] {
  const out: string[] = [];
  for (const dir of dirs) {
    if (entryKind(dir) === "missing") continue;
    const real = realPathLoose(dir);
    if (entryKind(real) !== "missing") out.push(real);
  }
  return out;
}

/**
 * What a granted root must keep clear of, resolved: the hidden directories that exist (as
 * {@link existingHidden} gives them), the folder of the operator's confined-programs files, and every
 * absolute directory on `PATH` (a writable one would have the operator run what a command put
 * there).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { grantKeepClear } from "./write_exec_roots_io.ts";
 * const k = grantKeepClear({ hidden: [], projectReal: "/srv/p", home: "/root", path: "/usr/bin:/bin" });
 * const what = k.map((c) => c.what);
 * assert.ok(what.includes("the PATH directory /usr/bin"));
 * ```
 */
export function grantKeepClear(opts: {
  /** The hidden directories that exist, real paths ({@link existingHidden}). */
  readonly hidden: readonly string[];
  readonly projectReal: string;
  readonly home: string;
  readonly path: string | undefined;
}): KeepClear[] {
  const out: KeepClear[] = opts.hidden.map((h) => ({
    path: h,
    what: `the hidden directory ${h}`,
  }));
  const confined = dirname(confinedFilePath(opts.projectReal, homeRealOf(opts.home)));
  out.push({ path: confined, what: "the operator's confined-programs folder" });
  for (const dir of (opts.path ?? "").split(":")) {
    if (!dir.startsWith("/")) continue;
    let real: string;
    try {
      real = realPathLoose(dir);
    } catch (e) {
      // A PATH entry the runner may not read is kept clear as written.
      if (!(e instanceof Deno.errors.NotCapable)) throw e;
      real = normalize(dir);
    }
    out.push({ path: real, what: `the PATH directory ${dir}` });
  }
  return out;
}

/**
 * The home directory's real path; as given (normalized) when the process may not read it (the
 * narrow launch flags of `apply` and `run` do not grant the operator's whole home).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { homeRealOf } from "./write_exec_roots_io.ts";
 * assert.equal(homeRealOf("/surely-not-here-9c1/home/"), "/surely-not-here-9c1/home");
 * ```
 */
export function homeRealOf(home: string): string {
  try {
    return realPathLoose(home);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) return normalize(home).replace(/(.)\/+$/, "$1");
    throw e;
  }
}

/**
 * An absolute foreign write root (a grant's, in the holder's ledger) as its real path, or, when
 * the launch flags do not let the process read it, as written (normalized). The narrow flags of
 * `apply` and `run` grant the reads of the roots a runner could accept now
 * (`lib/cli/acting_needs.ts`); a grant no runner would accept (too broad, HALTed, expired,
 * unverified) must not make the act need its root, so its root is compared as named.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { foreignRootReal } from "./write_exec_roots_io.ts";
 * assert.equal(foreignRootReal("/surely-not-here-7d2/docs/"), "/surely-not-here-7d2/docs");
 * ```
 */
export function foreignRootReal(root: string): string {
  try {
    return realPathLoose(root);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) return normalize(root).replace(/(.)\/+$/, "$1");
    throw e;
  }
}

/**
 * The brief's confined write directories (`confined_programs.<agent>.write`) the sandbox would
 * refuse, checked up front by the sandbox's own rule ({@link walkRoot}, then `writeRootProblem`,
 * as every confined run checks them): a directory that does not exist (else the first `run` fails
 * `CONFINED_INVALID`), a symlink on its way, one not below the project root. Each problem names the
 * agent, the entry and what to do. An operator confined-programs file's entries are the operator's,
 * not checked here. `brief check` and `doctor` report them.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs block, which it declares rather than makes.
 * import { confinedWriteProblems } from "./write_exec_roots_io.ts";
 * import type { ConfinedPrograms } from "../policy/types.ts";
 * declare const block: ConfinedPrograms; // worker: write ["out"], with no /work/p/out
 * confinedWriteProblems(block, "/work/p").map((e) => e.code); // ["CONFINED_INVALID"]
 * ```
 */
export function confinedWriteProblems(
  block: ConfinedPrograms | null,
  projectRoot: string,
): SandboxError[] {
  if (block === null || block.source !== "brief") return [];
  const projectReal = Deno.realPathSync(projectRoot);
  const fold = Deno.build.os === "darwin";
  const out: SandboxError[] = [];
  for (const [agent, entry] of Object.entries(block.agents)) {
    entry.write.forEach((rel, i) => {
      const walk = walkRoot(projectReal, rel);
      const problem = writeRootProblem(walk, projectReal, fold);
      if (problem === null) return;
      const missing = walk.walk.at(-1)?.kind === "missing";
      const where = `confined_programs.${agent}.write[${i}] (${JSON.stringify(rel)})`;
      const todo = missing
        ? `: create the directory (mkdir -p ${projectReal}/${rel}) before the first run`
        : "";
      out.push(
        new SandboxError(problem.code as SandboxCode, `${where}: ${problem.message}${todo}`, {
          details: { ...problem.details, agent, index: i },
        }),
      );
    });
  }
  return out;
}

/** The codes a `SandboxError` takes. */
type SandboxCode = ConstructorParameters<typeof SandboxError>[0];

/**
 * Resolves and checks one confinement's roots (see `write_exec_roots.ts` for the rules); throws
 * `SandboxError` when they are unsafe.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveRoots } from "./write_exec_roots_io.ts";
 * const tmpdir = Deno.makeTempDirSync();
 * assert.throws(
 *   () => resolveRoots({ project: ".", home: "/root", tmpdir, agent: { exec: ["/"], write: [] } }),
 *   { code: "CONFINED_INVALID", message: /exec path \/ is too broad/ },
 * );
 * Deno.removeSync(tmpdir);
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
    grantedRoots: (opts.grantedRoots ?? []).map(grantedRootFacts),
    grantKeepClear: opts.grantKeepClear ?? [],
    foreignWriteRoots: (opts.foreignWriteRoots ?? []).map((rel) => ({
      rel,
      real: rel.startsWith("/") ? foreignRootReal(rel) : realPathLoose(projectReal + "/" + rel),
    })),
    exec: opts.agent.exec.map((given) => ({ given, real: realPathLoose(expand(given)) })),
    foldCase: opts.foldCase ?? Deno.build.os === "darwin",
  });
}
