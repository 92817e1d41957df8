/**
 * The waiting side of the queue, as the CLI uses it in queue mode: a request sealed to the
 * runner's public key with a fresh ephemeral reply key (lib/queue/request_seal.ts) and written
 * (write-then-rename, so the runner never sees half of one), its result awaited (file-system events, a slow poll as a fallback), opened and checked for the
 * runner's authenticator, acknowledged. It needs no secret: only the runner's public key.
 *
 * @module
 */
import type { JsonObject } from "../pycompat/canonical.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { ackToken, generateSealPair, publicB64, type SealPair, unb64 } from "../crypto/x25519.ts";
import { type ExitCode, FsSafetyError, QueueError, RelayedError } from "../errors.ts";
import {
  createNewIn,
  type DirPin,
  inPinnedDir,
  NameRefused,
  pinDir,
  publishNewIn,
  readNameWithin,
  removeIn,
} from "../fs/session_dir.ts";
import { readStatusIn, type RunnerStop } from "./liveness.ts";
import { REQUEST_GRACE_S } from "./queued_request.ts";
import { sealRequest } from "./request_seal.ts";
import {
  type Channel,
  channelDir,
  isRequestId,
  newRequestId,
  queuePaths,
  tempNameOf,
} from "./queue_paths.ts";
import { contextOf, MAX_RESULT_BYTES, type OpenedResult, openResult } from "./result.ts";
import type { QueueRequestT } from "./queued_request.ts";

/** A request as the CLI gives it (the reply key is added here). */
export type OutgoingRequest = DistributiveOmit<QueueRequestT, "reply_key">;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A request written and not yet answered: what the waiter keeps in memory. */
export interface Submitted {
  readonly id: string;
  readonly pair: SealPair;
  readonly requestSha256: string;
  /** Its channel (where it was queued, and where `cancel` finds it). */
  readonly channel?: Channel;
  /** When the runner stops serving it (REQUEST_EXPIRED after), when it carries a deadline. */
  readonly expires?: string;
}

/**
 * Pins a queue folder a session can write, or null when missing; anything but a real directory
 * is `QUEUE_UNSAFE_PATH`.
 *
 * @throws {QueueError} `QUEUE_UNSAFE_PATH`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pinQueueDir } from "./client.ts";
 * assert.equal(pinQueueDir("/nonexistent-4c1"), null);
 * ```
 */
export function pinQueueDir(dir: string): DirPin | null {
  try {
    return pinDir(dir);
  } catch (e) {
    if (e instanceof FsSafetyError) throw unsafe(e);
    throw e;
  }
}

function unsafe(e: FsSafetyError): QueueError {
  return new QueueError("QUEUE_UNSAFE_PATH", e.message, { details: e.details });
}

/** Options of {@link submitRequest}. */
export interface SubmitOptions {
  /**
   * The runner's static public key (`runnerPublicKey`): the request is sealed to it. Asked for
   * once the queue is found (no queue is `NO_RUNNER`, before any missing key).
   */
  readonly runnerPublic: () => Promise<Uint8Array>;
  /** How long the waiter waits (ms): the request expires that long plus the grace from now. */
  readonly waitMs?: number;
  readonly now?: Date;
}

/**
 * Writes a request into the queue, sealed to the runner's public key: a temp file (0600, created
 * new) renamed to `<id>.json`.
 *
 * @throws {QueueError} `NO_RUNNER` when the queue's folder does not exist (no runner ever made it)
 * @example
 * ```ts ignore
 * // Not run: it needs a project at /p whose runner is serving (agentteams serve)
 * import assert from "node:assert/strict";
 * import { submitRequest } from "./client.ts";
 * const s = await submitRequest("/p", { kind: "verify-ledger" }, "orchestrator", {
 *   runnerPublic: () => Promise.resolve(new Uint8Array(32)),
 * });
 * assert.equal(s.id.length, 32);
 * ```
 */
