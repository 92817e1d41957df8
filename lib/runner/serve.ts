/**
 * `agentteams serve`: the out-of-session runner. It alone reads the ledger key (from the key
 * file; never while a key variable is set), holds the project's runner lock, pins the brief, the
 * operator's confined-programs file and the grants ledger, and serves one request at a time:
 * claimed by an atomic rename into `.agentteams/queue-claimed/`, named in a write-ahead ledger
 * row, acted on confined, answered sealed into `.agentteams-status/results/`. New requests are
 * picked up by file-system events, with a slow poll as a fallback; a request the runner was
 * serving when it died is reported as interrupted at the next start, never served twice.
 *
 * @module
 */
import { keyDir, loadLedgerKey, runnerSealPair } from "../crypto/keys.ts";
import { DEFAULT_TEAM_DIR_REL } from "../authz/paths.ts";
import { loadGrantedRoots } from "./granted.ts";
import { type Env, homeFrom } from "../env.ts";
import { QueueError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { join, resolve } from "../fs/path.ts";
import { appendRow } from "../ledger/append.ts";
import { defaultBriefPath } from "../policy/brief.ts";
import { lazyBackend } from "../sandbox/backend.ts";
import { confinedFilePath } from "../sandbox/operator_file.ts";
import { completePolicy } from "../acts/session.ts";
import { preflight } from "./preflight.ts";
import { checkRunnerDirs, ensureRunnerDirs } from "../queue/dirs.ts";
import { BEAT_EVERY_MS, writeStatus } from "../queue/liveness.ts";
import { takeRunnerLock } from "../queue/lock.ts";
import {
  type Channel,
  channelDir,
  idOfName,
  isTempName,
  type QueuePaths,
  queuePaths,
} from "../queue/paths.ts";
import { checkPins, pinPaths, type Pins, readPins } from "../queue/pins.ts";
import { resultText } from "../queue/result.ts";
import { interruptedResult, type RunnerState, serveClaimed, type Served } from "./serve_one.ts";

/** Results older than this are deleted (acknowledged ones at once). */
export const RESULT_TTL_MS = 300_000;
/** How many stray names (not a request's) a runner records before it stops recording them. */
export const MAX_STRAYS = 1000;
/** The fallback poll when no file-system event arrives. */
export const POLL_MS = 1000;

/** How `serve` is started. */
export interface ServeOptions {
  readonly root: string;
  readonly env: Env;
  /** The brief (default: the project's). */
  readonly brief?: string;
  /** The holder's team dir for the grants (default `<root>/.agentteams/team`). */
  readonly teamDir?: string;
  /** Serve what is queued now, then stop. */
  readonly once?: boolean;
  /** The version written into the liveness file. */
  readonly version: string;
  /** Progress lines (stderr). */
  readonly log: (line: string) => void;
  /** Stops the loop (a signal handler). */
  readonly signal?: AbortSignal;
  readonly now?: () => Date;
}

/** How serving ended. */
export interface ServeReport {
  readonly served: number;
  readonly refused: number;
  readonly interrupted: number;
  readonly stopped: "once" | "signal";
}

/** A file in a request folder whose name is no request's. */
interface Stray {
  readonly path: string;
  readonly name: string;
  readonly channel: Channel;
}

/** The requests waiting now, in serving order: the orchestrator's channel first, by name. */
function pending(
  p: QueuePaths,
): { queue: { id: string; channel: Channel; name: string }[]; strays: Stray[] } {
  const queue: { id: string; channel: Channel; name: string }[] = [];
  const strays: Stray[] = [];
  for (const channel of ["orchestrator", "mcp"] as const) {
    const dir = channelDir(p, channel);
    const names: string[] = [];
    for (const e of Deno.readDirSync(dir)) names.push(e.name);
    names.sort();
    for (const name of names) {
      const id = idOfName(name);
      if (id !== null) queue.push({ id, channel, name });
      // A request still being written (the client's temporary name) is no stray.
      else if (!isTempName(name)) strays.push({ path: join(dir, name), name, channel });
    }
  }
  return { queue, strays };
}

/**
 * Claims a request by renaming its directory entry into the runner's own 0700 directory (a
 * symlink is renamed as the symlink it is, and refused when read). False when it vanished.
 */
function claim(p: QueuePaths, channel: Channel, name: string): string | null {
  const to = join(p.claimed, `${channel === "mcp" ? "mcp-" : ""}${name}`);
  try {
    Deno.renameSync(join(channelDir(p, channel), name), to);
    return to;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/**
 * Removes an entry of the queue, the results or the claimed folder. A session may have put a
 * directory with entries there under a request's or an ack's name: it goes whole (recursive
 * removal does not follow symlinks), so the loop does not stop on ENOTEMPTY.
 */
function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/** Deletes acknowledged results, results older than the TTL, and acks whose result is gone. */
function sweep(p: QueuePaths, now: number): void {
  for (const e of Deno.readDirSync(p.results)) {
    const id = idOfName(e.name);
    const path = join(p.results, e.name);
    if (id === null) continue;
    const st = lstatOrNullSync(path);
    const acked = lstatOrNullSync(join(p.acks, id)) !== null;
    if (acked || st === null || now - (st.mtime?.getTime() ?? 0) > RESULT_TTL_MS) {
      removeQuietly(path);
    }
  }
  for (const e of Deno.readDirSync(p.acks)) {
    if (!/^[0-9a-f]{32}$/.test(e.name)) continue;
    if (lstatOrNullSync(join(p.results, `${e.name}.json`)) === null) {
      removeQuietly(join(p.acks, e.name));
    }
  }
}

/** Waits for a file-system event in the request folders, or the poll interval. */
class Wake {
  #watcher: Deno.FsWatcher | null = null;
  #resolve: (() => void) | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #pending = false;

  constructor(dirs: string[]) {
    try {
      this.#watcher = Deno.watchFs(dirs, { recursive: false });
      (async () => {
        try {
          for await (const _ of this.#watcher!) this.#fire();
        } catch { /* closed */ }
      })();
    } catch {
      this.#watcher = null; // no events here: the poll serves
    }
  }

  #fire(): void {
    this.#pending = true;
    const r = this.#resolve;
    this.#resolve = null;
    r?.();
  }

  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#pending || signal?.aborted) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((res) => {
      const done = () => {
        if (this.#timer !== null) clearTimeout(this.#timer);
        this.#timer = null;
        this.#resolve = null;
        this.#pending = false;
        signal?.removeEventListener("abort", done);
        res();
      };
      this.#resolve = done;
      this.#timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  close(): void {
    try {
      this.#watcher?.close();
    } catch { /* already closed */ }
    if (this.#timer !== null) clearTimeout(this.#timer);
  }
}

/**
 * Serves the project's queue until stopped (or, with `once`, until the queue is empty).
 *
 * @throws {KeyError} `KEY_ENV_IN_RUNNER` and every key custody refusal, before anything is done
 * @throws {QueueError} `RUNNER_RUNNING` (another runner holds the lock), `QUEUE_UNSAFE_PATH`,
 *   `RUNNER_PIN_CHANGED` (the brief or a pinned file changed: the runner stops)
 * @example
 * ```ts
 * import { serve } from "./serve.ts";
 * const report = await serve({ root: "/p", env: Deno.env.toObject(), once: true, version: "0.1.0",
 *   log: console.error });
 * report.stopped; // "once"
 * ```
 */
export async function serve(opts: ServeOptions): Promise<ServeReport> {
  const now = opts.now ?? (() => new Date());
  const root = opts.root;
  // The key first: a key variable set, or a key file out of custody, refuses before anything
  // is made or locked.
  const key = loadLedgerKey({ env: opts.env, mode: "runner" });
  const home = homeFrom(opts.env);
  const briefPath = opts.brief !== undefined ? resolve(opts.brief) : await defaultBriefPath(root);
  // What `doctor` reports: an error refuses the start; a warning (a session settings rule
  // missing) is said once, and serving goes on.
  // The key just loaded is the key check's fact: preflight does not read the key file again.
  const keyPath = key.path ?? undefined;
  const pre = await preflight({ root, env: opts.env, briefPath, keyPath });
  for (const c of pre.checks) {
    if (c.ok) continue;
    if (c.level === "error") {
      throw new QueueError("PREFLIGHT_FAILED", `${c.name}: ${c.message} (agentteams doctor)`, {
        details: { check: c.name, code: c.code ?? null },
      });
    }
    opts.log(`agentteams serve: warning: ${c.name}: ${c.message}`);
  }
  const paths = queuePaths(root);
  ensureRunnerDirs(paths);
  const lock = await takeRunnerLock(paths.lock, Deno.pid);
  const wake = new Wake([paths.requests, paths.mcpRequests]);
  let beat: ReturnType<typeof setInterval> | null = null;
  try {
    const seal = await runnerSealPair(opts.env);
    const pinAt = pinPaths(root, briefPath, confinedFilePath(Deno.realPathSync(root), home));
    const pins: Pins = readPins(pinAt);
    // The brief as preflight loaded it (its check passed, so it did), with its confined programs.
    const policy = await completePolicy(root, briefPath, opts.env, pre.policy!);
    // The pinned bytes are those the policy was read from: the brief's, and read again, all.
    checkPins({ ...pins, brief: policy.briefSha256 }, pins, pinAt);
    checkPins(pins, readPins(pinAt), pinAt);
    // One sandbox decision for the runner's life (not a probe per request), never an opt-out.
    const backend = lazyBackend(policy, { unconfined: false, runner: true });
    // The grants' write roots, settled now for the runner's life, and recorded.
    const grants = await loadGrantedRoots({
      root,
      teamDir: opts.teamDir ?? join(root, DEFAULT_TEAM_DIR_REL),
      env: opts.env,
      home,
      keyDir: keyDir(opts.env),
      now,
    });
    if (grants.row !== null) await appendRow(root, key.hmac, grants.row, { now });
    for (const line of grants.lines) opts.log(`agentteams serve: ${line}`);
    const state: RunnerState = {
      root,
      env: opts.env,
      home,
      key,
      seal,
      policy,
      backend,
      now,
      grants: grants.session,
    };
    const started = now().toISOString();
    let serving: string | null = null;
    const status = () =>
      writeStatus(paths.runnerJson, {
        pid: Deno.pid,
        version: opts.version,
        started,
        beat: now().toISOString(),
        pinned: pins,
        serving,
      });
    const publish = async (id: string, served: Served) => {
      checkRunnerDirs(paths);
      const text = await resultText(served.body, served.secret, {
        runner: seal,
        replyKey: served.replyKey,
        hmac: key.hmac,
      });
      atomicWriteFileSync(join(paths.results, `${id}.json`), text, { mode: 0o644 });
    };
    // A request claimed by a runner that died while serving it: reported, never served again.
    let interrupted = 0;
    for (const e of Deno.readDirSync(paths.claimed)) {
      const m = /^(mcp-)?([0-9a-f]{32})\.json$/.exec(e.name);
      const path = join(paths.claimed, e.name);
      if (m === null) {
        removeQuietly(path);
        continue;
      }
      const id = m[2];
      await appendRow(root, key.hmac, { action: "runner-interrupted", id }, { now });
      await publish(id, interruptedResult(path, id));
      removeQuietly(path);
      interrupted++;
      opts.log(`agentteams serve: request ${id} was interrupted by the previous runner; reported`);
    }
    status();
    beat = setInterval(() => {
      try {
        status();
      } catch { /* the next beat tries again; the loop reports a lasting problem */ }
    }, BEAT_EVERY_MS);
    opts.log(
      `agentteams serve: serving ${root} (pid ${Deno.pid}; brief ${briefPath}); stop with Ctrl-C`,
    );
    let served = 0;
    let refused = 0;
    const strayed = new Set<string>();
    while (!opts.signal?.aborted) {
      checkRunnerDirs(paths);
      checkPins(pins, readPins(pinAt), pinAt);
      sweep(paths, now().getTime());
      const { queue, strays } = pending(paths);
      for (const stray of strays) {
        // Never served, never deleted (it is not the runner's to remove); recorded once, and at
        // most MAX_STRAYS of them in a runner's life (a flood of names cannot fill the ledger).
        if (strayed.has(stray.path) || strayed.size >= MAX_STRAYS) continue;
        strayed.add(stray.path);
        await appendRow(root, key.hmac, {
          action: "runner-request-refused",
          id: null,
          kind: null,
          channel: stray.channel,
          error: "REQUEST_INVALID",
          reason:
            `${stray.name.slice(0, 100)} is not a request name (32 lower-case hex + .json); ` +
            "not served",
        }, { now });
        opts.log(`agentteams serve: ${stray.path} is not a request name; not served (recorded)`);
      }
      for (const r of queue) {
        if (opts.signal?.aborted) break;
        // Before every claim, the first too: the loop's own check came before the folder was
        // listed, so a pinned file changed in between (then a request queued) would be served.
        checkPins(pins, readPins(pinAt), pinAt);
        const claimed = claim(paths, r.channel, r.name);
        if (claimed === null) continue;
        serving = r.id;
        status();
        const result = await serveClaimed(state, claimed, r.id, r.channel);
        await publish(r.id, result);
        removeQuietly(claimed);
        serving = null;
        status();
        if (result.body.ok) served++;
        else refused++;
        opts.log(
          `agentteams serve: ${r.id} ${result.body.kind ?? "?"} ` +
            (result.body.ok
              ? `served (exit ${result.body.exit})`
              : `refused: ${String(result.body.error?.code)}`) +
            ` in ${result.body.serve_ms} ms`,
        );
      }
      if (opts.once && queue.length === 0) {
        return { served, refused, interrupted, stopped: "once" };
      }
      if (queue.length === 0) await wake.wait(POLL_MS, opts.signal);
    }
    return { served, refused, interrupted, stopped: "signal" };
  } finally {
    if (beat !== null) clearInterval(beat);
    wake.close();
    // A clean stop says so: the liveness file goes, so the CLI does not wait on a runner gone.
    removeQuietly(paths.runnerJson);
    lock.release();
  }
}
