/**
 * What the runner pins at start: the SHA-256 of the brief's bytes, of the operator's
 * confined-programs file, of the grants ledger (the triad's capability grants) and of the
 * operator's direct-write grants file (null when absent), the session settings, and
 * what it trusts from `references/`: the approver roster and the project's verify keys (each
 * key's name and hash). A change to any of them while serving stops the runner: it serves only
 * under the policy and the trust roots it started with (a session that renamed `references/`
 * away, planted a key or an approver, and put it back, stops it).
 *
 * @module
 */
import { GRANTS_REL, ROSTER_REL, VERIFY_KEYS_REL } from "../layout.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { QueueError } from "../errors.ts";
import { join } from "../fs/path.ts";
import { readRegularFileWithin } from "../fs/safe_read.ts";
import { SESSION_SETTINGS_FILES } from "../policy/session_settings.ts";
import { MAX_CONFINED_BYTES, MAX_MCP_GRANTS_BYTES } from "../sandbox/operator_file.ts";
import { MAX_BRIEF_BYTES } from "../policy/brief_file.ts";
import { MAX_CSV_BYTES } from "../authz/csv.ts";

/** The pinned hashes. */
export interface Pins {
  readonly brief: string | null;
  readonly confined: string | null;
  readonly grants: string | null;
  /** The operator's direct-write grants file for the tool-server channel. */
  readonly direct?: string | null;
  /**
   * The Claude Code session settings (`.claude/settings.json`, `.claude/settings.local.json`),
   * each file's hash or state, joined: they decide what a session may write, so a change (a
   * session that renamed `.claude` away, edited it and put it back) stops the runner.
   */
  readonly settings?: string | null;
  /**
   * The trust roots read from `references/`: the SHA-256 of the roster's state, then each project
   * verify key's name and state, never followed (a link, a FIFO, a hard link is recorded as such).
   */
  readonly references?: string | null;
}

/** Where the pinned files are. */
export interface PinPaths {
  readonly brief: string;
  readonly confined: string | null;
  readonly grants: string;
  /** The operator's direct-write grants file (`lib/runner/direct_grants_load.ts`). */
  readonly direct?: string | null;
  /** The session settings files (absolute). */
  readonly settings?: readonly string[];
  /** The roster and the verify-key folder in `references/` (absolute). */
  readonly references?: { readonly roster: string; readonly verifyKeys: string };
}

/**
 * A file's state: its hash, `null` when absent (or no path is pinned), or why it is not a plain
 * file with one name of at most `maxBytes` (never followed, so a FIFO, a link or a huge file put
 * at the path, by a session that can rename its folder, is a pin that changed: the runner stops;
 * never a read that waits or runs long).
 */
async function plainState(path: string | null, maxBytes: number): Promise<string | null> {
  if (path === null) return null;
  try {
    // The open has a deadline: a FIFO swapped in between the lstat and the open (a session can
    // write some of these folders) is a state of its own, never an open that waits for a writer.
    return sha256Hex((await readRegularFileWithin(path, { maxBytes, singleName: true })).bytes);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    if (e instanceof Error && "code" in e) return `unreadable:${String(e.code)}`;
    throw e;
  }
}

/** One file's state: its hash, `absent`, or why it is not a plain file (never followed). */
async function settingsState(path: string): Promise<string> {
  return (await plainState(path, 1024 * 1024)) ?? "absent";
}

/** The verify-key folder's state: each entry's name and state, or why it is no folder. */
async function folderState(path: string): Promise<string> {
  let st: Deno.FileInfo;
  try {
    st = Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "absent";
    throw e;
  }
  if (!st.isDirectory) return st.isSymlink ? "unreadable:SYMLINK" : "unreadable:NOT_DIRECTORY";
  const names = [...Deno.readDirSync(path)].map((e) => e.name).sort();
  const states = await Promise.all(names.map((n) => settingsState(join(path, n))));
  return names.map((n, i) => `${n}=${states[i]}`).join(";");
}

/**
 * The pin paths of a project.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pinPaths } from "./pins.ts";
 * assert.equal(pinPaths("/p", "/p/agentteams.jsonc", null).grants, "/p/references/capability-grants.log.csv");
 * ```
 */
export function pinPaths(
  root: string,
  brief: string,
  confined: string | null,
  direct: string | null = null,
): PinPaths {
  return {
    brief,
    confined,
    grants: join(root, GRANTS_REL),
    direct,
    settings: SESSION_SETTINGS_FILES.map((f) => join(root, f)),
    references: { roster: join(root, ROSTER_REL), verifyKeys: join(root, VERIFY_KEYS_REL) },
  };
}

/**
 * Reads the pins now.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readPins } from "./pins.ts";
 * const pins = await readPins({ brief: "/nonexistent", confined: null, grants: "/nonexistent" });
 * assert.equal(pins.brief, null);
 * ```
 */
export async function readPins(p: PinPaths): Promise<Pins> {
  const refs = p.references;
  const [brief, confined, grants, direct, settings, roster, keys] = await Promise.all([
    plainState(p.brief, MAX_BRIEF_BYTES),
    plainState(p.confined, MAX_CONFINED_BYTES),
    plainState(p.grants, MAX_CSV_BYTES),
    // Its reader's own limit: larger is a state too, never a long read.
    plainState(p.direct ?? null, MAX_MCP_GRANTS_BYTES),
    p.settings === undefined ? null : Promise.all(p.settings.map(settingsState)),
    refs === undefined ? null : settingsState(refs.roster),
    refs === undefined ? null : folderState(refs.verifyKeys),
  ]);
  return {
    brief,
    confined,
    grants,
    direct,
    settings: settings === null ? null : settings.join("|"),
    // One hash of the states (each entry named), so the status file stays short.
    references: roster === null ? null : sha256Hex(`roster=${roster}|keys:${keys}`),
  };
}

/**
 * Refuses (`RUNNER_PIN_CHANGED`) pins that differ from those taken at start, naming the file.
 * Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkPins } from "./pins.ts";
 * const paths = { brief: "/p/b.json", confined: null, grants: "/p/g.csv" };
 * const same = { brief: "a", confined: null, grants: null };
 * assert.doesNotThrow(() => checkPins(same, same, paths));
 * assert.throws(() => checkPins(same, { ...same, brief: "b" }, paths));
 * ```
 */
export function checkPins(at: Pins, now: Pins, paths: PinPaths): void {
  for (const k of ["brief", "confined", "grants", "direct", "settings", "references"] as const) {
    if ((at[k] ?? null) !== (now[k] ?? null)) {
      const what = {
        brief: "the brief",
        confined: "the operator's confined-programs file",
        grants: "the grants ledger",
        direct: "the operator's direct-write grants file",
        settings: "the Claude Code session settings",
        references: "the trust roots in references/ (the approver roster, the verify keys)",
      }[k];
      const file = k === "settings"
        ? (paths.settings ?? []).join(", ")
        : k === "references"
        ? [paths.references?.roster, paths.references?.verifyKeys].join(", ")
        : paths[k] ?? null;
      throw new QueueError(
        "RUNNER_PIN_CHANGED",
        `${what} (${file}) changed while the runner served (sha256 ${at[k] ?? "absent"} at ` +
          `start, ${now[k] ?? "absent"} now); the runner stops: restart agentteams serve to ` +
          "serve under the new one",
        {
          details: {
            file,
            at: at[k] ?? null,
            now: now[k] ?? null,
          },
        },
      );
    }
  }
}
