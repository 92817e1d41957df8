/**
 * One call that turns a confined-programs entry and a command into a plan: resolve and check the
 * roots, walk the guarded paths, scan the writable roots, then build the plan (pure). Every
 * decision lives in `write_exec_roots.ts`, `protected_paths.ts` and `mounts.ts`; this file only
 * gathers facts.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /srv/repo
 * import { prepareConfinement } from "./mounts_io.ts";
 * import { confineArgv } from "./wrapper_chain.ts";
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
import { guardFacts } from "./read_only_guards.ts";
import { buildPlan, type ConfinementPlan } from "./mounts.ts";
import { literalProtected, protectedMatcher } from "./protected_paths.ts";
import { entryKind, realPathLoose } from "../fs/entry.ts";
import { normalizeRel } from "../fs/rel_path.ts";
import { existingHidden, grantKeepClear, resolveRoots } from "./write_exec_roots_io.ts";
import { overlaps } from "../fs/within.ts";
import type { GrantedRoot } from "./write_exec_roots.ts";
import { assertSafePath } from "./safe_path.ts";
import { execAllows, readShebang } from "./gate_exec.ts";
import { type ExecOwner, execRefusalMessage, interpreterRefusalMessage } from "./exec_hint.ts";
import { confinedFilePath } from "./operator_file.ts";
import { readOnlyMatcher, type ScanRecord, scanWritableRoots } from "./write_root_scan.ts";
import { execAllowlist, type LandlockRule, loaderCandidates } from "./landlock.ts";
import type { SandboxHost } from "./host_probe.ts";

/** Inputs of {@link prepareConfinement}. */
export interface PrepareOptions {
  /**
   * What the Linux host offers (bwrap's features, the kernel's Landlock; `host_probe.ts`): the plan
   * then says how exec is held (`execAllowlist`) and which bwrap it is for. Absent or `null`: not
   * said (Seatbelt, the unconfined opt-out, or a caller that only checks a plan).
   */
  readonly host?: SandboxHost | null;
  /** `Deno.build.arch` (which ELF interpreters Landlock must allow). */
  readonly arch?: string;
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
   * Write roots capability grants add (the runner reads them at its start; `write_exec_roots.ts`
   * checks each). The issuer's control plane at its workspace root stays read-only inside them.
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
 * ```ts ignore
 * // Not run: it needs a project at /srv/repo (the exec root is checked after the project resolves)
 * import { prepareConfinement } from "./mounts_io.ts";
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
  // Where Landlock holds every exec, a script's interpreter must lie under an exec path too: say
  // so now, by name, rather than let the kernel refuse it inside the sandbox.
  const landlock = (opts.host?.landlock.abi ?? 0) >= 1;
  const interpreter = landlock ? interpreterOf(programReal) : null;
  if (interpreter !== null && !execAllows(interpreter, roots.exec, foldCase)) {
    throw new SandboxError(
      "CONFINED_INVALID",
      interpreterRefusalMessage({
        program,
        programReal,
        interpreter,
        execRoots: roots.exec,
        owner: opts.execOwner ?? null,
        operatorFile: confinedFilePath(roots.projectReal, opts.home),
        foldCase,
      }),
      { details: { program: programReal, interpreter } },
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
  const host = opts.host ?? null;
  return buildPlan({
    roots,
    pins,
    ...(host === null ? {} : {
      bwrapFeatures: host.bwrap,
      execAllowlist: execAllowlist(
        host.landlock,
        host.landlock.abi >= 1
          ? execRules(
            opts.agent.exec.map((e) => e.startsWith("~/") ? `${opts.home}/${e.slice(2)}` : e),
            roots.exec,
            opts.arch ?? Deno.build.arch,
          )
          : [],
      ),
    }),
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

/**
 * The Landlock rules' facts: each exec path that exists, and each ELF interpreter of this
 * architecture that exists, by real path with the identity it has now (the inner guard compares
 * it again inside the sandbox). An exec path given through a link is allowed at its target as
 * it is now, and only when that target is the one `checkRoots` passed (`checked`); a missing one
 * gets no rule (nothing can be made to run there later). Each is looked at through the path as
 * given (links followed): the launch flags grant that, not always its target.
 */
function execRules(
  given: readonly string[],
  checked: readonly string[],
  arch: string,
): LandlockRule[] {
  const out: LandlockRule[] = [];
  const entries = [
    ...given.map((g) => ({ g, checked: true })),
    ...loaderCandidates(arch).map((g) => ({ g, checked: false })),
  ];
  for (const { g, checked: mustMatch } of entries) {
    let real: string;
    let st: Deno.FileInfo;
    try {
      real = Deno.realPathSync(g);
      st = Deno.statSync(g);
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable) throw e;
      continue;
    }
    if (mustMatch && !checked.includes(real)) {
      throw new SandboxError(
        "CONFINED_PATH_UNSAFE",
        `exec path ${g} now leads to ${real}, not where it led when it was checked; refused`,
        { details: { path: g, real } },
      );
    }
    assertSafePath(real, "exec path");
    out.push({ path: real, dev: st.dev, ino: st.ino ?? 0 });
  }
  return out;
}
