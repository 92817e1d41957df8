/**
 * The one state `ledger verify` judges. Other processes append rows (each one: the row written
 * and fsynced, then the head replaced by a rename, all under an exclusive `flock` on the ledger)
 * and issue, count and spend dispatches (the store replaced by a rename or appended to, under
 * `dispatches.lock`) while verify reads. Read one file after the other without care, the files
 * disagree: a head two appends older than the ledger (`HEAD_MISMATCH`), a head or store replaced
 * between its `lstat` and its `open` (`LEDGER_UNSAFE_PATH`). So:
 *
 * 1. **The ledger's end.** The ledger is opened read-only and a *shared* `flock` taken on it (the
 *    lock appends take exclusively, here and in the earlier tool); under it the ledger's length
 *    and the head are read, then the lock is released. No append is half done under the lock, so
 *    the head describes exactly the first `size` bytes (or one row less, after a crash). Only
 *    those bytes are judged afterwards, through the same descriptor; rows appended meanwhile lie
 *    beyond them. Appends never change bytes already written, so the prefix needs no lock.
 * 2. **A torn tail.** When the ledger ends mid-line, the lock is kept until verification is done:
 *    `repair --torn-tail` changes the end of the ledger, and appends refuse such a ledger anyway,
 *    so holding it stalls nobody.
 * 3. **The dispatch store**, read after the ledger's end (an act writes its use before its row, so
 *    every act in the prefix has its use in this store), under a shared lock on
 *    `dispatches.lock` when that file exists and can be locked, but never while the ledger's
 *    lock is held (an issue holds the dispatch lock while it waits for the ledger's: waiting for
 *    it there would deadlock).
 * 4. **Without a lock.** A state file replaced between its `lstat` and its `open` is read again.
 *    When `flock` is refused, the ledger's end is taken from looks, each reading the head, the
 *    length, the head and the length again, accepted when both reads agree ({@link lookSettles});
 *    an end mid-line is believed only when seen twice. (Such a look may fall between an append's
 *    row and its head: verify then notes a head one row behind, as after a crash; the verdict
 *    holds.) A state that does not settle within {@link SETTLE_LOOKS} looks is `LEDGER_BUSY`:
 *    verify fails closed and never judges a mixture. Without the dispatch lock (no
 *    `dispatches.lock`, or under the caller's ledger lock) the store is read unlocked: a lock
 *    file that appears meanwhile means reading again under it; an unterminated last line is read
 *    again before it is believed.
 * 5. **No ledger.** The head and the store are read, then the ledger looked for again: the ledger
 *    is created before any head or store row and never removed, so if it is still absent, it was
 *    absent while they were read (`LEDGER_MISSING` is real); if it appeared, the snapshot is taken
 *    again.
 *
 * Nothing is created or written: the lock files are opened read-only and never made.
 *
 * @example
 * ```ts
 * import { takeLedgerSnapshot } from "./verify_snapshot.ts";
 * const snap = takeLedgerSnapshot(Deno.makeTempDirSync());
 * snap.how; // "absent"
 * snap.close();
 * ```
 * @module
 */
import { FsSafetyError, LedgerError } from "../errors.ts";
import { readAtSync } from "../fs/read_at.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { checkStatePath, readStateFileSync, type StatePaths, statePaths } from "../layout.ts";
import { MAX_DISPATCH_STORE_BYTES } from "./dispatch.ts";

/** How many times a read is tried again (a file replaced mid-read, a lock file swapped). */
export const SNAPSHOT_ATTEMPTS = 8;

/** How many unlocked looks at the ledger's end are taken before verify gives up (`LEDGER_BUSY`). */
export const SETTLE_LOOKS = 20;

/** The state verification judges, read at one moment. */
export interface LedgerSnapshot {
  /** The ledger, open for reading (`null`: there is none). Only its first `size` bytes count. */
  readonly file: Deno.FsFile | null;
  /** The ledger's length at the snapshot. */
  readonly size: number;
  /** The head's text, read with `size` (`null` when absent). */
  readonly head: string | null;
  /** The dispatch store's text, read after the ledger's end (`null` when absent). */
  readonly dispatches: string | null;
  /**
   * `locked`: under a shared lock on the ledger; `held`: under the caller's lock; `settled`: no
   * lock could be taken, two unlocked looks agreed; `absent`: there is no ledger.
   */
  readonly how: "locked" | "held" | "settled" | "absent";
  /** The ledger ends mid-line; when `locked`, the lock is kept until {@link LedgerSnapshot.close}. */
  readonly torn: boolean;
  /** Releases the lock if still held and closes the file (not the caller's). Idempotent. */
  close(): void;
}

