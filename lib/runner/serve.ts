/**
 * `agentteams serve`: the out-of-session runner. It alone reads the ledger key (from the key
 * file; never while a key variable is set), holds the project's runner lock, pins the brief, the
 * operator's confined-programs file, the grants ledger and the operator's direct-write grants
 * file, and serves one request at a time:
 * claimed by an atomic rename into `.agentteams/queue-claimed/`, named in a write-ahead ledger
 * row, acted on confined, answered sealed into `.agentteams-status/results/`. New requests are
 * picked up by file-system events, with a slow poll as a fallback; a request the runner was
 * serving when it died is reported as interrupted at the next start, never served twice.
 *
 * @module
 */
import { keyDir, loadLedgerKey, readRunnerPublicText, runnerSealPair } from "../crypto/keys.ts";
import { DEFAULT_TEAM_DIR_REL } from "../layout.ts";
import { loadGrantedRoots } from "./granted.ts";
import { directGrantPaths, loadDirectGrants } from "./direct_grants_load.ts";
import { type Env, homeFrom } from "../env.ts";
import { FsSafetyError, QueueError, refusalCode } from "../errors.ts";
import { join, resolve } from "../fs/path.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import {
  checkPin,
  claimName,
  type DirPin,
  listNames,
  lstatName,
  NameRefused,
  pinDir,
  removeIn,
  replaceIn,
} from "../fs/session_dir.ts";
import { ackToken, type SealPair } from "../crypto/x25519.ts";
import { hexEqual } from "../crypto/hash.ts";
import { appendRow } from "../ledger/append.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import { lazyBackend } from "../sandbox/backend_choice_io.ts";
import { confinedFilePath } from "../sandbox/operator_file.ts";
import { completePolicy } from "../acts/session.ts";
import { preflight } from "./preflight.ts";
import { checkRunnerDirs, ensureRunnerDirs } from "../queue/dirs.ts";
import { BEAT_EVERY_MS, liveRunner, STATUS_NAME, writeStatus } from "../queue/liveness.ts";
import { takeRunnerLock } from "../queue/runner_lock.ts";
import {
  type Channel,
  idOfName,
  isTempName,
  type QueuePaths,
  queuePaths,
} from "../queue/queue_paths.ts";
import { checkPins, pinPaths, type Pins, readPins } from "../queue/pins.ts";
import { contextOf, resultText } from "../queue/result.ts";
import { PUBLISHED_KEY_NAME, publishRunnerKey } from "../queue/runner_key.ts";
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
  /** Requests served to their end (a result that says ok). */
  readonly served: number;
  /** Requests claimed and refused (invalid, expired, or refused by their act). */
  readonly refused: number;
  /** Names in a request folder that are no request's, recorded and never served. */
  readonly strays: number;
  /** Requests a previous runner died serving, reported. */
  readonly interrupted: number;
  readonly stopped: "once" | "signal";
}

/** A file in a request folder whose name is no request's. */
interface Stray {
  readonly path: string;
  readonly name: string;
  readonly channel: Channel;
  /** Why it is not served (after its name, in the row and the log). */
  readonly why: string;
}

/** The session-writable folders the runner uses, each pinned at start (device and inode). */
interface Pinned {
  readonly requests: DirPin;
  readonly mcpRequests: DirPin;
  readonly acks: DirPin;
  readonly status: DirPin;
  readonly results: DirPin;
}

/** A request as listed: its name, and the entry the listing saw (null: gone meanwhile). */
interface Listed {
  readonly id: string;
  readonly channel: Channel;
  readonly name: string;
  readonly seen: Deno.FileInfo | null;
}

function pinnedDirs(p: QueuePaths): Pinned {
  const pin = (d: string): DirPin => {
    const r = unsafeAsQueue(() => pinDir(d));
    if (r === null) {
      throw new QueueError("QUEUE_UNSAFE_PATH", `${d} disappeared; refused`, {
        details: { path: d },
      });
    }
    return r;
  };
  return {
    requests: pin(p.requests),
    mcpRequests: pin(p.mcpRequests),
    acks: pin(p.acks),
    status: pin(p.status),
    results: pin(p.results),
  };
}

