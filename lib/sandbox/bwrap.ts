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
 * import { bwrapArgv } from "./bwrap.ts";
 * const argv = bwrapArgv({
 *   bwrap: "/usr/bin/bwrap", project: "/p", tmpdir: "/t", writeRoots: ["/p/build"], readOnly: [],
 *   masks: [], hidden: [], exec: [], network: false, cwd: "/p", env: [["PATH", "/usr/bin"]],
 *   argv: ["/usr/bin/make"],
 * });
 * argv[0]; // "/usr/bin/bwrap"
 * ```
 * @module
 */
import { SANDBOX_PROXY_SOCKET } from "./net_forwarder.ts";

import { SandboxError } from "../errors.ts";
import type { ConfinementPlan } from "./plan.ts";

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
 * import { bwrapIsolationFlags } from "./bwrap.ts";
 * bwrapIsolationFlags(true).includes("--share-net"); // true
 * ```
 */
export function bwrapIsolationFlags(network: boolean): string[] {
  return [
    "--unshare-all",
    ...(network ? ["--share-net"] : []),
    "--unshare-user",
    "--disable-userns",
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
 * import { bwrapArgv } from "./bwrap.ts";
 * bwrapArgv({
 *   bwrap: "bwrap", project: "/p", tmpdir: "/t", writeRoots: [], readOnly: [], masks: [],
 *   hidden: [], exec: [], network: false, cwd: "/p", env: [], argv: ["/bin/true"],
 * }); // throws SANDBOX_UNAVAILABLE: bwrap must be an absolute path
 * ```
 */
export function bwrapArgv(plan: BwrapPlan): string[] {
  if (!plan.bwrap.startsWith("/")) {
    throw new SandboxError("SANDBOX_UNAVAILABLE", "bwrap must be run by absolute path", {
      details: { bwrap: plan.bwrap },
    });
  }
  const out = [plan.bwrap, ...BWRAP_BASE_MOUNTS];
  // A network list: a fresh /run (the host's sockets there out of sight too) holding the proxy's
  // socket, before the binds below, which may lie under /run.
  if (plan.proxySocket !== undefined) {
    out.push("--tmpfs", "/run", "--bind", plan.proxySocket, SANDBOX_PROXY_SOCKET);
  }
  out.push("--bind", plan.tmpdir, plan.tmpdir);
  for (const w of plan.writeRoots) out.push("--bind", w, w);
  for (const r of plan.readOnly) out.push("--ro-bind", r, r);
  for (const m of plan.masks) out.push("--tmpfs", m, "--remount-ro", m);
  for (const h of plan.hidden) out.push("--tmpfs", h, "--remount-ro", h);
  out.push(...bwrapIsolationFlags(plan.network));
  out.push("--clearenv");
  for (const [k, v] of plan.env) out.push("--setenv", k, v);
  out.push("--chdir", plan.cwd, "--", ...plan.argv);
  return out;
}
