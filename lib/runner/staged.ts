/**
 * Staged proposals: a change or deletion an agent proposed through the tool-server channel that
 * waits for the orchestrator's approval instead of being written (FORMATS.md §2.5). The runner
 * checks it first through the act pipeline as a dry run (every path rule, the base, the gates),
 * then keeps it in `.agentteams/staged/<sid>.json` (directory 0700, file 0600), MAC'd with the
 * ledger key so a record edited on disk is never approved, and records a `stage-proposal` row.
 *
 * The record holds the artifact without its `dispatch` and `agent` (the nonce is never stored;
 * the agent is the record's own, from the signed dispatch record), the gates that passed, the
 * content's size and hash, and an expiry 24 hours on.
 *
 * The orchestrator's side reads it back ({@link openStaged}, {@link listStaged},
 * {@link rejectStaged}): a sid of 32 hex only; the record a regular file with one name, at most
 * 4 MiB, read through the pinned folder without following a link or waiting on a FIFO
 * (`STAGED_UNSAFE`); strict JSON naming its own sid (`STAGED_MALFORMED`); then
 * {@link stagedProblem}: the MAC (`STAGED_TAMPERED`), the artifact's path and kind equal to the
 * record's and the content's hash (`STAGED_MISMATCH`), the expiry (`STAGED_EXPIRED`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stagedRecord } from "./staged.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const r = stagedRecord({
 *   sid: "0".repeat(32),
 *   agent: "worker",
 *   artifact: { kind: "delete-proposal", dispatch: "1".repeat(32), path: "src/a.txt", base_sha256: "a".repeat(64), rationale: "gone" },
 *   plan: { path: "src/a.txt", new_sha256: null, gates: [] },
 *   now: new Date("2026-12-01T10:00:00Z"),
 * }, new HmacKey(new Uint8Array(32)));
 * assert.equal(r.expires, "2026-12-02T10:00:00+00:00");
 * ```
 * @module
 */
import { canonical, type JsonObject, type JsonValue } from "../pycompat/canonical.ts";
import { parseInstant } from "../pycompat/isoformat.ts";
import { type HmacKey, sha256Hex } from "../crypto/hash.ts";
import { FsSafetyError, ProposalError } from "../errors.ts";
import { atomicWriteFileSync } from "../fs/atomic_write.ts";
import { join } from "../fs/path.ts";
import {
  type DirPin,
  listNames,
  lstatName,
  pinDir,
  readNameWithin,
  removeIn,
} from "../fs/session_dir.ts";
import { readJson } from "../json/reader.ts";
import { utcSeconds } from "../ledger/row.ts";
import { ledgerText } from "../ledger/row_text.ts";
import { ensureQueueDir } from "../queue/dirs.ts";
import { SID_RE } from "../queue/queued_request.ts";
import { SLUG_RE, STATE_DIR } from "../layout.ts";
import type { StagedApproval } from "../acts/pipeline.ts";

/** How long a staged proposal waits for approval, in hours. */
export const STAGED_TTL_HOURS = 24;

/** What a staged record is made from. */
export interface StagedInput {
  /** The record's id (32 hex). */
  readonly sid: string;
  /** The agent the nonce resolved to. */
  readonly agent: string;
  /** The artifact as it came (its `dispatch` and `agent` are left out of the record). */
  readonly artifact: Record<string, unknown>;
  /** The dry run's result: the normalized path, the new content's hash, the gates that passed. */
  readonly plan: {
    readonly path: string;
    readonly new_sha256: string | null;
    readonly gates: readonly unknown[];
  };
  /** The clock's reading. */
  readonly now: Date;
}

/**
 * The staged record, MAC'd over its canonical form without `mac` (key order as FORMATS.md §2.5
 * writes it). Pure.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs input, which it declares rather than makes.
 * import { stagedRecord } from "./staged.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * declare const input: import("./staged.ts").StagedInput;
 * typeof stagedRecord(input, new HmacKey(new Uint8Array(32))).mac; // "string"
 * ```
 */