/** One unlocked look at the ledger's end: the head and the length, each read twice. */
export interface Look {
  /** The head's text, first read (`null`: absent). */
  readonly headBefore: string | null;
  /** The ledger's length, first read. */
  readonly size: number;
  /** Whether the byte before `size` is a newline (true for an empty ledger). */
  readonly endsLine: boolean;
  /** The head's text, read again after the length. */
  readonly headAfter: string | null;
  /** The ledger's length, read again after the head. */
  readonly sizeAfter: number;
}

/**
 * Whether an unlocked look shows one state (pure). The head is replaced only after its row is
 * written, and its count only grows, so the same head before and after the length means no
 * append finished in between: the length then holds the head's rows, or one more whose head is
 * not yet replaced (which verify accepts with a note, as after a crash). A length that stopped
 * mid-line may be a write in progress: it is believed only when the previous look saw the same.
 *
 * @example
 * ```ts
 * import { lookSettles } from "./verify_snapshot.ts";
 * const look = { headBefore: "h1", size: 10, endsLine: true, headAfter: "h1", sizeAfter: 10 };
 * lookSettles(look, null); // true
 * lookSettles({ ...look, headAfter: "h2" }, null); // false: an append finished meanwhile
 * lookSettles({ ...look, endsLine: false }, null); // false until seen twice
 * ```
 */
export function lookSettles(look: Look, previous: Look | null): boolean {
  if (look.headBefore !== look.headAfter || look.size !== look.sizeAfter) return false;
  if (look.endsLine) return true;
  return previous !== null && previous.headAfter === look.headBefore &&
    previous.sizeAfter === look.size && !previous.endsLine;
}

const dec = new TextDecoder();
const pauseCell = new Int32Array(new SharedArrayBuffer(4));

/** Waits a little longer at each try (1, 2, 4 ... 50 ms), synchronously. */
function pause(attempt: number): void {
  Atomics.wait(pauseCell, 0, 0, Math.min(2 ** attempt, 50));
}

function busy(message: string): LedgerError {
  return new LedgerError(
    "LEDGER_BUSY",
    `${message}; verification needs one consistent state: run it again, or where the ledger's ` +
      "lock can be taken",
  );
}

function replacedWhileOpening(e: unknown): boolean {
  return e instanceof LedgerError && e.cause instanceof FsSafetyError &&
    e.cause.code === "FILE_CHANGED";
}

/**
 * A state file's bytes (`null` when absent), read again when it was replaced between its `lstat`
 * and its `open` (an atomic rewrite, not an unsafe path). A symlink, a FIFO or an oversized file
 * is still `LEDGER_UNSAFE_PATH`.
 *
 * @throws {LedgerError} `LEDGER_UNSAFE_PATH`; `LEDGER_BUSY` when it was replaced at every try.
 * @example
 * ```ts
 * import { readStateFileSettled } from "./verify_snapshot.ts";
 * readStateFileSettled("/nonexistent/x", "ledger head", 4096); // null
 * ```
 */
export function readStateFileSettled(
  path: string,
  what: string,
  maxBytes: number,
): Uint8Array | null {
  for (let attempt = 0;; attempt++) {
    try {
      return readStateFileSync(path, what, maxBytes);
    } catch (e) {
      if (!replacedWhileOpening(e)) throw e;
      if (attempt + 1 >= SNAPSHOT_ATTEMPTS) {
        throw busy(`the ${what} ${path} was replaced at each of ${SNAPSHOT_ATTEMPTS} reads`);
      }
      pause(attempt);
    }
  }
}

function readHead(paths: StatePaths): string | null {
  const bytes = readStateFileSettled(paths.head, "ledger head", 4096);
  return bytes === null ? null : dec.decode(bytes);
}

/**
 * Opens a state file read-only, `null` when absent: `lstat` must show a regular file and the
 * opened file must be that inode (a file renamed over it in between is opened again).
 */