/** A session-writable folder that moved (replaced, swapped for a link) stops the runner. */
function unsafeAsQueue<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof FsSafetyError && !(e instanceof NameRefused)) {
      throw new QueueError(
        "QUEUE_UNSAFE_PATH",
        `${e.message} (the runner works only in the folders it checked at start; restore them ` +
          "and restart agentteams serve)",
        { details: e.details },
      );
    }
    throw e;
  }
}

function channelPin(d: Pinned, channel: Channel): DirPin {
  return channel === "orchestrator" ? d.requests : d.mcpRequests;
}

/** The requests waiting now, in serving order: the orchestrator's channel first, by name. */
function pending(d: Pinned): { queue: Listed[]; strays: Stray[] } {
  const queue: Listed[] = [];
  const strays: Stray[] = [];
  for (const channel of ["orchestrator", "mcp"] as const) {
    const pin = channelPin(d, channel);
    const names = unsafeAsQueue(() => listNames(pin)).sort();
    for (const name of names) {
      const id = idOfName(name);
      const path = join(pin.path, name);
      if (id !== null) {
        const seen = unsafeAsQueue(() => lstatName(pin, name));
        // A directory is never claimed (claimName): left where it stands, recorded once.
        if (seen?.isDirectory) strays.push({ path, name, channel, why: "is a directory" });
        else queue.push({ id, channel, name, seen });
      } // A request still being written (the client's temporary name) is no stray.
      else if (!isTempName(name)) {
        strays.push({
          path,
          name,
          channel,
          why: "is not a request name (32 lower-case hex + .json)",
        });
      }
    }
  }
  return { queue, strays };
}

/**
 * Claims a listed request by renaming its directory entry into the runner's own 0700 directory
 * (lib/fs/session_dir.ts: the entry itself, never its target; the request folder checked to be
 * the one pinned before and after, and what arrived checked to be what was listed). Null when it
 * vanished; the refusal when what arrived is not the listed plain file (it is then refused and
 * recorded by {@link serveClaimed}, never read).
 */
function claim(
  p: QueuePaths,
  d: Pinned,
  r: Listed,
): { path: string; refused: NameRefused | null } | null {
  const to = join(p.claimed, `${r.channel === "mcp" ? "mcp-" : ""}${r.name}`);
  try {
    const st = unsafeAsQueue(() => claimName(channelPin(d, r.channel), r.name, to, r.seen));
    return st === null ? null : { path: to, refused: null };
  } catch (e) {
    if (e instanceof NameRefused) return { path: to, refused: e };
    throw e;
  }
}

/**
 * Removes an entry of the runner's own claimed folders (no session writes there): a directory
 * renamed in from a request's or an ack's name goes whole (recursive removal does not follow
 * symlinks), so the loop does not stop on ENOTEMPTY.
 */
function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/** Largest ack read: its token is 64 hex characters. */
const MAX_ACK_BYTES = 128;

/** What the sweep refused (for the caller to record once). */
interface SweepRefusal {
  readonly key: string;
  readonly row: Record<string, unknown>;
  readonly line: string;
}

/**
 * Deletes results whose waiter acknowledged them with their token, results older than the TTL,
 * and acks whose result is gone. Each ack is first moved into the runner's own folder (renamed,
 * never followed) and read there: an ack that is not a plain file, or whose token is not the
 * result's own (planted for another waiter's id), deletes nothing and is refused.
 */