export function stagedRecord(input: StagedInput, hmac: HmacKey): JsonObject {
  const { dispatch: _d, agent: _a, ...artifact } = input.artifact;
  const content = typeof artifact.content === "string" ? artifact.content : null;
  const body: JsonObject = {
    sid: input.sid,
    agent: input.agent,
    path: input.plan.path,
    kind: String(artifact.kind),
    artifact: artifact as JsonObject,
    gates: input.plan.gates as JsonValue[],
    bytes: content === null ? 0 : new TextEncoder().encode(content).length,
    content_sha256: input.plan.new_sha256,
    expires: utcSeconds(new Date(input.now.getTime() + STAGED_TTL_HOURS * 3600_000)),
  };
  return { ...body, mac: hmac.hex(canonical(body)) };
}

/**
 * The staged folder of a project (`.agentteams/staged`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stagedDir } from "./staged.ts";
 * assert.equal(stagedDir("/p"), "/p/.agentteams/staged");
 * ```
 */
export function stagedDir(root: string): string {
  return join(root, STATE_DIR, "staged");
}

/**
 * Makes `.agentteams/staged/` (0700) when missing and checks it is a real directory, before
 * anything is recorded about a record to be written there. Returns its path.
 *
 * @throws {QueueError} `QUEUE_UNSAFE_PATH` when it is a link or not a directory
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ensureStagedDir } from "./staged.ts";
 * const root = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${root}/.agentteams`);
 * assert.equal(ensureStagedDir(root), `${root}/.agentteams/staged`);
 * ```
 */
export function ensureStagedDir(root: string): string {
  const dir = stagedDir(root);
  ensureQueueDir(dir, 0o700);
  return dir;
}

/**
 * Writes a staged record atomically (0600) into `.agentteams/staged/` (made 0700 when missing,
 * refused when it is not a real directory). Returns its path.
 *
 * @throws {QueueError} `QUEUE_UNSAFE_PATH` when the folder is a link or not a directory
 * @example
 * ```ts ignore
 * // Not run: it needs record, which it declares rather than makes, and writes in /p.
 * import { writeStaged } from "./staged.ts";
 * declare const record: import("../pycompat/canonical.ts").JsonObject;
 * writeStaged("/p", record); // "/p/.agentteams/staged/<sid>.json"
 * ```
 */
export function writeStaged(root: string, record: JsonObject): string {
  const dir = ensureStagedDir(root);
  const path = join(dir, `${record.sid}.json`);
  atomicWriteFileSync(path, JSON.stringify(record), { forceMode: 0o600 });
  return path;
}

/** Largest staged record read back (FORMATS.md §2.5). */
export const STAGED_MAX_BYTES = 4 * 1024 * 1024;

/** A staged record read back: the folder it was read through, its name there, its JSON. */
export interface ReadStaged {
  readonly sid: string;
  /** The staged folder, pinned when it was read. */
  readonly pin: DirPin;
  /** `<sid>.json`. */
  readonly name: string;
  /** The record as stored (not yet verified). */
  readonly record: JsonObject;
}

/** A staged record that verified: what the approval acts on. */
export interface OpenedStaged extends StagedApproval {
  /** Where it was read, to remove it once applied. */
  readonly read: ReadStaged;
}

const dec = new TextDecoder("utf-8", { fatal: true });

function unsafe(sid: string, e: unknown): ProposalError {
  return new ProposalError(
    "STAGED_UNSAFE",
    `staged proposal ${sid} cannot be read safely (${(e as Error).message}): only a regular ` +
      "file with one name, at most 4 MiB, is read there; reject it, or remove it by hand",
  );
}

/** The staged folder pinned, or null when there is none (a link or a file there is refused). */
function pinStaged(root: string): DirPin | null {
  try {
    return pinDir(stagedDir(root));
  } catch (e) {
    if (e instanceof FsSafetyError) {
      throw new ProposalError(
        "STAGED_UNSAFE",
        `the staged folder cannot be used (${e.message}): the runner made it a 0700 directory; ` +
          "stop the runner, move what is there aside, and start it again",
      );
    }
    throw e;
  }
}

/**
 * Refuses a staged id that is not 32 lower-case hex (`STAGED_ID_INVALID`), before it names a
 * path. Pure.
 *
 * @throws {ProposalError} `STAGED_ID_INVALID`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkSid } from "./staged.ts";
 * checkSid("0".repeat(32));
 * assert.throws(() => checkSid("../x"), { code: "STAGED_ID_INVALID" });
 * ```
 */
