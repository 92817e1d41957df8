/**
 * What the runner checks before it serves, and `agentteams doctor` reports without serving: key
 * custody, the sandbox backend, the brief, and the session settings. The facts are gathered at
 * the edge ({@link gatherPreflight}: it reads the key file but keeps only its path, never its
 * bytes); what is an error and what a warning is decided by the pure {@link preflightChecks},
 * and the exit by {@link preflightExit}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { preflight, preflightExit } from "./preflight.ts";
 * // 0 when no check is an error (warnings allowed); here the key file is missing, an error.
 * const { checks } = await preflight({ root: Deno.makeTempDirSync(), env: { HOME: "/nonexistent" } });
 * assert.equal(preflightExit(checks), 1);
 * ```
 * @module
 */
import { join } from "../fs/path.ts";
import { isAgentTeamsError } from "../errors.ts";
import { type Env, homeFrom } from "../env.ts";
import {
  keyDir as keyDirOf,
  LEDGER_KEY_FILE,
  ledgerKeyPath,
  loadLedgerKey,
  SECRET_KEY_FILES,
} from "../crypto/keys.ts";
import { type ProbeResult, probeSandbox } from "../sandbox/host_probe.ts";
import { loadPolicy } from "../policy/brief.ts";
import { defaultBriefPath } from "../policy/brief_file.ts";
import type { Policy } from "../policy/types.ts";
import {
  sessionSettingsFindings,
  type SessionSettingsInput,
  type SettingsFinding,
} from "../policy/session_settings.ts";
import { readHostSettings, readSessionSettings } from "../policy/session_settings_read.ts";

/** One check's result. `level` is what a failure of it means (an `ok` check keeps its level). */
export interface Check {
  /** `key`, `sandbox`, `brief` or `session-settings`. */
  readonly name: string;
  /** Whether it passed. */
  readonly ok: boolean;
  /** `error`: the runner refuses to start; `warning`: it starts, and says so. */
  readonly level: "error" | "warning";
  /** One sentence for a person. */
  readonly message: string;
  /** The refusal code of a failed error check (e.g. `KEY_ENV_IN_RUNNER`). */
  readonly code?: string;
  /**
   * For a missing settings rule: the file and the exact line to add to its deny list; for a
   * sandbox value (`into: "sandbox"`), the line to set in the file's `"sandbox"` object.
   */
  readonly add?: { readonly file: string; readonly line: string; readonly into?: "sandbox" };
}

/** A fact that either holds or failed with a refusal code. */
export type Fact<T> =
  | ({ readonly ok: true } & T)
  | { readonly ok: false; readonly code: string; readonly message: string };

/** Everything the checks are decided from. */
export interface PreflightFacts {
  /** The ledger key under runner custody: its file (never its bytes), or why not. */
  readonly key: Fact<{ readonly path: string }>;
  /** The sandbox probe. */
  readonly sandbox: ProbeResult;
  /** The brief: its path and switch, or why it does not load. */
  readonly brief: Fact<
    {
      readonly path: string;
      readonly writePolicy: string;
      readonly frameworks: readonly string[];
    }
  >;
  /**
   * The session settings' findings, or why they could not be checked; `usesClaude: false` when
   * the team does not use Claude Code (then there are none to check).
   */
  readonly settings: Fact<
    { readonly findings: readonly SettingsFinding[]; readonly usesClaude: boolean }
  >;
}

/**
 * Whether the team uses Claude Code: a `.claude/` directory, or a brief whose
 * `write_policy_frameworks` name claude or are not given (their default names it). A brief that
 * does not load tells nothing, so Claude is assumed (fail closed: the settings are checked).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { teamUsesClaude } from "./preflight.ts";
 * assert.equal(teamUsesClaude({ claudeDir: false, frameworks: ["goose"] }), false);
 * assert.equal(teamUsesClaude({ claudeDir: false, frameworks: null }), true);
 * ```
 */
