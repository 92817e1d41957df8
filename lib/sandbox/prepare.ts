/**
 * One call that turns a confined-programs entry and a command into a plan: resolve and check the
 * roots, walk the guarded paths, scan the writable roots, then build the plan (pure). Every
 * decision lives in `roots.ts`, `protected.ts` and `plan.ts`; this file only gathers facts.
 *
 * @example
 * ```ts
 * import { prepareConfinement } from "./prepare.ts";
 * import { confineArgv } from "./launch.ts";
 * const plan = prepareConfinement({
 *   project: "/srv/repo", home: "/home/op", tmpdir: "/tmp/agentteams-run-x",
 *   agent: { exec: ["/usr/bin"], write: ["build"] }, cwd: ".",
 *   argv: ["/usr/bin/make", "all"], env: { PATH: "/usr/bin:/bin", HOME: "/home/op" },
 *   network: false, protectedPaths: [], hiddenDirs: ["/home/op/.config/agentteams/keys"],
 *   controlPlane: { git: [] },
 * });
 * const cmd = confineArgv(plan, "bwrap");
 * ```
 * @module
 */
import type { NetworkRule } from "../policy/network_rules.ts";

import { SandboxError } from "../errors.ts";
import {
  CONTROL_PLANE_NAMES,
  type ControlPlane,
  controlPlaneReadOnly,
} from "../policy/control_plane.ts";
import { protectedWriteRefused } from "../policy/owned_writes.ts";
import type { ConfinedAgent } from "../policy/types.ts";
import { guardFacts } from "./guards_io.ts";
import { buildPlan, type ConfinementPlan } from "./plan.ts";
import { literalProtected, protectedMatcher } from "./protected.ts";
import { entryKind, realPathLoose } from "../fs/entry.ts";
import { normalizeRel } from "../fs/rel_path.ts";
import { existingHidden, grantKeepClear, resolveRoots } from "./roots_io.ts";
import { overlaps } from "../fs/within.ts";
import type { GrantedRoot } from "./roots.ts";
import { assertSafePath } from "./safe_path.ts";
import { execAllows, readShebang } from "./gate_exec.ts";
import { type ExecOwner, execRefusalMessage } from "./exec_hint.ts";
import { confinedFilePath } from "./operator_file.ts";
import { readOnlyMatcher, type ScanRecord, scanWritableRoots } from "./root_scan.ts";

/** Inputs of {@link prepareConfinement}. */
export interface PrepareOptions {
  /** The project root. */
  readonly project: string;
  /** The operator's home directory (for `~/` exec entries). */
  readonly home: string;
  /** The run's private TMPDIR (see `makePrivateTmpdir`). */
  readonly tmpdir: string;
  /** Exec and write lists: an agent's entry, or for a gate its exec paths and no write roots. */
  readonly agent: ConfinedAgent;
  /**
   * For a gate: every agent's write roots (project-relative) and the runner's granted roots
   * (absolute), which its exec paths must not overlap.
   */
  readonly foreignWriteRoots?: readonly string[];
  /**
   * Write roots capability grants add (the runner reads them at its start; `roots.ts` checks
   * each). The issuer's control plane at its workspace root stays read-only inside them.
   */
  readonly grantedRoots?: readonly GrantedRoot[];
  /** The pinned working directory, project-relative POSIX (`.` is the root). */
  readonly cwd: string;
  /** The command; `argv[0]` resolved to an absolute path. */
  readonly argv: readonly string[];
  /** The sanitized environment. */
  readonly env: Readonly<Record<string, string>>;
  /** The command entry's `network`. */
  readonly network: boolean;
  /** The command entry's network list (`null` or absent: none; only bwrap can keep one). */
  readonly networkAllow?: readonly NetworkRule[] | null;
  /** The brief's `protected_paths`. */
  readonly protectedPaths: readonly string[];
  /**
   * The command entry's `writes` globs: a protected path they cover (an owned protected write,
   * `lib/policy/owned_writes.ts`) is not kept read-only inside a write root. The control plane
   * and `extraReadOnly` stay read-only whatever they cover. Default: none (a gate).
   */
  readonly ownedWrites?: readonly string[];
  /** Directories to hide entirely (the operator key directory); absent ones are skipped. */
  readonly hiddenDirs: readonly string[];
  /**
   * Filled, when given, with what the scan of the writable places saw, for the walk after the
   * command (`rescanWritableRoots`, via `newReadOnlyEntries`).
   */
  readonly scanRecord?: ScanRecord;
  /**
   * The project's control plane (the table and git's resolved paths), kept read-only; its root
   * is taken to be the project's.
   */
  readonly controlPlane: Pick<ControlPlane, "git">;
  /** Further absolute paths to keep read-only (the brief, wherever it lies). */
  readonly extraReadOnly?: readonly string[];
  /** Case-fold path comparisons (default: on macOS). */
  readonly foldCase?: boolean;
  /** Whose exec list {@link agent} is, so a refused program's message names the key to add to. */
  readonly execOwner?: ExecOwner;
}