export function checkSid(sid: string): void {
  if (!SID_RE.test(sid)) {
    throw new ProposalError(
      "STAGED_ID_INVALID",
      `${JSON.stringify(sid.slice(0, 80))} is not a staged proposal's id (32 lower-case hex, ` +
        "as the stage receipt and `agentteams staged list` print it)",
    );
  }
}

/**
 * Reads staged record `sid` as stored, unverified (see the module doc for what is refused).
 *
 * @throws {ProposalError} `STAGED_ID_INVALID`, `STAGED_UNKNOWN`, `STAGED_UNSAFE`,
 *   `STAGED_MALFORMED`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readStaged } from "./staged.ts";
 * await assert.rejects(readStaged(Deno.makeTempDirSync(), "0".repeat(32)), { code: "STAGED_UNKNOWN" });
 * ```
 */
export async function readStaged(root: string, sid: string): Promise<ReadStaged> {
  const entry = await locate(root, sid);
  if ("refused" in entry) throw entry.refused;
  return { sid, pin: entry.pin, name: entry.name, record: parseRecord(sid, entry.bytes) };
}

/** A staged entry found: its bytes, or why it is not read (a link, FIFO, directory, too large). */
type Entry =
  & { readonly pin: DirPin; readonly name: string }
  & ({ readonly bytes: Uint8Array } | { readonly refused: ProposalError });

function unknownSid(sid: string): ProposalError {
  return new ProposalError(
    "STAGED_UNKNOWN",
    `no staged proposal ${sid} (applied, rejected or purged already, or never staged): ` +
      "`agentteams staged list` shows those waiting",
    { details: { sid } },
  );
}

/** Staged entry `sid` located and, when a regular file with one name of at most 4 MiB, read. */
async function locate(root: string, sid: string): Promise<Entry> {
  checkSid(sid);
  const pin = pinStaged(root);
  if (pin === null) throw unknownSid(sid);
  const name = `${sid}.json`;
  let bytes: Uint8Array | null;
  try {
    bytes = await readNameWithin(pin, name, STAGED_MAX_BYTES);
  } catch (e) {
    if (e instanceof FsSafetyError) return { pin, name, refused: unsafe(sid, e) };
    throw e;
  }
  if (bytes === null) throw unknownSid(sid);
  return { pin, name, bytes };
}

/** A staged record's bytes as a record: strict JSON, an object naming `sid`, with its artifact. */
function parseRecord(sid: string, bytes: Uint8Array): JsonObject {
  let record: unknown;
  try {
    record = readJson(dec.decode(bytes), { dialect: "json" }).value;
  } catch (e) {
    throw new ProposalError(
      "STAGED_MALFORMED",
      `staged record ${sid} is not UTF-8 JSON (${(e as Error).message}); reject it`,
    );
  }
  const r = record as Record<string, unknown> | null;
  if (
    typeof r !== "object" || r === null || Array.isArray(r) || r.sid !== sid ||
    typeof r.artifact !== "object" || r.artifact === null || Array.isArray(r.artifact)
  ) {
    throw new ProposalError(
      "STAGED_MALFORMED",
      `staged record ${sid} is not a staged record (an object naming its own sid, with its ` +
        "artifact); reject it",
    );
  }
  return r as JsonObject;
}

/**
 * Whether the MAC of a staged record holds under the ledger key (a record whose canonical form
 * cannot be made, a float in it, does not). Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stagedMacHolds } from "./staged.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * assert.equal(stagedMacHolds({ sid: "x", mac: "0" }, new HmacKey(new Uint8Array(32))), false);
 * ```
 */
export function stagedMacHolds(record: JsonObject, hmac: HmacKey): boolean {
  const { mac, ...body } = record;
  if (typeof mac !== "string") return false;
  try {
    return hmac.verify(canonical(body), mac);
  } catch {
    return false;
  }
}

