/**
 * The bubblewrap (Linux) backend: the whole `bwrap` argv as a pure function of a plan.
 *
 * Shape, in order: the host root read-only; a fresh `/dev` and a `/proc` of the sandbox's own PID
 * namespace; the private TMPDIR and each write root bound writable (parents first); every
 * read-only entry re-bound over itself; every mask an empty tmpfs remounted read-only; every hidden
 * directory an empty read-only tmpfs (mounted last, so it wins); every namespace unshared (the
 * network kept only when the plan says so), a user namespace with nested ones disabled and every
 * capability dropped (so even a root caller's command cannot unmount the read-only overlays);
 * killed with its parent; a new session (no TIOCSTI into the caller's terminal); the environment
 * cleared and set explicitly; the working directory; then `--` and the command.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bwrapArgv } from "./bwrap.ts";
 * const argv = bwrapArgv({
 *   bwrap: "/usr/bin/bwrap", project: "/p", tmpdir: "/t", writeRoots: ["/p/build"], readOnly: [],
 *   masks: [], hidden: [], exec: [], network: false, cwd: "/p", env: [["PATH", "/usr/bin"]],
 *   argv: ["/usr/bin/make"],
 * });
 * assert.equal(argv[0], "/usr/bin/bwrap");
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import type { BwrapFeatures, ConfinementPlan } from "./mounts.ts";

export type { BwrapFeatures };

/** A bwrap with every feature the plan uses (Debian 12's 0.8, upstream 0.10 and later). */
export const BWRAP_FULL: BwrapFeatures = Object.freeze({ disableUserns: true, bindFd: true });

/**
 * The features a bwrap's `--help` text lists.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseBwrapHelp } from "./bwrap.ts";
 * assert.deepEqual(parseBwrapHelp("    --bind-fd FD DEST   Bind open directory or path fd on DEST\n"), {
 *   disableUserns: false,
 *   bindFd: true,
 * });
 * ```
 */
export function parseBwrapHelp(help: string): BwrapFeatures {
  const has = (flag: string) => new RegExp(`^\\s*${flag}(\\s|$)`, "m").test(help);
  return Object.freeze({ disableUserns: has("--disable-userns"), bindFd: has("--bind-fd") });
}

/** A plan plus the absolute path of the bwrap binary to run. */
export interface BwrapPlan extends ConfinementPlan {
  /** Absolute path of `bwrap`. */
  readonly bwrap: string;
}

/**
 * The namespace and hardening flags every confined run uses (and the probe tests).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bwrapIsolationFlags } from "./bwrap.ts";
 * assert.equal(bwrapIsolationFlags(true).includes("--share-net"), true);
 * // Without --disable-userns, the seccomp filter blocks new user namespaces instead:
 * assert.equal(
 *   bwrapIsolationFlags(false, { disableUserns: false, bindFd: false }).includes("--disable-userns"),
 *   false,
 * );
 * ```
 */
export function bwrapIsolationFlags(
  network: boolean,
  features: BwrapFeatures = BWRAP_FULL,
): string[] {
  return [
    "--unshare-all",
    ...(network ? ["--share-net"] : []),
    "--unshare-user",
    ...(features.disableUserns ? ["--disable-userns"] : []),
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
  ];
}

/** The view every confined run (and the probe) starts from: `/` read-only, a fresh /dev and /proc. */
export const BWRAP_BASE_MOUNTS: readonly string[] = Object.freeze([
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
]);

/**
 * The complete bwrap argv (program first) for a plan.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bwrapArgv } from "./bwrap.ts";
 * assert.throws(() =>
 *   bwrapArgv({
 *     bwrap: "bwrap", project: "/p", tmpdir: "/t", writeRoots: [], readOnly: [], masks: [],
 *     hidden: [], exec: [], network: false, cwd: "/p", env: [], argv: ["/bin/true"],
 *   }), { code: "SANDBOX_UNAVAILABLE", message: /bwrap must be run by absolute path/ });
 * ```
 */
export function bwrapArgv(plan: BwrapPlan): string[] {
  if (!plan.bwrap.startsWith("/")) {
    throw new SandboxError("SANDBOX_UNAVAILABLE", "bwrap must be run by absolute path", {
      details: { bwrap: plan.bwrap },
    });
  }
  const out = [plan.bwrap, ...BWRAP_BASE_MOUNTS, "--bind", plan.tmpdir, plan.tmpdir];
  for (const w of plan.writeRoots) out.push("--bind", w, w);
  for (const r of plan.readOnly) out.push("--ro-bind", r, r);
  for (const m of plan.masks) out.push("--tmpfs", m, "--remount-ro", m);
  for (const h of plan.hidden) out.push("--tmpfs", h, "--remount-ro", h);
  out.push(...bwrapIsolationFlags(plan.network, plan.bwrapFeatures));
  out.push("--clearenv");
  for (const [k, v] of plan.env) out.push("--setenv", k, v);
  out.push("--chdir", plan.cwd, "--", ...plan.argv);
  return out;
}
