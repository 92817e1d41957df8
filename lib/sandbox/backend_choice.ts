/**
 * Whether a command runs confined, and by which backend: a pure decision on the probe result.
 * Unconfined is possible only as an explicit opt-out: the brief sets `allow_unconfined_runs` AND
 * the operator runs the command directly (never under the out-of-session runner, which holds the
 * key). Everything else without a working sandbox is refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideConfinement } from "./backend_choice.ts";
 * assert.equal(decideConfinement({
 *   probe: { ok: true, backend: "bwrap", program: "/usr/bin/bwrap" },
 *   allowUnconfined: false,
 *   direct: false,
 * }), "bwrap");
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import type { ProbeResult, SandboxHost } from "./host_probe.ts";

/** How a command is run; the caller records it in the ledger with `confined: true|false`. */
export type Backend = "bwrap" | "seatbelt" | "unconfined-opt-out";

/** Inputs of {@link decideConfinement}. */
export interface DecideInput {
  /** The start-up probe's result. */
  readonly probe: ProbeResult;
  /** The brief's `allow_unconfined_runs`. */
  readonly allowUnconfined: boolean;
  /** True when the operator runs the command directly, false under the runner. */
  readonly direct: boolean;
  /**
   * The brief's `require_exec_allowlist`: bwrap without Landlock (the probe's `host`) is refused,
   * and so is the unconfined opt-out. Default false.
   */
  readonly requireExecAllowlist?: boolean;
}

/**
 * Why a probe's sandbox cannot hold every exec to the declared programs, or `null` when it can
 * (Seatbelt's profile does; bwrap needs the kernel's Landlock).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { execAllowlistGap } from "./backend_choice.ts";
 * assert.equal(execAllowlistGap({ ok: true, backend: "seatbelt", program: "/usr/bin/sandbox-exec" }), null);
 * ```
 */
export function execAllowlistGap(probe: ProbeResult): string | null {
  if (!probe.ok) return probe.reason;
  if (probe.backend === "seatbelt") return null;
  return landlockGap(probe.host ?? null);
}

/**
 * Why bwrap on this host cannot hold every exec to the declared programs (no Landlock, and the
 * kernel's reason), or `null` when Landlock can.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { landlockGap } from "./backend_choice.ts";
 * assert.equal(
 *   landlockGap({ bwrap: { disableUserns: true, bindFd: true }, landlock: { abi: 7, reason: null } }),
 *   null,
 * );
 * ```
 */
export function landlockGap(host: SandboxHost | null): string | null {
  const ll = host?.landlock;
  if (ll !== undefined && ll.abi >= 1) return null;
  return ll?.reason ?? "the kernel was not asked for Landlock";
}

/**
 * Returns the backend, or throws `SandboxError("SANDBOX_UNAVAILABLE")` when no sandbox works and
 * the unconfined opt-out does not apply.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideConfinement } from "./backend_choice.ts";
 * assert.equal(decideConfinement({
 *   probe: { ok: false, backend: "bwrap", program: "/usr/bin/bwrap", reason: "not installed" },
 *   allowUnconfined: true,
 *   direct: true,
 * }), "unconfined-opt-out");
 * ```
 */
export function decideConfinement(input: DecideInput): Backend {
  if (input.requireExecAllowlist === true) {
    const gap = execAllowlistGap(input.probe);
    if (gap !== null) {
      throw new SandboxError(
        "SANDBOX_UNAVAILABLE",
        `the brief sets require_exec_allowlist, but no exec allowlist can be enforced here: ${gap}; ` +
          "run on a kernel with Landlock (Linux 5.13 or later), or remove require_exec_allowlist " +
          "to accept the runner's check of the top-level program only",
        { details: { backend: input.probe.backend, reason: gap, requireExecAllowlist: true } },
      );
    }
  }
  if (input.probe.ok) return input.probe.backend;
  const reason = input.probe.reason;
  if (input.allowUnconfined && input.direct) return "unconfined-opt-out";
  const why = input.allowUnconfined
    ? "allow_unconfined_runs applies only to commands the operator runs directly, not the runner"
    : "set allow_unconfined_runs in the brief to run direct commands unconfined";
  throw new SandboxError("SANDBOX_UNAVAILABLE", `no usable sandbox: ${reason}; ${why}`, {
    details: { backend: input.probe.backend, reason },
  });
}