/**
 * What stops a staged record from being approved at `now`, in order (FORMATS.md §2.5): its MAC
 * (`STAGED_TAMPERED`), its agent (`STAGED_MALFORMED`), its artifact's path and kind against the
 * record's and its content against `content_sha256` (`STAGED_MISMATCH`), its expiry
 * (`STAGED_MALFORMED` when unreadable, `STAGED_EXPIRED` once past). Null when nothing does. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stagedProblem, stagedRecord } from "./staged.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const key = new HmacKey(new Uint8Array(32));
 * const r = stagedRecord({
 *   sid: "0".repeat(32),
 *   agent: "worker",
 *   artifact: { kind: "delete-proposal", path: "a.txt", base_sha256: "a".repeat(64), rationale: "gone" },
 *   plan: { path: "a.txt", new_sha256: null, gates: [] },
 *   now: new Date("2026-12-01T10:00:00Z"),
 * }, key);
 * assert.equal(stagedProblem(r, key, new Date("2026-12-01T11:00:00Z")), null);
 * assert.equal(stagedProblem(r, key, new Date("2026-12-03T00:00:00Z"))?.code, "STAGED_EXPIRED");
 * assert.equal(stagedProblem({ ...r, path: "b.txt" }, key, new Date())?.code, "STAGED_TAMPERED");
 * ```
 */
export function stagedProblem(
  record: JsonObject,
  hmac: HmacKey,
  now: Date,
): ProposalError | null {
  const sid = String(record.sid);
  if (!stagedMacHolds(record, hmac)) {
    return new ProposalError(
      "STAGED_TAMPERED",
      `staged record ${sid} is not signed by this runner's ledger key (edited, or written by ` +
        "another): refused; reject it, and have the agent stage the proposal again",
    );
  }
  if (typeof record.agent !== "string" || !SLUG_RE.test(record.agent)) {
    return new ProposalError("STAGED_MALFORMED", `staged record ${sid} names no agent; reject it`);
  }
  const artifact = record.artifact as JsonObject;
  if (artifact.path !== record.path || artifact.kind !== record.kind) {
    return new ProposalError(
      "STAGED_MISMATCH",
      `staged record ${sid}: its artifact's path or kind is not the record's own; refused`,
    );
  }
  const content = typeof artifact.content === "string" ? sha256Hex(artifact.content) : null;
  if (content !== record.content_sha256) {
    return new ProposalError(
      "STAGED_MISMATCH",
      `staged record ${sid}: its content does not match its content_sha256; refused`,
    );
  }
  const expires = typeof record.expires === "string" ? parseInstant(record.expires) : null;
  if (expires === null || expires.naive) {
    return new ProposalError(
      "STAGED_MALFORMED",
      `staged record ${sid} has no readable expiry; reject it`,
    );
  }
  if (expires.ms < now.getTime()) {
    return new ProposalError(
      "STAGED_EXPIRED",
      `staged proposal ${sid} expired at ${record.expires}: reject it (\`agentteams staged ` +
        "list` purges it) and have the agent stage it again against the file as it is now",
      { details: { sid } },
    );
  }
  return null;
}

/**
 * Reads and verifies staged record `sid` for its approval: the {@link StagedApproval} the act
 * pipeline takes under identity `staged`.
 *
 * @throws {ProposalError} as {@link readStaged} and {@link stagedProblem}
 * @example
 * ```ts ignore
 * // Not run: it needs a staged record in /p, which it declares rather than makes.
 * import { openStaged } from "./staged.ts";
 * import type { HmacKey } from "../crypto/hash.ts";
 * declare const hmac: HmacKey;
 * (await openStaged("/p", "<sid>", hmac, new Date())).agent; // "worker"
 * ```
 */
export async function openStaged(
  root: string,
  sid: string,
  hmac: HmacKey,
  now: Date,
): Promise<OpenedStaged> {
  const read = await readStaged(root, sid);
  const problem = stagedProblem(read.record, hmac, now);
  if (problem !== null) throw problem;
  return {
    sid,
    agent: read.record.agent as string,
    artifact: read.record.artifact as JsonObject,
    read,
  };
}

/**
 * Removes a staged record once acted on (the entry itself, through the folder it was read in).
 *
 * @example
 * ```ts ignore
 * // Not run: it needs an opened record, which it declares rather than makes.
 * import { removeStaged, type ReadStaged } from "./staged.ts";
 * declare const read: ReadStaged;
 * removeStaged(read);
 * ```
 */
export function removeStaged(read: ReadStaged): void {
  removeIn(read.pin, read.name);
}

/** How a row is appended (the runner's ledger, its key and clock). */
export type AppendStagedRow = (body: JsonObject) => Promise<unknown>;

