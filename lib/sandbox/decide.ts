/**
 * Whether a command runs confined, and by which backend: a pure decision on the probe result.
 * Unconfined is possible only as an explicit opt-out: the brief sets `allow_unconfined_runs` AND
 * the operator runs the command directly (never under the out-of-session runner, which holds the
 * key). Everything else without a working sandbox is refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideConfinement } from "./decide.ts";
 * assert.equal(decideConfinement({
 *   probe: { ok: true, backend: "bwrap", program: "/usr/bin/bwrap" },
 *   allowUnconfined: false,
 *   direct: false,
 * }), "bwrap");
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import type { ProbeResult } from "./probe.ts";

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
}

/**
 * Returns the backend, or throws `SandboxError("SANDBOX_UNAVAILABLE")` when no sandbox works and
 * the unconfined opt-out does not apply.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideConfinement } from "./decide.ts";
 * assert.equal(decideConfinement({
 *   probe: { ok: false, backend: "bwrap", program: "/usr/bin/bwrap", reason: "not installed" },
 *   allowUnconfined: true,
 *   direct: true,
 * }), "unconfined-opt-out");
 * ```
 */
export function decideConfinement(input: DecideInput): Backend {
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
