/**
 * The sandbox backend for one process: probed once, on first use, and decided by the brief's
 * `allow_unconfined_runs` (commands run directly by the operator only). With `unconfined`, the
 * operator's explicit opt-out, nothing is probed; it needs the brief's permission.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lazyBackend } from "./backend_choice_io.ts";
 * // The opt-out needs the brief's permission, and is refused at once without it.
 * assert.throws(() => lazyBackend({ allowUnconfinedRuns: false }, { unconfined: true }), {
 *   code: "UNCONFINED_NOT_ALLOWED",
 * });
 * ```
 * @module
 */
import { SandboxError } from "../errors.ts";
import type { Policy } from "../policy/types.ts";
import { type Backend, decideConfinement } from "./backend_choice.ts";
import { probeSandbox } from "./host_probe.ts";

/**
 * A function returning the decided backend (the same promise on every call).
 *
 * @throws {SandboxError} `UNCONFINED_NOT_ALLOWED` at once when `unconfined` is asked without the
 *   brief's `allow_unconfined_runs`; the returned promise rejects with `SANDBOX_UNAVAILABLE` when
 *   no sandbox works and the brief does not allow running without one.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lazyBackend } from "./backend_choice_io.ts";
 * const backend = lazyBackend({ allowUnconfinedRuns: false }, { unconfined: false });
 * // "bwrap" on Linux with bubblewrap; the probe runs on this first call only.
 * assert.ok(["bwrap", "seatbelt"].includes(await backend()));
 * ```
 */
export function lazyBackend(
  policy: Pick<Policy, "allowUnconfinedRuns"> & Partial<Pick<Policy, "requireExecAllowlist">>,
  opts: { unconfined: boolean; runner?: boolean },
): () => Promise<Backend> {
  if (opts.unconfined && opts.runner === true) {
    throw new SandboxError(
      "UNCONFINED_NOT_ALLOWED",
      "the runner confines every command and gate; --unconfined has no place under it",
    );
  }
  if (opts.unconfined) {
    if (policy.requireExecAllowlist === true) {
      throw new SandboxError(
        "UNCONFINED_NOT_ALLOWED",
        "--unconfined cannot run under require_exec_allowlist: true in the brief",
      );
    }
    if (!policy.allowUnconfinedRuns) {
      throw new SandboxError(
        "UNCONFINED_NOT_ALLOWED",
        "--unconfined needs allow_unconfined_runs: true in the brief",
      );
    }
    const opted = Promise.resolve<Backend>("unconfined-opt-out");
    return () => opted;
  }
  let decided: Promise<Backend> | null = null;
  return () =>
    decided ??= probeSandbox().then((probe) =>
      decideConfinement({
        probe,
        allowUnconfined: policy.allowUnconfinedRuns,
        direct: opts.runner !== true,
        requireExecAllowlist: policy.requireExecAllowlist === true,
      })
    );
}
