/**
 * Where the triad's trust roots are read from: the decision and waiver verify keys, the approver
 * roster, and whether decision signing applies. One place, for the CLI's triad commands and for
 * every act (the runner's included).
 *
 * - **The key dir** (operator-owned, outside the project; no session can write it):
 *   `<key dir>/authorized-verify-keys/<key_id>.pub.pem`, the operator's own
 *   `<key dir>/operator-ed25519.pub.pem` (for its key id) and `<key dir>/security-approvers.txt`
 *   are trusted everywhere, and looked at first.
 * - **The project's** `references/authorized-verify-keys/` and `references/security-approvers.txt`:
 *   `references/` is control plane (no proposal or run can write it), but a session can write
 *   files with its own tools unless the Claude Code settings deny it. "Cannot write" is checked
 *   as: control plane coverage (always, for `references/`) **and** an `Edit(...)` deny rule over
 *   the path in `.claude/settings.json` or `.claude/settings.local.json`
 *   (`writeDenied`, lib/policy/session_settings.ts), with Claude's sandbox holding Bash to it
 *   (enabled, failIfUnavailable, no unsandboxed reruns, no excluded commands: else the rule binds
 *   the file tools only), and an `Edit(./.claude/**)` rule over the
 *   settings themselves (they decide it: a session that could edit them could add the rule after
 *   planting a key). Under the switch a project path without its
 *   deny rule is not trusted: a key found only there is refused (`VERIFY_KEY_UNTRUSTED`), a roster
 *   there is ignored (the key dir's, else the default `security`, is used), fail closed. Off the
 *   switch they are read as before.
 * - **Decision signing applies** (`signingRequired`) under the switch, and whenever an Ed25519
 *   decision key is configured (a verify key in a trusted store); the HMAC key's presence is
 *   checked by `signingActive` itself. A log without the `signature` column is then a legacy log:
 *   its rows authorize nothing, its HALTs still stop.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { trustFor } from "./trust.ts";
 * const t = await trustFor("/work/p", { HOME: "/home/op" }, true);
 * assert.equal(t.signingRequired, true); // under the switch
 * ```
 * @module
 */
import type { Env } from "../env.ts";
import { homeFrom } from "../env.ts";
import { keyDir as keyDirOf, VERIFY_KEY_FILE } from "../crypto/keys.ts";
import { lstatOrNullSync } from "../fs/entry.ts";
import { join } from "../fs/path.ts";
import { writeDenied } from "../policy/session_settings.ts";
import type { SettingsText } from "../policy/session_settings.ts";
import { readSessionSettings } from "../policy/session_settings_read.ts";
import { authzPaths, KEY_DIR_ROSTER, KEY_DIR_VERIFY_KEYS } from "./triad_paths.ts";
import { REFERENCES_DIR, ROSTER_REL, VERIFY_KEYS_REL } from "../layout.ts";
import { walkDirs } from "../fs/path_walk.ts";
import { FsSafetyError } from "../errors.ts";
import { DEFAULT_APPROVERS, readRoster } from "./roster.ts";
import { NO_KEYS_DIR, VerifyKeyStore } from "./signed.ts";

/** What the triad trusts for one project, and why it left something out. */
export interface TrustRoots {
  /** The verify keys: the key dir's, then the project's when trusted. */
  readonly store: VerifyKeyStore;
  /** The approver roster. */
  readonly roster: ReadonlySet<string>;
  /** Decision signing applies whatever the log's header says. */
  readonly signingRequired: boolean;
  /** One sentence per project trust root left out (empty: none). */
  readonly untrusted: readonly string[];
}

/** The facts {@link decideTrust} decides from (gathered by {@link trustFor}). */
export interface TrustFacts {
  /** The project root (absolute, real). */
  readonly root: string;
  /** The brief's `write_policy` is `orchestrator-only`. */
  readonly switchOn: boolean;
  /** The key dir (absolute), or `null` when the environment names none (no HOME: CI, say). */
  readonly keyDir: string | null;
  /** Whether the project's verify-key store is write-denied to sessions. */
  readonly storeDenied: boolean;
  /** Whether the project's roster is write-denied to sessions. */
  readonly rosterDenied: boolean;
  /**
   * The first component on the way to the project's trust roots (`references/`, its verify-key
   * folder) that is a symlink or not a directory, or `null`/absent when none is. The deny rules
   * name paths, not what a link a session planted leads to, so such a store is not trusted.
   */
  readonly linked?: string | null;
}

/** What {@link decideTrust} decided. */
export interface TrustDecision {
  /** The trusted verify-key directories, in lookup order. */
  readonly storeDirs: readonly string[];
  /** The project store, when it is not trusted, and why. */
  readonly untrustedStore: { readonly dir: string; readonly why: string } | null;
  /** The roster files to read, in order (the first that names anyone wins). */
  readonly rosterFiles: readonly string[];
  /** One sentence per project trust root left out. */
  readonly untrusted: readonly string[];
}

/**
 * The pure decision: which stores and rosters are trusted (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decideTrust } from "./trust.ts";
 * const d = decideTrust({
 *   root: "/p", switchOn: true, keyDir: "/k", storeDenied: false, rosterDenied: true,
 * });
 * assert.deepEqual(d.storeDirs, ["/k/authorized-verify-keys"]);
 * assert.deepEqual(d.rosterFiles, ["/k/security-approvers.txt", "/p/references/security-approvers.txt"]);
 * ```
 */