export async function submitRequest(
  root: string,
  request: OutgoingRequest,
  channel: Channel,
  opts: SubmitOptions,
): Promise<Submitted> {
  const paths = queuePaths(root);
  const dir = channelDir(paths, channel);
  const pin = pinQueueDir(dir);
  if (pin === null) {
    throw new QueueError(
      "NO_RUNNER",
      `there is no queue at ${dir}: start the runner outside every agent session ` +
        "(agentteams serve) and run this again (inside Claude Code's sandbox, a Read deny rule " +
        "over .agentteams-queue/ hides it: remove that rule, docs/session-settings.md)",
    );
  }
  const pair = await generateSealPair();
  const id = newRequestId();
  const expires = opts.waitMs === undefined ? undefined : new Date(
    (opts.now ?? new Date()).getTime() + opts.waitMs + REQUEST_GRACE_S * 1000,
  ).toISOString();
  const bytes = await sealRequest(
    { ...request, ...(expires !== undefined ? { expires } : {}) },
    { waiter: pair, runnerPublic: await opts.runnerPublic(), id, channel },
  );
  try {
    createNewIn(pin, tempNameOf(id), bytes, 0o600);
    inPinnedDir(pin, (at) => Deno.renameSync(at(tempNameOf(id)), at(`${id}.json`)));
  } catch (e) {
    if (e instanceof FsSafetyError) throw unsafe(e);
    throw e;
  }
  return {
    id,
    pair,
    requestSha256: sha256Hex(bytes),
    channel,
    ...(expires !== undefined ? { expires } : {}),
  };
}

/**
 * Withdraws a queued request the runner has not claimed: its file is removed (the entry itself,
 * never followed). True when it was withdrawn, false when it was not there (claimed, served,
 * withdrawn before, or never queued).
 *
 * @throws {QueueError} `QUEUE_UNSAFE_PATH` (the folder, or a directory at the name)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withdrawRequest } from "./client.ts";
 * assert.equal(withdrawRequest("/nonexistent-4c1", "0".repeat(32)), false);
 * ```
 */
export function withdrawRequest(
  root: string,
  id: string,
  channel: Channel = "orchestrator",
): boolean {
  if (!isRequestId(id)) throw new QueueError("REQUEST_INVALID", `${id} is not a request id`);
  const pin = pinQueueDir(channelDir(queuePaths(root), channel));
  if (pin === null) return false;
  try {
    return removeIn(pin, `${id}.json`);
  } catch (e) {
    if (e instanceof FsSafetyError) throw unsafe(e);
    throw e;
  }
}

/**
 * The ticket that lets another process (`agentteams wait`) open this request's result: the
 * ephemeral private key and the request's digest. It opens that one result only; keep it as you
 * would the answer.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs s, which it declares rather than makes.
 * import { submitRequest, ticketOf } from "./client.ts";
 * declare const s: Awaited<ReturnType<typeof submitRequest>>;
 * (await ticketOf(s)).startsWith("at1."); // true
 * ```
 */
export async function ticketOf(s: Submitted): Promise<string> {
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", s.pair.privateKey));
  return `at1.${publicB64(pkcs8)}.${publicB64(s.pair.publicRaw)}.${s.requestSha256}`;
}

/**
 * A submitted request back from its id and ticket.
 *
 * @throws {QueueError} `REQUEST_INVALID` for a malformed id or ticket
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fromTicket } from "./client.ts";
 * await assert.rejects(fromTicket("0".repeat(32), "at1.x"), { name: "QueueError" });
 * ```
 */
export async function fromTicket(id: string, ticket: string): Promise<Submitted> {
  const bad = () =>
    new QueueError("REQUEST_INVALID", "the ticket is not one agentteams submit printed");
  if (!isRequestId(id)) throw new QueueError("REQUEST_INVALID", `${id} is not a request id`);
  const m = /^at1\.([A-Za-z0-9+/=]+)\.([A-Za-z0-9+/=]+)\.([0-9a-f]{64})$/.exec(ticket.trim());
  if (m === null) throw bad();
  const pkcs8 = unb64(m[1]);
  const pub = unb64(m[2]);
  if (pkcs8 === null || pub === null || pub.length !== 32) throw bad();
  try {
    const privateKey = await crypto.subtle.importKey(
      "pkcs8",
      pkcs8.slice(),
      { name: "X25519" },
      true,
      ["deriveBits"],
    );
    return { id, pair: { privateKey, publicRaw: pub }, requestSha256: m[3] };
  } catch {
    throw bad();
  }
}

/** How long to wait, and what to check the result against. */
export interface WaitOptions {
  readonly timeoutMs: number;
  /** The runner's static public key (raw), from the operator's key dir. */
  readonly runnerPublic: Uint8Array;
  /** Lines for the person waiting (stderr): what was refused on the way, never followed. */
  readonly note?: (line: string) => void;
}

