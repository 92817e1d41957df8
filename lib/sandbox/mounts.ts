/**
 * The confinement plan: every path a backend needs, already resolved, checked and ordered, as a
 * pure function of gathered facts. `bwrap.ts` and `seatbelt.ts` turn a plan into an argv; neither
 * does any I/O.
 *
 * Read-only rules inside writable places: a guarded path (a control-plane path of the project, a
 * literal protected path, or an extra path such as git's resolved hooks directory) that lies in a
 * writable root is re-bound read-only when it exists, or, when it does not, its first missing
 * component is masked with an empty read-only mount so it cannot be created. Entries the scan
 * found (control-plane names at any depth, protected matches) are re-bound read-only. A guarded
 * path or scanned entry reached through a symlink is refused: a mount would follow the link while
 * the link itself stayed replaceable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildPlan } from "./mounts.ts";
 * const plan = buildPlan({
 *   roots: { projectReal: "/p", homeReal: "/h", tmpdir: "/t/run", writeRoots: ["/p/build"], exec: [] },
 *   cwd: "/p", argv: ["/usr/bin/make"], env: { PATH: "/usr/bin:/bin" }, network: false,
 *   hidden: ["/h/.config/agentteams/keys"], guards: [], scanHits: [], foldCase: false,
 * });
 * assert.deepEqual(plan.env, [["PATH", "/usr/bin:/bin"], ["TMPDIR", "/t/run"]]);
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import { within } from "../fs/within.ts";
import type { ResolvedRoots } from "./write_exec_roots.ts";
import type { ScanHit } from "./write_root_scan.ts";
import type { BindPin } from "./exec_guard.ts";
import type { ExecAllowlist } from "./landlock.ts";
import { assertSafePath } from "./safe_path.ts";

/** What the walk from `/` found for one guarded path. */
export interface GuardFact {
  /** The guarded absolute path. */
  readonly path: string;
  /** The first component (shallowest) that is missing, or `null` when the path exists. */
  readonly firstMissing: string | null;
  /** The first component that is a symlink, or `null`. */
  readonly symlinkAt: string | null;
}

/**
 * What this bwrap offers beyond 0.6 (read from its `--help`, not its version number): where
 * `--disable-userns` is missing (before 0.8) the seccomp filter blocks new user namespaces
 * instead; where `--bind-fd` is missing (before 0.10 upstream; Debian's 0.8 has it) the roots are
 * bound by path and the inner guard checks, inside the sandbox, that each is the one checked.
 */
export interface BwrapFeatures {
  /** `--disable-userns` (and `--assert-userns-disabled`). */
  readonly disableUserns: boolean;
  /** `--bind-fd FD DEST`. */
  readonly bindFd: boolean;
}

/** The facts a plan is built from. */
export interface PlanInput {
  /** Checked roots from `resolveRoots`. */
  readonly roots: ResolvedRoots;
  /** Absolute working directory (inside the project or the TMPDIR). */
  readonly cwd: string;
  /** The command; `argv[0]` must be an absolute path. */
  readonly argv: readonly string[];
  /** The sanitized environment (TMPDIR is set to the private one whatever is passed). */
  readonly env: Readonly<Record<string, string>>;
  /** Share the host network (the command entry's `network: true`). */
  readonly network: boolean;
  /** Existing real directories to hide entirely (the operator key directory). */
  readonly hidden: readonly string[];
  /** Guarded paths and what exists of them. */
  readonly guards: readonly GuardFact[];
  /** Entries the scan of the writable roots selected. */
  readonly scanHits: readonly ScanHit[];
  /**
   * The identity (device, inode) of each writable place as it was checked (the TMPDIR and every
   * write root): bwrap binds each from a descriptor the exec guard opens and compares.
   */
  readonly pins?: readonly BindPin[];
  /** Compare paths case-folded (macOS). */
  readonly foldCase: boolean;
  /** How exec is held (Linux: Landlock, or the top-level check only); absent: not said. */
  readonly execAllowlist?: ExecAllowlist;
  /** What the bwrap offers (absent: `BWRAP_FULL`, bwrap.ts's). */
  readonly bwrapFeatures?: BwrapFeatures;
}

