/**
 * The acts as the in-process tests drive them: a session assembled from the parts a test pins
 * (a policy it parsed, an HMAC key, a backend, a gate runner), then the one act pipeline.
 */
import type { LedgerKey } from "../../lib/crypto/keys.ts";
import type { HmacKey } from "../../lib/crypto/hash.ts";
import type { GitContext } from "../../lib/git/context.ts";
import type { Policy } from "../../lib/policy/types.ts";
import type { GateRunner } from "../../lib/proposals/gates.ts";
import type { ApplyResult } from "../../lib/proposals/proposal.ts";
import type { RunRequestResult } from "../../lib/requests/request.ts";
import type { Backend } from "../../lib/sandbox/backend_choice.ts";
import { applyAct } from "../../lib/acts/apply_act.ts";
import { performAct } from "../../lib/acts/pipeline.ts";
import { runActWith } from "../../lib/acts/run_act.ts";
import { sessionOf } from "../../lib/acts/session.ts";

/** A ledger key around an HMAC key a test made (only the HMAC is used by acts). */
export function keyOfHmac(hmac: HmacKey): LedgerKey {
  return { bytes: new Uint8Array(0), source: "env", path: null, envName: null, hmac };
}

/** What {@link applyIn} pins. */
export interface ApplyParts {
  readonly root: string;
  readonly policy: Policy;
  readonly hmac: HmacKey;
  readonly gateRunner: GateRunner;
  readonly dryRun?: boolean;
  readonly perl?: string;
  readonly now?: () => Date;
}

/** Applies `artifact` through the pipeline with a session of the given parts. */
export function applyIn(artifact: unknown, o: ApplyParts): Promise<ApplyResult> {
  const session = sessionOf({
    root: o.root,
    key: keyOfHmac(o.hmac),
    env: { HOME: "/nonexistent-home" },
    home: "/nonexistent-home",
    policy: o.policy,
    gateRunner: o.gateRunner,
    perl: o.perl,
    now: o.now,
  });
  return performAct(session, applyAct, artifact, { dryRun: o.dryRun });
}

/** What {@link runIn} pins. */
export interface RunParts {
  readonly root: string;
  readonly policy: Policy;
  readonly hmac: HmacKey;
  readonly backend: () => Promise<Backend>;
  readonly parentEnv: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly keyDir: string;
  readonly gateRunner: GateRunner;
  readonly dryRun?: boolean;
  readonly timeoutCap?: number;
  readonly now?: () => Date;
  readonly git?: Promise<GitContext>;
}

/** Runs `artifact` through the pipeline with a session of the given parts. */
export function runIn(artifact: unknown, o: RunParts): Promise<RunRequestResult> {
  const session = sessionOf({
    root: o.root,
    key: keyOfHmac(o.hmac),
    env: { ...o.parentEnv, AGENTTEAMS_KEY_DIR: o.keyDir },
    home: o.home,
    policy: o.policy,
    backend: o.backend,
    gateRunner: o.gateRunner,
    git: o.git,
    now: o.now,
  });
  return performAct(session, runActWith({ timeoutCap: o.timeoutCap }), artifact, {
    dryRun: o.dryRun,
  });
}