/** What the waiter says became of its request when it stops waiting without a result. */
function fate(root: string, s: Submitted): string {
  let withdrawn: boolean;
  try {
    withdrawn = withdrawRequest(root, s.id, s.channel ?? "orchestrator");
  } catch (e) {
    return `request ${s.id} could not be withdrawn (${(e as Error).message})` +
      (s.expires !== undefined ? `; a runner refuses it after ${s.expires} (REQUEST_EXPIRED)` : "");
  }
  if (withdrawn) return `request ${s.id} was withdrawn: nothing will act on it`;
  return `request ${s.id} was already claimed by a runner, which acts on it (or reports it ` +
    "RUNNER_INTERRUPTED at its next start); see its rows: agentteams ledger show";
}

/**
 * Waits for a request's result, opens it (refusing one that is not authentic), and acknowledges
 * it with its token (the runner then deletes it). Everything it reads of the session-writable
 * result and status folders, and the ack it creates, goes through lib/fs/session_dir.ts: a link,
 * hard link, FIFO or directory at a name is refused, never followed. Without a result in time, or
 * when the runner's status says it stopped itself, the request is withdrawn if no runner has
 * claimed it yet, and the refusal says which it was.
 *
 * @throws {QueueError} `NO_RUNNER` (no result within the timeout), `RUNNER_STOPPED` (the runner
 *   stopped itself; its reason named), `RESULT_NOT_AUTHENTIC`, `QUEUE_UNSAFE_PATH`
 * @example
 * ```ts ignore
 * // Not run: it needs runnerPublic, which it declares rather than makes.
 * import { submitRequest, waitForResult } from "./client.ts";
 * declare const runnerPublic: Uint8Array;
 * const s = await submitRequest("/p", { kind: "verify-ledger" }, "orchestrator", {
 *   runnerPublic: () => Promise.resolve(runnerPublic),
 * });
 * const r = await waitForResult("/p", s, { timeoutMs: 120_000, runnerPublic });
 * r.body.ok; // true when the ledger verifies
 * ```
 */
export async function waitForResult(
  root: string,
  s: Submitted,
  opts: WaitOptions,
): Promise<OpenedResult> {
  const paths = queuePaths(root);
  const name = `${s.id}.json`;
  const deadline = Date.now() + opts.timeoutMs;
  let results = pinQueueDir(paths.results);
  const status = pinQueueDir(paths.status);
  let watcher: Deno.FsWatcher | null = null;
  try {
    if (results !== null) watcher = Deno.watchFs(paths.results, { recursive: false });
  } catch {
    watcher = null; // the poll serves
  }
  const nextEvent = eventWaiter(watcher?.[Symbol.asyncIterator]());
  const refused = new Set<string>();
  try {
    while (true) {
      results ??= pinQueueDir(paths.results);
      let bytes: Uint8Array | null = null;
      if (results !== null) {
        try {
          bytes = await readNameWithin(results, name, MAX_RESULT_BYTES);
        } catch (e) {
          if (!(e instanceof NameRefused)) {
            if (e instanceof FsSafetyError) throw unsafe(e);
            throw e;
          }
          // Planted where the runner's result goes: never followed; the runner's rename
          // replaces it, so waiting goes on.
          if (!refused.has(e.message)) {
            refused.add(e.message);
            opts.note?.(`agentteams: ${e.message}`);
          }
        }
      }
      if (bytes !== null) {
        const opened = await openResult(new TextDecoder().decode(bytes), {
          id: s.id,
          requestBytesSha256: s.requestSha256,
          own: s.pair,
          runnerPublic: opts.runnerPublic,
        });
        await acknowledge(root, s, opts);
        return opened;
      }
      const stop: RunnerStop | null = status === null ? null : await stoppedIn(status);
      if (stop !== null) {
        throw new QueueError(
          "RUNNER_STOPPED",
          `the runner stopped itself at ${stop.at} (${stop.code}: ${stop.message}); ` +
            `${fate(root, s)}. Mend what it names and start it again (agentteams serve)`,
          { details: { id: s.id, stopped: stop.code } },
        );
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new QueueError(
          "NO_RUNNER",
          `no runner answered within ${Math.round(opts.timeoutMs / 1000)} s; ${fate(root, s)}. ` +
            "Start the runner outside every agent session (agentteams serve) and run this again",
          { details: { id: s.id } },
        );
      }
      await nextEvent(Math.min(left, 500));
    }
  } finally {
    try {
      watcher?.close();
    } catch { /* closed */ }
  }
}