export function decideTrust(f: TrustFacts): TrustDecision {
  const paths = authzPaths(f.root);
  const keyStore = f.keyDir === null ? [] : [join(f.keyDir, KEY_DIR_VERIFY_KEYS)];
  const keyRoster = f.keyDir === null ? [] : [join(f.keyDir, KEY_DIR_ROSTER)];
  const untrusted: string[] = [];
  const why = (rel: string, rule: string) =>
    `${rel} can be written by an agent session (no ${rule} deny rules in .claude/settings.json), ` +
    `so under the switch it is not trusted: add the rule (agentteams doctor names it) or keep ` +
    `it in the key dir (${f.keyDir ?? "~/.config/agentteams/keys"})`;
  const linked = f.linked ?? null;
  const linkedWhy = (rel: string) =>
    `${rel} is reached through ${linked}, which is a symlink or not a directory: an agent ` +
    `session can make that name (the deny rules cover what is below it, not a link in its ` +
    `place), so under the switch it is not trusted: remove it and let the triad commands create ` +
    `references/, or keep the trust roots in the key dir (${
      f.keyDir ?? "~/.config/agentteams/keys"
    })`;
  const trustStore = !f.switchOn || (f.storeDenied && linked === null);
  const trustRoster = !f.switchOn || (f.rosterDenied && linked === null);
  const rules = "Edit(./references/**) and Edit(./.claude/**)";
  let untrustedStore: TrustDecision["untrustedStore"] = null;
  if (!trustStore) {
    untrustedStore = {
      dir: paths.verifyKeys,
      why: f.storeDenied ? linkedWhy(VERIFY_KEYS_REL) : why(VERIFY_KEYS_REL, rules),
    };
    untrusted.push(untrustedStore.why);
  }
  if (!trustRoster) {
    untrusted.push(f.rosterDenied ? linkedWhy(ROSTER_REL) : why(ROSTER_REL, rules));
  }
  return {
    storeDirs: trustStore ? [...keyStore, paths.verifyKeys] : keyStore,
    untrustedStore,
    rosterFiles: trustRoster ? [...keyRoster, paths.roster] : keyRoster,
    untrusted,
  };
}

function hasKeys(dir: string): boolean {
  try {
    for (const e of Deno.readDirSync(dir)) if (e.name.endsWith(".pub.pem")) return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return false;
    throw e;
  }
  return false;
}

/**
 * The trust roots from already-read session settings (see the module doc); reads the rosters
 * and lists the trusted stores.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { trustFrom } from "./trust.ts";
 * const t = trustFrom({ root: "/p", env: { HOME: "/h" }, switchOn: false, settings: [] });
 * assert.deepEqual([...t.roster], ["security"]); // with no roster anywhere
 * ```
 */
export function trustFrom(o: {
  readonly root: string;
  readonly env: Env;
  readonly switchOn: boolean;
  readonly settings: readonly SettingsText[];
}): TrustRoots {
  let keyDir: string | null = null;
  let homeDir = "/nonexistent-home";
  try {
    keyDir = keyDirOf(o.env);
    homeDir = homeFrom(o.env);
  } catch {
    // No HOME (and no AGENTTEAMS_KEY_DIR): no key dir to trust; `~/` rules name nothing.
  }
  const paths = authzPaths(o.root);
  const base = { root: o.root, homeDir, settings: o.settings };
  const settingsDenied = writeDenied(base, join(o.root, ".claude"), true);
  const d = decideTrust({
    root: o.root,
    switchOn: o.switchOn,
    keyDir,
    // The settings decide it, so they must be out of reach too: a session that could edit them
    // could add the rule after planting the key.
    storeDenied: settingsDenied && writeDenied(base, paths.verifyKeys, true),
    rosterDenied: settingsDenied && writeDenied(base, paths.roster, false),
    linked: linkOnTheWay(o.root, [REFERENCES_DIR, KEY_DIR_VERIFY_KEYS]),
  });
  let roster: ReadonlySet<string> = new Set(DEFAULT_APPROVERS);
  for (const file of d.rosterFiles) {
    if (lstatOrNullSync(file) === null) continue;
    const names = readRoster(file);
    if (names.size > 0) {
      roster = names;
      break;
    }
  }
  // With no trusted directory at all, a store that finds no key (fail closed).
  const [first, ...also] = d.storeDirs.length > 0 ? d.storeDirs : [NO_KEYS_DIR];
  const store = new VerifyKeyStore(first, {
    also,
    ...(keyDir !== null ? { operator: join(keyDir, VERIFY_KEY_FILE) } : {}),
    ...(d.untrustedStore !== null ? { untrusted: d.untrustedStore } : {}),
  });
  return {
    store,
    roster,
    signingRequired: o.switchOn || d.storeDirs.some(hasKeys),
    untrusted: d.untrusted,
  };
}

/**
 * The first of `segments` below `root` that is a symlink or not a directory (its path), or `null`
 * when each is a real directory or missing (`walkDirs`, never following a link).
 */
function linkOnTheWay(root: string, segments: readonly string[]): string | null {
  for (let n = 1; n <= segments.length; n++) {
    try {
      if (walkDirs(root, segments.slice(0, n)) === null) return null;
    } catch (e) {
      if (e instanceof FsSafetyError) return join(root, ...segments.slice(0, n));
      throw e;
    }
  }
  return null;
}

/**
 * The trust roots of a project: reads its Claude Code settings (never through a link) and then
 * {@link trustFrom}. `root` as the caller names the project (the settings' `./` rules are read
 * against it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { trustFor } from "./trust.ts";
 * assert.deepEqual((await trustFor("/work/p", { HOME: "/home/op" }, false)).untrusted, []);
 * ```
 */
export async function trustFor(root: string, env: Env, switchOn: boolean): Promise<TrustRoots> {
  const { settings } = await readSessionSettings(root);
  return trustFrom({ root, env, switchOn, settings });
}
