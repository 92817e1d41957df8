/**
 * Queue mode for the CLI's acting commands: whether this invocation queues a request for the
 * runner instead of acting (lib/runner/mode.ts decides), what it then needs from Deno (no secret:
 * the queue folder, the status folder, the brief and the runner's public key file), and the
 * round trip itself, whose result is printed exactly as direct mode prints its own.
 *
 * @module
 */
import type { JsonObject } from "../pycompat/canonical.ts";
import { KEY_ENV, keyDir, RUNNER_SEAL_PUB_FILE } from "../crypto/keys.ts";
import { GIT_CONFIG_ENV } from "../git/config_env.ts";
import { WAIVER_KEY_ENV } from "../authz/key_env.ts";
import { CHILD_ENV } from "../process/child_env.ts";
import { QueueError, UsageError } from "../errors.ts";
import { join, resolve } from "../fs/path.ts";
import { type Needs, NO_NEEDS } from "../permissions.ts";
import { queuePaths } from "../queue/queue_paths.ts";
import { BRIEF_UNREADABLE_REASON, queueModeReason } from "../queue/mode.ts";
import { loadPolicy } from "../policy/brief.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import type { OutgoingRequest } from "../queue/client.ts";
import { loadCode } from "./code_dir.ts";
import { briefFlagPath, briefReads } from "./needs.ts";
import { perInvocation } from "./per_invocation.ts";
import type { Ctx } from "./command_spec.ts";

/** The default wait for a result, in seconds. */
export const DEFAULT_WAIT_S = 120;

/**
 * Why this invocation queues (a reason for people), or null when it acts directly. `--direct`
 * always acts directly.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { queueReason } from "./queue_mode.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams apply p.json` where the brief says orchestrator-only
 * await queueReason(ctx); // "the brief says write_policy orchestrator-only"
 * ```
 */
export const queueReason: (ctx: Ctx) => Promise<string | null> = perInvocation((ctx) =>
  ctx.parsed.flags.direct === true
    ? Promise.resolve(null)
    : queueModeReason(ctx.project, briefFlagPath(ctx), ctx.now())
);

/**
 * The seconds of `--wait-timeout` (default 120); `wait` also takes the earlier spelling
 * `--timeout`, as an alias (not both).
 *
 * @throws {UsageError} `USAGE` for anything but a whole number from 1 to 86400, or both spellings
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { waitSeconds } from "./queue_mode.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // with --wait-timeout 5
 * waitSeconds(ctx); // 5
 * ```
 */
export function waitSeconds(ctx: Ctx): number {
  const given = (["wait-timeout", "timeout"] as const).filter((f) =>
    ctx.parsed.flags[f] !== undefined
  );
  if (given.length === 0) return DEFAULT_WAIT_S;
  if (given.length > 1) {
    throw new UsageError(
      "USAGE",
      "--timeout is the earlier spelling of --wait-timeout: give one of them",
    );
  }
  const flag = given[0];
  const v = ctx.parsed.flags[flag];
  if (typeof v !== "string" || !/^[0-9]+$/.test(v) || Number(v) < 1 || Number(v) > 86400) {
    throw new UsageError("USAGE", `--${flag} takes whole seconds from 1 to 86400, got ${v}`);
  }
  return Number(v);
}

/**
 * What queue mode needs from Deno: read the project's brief and status folder, write the queue
 * folder, read the runner's public key file (the one file of the key dir).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { queueNeeds } from "./queue_mode.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // project /p, key dir /k
 * queueNeeds(ctx).write; // ["/p/.agentteams-queue"]
 * ```
 */
export function queueNeeds(ctx: Ctx): Needs {
  const p = queuePaths(ctx.project);
  return {
    ...NO_NEEDS,
    read: [
      // The project (its brief, whose refusal is printed when no runner answers, included).
      ctx.project,
      ...modeNeeds(ctx).read,
      p.queue,
      p.status,
      join(keyDir(ctx.env), RUNNER_SEAL_PUB_FILE),
      // The artifact an `apply` or `run` queues.
      ...(typeof ctx.parsed.positionals.FILE === "string"
        ? [resolve(ctx.parsed.positionals.FILE)]
        : []),
    ],
    write: [p.queue],
    // The names the acting commands read at start (no key is taken from them in queue mode);
    // `apply` declares the waiver key's too, which it would refuse NOT_CAPABLE without.
    env: [...KEY_ENV, ...CHILD_ENV, ...GIT_CONFIG_ENV, WAIVER_KEY_ENV],
    sys: ["uid"],
  };
}