function resolveCwd(projectReal: string, cwd: string): string {
  const n = normalizeRel(cwd);
  if (!n.ok) {
    throw new SandboxError(
      "CONFINED_INVALID",
      `working directory ${cwd} must be project-relative`,
      {
        details: { cwd },
      },
    );
  }
  return n.rel === "." ? projectReal : realPathLoose(projectReal + "/" + n.rel);
}

/** A refused program's `#!` interpreter, resolved, for the message only (`null` when unknown). */
function interpreterOf(programReal: string): string | null {
  try {
    const interp = readShebang(programReal);
    return interp === null ? null : realPathLoose(interp);
  } catch {
    return null; // only a hint: the refusal stands either way
  }
}

/**
 * Gathers the facts and builds the plan; throws `SandboxError` when the command cannot be
 * confined safely.
 *
 * @example
 * ```ts
 * import { prepareConfinement } from "./prepare.ts";
 * prepareConfinement({
 *   project: "/srv/repo", home: "/root", tmpdir: "/tmp/run", agent: { exec: ["/"], write: [] },
 *   cwd: ".", argv: ["/bin/true"], env: {}, network: false, protectedPaths: [], hiddenDirs: [],
 *   controlPlane: { git: [] },
 * }); // throws CONFINED_INVALID: exec path "/" is too broad
 * ```
 */