function sweep(
  p: QueuePaths,
  d: Pinned,
  tokens: Map<string, string>,
  now: number,
): SweepRefusal[] {
  const refusals: SweepRefusal[] = [];
  const acked = new Set<string>();
  for (const name of unsafeAsQueue(() => listNames(d.acks))) {
    if (!/^[0-9a-f]{32}$/.test(name)) continue;
    const to = join(p.ackClaimed, name);
    let why: string | null = null;
    try {
      const seen = unsafeAsQueue(() => lstatName(d.acks, name));
      if (seen === null) continue;
      if (seen.isDirectory) {
        // Never claimed (claimName): refused where it stands, recorded once.
        why = `${d.acks.path}/${name} is a directory; refused, not moved`;
      } else {
        if (unsafeAsQueue(() => claimName(d.acks, name, to, seen)) === null) continue;
        // Read with the cap: a session's sparse file of any size costs it no disk (probe 22e E2).
        const { bytes } = readRegularFileSync(to, { maxBytes: MAX_ACK_BYTES, what: "ack" });
        const want = tokens.get(name);
        const got = new TextDecoder().decode(bytes).trim();
        if (want !== undefined && hexEqual(got, want)) acked.add(name);
        else if (want !== undefined) why = "its token is not the result's own (not its waiter's)";
      }
    } catch (e) {
      // A refused claim (NameRefused) or an ack over the cap (FILE_TOO_LARGE), never read.
      if (!(e instanceof FsSafetyError)) throw e;
      why = e.message;
    } finally {
      removeQuietly(to);
    }
    if (why !== null) {
      refusals.push({
        key: `ack:${name}`,
        row: { action: "runner-ack-refused", id: name, reason: why.slice(0, 500) },
        line: `the ack for ${name} was refused: ${why}; the result stays until it is read or ` +
          "expires (recorded)",
      });
    }
  }
  for (const name of unsafeAsQueue(() => listNames(d.results))) {
    const id = idOfName(name);
    if (id === null) continue;
    const st = unsafeAsQueue(() => lstatName(d.results, name));
    if (st === null) continue;
    if (acked.has(id) || now - (st.mtime?.getTime() ?? 0) > RESULT_TTL_MS) {
      try {
        unsafeAsQueue(() => removeIn(d.results, name));
        tokens.delete(id);
      } catch (e) {
        if (!(e instanceof NameRefused)) throw e;
        refusals.push({
          key: `result:${name}`,
          row: { action: "runner-result-refused", id, reason: e.message.slice(0, 500) },
          line: `${e.message} (recorded)`,
        });
      }
    }
  }
  return refusals;
}