/**
 * What `cancel` needs: the queue folder (to find and remove the request), nothing else.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { cancelNeeds } from "./queue_mode.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // project /p
 * cancelNeeds(ctx).write; // ["/p/.agentteams-queue"]
 * ```
 */
export function cancelNeeds(ctx: Ctx): Needs {
  const p = queuePaths(ctx.project);
  return { ...NO_NEEDS, read: [p.queue], write: [p.queue] };
}

/**
 * What deciding the mode reads, in direct mode too: the runner's liveness file and the brief.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { modeNeeds } from "./queue_mode.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // project /p
 * modeNeeds(ctx).read.includes("/p/.agentteams-status"); // true
 * ```
 */
export function modeNeeds(ctx: Ctx): Needs {
  // The status folder itself: its liveness file is read through the pinned folder (never
  // following what a session put there), which takes an lstat of the folder.
  return { ...NO_NEEDS, read: [...briefReads(ctx), queuePaths(ctx.project).status] };
}

/**
 * Queues `request` for the runner and waits for its result: the act's result as direct mode
 * returns it, or the runner's refusal, thrown.
 *
 * @throws {QueueError} `NO_RUNNER`, `RESULT_NOT_AUTHENTIC`; {RelayedError} the runner's refusal
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { relay } from "./queue_mode.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx;
 * (await relay(ctx, { kind: "verify-ledger" })).ok; // true when it verifies
 * ```
 */
export async function relay(ctx: Ctx, request: OutgoingRequest): Promise<JsonObject> {
  if (ctx.parsed.flags.unconfined === true) {
    throw new UsageError(
      "USAGE",
      "--unconfined has no place in queue mode: the runner confines every command and gate",
    );
  }
  const timeoutMs = waitSeconds(ctx) * 1000;
  // Loaded only when a request is queued: direct mode never pays for the client.
  const client = await loadCode(() => import("../queue/client.ts"));
  const keys = await loadCode(() => import("../queue/runner_key.ts"));
  // Read once the queue is found (no queue: NO_RUNNER first), the same key for the result.
  const runnerPublic = keys.runnerKeyOnce(ctx.project, ctx.env);
  let s;
  try {
    s = await client.submitRequest(ctx.project, request, "orchestrator", {
      runnerPublic,
      waitMs: timeoutMs,
      now: ctx.now(),
    });
  } catch (e) {
    // A brief that cannot be read puts the project in queue mode; with no runner to queue for,
    // the brief's own refusal says what to mend (still nothing acts directly).
    if (
      e instanceof QueueError && e.code === "NO_RUNNER" &&
      (await queueReason(ctx)) === BRIEF_UNREADABLE_REASON
    ) {
      await loadPolicy(briefFlagPath(ctx) ?? await defaultBriefPath(ctx.project), {
        projectRoot: ctx.project,
      });
    }
    throw e;
  }
  return client.resultOrRefusal(
    await client.waitForResult(ctx.project, s, {
      timeoutMs,
      runnerPublic: await runnerPublic(),
      note: ctx.note,
    }),
  );
}

/**
 * An artifact's act (`apply`, `run`): in queue mode the runner's, through a request of `kind`
 * carrying the artifact as read and the dry-run flag; else `direct`, here.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, which it declares rather than makes.
 * import { artifactAct } from "./queue_mode.ts";
 * import type { Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams run req.json --dry-run`
 * const r = await artifactAct(ctx, "run-request", (dryRun) => Promise.resolve({ dryRun }));
 * ```
 */
export async function artifactAct<R>(
  ctx: Ctx,
  kind: "apply-proposal" | "run-request",
  direct: (dryRun: boolean) => Promise<R>,
): Promise<R> {
  const dryRun = ctx.parsed.flags["dry-run"] === true;
  if ((await queueReason(ctx)) === null) return await direct(dryRun);
  // Loaded only here: policy_ctx.ts brings the acts and the sandbox, which a relay never runs.
  const { artifactOf } = await loadCode(() => import("./policy_ctx.ts"));
  const artifact = await artifactOf(ctx) as unknown as Record<string, unknown>;
  return await relay(ctx, { kind, artifact, dry_run: dryRun }) as unknown as R;
}