export function prepareConfinement(opts: PrepareOptions): ConfinementPlan {
  const foldCase = opts.foldCase ?? Deno.build.os === "darwin";
  const hidden = existingHidden(opts.hiddenDirs);
  const granted = opts.grantedRoots ?? [];
  const roots = resolveRoots({
    project: opts.project,
    home: opts.home,
    tmpdir: opts.tmpdir,
    agent: opts.agent,
    foreignWriteRoots: opts.foreignWriteRoots,
    grantedRoots: granted,
    grantKeepClear: granted.length === 0 ? [] : grantKeepClear({
      hidden,
      projectReal: realPathLoose(opts.project),
      home: opts.home,
      path: opts.env.PATH,
    }),
    foldCase,
  });
  const p = roots.projectReal === "/" ? "" : roots.projectReal;
  const owned = opts.ownedWrites ?? [];
  const covers = protectedMatcher(opts.protectedPaths);
  // An owned literal protected path is left writable only when it is a file or absent: a literal
  // protected path covers everything below it, and the entry's globs owning the directory's own
  // name own none of what lies inside, so a protected directory stays bound read-only (its owned
  // files then need a pattern entry in protected_paths, which the scan below honours file by file).
  const guarded = literalProtected(opts.protectedPaths)
    .filter((rel) =>
      protectedWriteRefused(rel, covers, owned) ||
      !["file", "missing"].includes(entryKind(`${p}/${rel}`))
    )
    .map((rel) => `${p}/${rel}`);
  // The control plane as named (git's paths come both as configured and resolved): a guarded
  // path that passes through a symlink inside a write root is refused, never followed, so a
  // link git obeys there cannot be swapped for a directory of the command's own.
  const planes = [
    ...controlPlaneReadOnly({ root: roots.projectReal, git: opts.controlPlane.git }),
    // A granted root lies in another workspace: that workspace's own control plane (its `.git`,
    // `references/`, `.agentteams/`, ...) stays read-only inside it, by the same table; nor may a
    // command make one at the granted root's own top (a `.git` there would steer every git
    // command the issuer runs below it): each such name is kept read-only, or masked.
    ...granted.flatMap((g) => [
      ...controlPlaneReadOnly({ root: g.issuerRoot, git: g.issuerGit ?? [] }),
      ...CONTROL_PLANE_NAMES.map((n) => `${g.root}/${n}`),
    ]),
  ];
  // Only what overlaps a writable place matters (it could be written, or hold a writable root);
  // the rest is read-only anyway, and its spelling (a git config file under a HOME with a quote
  // in it, say) must not refuse the run.
  const writable = [roots.tmpdir, ...roots.writeRoots];
  const plane = planes.filter((p) => writable.some((w) => overlaps(p, w, foldCase)));
  for (const extra of [...plane, ...(opts.extraReadOnly ?? [])]) {
    assertSafePath(extra, "extra read-only path");
    if (!extra.startsWith("/")) {
      throw new SandboxError("CONFINED_INVALID", `extra read-only path ${extra} must be absolute`, {
        details: { path: extra },
      });
    }
  }
  guarded.push(...plane);
  for (const extra of opts.extraReadOnly ?? []) guarded.push(realPathLoose(extra));
  // bwrap has no exec allowlist: the top-level program, at least, must lie under an exec path
  // (Seatbelt enforces the list for every exec as well).
  const program = opts.argv[0];
  if (program === undefined || !program.startsWith("/")) {
    throw new SandboxError("CONFINED_INVALID", `the program ${program} must be an absolute path`, {
      details: { program },
    });
  }
  let programReal: string;
  try {
    programReal = Deno.realPathSync(program);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
    throw new SandboxError("CONFINED_INVALID", `program ${program} cannot be resolved`, {
      details: { program },
      cause: e,
    });
  }
  if (!execAllows(programReal, roots.exec, foldCase)) {
    throw new SandboxError(
      "CONFINED_INVALID",
      execRefusalMessage({
        program,
        programReal,
        interpreter: interpreterOf(programReal),
        execRoots: roots.exec,
        owner: opts.execOwner ?? null,
        operatorFile: confinedFilePath(roots.projectReal, opts.home),
        foldCase,
      }),
      { details: { program: programReal } },
    );
  }
  const scanHits = scanWritableRoots(
    [roots.tmpdir, ...roots.writeRoots],
    readOnlyMatcher(roots.projectReal, opts.protectedPaths, foldCase, owned),
    opts.scanRecord,
  );
  // Each writable place as it was checked: bwrap binds it from a descriptor the exec guard
  // opens and compares, so a root swapped for a link after this point is never followed.
  const pins = [roots.tmpdir, ...roots.writeRoots].map((path) => {
    const st = Deno.lstatSync(path);
    if (!st.isDirectory) {
      throw new SandboxError("CONFINED_PATH_UNSAFE", `${path} changed while it was checked`, {
        details: { path },
      });
    }
    return { path, dev: st.dev, ino: st.ino ?? 0 };
  });
  return buildPlan({
    roots,
    pins,
    cwd: resolveCwd(roots.projectReal, opts.cwd),
    argv: opts.argv,
    env: opts.env,
    network: opts.network,
    hidden,
    guards: guardFacts(guarded),
    scanHits,
    foldCase,
  });
}