/**
 * The orchestrator's rejection of staged proposal `sid`: a `reject-staged` row (its reason
 * stripped and cut to 300 code points, FORMATS.md §1.2), then the record removed. A record whose MAC does not hold is rejected too (that is how one is cleared), its row
 * naming agent and path `?`: what an edited record says is never recorded as fact.
 *
 * @throws {ProposalError} as {@link readStaged}
 * @example
 * ```ts ignore
 * // Not run: it needs a staged record in /p, which it declares rather than makes.
 * import { rejectStaged } from "./staged.ts";
 * import type { HmacKey } from "../crypto/hash.ts";
 * declare const hmac: HmacKey;
 * await rejectStaged("/p", "<sid>", hmac, "not wanted", async () => {}); // { sid, agent, path, rejected: true }
 * ```
 */
export async function rejectStaged(
  root: string,
  sid: string,
  hmac: HmacKey,
  reason: string,
  append: AppendStagedRow,
): Promise<JsonObject> {
  const entry = await locate(root, sid);
  let record: JsonObject | null = null;
  if ("refused" in entry) {
    // A link, FIFO or hard link in its place is removed too (the entry, never its target); a
    // directory is not.
    const st = lstatName(entry.pin, entry.name);
    if (st === null) throw unknownSid(sid);
    if (st.isDirectory) throw entry.refused;
  } else {
    try {
      record = parseRecord(sid, entry.bytes);
    } catch { /* malformed: rejected all the same, naming nothing it says */ }
  }
  const signed = record !== null && stagedMacHolds(record, hmac);
  const agent = signed && typeof record!.agent === "string" ? record!.agent : "?";
  const path = signed && typeof record!.path === "string" ? record!.path : "?";
  await append({ action: "reject-staged", agent, path, sid, reason: ledgerText(reason) });
  removeIn(entry.pin, entry.name);
  return { sid, agent, path, rejected: true };
}

/** A staged name (`<32 hex>.json`). */
const STAGED_NAME_RE = /^[0-9a-f]{32}\.json$/;

/**
 * Every staged proposal waiting, oldest first (by mtime, then sid), without content:
 * `{sid, agent, kind, path, bytes, content_sha256, gates, expires}`, or `{sid, malformed: true}`
 * for one that cannot be read or does not verify (FORMATS.md §2.5). A verified record past its
 * expiry is purged: an `expire-staged` row, then the record removed. Names that are not
 * `<sid>.json` are left alone.
 *
 * @throws {ProposalError} `STAGED_UNSAFE` when the staged folder is a link or not a directory
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listStaged } from "./staged.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const key = new HmacKey(new Uint8Array(32));
 * assert.deepEqual(await listStaged(Deno.makeTempDirSync(), key, new Date(), async () => {}), []);
 * ```
 */
export async function listStaged(
  root: string,
  hmac: HmacKey,
  now: Date,
  append: AppendStagedRow,
): Promise<JsonObject[]> {
  const pin = pinStaged(root);
  if (pin === null) return [];
  const named = listNames(pin).filter((n) => STAGED_NAME_RE.test(n)).map((name) => {
    const st = lstatName(pin, name);
    return { name, sid: name.slice(0, 32), mtime: st?.mtime?.getTime() ?? 0 };
  }).sort((a, b) => a.mtime - b.mtime || (a.sid < b.sid ? -1 : a.sid > b.sid ? 1 : 0));
  const out: JsonObject[] = [];
  for (const { sid } of named) {
    let read: ReadStaged;
    try {
      read = await readStaged(root, sid);
    } catch (e) {
      if (!(e instanceof ProposalError)) throw e;
      // Gone since the listing: not waiting any more.
      if (e.code !== "STAGED_UNKNOWN") out.push({ sid, malformed: true });
      continue;
    }
    const r = read.record;
    const problem = stagedProblem(r, hmac, now);
    if (problem?.code === "STAGED_EXPIRED") {
      // An expired record can never be applied: purged, recorded.
      await append({ action: "expire-staged", agent: r.agent, path: r.path, sid });
      removeStaged(read);
      continue;
    }
    if (problem !== null) {
      out.push({ sid, malformed: true });
      continue;
    }
    out.push({
      sid,
      agent: r.agent,
      kind: r.kind,
      path: r.path,
      bytes: r.bytes,
      content_sha256: r.content_sha256,
      gates: r.gates,
      expires: r.expires,
    });
  }
  return out;
}