export function teamUsesClaude(
  o: { claudeDir: boolean; frameworks: readonly string[] | null },
): boolean {
  if (o.claudeDir || o.frameworks === null || o.frameworks.length === 0) return true;
  return o.frameworks.includes("claude");
}

/**
 * The checks, from the facts: a key, sandbox or brief failure is an error (the runner refuses
 * to start); each settings finding is a check of its own: an error when it leaves a trust root
 * in a session's reach (the write-deny rule for `references/`, `.claude/` or the brief missing,
 * the key dir's read-deny rule missing, a sandbox entry re-opening one, a settings file the
 * check cannot read, or Claude's sandbox not holding Bash to the rules: `SETTINGS_SANDBOX`;
 * {@link SettingsFinding.trustRoot}), or when the settings could not be checked at all; a
 * warning otherwise (a missing rule for the runner's folders, hooks, an allow rule over a
 * denied path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { preflightChecks } from "./preflight.ts";
 * const checks = preflightChecks({
 *   key: { ok: false, code: "KEY_ENV_IN_RUNNER", message: "unset it" },
 *   sandbox: { ok: true, backend: "bwrap", program: "/usr/bin/bwrap" },
 *   brief: { ok: true, path: "/p/agentteams.jsonc", writePolicy: "default", frameworks: [] },
 *   settings: { ok: true, findings: [], usesClaude: true },
 * });
 * assert.equal(checks[0].level, "error");
 * ```
 */
export function preflightChecks(f: PreflightFacts): Check[] {
  const out: Check[] = [];
  const failed = (name: string, fact: { code: string; message: string }, level: Check["level"]) =>
    out.push({ name, ok: false, level, message: fact.message, code: fact.code });
  if (f.key.ok) {
    out.push({
      name: "key",
      ok: true,
      level: "error",
      message: `the ledger key file ${f.key.path} passes custody, and no key variable is set`,
    });
  } else failed("key", f.key, "error");
  if (f.sandbox.ok) {
    out.push({
      name: "sandbox",
      ok: true,
      level: "error",
      message: `the ${f.sandbox.backend} sandbox works (${f.sandbox.program})`,
    });
  } else {
    failed("sandbox", {
      code: "SANDBOX_UNAVAILABLE",
      message: `no working sandbox: ${f.sandbox.reason}; the runner confines every command, so ` +
        `install or fix it first`,
    }, "error");
  }
  if (f.brief.ok) {
    const on = f.brief.writePolicy === "orchestrator-only";
    out.push({
      name: "brief",
      ok: true,
      level: "error",
      message: `${f.brief.path} loads; write_policy is ${f.brief.writePolicy}` +
        (on
          ? " (the switch is on)"
          : ' (the switch is off: set "orchestrator-only" to turn it on)'),
    });
  } else failed("brief", f.brief, "error");
  // Settings that could not be checked prove no trust root write-denied: fail closed.
  if (!f.settings.ok) failed("session-settings", f.settings, "error");
  else if (!f.settings.usesClaude) {
    // Under the switch the trust roots must be out of every session's reach, and Claude Code's
    // project settings are the only session settings checked: a team without them proves
    // nothing, so it fails closed (probe 22c C4: a Goose session cut the HALT and was served).
    const on = f.brief.ok && f.brief.writePolicy === "orchestrator-only";
    const why = "the team does not use Claude Code (no .claude/, and the brief's " +
      "write_policy_frameworks leave claude out)";
    out.push(
      on
        ? {
          name: "session-settings",
          ok: false,
          level: "error",
          code: "SETTINGS_UNCHECKED",
          message: `${why}, so no session settings this tool can check keep its sessions from ` +
            "writing the trust roots (references/, the brief, .agentteams/): a Goose or Codex " +
            "session that can write the queue can cut a HALT from the decision log; under the " +
            "switch run the team's sessions under Claude Code with the deny rules doctor lists",
        }
        : { name: "session-settings", ok: true, level: "warning", message: `not checked: ${why}` },
    );
  } else if (f.settings.findings.length === 0) {
    out.push({
      name: "session-settings",
      ok: true,
      level: "warning",
      message: "the Claude Code settings deny the session the key dir and .agentteams/ " +
        "(read) and .agentteams/, .agentteams-status/, references/ (the triad's trust roots), " +
        ".claude/, .git/config, .mcp.json and every name of the brief (write), and Claude's " +
        "sandbox holds its Bash to them (enabled, failIfUnavailable, no unsandboxed commands, " +
        "none excluded)",
    });
  } else {
    for (const s of f.settings.findings) {
      out.push({
        name: "session-settings",
        ok: false,
        level: s.trustRoot === true ? "error" : "warning",
        message: s.message,
        code: s.code,
        ...(s.add !== null && s.code === "SETTINGS_RULE_MISSING"
          ? { add: { file: s.file, line: s.add } }
          : s.add !== null && s.code === "SETTINGS_SANDBOX"
          ? { add: { file: s.file, line: s.add, into: "sandbox" as const } }
          : {}),
      });
    }
  }
  return out;
}