function openStateFile(path: string, what: string): Deno.FsFile | null {
  for (let attempt = 0;; attempt++) {
    if (attempt >= SNAPSHOT_ATTEMPTS) {
      throw busy(`the ${what} ${path} was replaced at each of ${SNAPSHOT_ATTEMPTS} opens`);
    }
    if (attempt > 0) pause(attempt - 1);
    const before = lstatOrNullSync(path);
    if (before === null) return null;
    if (!before.isFile) {
      checkStatePath(path, "file"); // throws for what it is
      continue; // it became a regular file meanwhile
    }
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
    const st = file.statSync();
    if (st.isFile && st.ino === before.ino && st.dev === before.dev) return file;
    file.close();
  }
}

/** Takes a shared lock; `false` when the file system or platform refuses one. */
function lockShared(file: Deno.FsFile): boolean {
  try {
    file.lockSync(false);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
    return false;
  }
}

function unlock(file: Deno.FsFile): void {
  try {
    file.unlockSync();
  } catch { /* closing the file releases it too */ }
}

/** Whether `path` still names the file `file` is open on. */
function stillNamed(path: string, file: Deno.FsFile): boolean {
  const now = lstatOrNullSync(path);
  const st = file.statSync();
  return now !== null && now.isFile && now.ino === st.ino && now.dev === st.dev;
}

function endsLine(file: Deno.FsFile, size: number): boolean {
  if (size === 0) return true;
  const b = new Uint8Array(1);
  return readAtSync(file, size - 1, b) === 1 && b[0] === 0x0a;
}

/**
 * The dispatch store's text, read as one state: under a shared lock on `dispatches.lock` when
 * `mayLock` and the lock can be taken; else unlocked, a replaced store read again and an
 * unterminated last line (perhaps an append in progress) read again before it is believed.
 */
function readDispatches(paths: StatePaths, mayLock: boolean, depth = 0): string | null {
  const read = () => {
    const bytes = readStateFileSettled(
      paths.dispatches,
      "dispatch store",
      MAX_DISPATCH_STORE_BYTES,
    );
    return bytes === null ? null : dec.decode(bytes);
  };
  const lockExisted = mayLock && checkStatePath(paths.dispatchLock, "file");
  if (lockExisted) {
    let lock: Deno.FsFile | null = null;
    try {
      lock = openStateFile(paths.dispatchLock, "dispatch lock");
    } catch (e) {
      // A lock file this process may not open (another owner's 0600): read without it.
      if (!(e instanceof Deno.errors.PermissionDenied)) throw e;
    }
    if (lock !== null) {
      try {
        if (lockShared(lock)) {
          try {
            return read();
          } finally {
            unlock(lock);
          }
        }
      } finally {
        lock.close();
      }
    }
  }
  for (let attempt = 0;; attempt++) {
    const text = read();
    // A writer creates the lock file before it touches the store: one that appeared meanwhile
    // may have been writing during the read, so the store is read again under the lock.
    if (mayLock && !lockExisted && checkStatePath(paths.dispatchLock, "file")) {
      if (depth + 1 >= SNAPSHOT_ATTEMPTS) {
        throw busy(`the dispatch lock ${paths.dispatchLock} kept appearing and vanishing`);
      }
      return readDispatches(paths, mayLock, depth + 1);
    }
    if (text === null || text === "" || text.endsWith("\n") || attempt >= 2) return text;
    pause(attempt + 2);
  }
}

/** Options of {@link takeLedgerSnapshot}. */
export interface SnapshotOptions {
  /**
   * The ledger, already open and locked by the caller (`repair`): its state is read from it
   * without another lock, and the dispatch store without its lock.
   */
  held?: Deno.FsFile;
}

/**
 * Takes the snapshot (see the module doc). The caller judges `file`'s first `size` bytes against
 * `head` and `dispatches`, then calls `close`.
 *
 * @throws {LedgerError} `LEDGER_UNSAFE_PATH` for a symlinked, non-regular or oversized state
 *   file; `LEDGER_BUSY` when no consistent state could be read.
 * @example
 * ```ts
 * import { takeLedgerSnapshot } from "./verify_snapshot.ts";
 * import { appendRow } from "./append.ts";
 * import { HmacKey } from "../crypto/hash.ts";
 * const root = Deno.makeTempDirSync();
 * await appendRow(root, new HmacKey(new Uint8Array([1])), { action: "note" });
 * const snap = takeLedgerSnapshot(root);
 * [snap.how, snap.head !== null, snap.size > 0]; // ["locked", true, true]
 * snap.close();
 * ```
 */
