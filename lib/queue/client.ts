/**
 * The waiting side of the queue, as the CLI uses it in queue mode: a request written
 * (write-then-rename, so the runner never sees half of one) with a fresh ephemeral reply key, its
 * result awaited (file-system events, a slow poll as a fallback), opened and checked for the
 * runner's authenticator, acknowledged. It needs no secret: only the runner's public key.
 *
 * @module
 */
import type { JsonObject } from "../canonical.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { generateSealPair, publicB64, type SealPair, unb64 } from "../crypto/seal.ts";
import { type ExitCode, QueueError, RelayedError } from "../errors.ts";
import { fillNewFileSync } from "../fs/atomic_write.ts";
import { join } from "../fs/path.ts";
import { readRegularFileSync } from "../fs/safe_read.ts";
import { isQueueDir } from "./dirs.ts";
import {
  type Channel,
  channelDir,
  isRequestId,
  newRequestId,
  queuePaths,
  tempNameOf,
} from "./paths.ts";
import { MAX_RESULT_BYTES, type OpenedResult, openResult } from "./result.ts";
import type { QueueRequestT } from "./request.ts";

/** A request as the CLI gives it (the reply key is added here). */
export type OutgoingRequest = DistributiveOmit<QueueRequestT, "reply_key">;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A request written and not yet answered: what the waiter keeps in memory. */
export interface Submitted {
  readonly id: string;
  readonly pair: SealPair;
  readonly requestSha256: string;
}

/**
 * Writes a request into the queue: a temp file (0600, created new) renamed to `<id>.json`.
 *
 * @throws {QueueError} `NO_RUNNER` when the queue's folder does not exist (no runner ever made it)
 * @example
 * ```ts
 * import { submitRequest } from "./client.ts";
 * const s = await submitRequest("/p", { kind: "verify-ledger" });
 * s.id.length; // 32
 * ```
 */
export async function submitRequest(
  root: string,
  request: OutgoingRequest,
  channel: Channel = "orchestrator",
): Promise<Submitted> {
  const paths = queuePaths(root);
  const dir = channelDir(paths, channel);
  if (!isQueueDir(dir)) {
    throw new QueueError(
      "NO_RUNNER",
      `there is no queue at ${dir}: start the runner outside every agent session ` +
        "(agentteams serve) and run this again",
    );
  }
  const pair = await generateSealPair();
  const id = newRequestId();
  const bytes = new TextEncoder().encode(
    JSON.stringify({ ...request, reply_key: publicB64(pair.publicRaw) }),
  );
  const tmp = join(dir, tempNameOf(id));
  const f = Deno.openSync(tmp, { write: true, createNew: true, mode: 0o600 });
  try {
    fillNewFileSync(f, tmp, bytes, 0o600);
  } finally {
    f.close();
  }
  Deno.renameSync(tmp, join(dir, `${id}.json`));
  return { id, pair, requestSha256: sha256Hex(bytes) };
}

/**
 * The ticket that lets another process (`agentteams wait`) open this request's result: the
 * ephemeral private key and the request's digest. It opens that one result only; keep it as you
 * would the answer.
 *
 * @example
 * ```ts
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
 * import { fromTicket } from "./client.ts";
 * try { await fromTicket("0".repeat(32), "at1.x"); } catch (e) { (e as Error).name; } // "QueueError"
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
}

/**
 * Waits for a request's result, opens it (refusing one that is not authentic), and acknowledges
 * it (the runner then deletes it).
 *
 * @throws {QueueError} `NO_RUNNER` (no result within the timeout), `RESULT_NOT_AUTHENTIC`
 * @example
 * ```ts
 * import { submitRequest, waitForResult } from "./client.ts";
 * declare const runnerPublic: Uint8Array;
 * const s = await submitRequest("/p", { kind: "verify-ledger" });
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
  const path = join(paths.results, `${s.id}.json`);
  const deadline = Date.now() + opts.timeoutMs;
  let watcher: Deno.FsWatcher | null = null;
  try {
    if (isQueueDir(paths.results)) watcher = Deno.watchFs(paths.results, { recursive: false });
  } catch (e) {
    if (e instanceof QueueError) throw e;
    watcher = null; // the poll serves
  }
  const nextEvent = eventWaiter(watcher?.[Symbol.asyncIterator]());
  try {
    while (true) {
      let text: string | null = null;
      try {
        const { bytes } = readRegularFileSync(path, { maxBytes: MAX_RESULT_BYTES, what: "result" });
        text = new TextDecoder().decode(bytes);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      if (text !== null) {
        const opened = await openResult(text, {
          id: s.id,
          requestBytesSha256: s.requestSha256,
          own: s.pair,
          runnerPublic: opts.runnerPublic,
        });
        acknowledge(root, s.id);
        return opened;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new QueueError(
          "NO_RUNNER",
          `no runner answered within ${Math.round(opts.timeoutMs / 1000)} s: start it outside ` +
            `every agent session (agentteams serve); request ${s.id} stays queued until a ` +
            "runner serves it",
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

/** Creates the empty acknowledgement file for a read result. */
function acknowledge(root: string, id: string): void {
  const p = queuePaths(root);
  try {
    if (isQueueDir(p.acks)) {
      Deno.writeFileSync(join(p.acks, id), new Uint8Array(), { mode: 0o644 });
    }
  } catch { /* the result expires on its own */ }
}

/**
 * The result an opened result stands for: the act's own result (with the sealed secret merged in,
 * a dispatch's nonce) or the very refusal the runner met, rethrown for the CLI to print as in
 * direct mode.
 *
 * @throws {RelayedError} the runner's refusal
 * @example
 * ```ts
 * import { resultOrRefusal } from "./client.ts";
 * resultOrRefusal({ body: { v: 1, id: "i", ok: true, kind: "issue-dispatch", exit: 0, queue_wait_ms: 0,
 *   serve_ms: 0, request_sha256: "", result: { agent: "w" } }, secret: { nonce: "n" } });
 * // { agent: "w", nonce: "n" }
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