/**
 * The exit of `doctor` (and whether `serve` may start): 1 when a check that is an error failed,
 * else 0 (warnings allowed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { preflightExit } from "./preflight.ts";
 * assert.equal(preflightExit([{ name: "session-settings", ok: false, level: "warning", message: "m" }]), 0);
 * ```
 */
export function preflightExit(checks: readonly Check[]): 0 | 1 {
  return checks.some((c) => !c.ok && c.level === "error") ? 1 : 0;
}

/** The input of {@link preflight} and {@link gatherPreflight}. */
export interface PreflightInput {
  /** The project root. */
  readonly root: string;
  /** The environment (the key variables, HOME). */
  readonly env: Env;
  /** The brief (default: the project's `agentteams.jsonc`, then `.json`). */
  readonly briefPath?: string | null;
  /** The probe (default: {@link probeSandbox} of this platform). */
  readonly probe?: () => Promise<ProbeResult>;
  /**
   * The key file the caller has already loaded as the runner does (`serve` loads it first): the
   * key fact is then that file, and the key is not loaded a second time.
   */
  readonly keyPath?: string;
}

/**
 * A thrown refusal as a failed fact. A permission the launch flags withhold is not a fact about
 * the project, so it is thrown on; any other failure fails the check under `code`.
 */
function refused(e: unknown, code: string): { ok: false; code: string; message: string } {
  if (isAgentTeamsError(e)) return { ok: false, code: e.code, message: e.message };
  if (e instanceof Deno.errors.NotCapable) throw e;
  return { ok: false, code, message: `${(e as Error).name}: ${(e as Error).message}` };
}

/**
 * Gathers the facts: loads the key as the runner does (`mode: "runner"`: a key variable set is
 * refused; the bytes are dropped at once) unless `keyPath` says it is loaded, probes the sandbox,
 * loads the brief, reads the session settings. With them, the brief's policy as loaded (null
 * when it did not load).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gatherPreflight } from "./preflight.ts";
 * const { facts } = await gatherPreflight({ root: Deno.makeTempDirSync(), env: { HOME: "/nonexistent" } });
 * assert.equal(facts.key.ok, false); // no key file (NO_KEY)
 * ```
 */