/** The token the waiter of a result acknowledges it with (null: no reply key to bind it to). */
async function expectedAck(
  seal: SealPair,
  replyKey: Uint8Array | null,
  id: string,
  requestSha256: string,
): Promise<string | null> {
  if (replyKey === null || replyKey.length !== 32) return null;
  try {
    return await ackToken(
      seal.privateKey,
      replyKey,
      { waiter: replyKey, runner: seal.publicRaw },
      contextOf(id, requestSha256),
    );
  } catch {
    return null;
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
 * ```ts ignore
 * // Not run: it needs a project at /work/p with a brief and the operator's ledger key (agentteams keys init) (a runner serving /work/p)
 * import assert from "node:assert/strict";
 * import { serve } from "./serve.ts";
 * const report = await serve({ root: "/p", env: Deno.env.toObject(), once: true, version: "0.1.0",
 *   log: console.error });
 * assert.equal(report.stopped, "once");
 * ```
 */
export async function serve(opts: ServeOptions): Promise<ServeReport> {
  const now = opts.now ?? (() => new Date());
  let locked = false;
  try {
    return await serveLocked(opts, now, () => locked = true);
  } catch (e) {
    // A runner that stops itself says why in its status, so waiting clients are told at once
    // (not after their timeout). Once it holds the lock it says so itself, before releasing
    // it; a refusal before the lock is said only where no live runner beats, and never over
    // another runner's status (RUNNER_RUNNING).
    if (!locked && !(e instanceof QueueError && e.code === "RUNNER_RUNNING")) {
      await reportStop(queuePaths(opts.root), e, now(), false, opts.version);
    }
    throw e;
  }
}

/** Writes a stopped status naming `e`'s code and message (best effort: the refusal is thrown). */
async function reportStop(
  p: QueuePaths,
  e: unknown,
  at: Date,
  locked: boolean,
  version: string,
): Promise<void> {
  try {
    if (!locked && await liveRunner(p.status, at)) return;
    const status = pinDir(p.status);
    if (status === null) return;
    writeStatus(status, {
      pid: Deno.pid,
      version,
      started: at.toISOString(),
      beat: at.toISOString(),
      pinned: null,
      serving: null,
      stopped: {
        code: refusalCode(e),
        message: (e instanceof Error ? e.message : String(e)).slice(0, 2000),
        at: at.toISOString(),
      },
    });
  } catch { /* the refusal itself is what the operator sees */ }
}

async function serveLocked(
  opts: ServeOptions,
  now: () => Date,
  onLocked: () => void,
): Promise<ServeReport> {
  const root = opts.root;
  // The key first: a key variable set, or a key file out of custody, refuses before anything
  // is made or locked.
  const key = loadLedgerKey({ env: opts.env, mode: "runner" });
  const home = homeFrom(opts.env);
  const briefPath = opts.brief !== undefined ? resolve(opts.brief) : await defaultBriefPath(root);
  // What `doctor` reports: an error (a trust root's deny rule missing included) refuses the
  // start, naming every line to add; a warning is said once, and serving goes on.
  // The key just loaded is the key check's fact: preflight does not read the key file again.
  const keyPath = key.path ?? undefined;
  const pre = await preflight({ root, env: opts.env, briefPath, keyPath });
  const errors = pre.checks.filter((c) => !c.ok && c.level === "error");
  if (errors.length > 0) {
    const c = errors[0];
    const deny = errors.flatMap((e) =>
      e.add === undefined || e.add.into !== undefined ? [] : [`${e.add.line} to ${e.add.file}`]
    );
    // The sandbox values by file, as one block each: `"sandbox": {...}` in <file>.
    const sandbox = new Map<string, string[]>();
    for (const e of errors) {
      if (e.add?.into !== "sandbox") continue;
      sandbox.set(e.add.file, [...(sandbox.get(e.add.file) ?? []), e.add.line]);
    }
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more error(s))` : "";
    const lines = (deny.length > 0 ? `; add to "permissions.deny": ${deny.join(", ")}` : "") +
      [...sandbox].map(([file, set]) => `; set "sandbox": {${set.join(", ")}} in ${file}`)
        .join("");
    throw new QueueError(
      "PREFLIGHT_FAILED",
      `${c.name}: ${c.message}${more}${lines} (agentteams doctor lists each)`,
      { details: { check: c.name, code: c.code ?? null } },
    );
  }
  for (const c of pre.checks) {
    if (!c.ok) opts.log(`agentteams serve: warning: ${c.name}: ${c.message}`);
  }
  const paths = queuePaths(root);
  ensureRunnerDirs(paths);
  const lock = await takeRunnerLock(paths.lock, Deno.pid);
  onLocked();
  let dirs: Pinned;
  try {
    dirs = pinnedDirs(paths);
  } catch (e) {
    await reportStop(paths, e, now(), true, opts.version);
    lock.release();
    throw e;
  }
  const wake = new Wake([paths.requests, paths.mcpRequests]);
  let beat: ReturnType<typeof setInterval> | null = null;
  let cleanStop = false;
  let stoppedBy: { e: unknown } | null = null;
  try {
    const seal = await runnerSealPair(opts.env);
    // The public half, published where sessions read it (the key dir they may not).
    const publicPem = readRunnerPublicText(opts.env);
    const projectReal = Deno.realPathSync(root);
    const pinAt = pinPaths(
      root,
      briefPath,
      confinedFilePath(projectReal, home),
      directGrantPaths(projectReal, home).file,
    );
    const pins: Pins = await readPins(pinAt);
    // The brief as preflight loaded it (its check passed, so it did), with its confined programs.
    const policy = await completePolicy(root, briefPath, opts.env, pre.policy!);
    // The pinned bytes are those the policy was read from: the brief's, and read again, all.
    checkPins({ ...pins, brief: policy.briefSha256 }, pins, pinAt);
    checkPins(pins, await readPins(pinAt), pinAt);
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
    // The operator's direct-write grants for the tool-server channel, verified now against the
    // pinned brief, their writes counted from the verified ledger, and recorded. The bytes read
    // are the bytes pinned.
    const direct = await loadDirectGrants({ root, home, policy, key, now });
    if (direct.sha256 !== null) checkPins({ ...pins, direct: direct.sha256 }, pins, pinAt);
    if (direct.row !== null) await appendRow(root, key.hmac, direct.row, { now });
    for (const line of direct.lines) opts.log(`agentteams serve: ${line}`);
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
      direct: direct.state,
    };
    const started = now().toISOString();
    let serving: string | null = null;
    const checkDirs = () => {
      checkRunnerDirs(paths);
      for (const d of Object.values(dirs) as DirPin[]) unsafeAsQueue(() => checkPin(d));
    };
    const status = () =>
      unsafeAsQueue(() =>
        writeStatus(dirs.status, {
          pid: Deno.pid,
          version: opts.version,
          started,
          beat: now().toISOString(),
          pinned: pins,
          serving,
        })
      );
    // The ack token each published result's waiter will present (this runner's life).
    const tokens = new Map<string, string>();
    // What was refused and recorded already (at most MAX_STRAYS in a runner's life: a flood of
    // names cannot fill the ledger).
    const recorded = new Set<string>();
    const record = async (key_: string, row: Record<string, unknown>, line: string) => {
      if (recorded.has(key_) || recorded.size >= MAX_STRAYS) return false;
      recorded.add(key_);
      await appendRow(root, key.hmac, row as Parameters<typeof appendRow>[2], { now });
      opts.log(`agentteams serve: ${line}`);
      return true;
    };
    const publish = async (id: string, served: Served) => {
      checkDirs();
      const text = await resultText(served.body, served.secret, {
        runner: seal,
        replyKey: served.replyKey,
        hmac: key.hmac,
      });
      try {
        unsafeAsQueue(() =>
          replaceIn(dirs.results, `${id}.json`, new TextEncoder().encode(text), 0o644)
        );
      } catch (e) {
        if (!(e instanceof NameRefused)) throw e;
        // Something a session put at the result's name that a rename cannot replace: the
        // result is not published (the waiter times out and withdraws nothing: it was served).
        await record(`result:${id}.json`, {
          action: "runner-result-refused",
          id,
          reason: e.message.slice(0, 500),
        }, `${e.message}; the result of ${id} was not published (recorded)`);
        return;
      }
      const token = await expectedAck(seal, served.replyKey, id, served.body.request_sha256);
      if (token !== null) tokens.set(id, token);
    };
    // The published key, put back (and recorded) whenever what is there is not it: a session
    // that renamed the status folder away and back may have planted another. The beat puts it
    // back too (while a long command runs); the loop records what the beat found.
    let keyChecks = 0;
    let beatFound = 0;
    const checkKey = async () => {
      let wrote: boolean;
      try {
        wrote = await publishRunnerKey(dirs.status, publicPem) || beatFound > 0;
        beatFound = 0;
      } catch (e) {
        if (!(e instanceof NameRefused)) {
          // The status folder moved meanwhile: that is the refusal (QUEUE_UNSAFE_PATH).
          checkDirs();
          return unsafeAsQueue(() => {
            throw e;
          });
        }
        // A directory at the name: waiters cannot read the published key (they refuse).
        await record("runner-key-refused", {
          action: "runner-key-refused",
          reason: e.message.slice(0, 500),
        }, `${e.message}; the public key is not published there (recorded)`);
        return;
      }
      if (wrote && keyChecks > 0) {
        await record(
          `runner-key:${keyChecks}`,
          {
            action: "runner-key-republished",
            reason: `${PUBLISHED_KEY_NAME} in the status folder was not this runner's public key`,
          },
          `${dirs.status.path}/${PUBLISHED_KEY_NAME} was not this runner's public key; ` +
            "published it again (recorded): a waiter that read it meanwhile sealed to another key",
        );
      }
      keyChecks++;
    };
    await checkKey();
    // A request claimed by a runner that died while serving it: reported, never served again.
    let interrupted = 0;
    for (const e of Deno.readDirSync(paths.claimed)) {
      const m = /^(mcp-)?([0-9a-f]{32})\.json$/.exec(e.name);
      const path = join(paths.claimed, e.name);
      // An empty file is a claim's placeholder (claimName) that no request reached: nothing to
      // report (the request, if any, is still queued).
      if (m === null || (e.isFile && Deno.lstatSync(path).size === 0)) {
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
    for (const e of Deno.readDirSync(paths.ackClaimed)) {
      removeQuietly(join(paths.ackClaimed, e.name));
    }
    status();
    beat = setInterval(() => {
      try {
        status();
      } catch { /* the next beat tries again; the loop reports a lasting problem */ }
      publishRunnerKey(dirs.status, publicPem).then((w) => {
        if (w) beatFound++;
      }, () => {/* the loop's own check reports it */});
    }, BEAT_EVERY_MS);
    opts.log(
      `agentteams serve: serving ${root} (pid ${Deno.pid}; brief ${briefPath}); ` +
        (opts.once ? "serving what is queued now, then stopping" : "stop with Ctrl-C"),
    );
    let served = 0;
    let refused = 0;
    let strays = 0;
    while (!opts.signal?.aborted) {
      checkDirs();
      checkPins(pins, await readPins(pinAt), pinAt);
      await checkKey();
      for (const r of sweep(paths, dirs, tokens, now().getTime())) {
        await record(r.key, r.row, r.line);
      }
      const { queue, strays: found } = pending(dirs);
      for (const stray of found) {
        // Never served, never deleted (it is not the runner's to remove); recorded once.
        const recordedNow = await record(`stray:${stray.path}`, {
          action: "runner-request-refused",
          id: null,
          kind: null,
          channel: stray.channel,
          error: "REQUEST_INVALID",
          reason: `${stray.name.slice(0, 100)} ${stray.why}; not served`,
        }, `${stray.path} ${stray.why}; not served (recorded)`);
        if (recordedNow) strays++;
      }
      for (const r of queue) {
        if (opts.signal?.aborted) break;
        // Before every claim, the first too: the loop's own check came before the folder was
        // listed, so a pinned file changed in between (then a request queued) would be served.
        checkPins(pins, await readPins(pinAt), pinAt);
        await checkKey();
        const claimed = claim(paths, dirs, r);
        if (claimed === null) continue;
        serving = r.id;
        status();
        const result = await serveClaimed(state, claimed.path, r.id, r.channel, claimed.refused);
        await publish(r.id, result);
        removeQuietly(claimed.path);
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
        cleanStop = true;
        return { served, refused, strays, interrupted, stopped: "once" };
      }
      if (queue.length === 0) await wake.wait(POLL_MS, opts.signal);
    }
    cleanStop = true;
    return { served, refused, strays, interrupted, stopped: "signal" };
  } catch (e) {
    stoppedBy = { e };
    throw e;
  } finally {
    if (beat !== null) clearInterval(beat);
    wake.close();
    // Said while the lock is still held, so no runner started after this one is overwritten.
    if (stoppedBy !== null) await reportStop(paths, stoppedBy.e, now(), true, opts.version);
    // A clean stop says so: the liveness file goes, so the CLI does not wait on a runner gone.
    // A runner that stops itself leaves its stopped status instead (serve's catch writes it).
    if (cleanStop) {
      try {
        removeIn(dirs.status, STATUS_NAME);
      } catch { /* the status folder moved: nothing of ours to remove there */ }
    }
    lock.release();
  }
}