/** A backend-neutral confinement plan. Every path is absolute, real and plain. */
export interface ConfinementPlan {
  /** Real project root. */
  readonly project: string;
  /** The private TMPDIR (writable). */
  readonly tmpdir: string;
  /** Writable roots, parents before children. */
  readonly writeRoots: readonly string[];
  /** Existing paths inside writable places to re-bind read-only, shallow first. */
  readonly readOnly: readonly string[];
  /** Missing paths inside writable places to mask with an empty read-only mount, shallow first. */
  readonly masks: readonly string[];
  /** Directories hidden entirely (read and write). */
  readonly hidden: readonly string[];
  /** Programs and directories of programs the command may execute (Seatbelt; Linux: `execAllowlist`). */
  readonly exec: readonly string[];
  /** Whether the host network is shared. */
  readonly network: boolean;
  /**
   * The network allowlist's proxy socket, inside `tmpdir` (`proxySocketIn`), so the sandbox (its
   * own network namespace) sees it at the same path, where the forwarder makes it the command's
   * HTTP proxy; absent without a list.
   */
  readonly proxySocket?: string;
  /** Working directory. */
  readonly cwd: string;
  /** The complete environment, sorted by name. */
  readonly env: readonly (readonly [string, string])[];
  /** The command. */
  readonly argv: readonly string[];
  /** The writable places' identities as checked (bwrap binds them by descriptor). */
  readonly pins?: readonly BindPin[];
  /**
   * How every exec is held to `exec` on Linux: by Landlock (its ABI and one rule per exec path
   * and ELF interpreter), or by the runner's top-level check only, and why (no Landlock here).
   */
  readonly execAllowlist?: ExecAllowlist;
  /** What the bwrap that runs the plan offers (absent: everything, `BWRAP_FULL`, bwrap.ts). */
  readonly bwrapFeatures?: BwrapFeatures;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function depth(p: string): number {
  return p === "/" ? 0 : p.split("/").length - 1;
}

function byDepth(a: string, b: string): number {
  return depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0);
}

function invalid(message: string, details: Record<string, unknown>): SandboxError {
  return new SandboxError("CONFINED_INVALID", message, { details });
}

/** The pins of exactly the writable places, each once; a writable place without one is refused. */
function pinsOf(pins: readonly BindPin[], writable: readonly string[]): BindPin[] {
  const out: BindPin[] = [];
  for (const w of writable) {
    const p = pins.find((x) => x.path === w);
    if (p === undefined) throw invalid(`the writable root ${w} was not pinned`, { path: w });
    out.push(p);
  }
  return out;
}

/**
 * Builds the plan, or throws `SandboxError` when the facts cannot be confined safely: a writable
 * root inside a guarded or hidden path, a guarded path or scan hit behind a symlink, an unsafe
 * path, a relative program, a bad environment name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildPlan } from "./mounts.ts";
 * assert.throws(() =>
 *   buildPlan({
 *     roots: { projectReal: "/p", homeReal: "/h", tmpdir: "/t", writeRoots: ["/p/b"], exec: [] },
 *     cwd: "/p", argv: ["make"], env: {}, network: false, hidden: [], guards: [], scanHits: [],
 *     foldCase: false,
 *   }), { code: "CONFINED_INVALID", message: /must be an absolute path/ });
 * ```
 */