export async function gatherPreflight(
  input: PreflightInput,
): Promise<{ facts: PreflightFacts; policy: Policy | null }> {
  const { root, env } = input;
  let key: PreflightFacts["key"];
  try {
    key = { ok: true, path: input.keyPath ?? loadLedgerKey({ env, mode: "runner" }).path ?? "" };
  } catch (e) {
    key = refused(e, "KEY_CUSTODY");
  }
  const sandbox = await (input.probe ?? (() => probeSandbox()))();
  let brief: PreflightFacts["brief"];
  let policy: Policy | null = null;
  try {
    const path = input.briefPath ?? await defaultBriefPath(root);
    policy = await loadPolicy(path, { projectRoot: root });
    brief = {
      ok: true,
      path: policy.briefPath,
      writePolicy: policy.writePolicy,
      frameworks: policy.writePolicyFrameworks,
    };
  } catch (e) {
    brief = refused(e, "BRIEF_UNREADABLE");
  }
  let settings: PreflightFacts["settings"];
  try {
    const real = Deno.realPathSync(root);
    const files = await readSessionSettings(real);
    // The user's and the managed settings, in Claude Code's merge order around the project's:
    // they can weaken its sandbox (a user-level excludedCommands, a managed enabled: false).
    const host = await readHostSettings(env);
    const byScope = (scope: "user" | "managed") => host.filter((h) => h.scope === scope);
    const usesClaude = teamUsesClaude({
      claudeDir: files.claudeDir,
      frameworks: brief.ok ? brief.frameworks : null,
    });
    const findings = sessionSettingsFindings(
      operatorSettingsInput({
        root: real,
        env,
        settings: [...byScope("user"), ...files.settings, ...byScope("managed")],
        usesClaude,
        brief: brief.ok ? realOrSelf(brief.path) : null,
      }),
    );
    settings = { ok: true, findings, usesClaude };
  } catch (e) {
    settings = refused(e, "SETTINGS_UNREADABLE");
  }
  return { facts: { key, sandbox, brief, settings }, policy };
}

/**
 * The session settings check's input as `doctor` and `serve` ask it, for the operator `env`
 * names: the key dir and its secret files, HOME, and the trust roots' rules (the brief's too,
 * when `brief` lies in the project). The one place those are chosen: `agentteams init` adds
 * exactly the rules this input makes the check require.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { operatorSettingsInput } from "./preflight.ts";
 * const input = operatorSettingsInput({
 *   root: "/work/p", env: { HOME: "/home/op" }, settings: [], usesClaude: true,
 *   brief: "/work/p/agentteams.jsonc",
 * });
 * assert.equal(input.keyDir, "/home/op/.config/agentteams/keys");
 * ```
 */
export function operatorSettingsInput(o: {
  /** The project root, real (no link in it). */
  readonly root: string;
  /** The operator's environment (HOME, the key dir's variables). */
  readonly env: Env;
  /** The settings files as read (`readSessionSettings`). */
  readonly settings: SessionSettingsInput["settings"];
  /** Whether the team uses Claude Code (`teamUsesClaude`). */
  readonly usesClaude: boolean;
  /** The brief's real path, or null when there is none to protect. */
  readonly brief: string | null;
}): SessionSettingsInput {
  const dir = keyDirOf(o.env);
  let ledgerKey: string;
  try {
    ledgerKey = ledgerKeyPath(o.env);
  } catch {
    ledgerKey = join(dir, LEDGER_KEY_FILE);
  }
  return {
    root: o.root,
    settings: o.settings,
    keyDir: dir,
    secretFiles: [...new Set([ledgerKey, ...SECRET_KEY_FILES.map((f) => join(dir, f))])],
    homeDir: homeFrom(o.env),
    usesClaude: o.usesClaude,
    // The brief is a trust root: inside the project, its write-deny rule is required too.
    brief: o.brief,
    trustRoots: true,
  };
}

function realOrSelf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/**
 * Runs every check: {@link gatherPreflight}, then {@link preflightChecks}. With them, the brief's
 * policy as the brief check loaded it (null when it did not load), so `serve` need not load it
 * again.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { preflight } from "./preflight.ts";
 * const { checks } = await preflight({ root: Deno.makeTempDirSync(), env: { HOME: "/nonexistent" } });
 * assert.deepEqual(checks.map((c) => c.name).slice(0, 4), ["key", "sandbox", "brief", "session-settings"]);
 * ```
 */
export async function preflight(
  input: PreflightInput,
): Promise<{ checks: Check[]; policy: Policy | null }> {
  const { facts, policy } = await gatherPreflight(input);
  return { checks: preflightChecks(facts), policy };
}