/** The stop the runner's status file reports, or null (none, or unreadable: no claim made). */
async function stoppedIn(status: DirPin): Promise<RunnerStop | null> {
  try {
    return (await readStatusIn(status))?.stopped ?? null;
  } catch {
    return null;
  }
}

/**
 * Waits for the next file-system event or `ms`, whichever comes first; an event that arrives
 * after the timeout is kept for the next wait, never lost (one pending read per watcher).
 */
function eventWaiter(
  events: AsyncIterator<Deno.FsEvent> | undefined,
): (ms: number) => Promise<void> {
  let pending: Promise<unknown> | null = null;
  return (ms) =>
    new Promise((res) => {
      const t = setTimeout(res, ms);
      if (events === undefined) return;
      pending ??= events.next().finally(() => {
        pending = null;
      });
      pending.then(() => {
        clearTimeout(t);
        res();
      }, () => {});
    });
}

/**
 * The acknowledgement token of a submitted request's result, as its waiter makes it (the runner
 * makes the same from the request's reply key and its static private key).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs runnerPublic, which it declares rather than makes.
 * import { submitRequest, waiterAckToken } from "./client.ts";
 * declare const runnerPublic: Uint8Array;
 * const s = await submitRequest("/p", { kind: "verify-ledger" }, "orchestrator", {
 *   runnerPublic: () => Promise.resolve(runnerPublic),
 * });
 * (await waiterAckToken(s, runnerPublic)).length; // 64
 * ```
 */
export async function waiterAckToken(s: Submitted, runnerPublic: Uint8Array): Promise<string> {
  return await ackToken(
    s.pair.privateKey,
    runnerPublic,
    { waiter: s.pair.publicRaw, runner: runnerPublic },
    contextOf(s.id, s.requestSha256),
  );
}

/**
 * Creates the acknowledgement `acks/<id>` for a read result, holding the result's ack token, so
 * only this waiter's ack lets the runner delete the result. Published whole (`publishNewIn`):
 * anything a session put at the name, a symlink to the key file or the ledger included, refuses
 * it and is never written through; and the runner's sweep, which claims an ack the moment its
 * name appears, never finds it empty (it refused such a half-made ack as a stranger's). A refused
 * ack is said on `note`; the result then expires on its own.
 */
async function acknowledge(root: string, s: Submitted, opts: WaitOptions): Promise<void> {
  const token = await waiterAckToken(s, opts.runnerPublic);
  try {
    const acks = pinQueueDir(queuePaths(root).acks);
    if (acks === null) return;
    publishNewIn(acks, s.id, new TextEncoder().encode(token), 0o644);
  } catch (e) {
    if (e instanceof FsSafetyError || e instanceof QueueError) {
      opts.note?.(
        `agentteams: the acknowledgement was not written (${e.message}); the runner deletes the ` +
          "result on its own later",
      );
      return;
    }
    throw e;
  }
}

/**
 * The result an opened result stands for: the act's own result (with the sealed secret merged in,
 * a dispatch's nonce) or the very refusal the runner met, rethrown for the CLI to print as in
 * direct mode.
 *
 * @throws {RelayedError} the runner's refusal
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resultOrRefusal } from "./client.ts";
 * assert.deepEqual(
 *   resultOrRefusal({ body: { v: 1, id: "i", ok: true, kind: "issue-dispatch", exit: 0, queue_wait_ms: 0,
 *     serve_ms: 0, request_sha256: "", result: { agent: "w" } }, secret: { nonce: "n" } }),
 *   { agent: "w", nonce: "n" },
 * );
 * ```
 */
export function resultOrRefusal(o: OpenedResult): JsonObject {
  if (o.body.ok) return { ...(o.body.result ?? {}), ...(o.secret ?? {}) };
  const e = (o.body.error ?? {}) as Record<string, unknown>;
  const str = (v: unknown, d: string) => typeof v === "string" ? v : d;
  throw new RelayedError({
    error: str(e.error, "Error"),
    family: str(e.family, "queue"),
    code: str(e.code, "INTERNAL"),
    message: str(e.message, "the runner refused the request"),
    details: e.details !== null && typeof e.details === "object"
      ? e.details as Record<string, unknown>
      : {},
    exit: ([1, 2, 3].includes(o.body.exit) ? o.body.exit : 1) as ExitCode,
    ...(o.body.result !== undefined ? { result: o.body.result as Record<string, unknown> } : {}),
  });
}