export function buildPlan(input: PlanInput): ConfinementPlan {
  const fold = input.foldCase;
  const { roots } = input;
  const argv = input.argv;
  if (argv.length === 0 || !argv[0].startsWith("/")) {
    throw invalid("the command's program must be an absolute path", { argv: [...argv] });
  }
  if (argv.some((a) => a.includes("\0"))) {
    throw invalid("a command argument contains NUL", { argv: [...argv] });
  }
  assertSafePath(argv[0], "program");
  assertSafePath(input.cwd, "working directory");
  if (!within(input.cwd, roots.projectReal, fold) && !within(input.cwd, roots.tmpdir, fold)) {
    throw invalid(`working directory ${input.cwd} is outside the project`, { path: input.cwd });
  }

  const env = new Map<string, string>();
  for (const [k, v] of Object.entries(input.env)) {
    if (!ENV_NAME.test(k) || v.includes("\0")) {
      throw invalid(`environment variable ${JSON.stringify(k)} cannot be passed`, { name: k });
    }
    env.set(k, v);
  }
  env.set("TMPDIR", roots.tmpdir);

  const writable = [...new Set([roots.tmpdir, ...roots.writeRoots])];
  for (const w of writable) assertSafePath(w, "writable root");
  const inWritable = (p: string) => writable.some((w) => within(p, w, fold));
  const containsWritable = (p: string) => writable.some((w) => within(w, p, fold));

  const ro: string[] = [];
  const masks: string[] = [];
  for (const g of input.guards) {
    assertSafePath(g.path, "protected path");
    if (containsWritable(g.path)) {
      throw invalid(`a writable root lies inside the protected path ${g.path}; refused`, {
        path: g.path,
      });
    }
    if (!inWritable(g.path)) continue;
    if (g.symlinkAt !== null) {
      throw new SandboxError(
        "CONFINED_PATH_UNSAFE",
        `protected path ${g.path} inside a writable root passes through a symlink at ` +
          `${g.symlinkAt}; refused`,
        { details: { path: g.path, symlink: g.symlinkAt } },
      );
    }
    if (g.firstMissing === null) {
      ro.push(g.path);
    } else {
      assertSafePath(g.firstMissing, "protected path");
      if (!inWritable(g.firstMissing)) {
        throw invalid(`cannot mask ${g.firstMissing}: outside the writable roots`, {
          path: g.firstMissing,
        });
      }
      masks.push(g.firstMissing);
    }
  }
  for (const hit of input.scanHits) {
    if (hit.kind === "missing" || !inWritable(hit.path)) continue;
    assertSafePath(hit.path, "read-only entry");
    if (hit.kind === "symlink") {
      throw new SandboxError(
        "CONFINED_PATH_UNSAFE",
        `${hit.path} inside a writable root is a symlink with a control-plane or protected name; ` +
          "remove it",
        { details: { path: hit.path } },
      );
    }
    ro.push(hit.path);
  }

  // Keep the shallowest of nested entries: a read-only bind covers everything below it.
  const overlays = [
    ...[...new Set(ro)].map((p) => ({ p, mask: false })),
    ...[...new Set(masks)].map((p) => ({ p, mask: true })),
  ].sort((a, b) => byDepth(a.p, b.p) || (a.mask === b.mask ? 0 : a.mask ? 1 : -1));
  const kept: { p: string; mask: boolean }[] = [];
  for (const o of overlays) {
    if (!kept.some((k) => within(o.p, k.p, fold))) kept.push(o);
  }
  for (const k of kept) {
    if (writable.some((w) => within(w, k.p, fold))) {
      throw invalid(`a writable root lies inside the read-only entry ${k.p}; refused`, {
        path: k.p,
      });
    }
  }

  const hidden = [...new Set(input.hidden)].sort(byDepth);
  for (const h of hidden) {
    assertSafePath(h, "hidden directory");
    if (containsWritable(h)) {
      throw invalid(`a writable root lies inside the hidden directory ${h}; refused`, { path: h });
    }
    // Its mount would hide it, but a writable parent could be renamed aside and a directory of
    // the command's own (a key file it knows) made in its place for the next run to load.
    if (roots.writeRoots.some((w) => within(h, w, fold))) {
      throw invalid(`the hidden directory ${h} lies inside a writable root; refused`, { path: h });
    }
  }
  for (const e of roots.exec) assertSafePath(e, "exec path");

  return Object.freeze({
    project: roots.projectReal,
    tmpdir: roots.tmpdir,
    writeRoots: Object.freeze([...new Set(roots.writeRoots)].sort(byDepth)),
    readOnly: Object.freeze(kept.filter((k) => !k.mask).map((k) => k.p)),
    masks: Object.freeze(kept.filter((k) => k.mask).map((k) => k.p)),
    hidden: Object.freeze(hidden),
    exec: Object.freeze([...roots.exec]),
    network: input.network,
    cwd: input.cwd,
    env: Object.freeze(
      [...env.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map((e) =>
        Object.freeze(e)
      ),
    ),
    argv: Object.freeze([...argv]),
    ...(input.pins !== undefined ? { pins: Object.freeze(pinsOf(input.pins, writable)) } : {}),
    ...(input.execAllowlist !== undefined ? { execAllowlist: input.execAllowlist } : {}),
    ...(input.bwrapFeatures !== undefined ? { bwrapFeatures: input.bwrapFeatures } : {}),
  });
}