export function takeLedgerSnapshot(root: string, opts: SnapshotOptions = {}): LedgerSnapshot {
  const paths = statePaths(root);
  if (opts.held !== undefined) return heldSnapshot(paths, opts.held);
  for (let attempt = 0;; attempt++) {
    if (!checkStatePath(paths.dir, "dir")) return absent(null, null);
    const file = openStateFile(paths.ledger, "ledger");
    if (file === null) {
      const head = readHead(paths);
      const dispatches = readDispatches(paths, true);
      if (!checkStatePath(paths.ledger, "file")) return absent(head, dispatches);
    } else {
      const snap = lockShared(file) ? lockedSnapshot(paths, file) : settledSnapshot(paths, file);
      if (snap !== null) return snap;
    }
    // The ledger appeared, or was replaced while its lock was taken: look again.
    if (attempt + 1 >= SNAPSHOT_ATTEMPTS) {
      throw busy(`the ledger ${paths.ledger} kept changing while its snapshot was taken`);
    }
    pause(attempt);
  }
}

function absent(head: string | null, dispatches: string | null): LedgerSnapshot {
  return { file: null, size: 0, head, dispatches, how: "absent", torn: false, close: () => {} };
}

function opened(
  file: Deno.FsFile,
  fields: Omit<LedgerSnapshot, "file" | "close">,
  release: () => void,
): LedgerSnapshot {
  let open = true;
  return {
    file,
    ...fields,
    close: () => {
      if (!open) return;
      open = false;
      release();
    },
  };
}

/** Under the shared lock just taken on `file`; `null` (all released) when `file` was replaced. */
function lockedSnapshot(paths: StatePaths, file: Deno.FsFile): LedgerSnapshot | null {
  let keep = false;
  let size = 0;
  let head: string | null = null;
  let torn = false;
  try {
    if (!stillNamed(paths.ledger, file)) return null;
    size = file.statSync().size;
    head = readHead(paths);
    torn = !endsLine(file, size);
    keep = true;
  } finally {
    if (!keep || !torn) unlock(file);
    if (!keep) file.close();
  }
  // Never wait for the dispatch lock while holding the ledger's (see the module doc).
  const dispatches = readDispatches(paths, !torn);
  return opened(file, { size, head, dispatches, how: "locked", torn }, () => {
    if (torn) unlock(file);
    file.close();
  });
}

/** Without a lock: looks until one settles ({@link lookSettles}); `LEDGER_BUSY` otherwise. */
function settledSnapshot(paths: StatePaths, file: Deno.FsFile): LedgerSnapshot {
  let previous: Look | null = null;
  try {
    for (let attempt = 0; attempt < SETTLE_LOOKS; attempt++) {
      const headBefore = readHead(paths);
      const size = file.statSync().size;
      const ends = endsLine(file, size);
      const look: Look = {
        headBefore,
        size,
        endsLine: ends,
        headAfter: readHead(paths),
        sizeAfter: file.statSync().size,
      };
      if (lookSettles(look, previous) && stillNamed(paths.ledger, file)) {
        const dispatches = readDispatches(paths, true);
        return opened(
          file,
          { size, head: headBefore, dispatches, how: "settled", torn: !ends },
          () => file.close(),
        );
      }
      previous = look;
      pause(attempt);
    }
  } catch (e) {
    file.close();
    throw e;
  }
  file.close();
  throw busy(
    `the ledger's lock could not be taken and the ledger kept changing over ${SETTLE_LOOKS} looks`,
  );
}

/** Under the caller's lock on `held`: the state is still. */
function heldSnapshot(paths: StatePaths, held: Deno.FsFile): LedgerSnapshot {
  if (!stillNamed(paths.ledger, held)) {
    throw new LedgerError(
      "LEDGER_TAMPERED",
      `${paths.ledger} was replaced while its lock was held; inspect with \`agentteams ledger verify\``,
    );
  }
  const size = held.statSync().size;
  const head = readHead(paths);
  const dispatches = readDispatches(paths, false);
  return opened(
    held,
    { size, head, dispatches, how: "held", torn: !endsLine(held, size) },
    () => {},
  );
}
