/**
 * Typed refusals. One class per rule family; every instance carries a stable `code` that scripts
 * and tests match on, and the exit code the CLI maps it to.
 *
 * Exit codes: `1` refused or verification failed, `2` usage error, `3` undeclared writes or timeout.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ProposalError } from "./errors.ts";
 * try {
 *   throw new ProposalError("STALE_BASE", "src/a.ts changed since the proposal was written");
 * } catch (e) {
 *   assert.ok(e instanceof ProposalError);
 *   assert.deepEqual([e.code, e.exitCode], ["STALE_BASE", 1]);
 * }
 * ```
 * @module
 */

/** The process exit codes of the CLI contract. */
export type ExitCode = 0 | 1 | 2 | 3;

/** Options every typed error accepts. */
export interface ErrorOptions {
  /** The underlying error, when one caused this refusal. */
  cause?: unknown;
  /** Machine-readable details printed with `--json` (paths, row numbers, ...). */
  details?: Record<string, unknown>;
}

/** The base of every refusal this tool raises. Never thrown directly. */
export abstract class AgentTeamsError extends Error {
  /** The rule family, e.g. `ledger`, `proposal`. */
  abstract readonly family: string;
  /** The stable refusal code, e.g. `STALE_BASE`. */
  readonly code: string;
  /** Machine-readable details. */
  readonly details: Record<string, unknown>;

  /** A refusal with its stable `code` and a message that names what was wrong. */
  constructor(code: string, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
    // The subclass's own name; the family classes set theirs as given (`familyError`), which
    // wins (the release bundle is minified, and a minifier renames classes).
    this.name = new.target.name;
  }

  /** The exit code the CLI uses for this refusal. */
  get exitCode(): ExitCode {
    return 1;
  }

  /** A JSON-safe view: `{error, family, code, message, details}`. */
  toJSON(): Record<string, unknown> {
    return {
      error: this.name,
      family: this.family,
      code: this.code,
      message: this.message,
      details: this.details,
    };
  }
}

/**
 * The class of one rule family: its class name, its `family` name, the codes it raises and its
 * exit code (`1` unless given). Each family below is one line over it; a refusal is still
 * `instanceof` its own family's class and named after it. The name is given, not read from the
 * class: the release bundle is minified, and a minifier renames classes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { familyError } from "./errors.ts";
 * class DemoError extends familyError<"demo", "DEMO_REFUSED">("DemoError", "demo") {}
 * const e = new DemoError("DEMO_REFUSED", "refused");
 * assert.deepEqual([e.family, e.code, e.exitCode, e.name], ["demo", "DEMO_REFUSED", 1, "DemoError"]);
 * ```
 */
export function familyError<F extends string, C extends string>(
  name: string,
  family: F,
  exit: ExitCode = 1,
): new (code: C, message: string, options?: ErrorOptions) => AgentTeamsError & { family: F } {
  return class extends AgentTeamsError {
    /** The refusal class's name, as given: a minified bundle renames classes. */
    override name = name;
    /** The rule family these refusals belong to. */
    readonly family: F = family;
    /** A refusal with its stable `code` and a message that names what was wrong. */
    constructor(code: C, message: string, options?: ErrorOptions) {
      super(code, message, options);
    }
    /** The exit code the CLI uses for this refusal. */
    override get exitCode(): ExitCode {
      return exit;
    }
  };
}

/** A command line that could not be understood (exit 2). */
export class UsageError extends familyError<"usage", UsageCode>("UsageError", "usage", 2) {}

/** Operator key custody: missing, unsafe or malformed keys. */
export class KeyError extends familyError<"key", KeyCode>("KeyError", "key") {}

/** Unsafe file-system objects met where a plain file or directory was expected. */
export class FsSafetyError extends familyError<"fs", FsSafetyCode>("FsSafetyError", "fs") {}

/** The signed ledger: tampering, torn tails, malformed rows. */
export class LedgerError extends familyError<"ledger", LedgerCode>("LedgerError", "ledger") {}

/** Dispatch nonces: unknown, expired, exhausted, malformed, or for an agent the brief lacks. */
export class DispatchError
  extends familyError<"dispatch", DispatchCode>("DispatchError", "dispatch") {}

/** The brief: unreadable, malformed, unknown keys, and the policy lint. */
export class PolicyError extends familyError<"policy", PolicyCode>("PolicyError", "policy") {}

/** Change and deletion proposals: every refusal rule of `apply`. */
export class ProposalError
  extends familyError<"proposal", ProposalCode>("ProposalError", "proposal") {}

/** The MCP servers' tool refusals: a path a reading tool may not reach, the runner out of reach. */
export class McpError extends familyError<"mcp", McpCode>("McpError", "mcp") {}

/** Command requests: argv allowlist, cwd, environment, writes declarations. */
export class RequestError extends familyError<"request", RequestCode>("RequestError", "request") {}

/**
 * The class of a command that ran and still failed (exit 3): family `request`, one code, and the
 * run's `result` (its output, `undeclared_writes`) attached.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runOutcomeError } from "./errors.ts";
 * class DemoOutcome extends runOutcomeError("DemoOutcome", "DEMO") {}
 * const e = new DemoOutcome("it ran", { exit_code: 0 });
 * assert.deepEqual([e.code, e.exitCode, e.result.exit_code], ["DEMO", 3, 0]);
 * ```
 */
export function runOutcomeError<C extends string>(
  name: string,
  code: C,
): new (
  message: string,
  result: Record<string, unknown>,
  options?: ErrorOptions,
) => AgentTeamsError & { family: "request"; result: Record<string, unknown> } {
  return class extends AgentTeamsError {
    /** The refusal class's name, as given: a minified bundle renames classes. */
    override name = name;
    /** The rule family these refusals belong to. */
    readonly family = "request";
    /** The run result, including `undeclared_writes`. */
    readonly result: Record<string, unknown>;
    /** A refusal with its message and the run's result. */
    constructor(message: string, result: Record<string, unknown>, options?: ErrorOptions) {
      super(code, message, options);
      this.result = result;
    }
    /** The exit code the CLI uses for this refusal. */
    override get exitCode(): ExitCode {
      return 3;
    }
  };
}

/**
 * The command ran but wrote outside what it declared (exit 3). `result` holds its output. Its own
 * class: the library's callers match it with `instanceof` (the spec's public surface names it).
 */
export class UndeclaredWritesError
  extends runOutcomeError("UndeclaredWritesError", "UNDECLARED_WRITES") {}

/** The command outlived its timeout; its process group was killed (exit 3). */
export class RunTimeoutError extends runOutcomeError("RunTimeoutError", "TIMEOUT") {}

/** The OS sandbox: unavailable, failing probe, or a refused confined-programs shape. */
export class SandboxError extends familyError<"sandbox", SandboxCode>("SandboxError", "sandbox") {}

/**
 * The authorization triad (clearances, waivers, grants) and the destructive gate: a CSV ledger
 * that does not parse, an instrument that is not valid (one code per validity rule), a HALT.
 */
export class AuthzError extends familyError<"authz", AuthzCode>("AuthzError", "authz") {}

/** The stable codes of {@link AuthzError}: one per validity rule of each instrument. */
export type AuthzCode =
  | "CSV_MALFORMED"
  | "CSV_COLUMNS"
  | "HALTED"
  | "NO_CLEARANCE"
  | "NO_WAIVER"
  | "SCOPE_MISMATCH"
  | "CONDITIONS_UNVERIFIED"
  | "FIELDS_MISSING"
  | "APPROVER_NOT_ON_ROSTER"
  | "AUTHOR_NOT_APPROVED"
  | "EXPIRY_INVALID"
  | "EXPIRED"
  | "COUNTER_INVALID"
  | "USES_EXHAUSTED"
  | "NO_SIGNING_KEY"
  | "SIGNATURE_INVALID"
  | "SCHEME_INSUFFICIENT"
  | "SCHEME_UNKNOWN"
  | "KEY_ID_INVALID"
  | "VERIFY_KEY_INVALID"
  | "TARGET_REFUSED"
  | "CHAIN_BROKEN"
  | "UNSUPPORTED_VERDICT"
  | "RETRACTION_UNPROVEN"
  | "DUPLICATE_ID"
  | "ACTION_FORM"
  | "LEGACY_UNSIGNED"
  | "VERIFY_KEY_UNTRUSTED"
  | "SPENT"
  | "LEDGER_ROLLED_BACK";

/** Deno's permission layer: started too broad (serve) or a needed grant is missing. */
export class PermissionLayerError
  extends familyError<"permissions", PermissionLayerCode>("PermissionLayerError", "permissions") {}

/**
 * A release's artifacts: a signature that does not verify or is by another key, a file whose
 * SHA-256 is not the one `SHA256SUMS` lists, a file missing, a key or signature file that is not
 * in minisign's format.
 */
export class ReleaseError extends familyError<"release", ReleaseCode>("ReleaseError", "release") {}

/** The tool's own installation: the source tree's npm packages are not in Deno's cache. */
export class SetupError extends familyError<"setup", SetupCode>("SetupError", "setup") {}

/** The runner's queue: a refused request, an unsafe queue path, a second runner, no runner. */
export class QueueError extends familyError<"queue", QueueCode>("QueueError", "queue") {}

/**
 * `agentteams init` refused to switch a project on: a settings file it must not rewrite (JSONC,
 * not JSON, a shape Claude Code rejects, a link), an agent file it cannot read, a link where it
 * would write, or a merge that would still leave a required rule out. Nothing is written.
 */
export class InitError extends AgentTeamsError {
  /** The class's name, spelled out: a minified bundle renames classes. */
  override name = "InitError";
  /** The rule family these refusals belong to. */
  readonly family = "init";
  /** A refusal with its stable `code` and a message that names what was wrong. */
  constructor(
    code:
      | "INIT_SETTINGS_UNREADABLE"
      | "INIT_AGENT_UNREADABLE"
      | "INIT_LINK"
      | "INIT_RULES_UNMET"
      | "INIT_SANDBOX_EXCLUDED"
      | "INIT_BRIEF_INVALID"
      | "INIT_FILE_UNREADABLE"
      | "INIT_BACKUP",
    message: string,
    options?: ErrorOptions,
  ) {
    super(code, message, options);
  }
}

/**
 * A refusal the runner reported through the queue, rebuilt by the waiting CLI so it prints
 * exactly as the same refusal in direct mode: its family, code, message, details, exit code and
 * (for a command that ran) its result.
 */
export class RelayedError extends AgentTeamsError {
  /** The family the runner named. */
  readonly family: string;
  /** The run result, when the command ran (undeclared writes, a timeout). */
  readonly result?: Record<string, unknown>;
  readonly #exit: ExitCode;
  /** A relayed refusal. */
  constructor(
    relayed: {
      error: string;
      family: string;
      code: string;
      message: string;
      details: Record<string, unknown>;
      exit: ExitCode;
      result?: Record<string, unknown>;
    },
  ) {
    super(relayed.code, relayed.message, { details: relayed.details });
    this.name = relayed.error;
    this.family = relayed.family;
    this.#exit = relayed.exit;
    if (relayed.result !== undefined) this.result = relayed.result;
  }
  /** The exit code the runner reported. */
  override get exitCode(): ExitCode {
    return this.#exit;
  }
}

/** The stable codes of {@link UsageError}. */
export type UsageCode =
  | "USAGE"
  | "UNKNOWN_COMMAND"
  | "UNKNOWN_FLAG"
  | "BAD_SLUG"
  | "PROJECT_AMBIGUOUS";

/** The stable codes of {@link KeyError}. */
export type KeyCode =
  | "NO_KEY"
  | "KEY_CUSTODY"
  | "KEY_EMPTY"
  | "KEY_TOO_LARGE"
  | "KEY_OUTSIDE_KEY_DIR"
  | "KEY_ENV_IN_RUNNER"
  | "KEY_EXISTS"
  | "KEY_MALFORMED";

/** The stable codes of {@link FsSafetyError}. */
export type FsSafetyCode =
  | "SYMLINK"
  | "NOT_REGULAR_FILE"
  | "NOT_DIRECTORY"
  | "FILE_TOO_LARGE"
  | "FILE_CHANGED"
  | "NOT_WRITABLE"
  | "NOT_UTF8"
  | "UNSAFE_OWNER"
  | "UNSAFE_MODE"
  | "ANCHOR_UNAVAILABLE";

/** The stable codes of {@link LedgerError}. */
export type LedgerCode =
  | "LEDGER_TAMPERED"
  | "LEDGER_ROW_TOO_LARGE"
  | "TORN_TAIL"
  | "NO_TORN_TAIL"
  | "LEDGER_UNSAFE_PATH"
  | "LEDGER_BUSY"
  | "NO_LEDGER"
  | "FOREIGN_KEY"
  | "ROW_INVALID";

/** The stable codes of {@link DispatchError}. */
export type DispatchCode =
  | "BAD_SLUG"
  | "BAD_LIMITS"
  | "BAD_NONCE"
  | "DISPATCH_UNKNOWN"
  | "DISPATCH_EXPIRED"
  | "DISPATCH_EXHAUSTED"
  | "ATTEMPTS_EXHAUSTED"
  | "AGENT_MISMATCH"
  | "UNKNOWN_AGENT"
  | "DISPATCH_OPERATOR_ONLY";

/** The stable codes of {@link PolicyError}. */
export type PolicyCode =
  | "BRIEF_NOT_FOUND"
  | "BRIEF_UNREADABLE"
  | "BRIEF_SYNTAX"
  | "BRIEF_INVALID"
  | "BRIEF_UNKNOWN_KEY"
  | "POLICY_LINT";

/** The stable codes of {@link ProposalError}. */
export type ProposalCode =
  | "ARTIFACT_INVALID"
  | "PATH_INVALID"
  | "PATH_OUTSIDE_PROJECT"
  | "CONTROL_PLANE"
  | "BRIEF_PATH"
  | "PROTECTED_PATH"
  | "OUT_OF_SCOPE"
  | "UNKNOWN_AGENT"
  | "CONTENT_TOO_LARGE"
  | "CONTENT_NOT_UTF8"
  | "TARGET_NOT_UTF8"
  | "TARGET_NOT_FILE"
  | "STALE_BASE"
  | "UNKNOWN_GATE"
  | "GATE_FAILED"
  | "SYMLINK_ESCAPE"
  | "WRITE_UNAVAILABLE"
  | "STAGED_ID_INVALID"
  | "STAGED_UNKNOWN"
  | "STAGED_UNSAFE"
  | "STAGED_MALFORMED"
  | "STAGED_TAMPERED"
  | "STAGED_MISMATCH"
  | "STAGED_EXPIRED";

/** The stable codes of {@link RequestError}. */
export type RequestCode =
  | "ARTIFACT_INVALID"
  | "UNKNOWN_AGENT"
  | "ARGV_NOT_ALLOWED"
  | "PARENT_SEGMENT"
  | "PROGRAM_NOT_FOUND"
  | "PROGRAM_IN_PROJECT"
  | "SPAWN_FAILED"
  | "CWD_NOT_ALLOWED"
  | "WRITES_NOT_ALLOWED"
  | "STDIN_NOT_ALLOWED"
  | "GATE_FAILED"
  | "GIT_UNAVAILABLE"
  | "NO_WORKTREE"
  | "SNAPSHOT_FAILED";

/** The stable codes of {@link SandboxError}. */
export type SandboxCode =
  | "SANDBOX_UNAVAILABLE"
  | "UNCONFINED_NOT_ALLOWED"
  | "CONFINED_INVALID"
  | "CONFINED_FILE_UNSAFE"
  | "CONFINED_PATH_UNSAFE"
  | "NETWORK_LIST_UNSUPPORTED";

/** The stable codes of {@link PermissionLayerError}. */
export type PermissionLayerCode =
  | "PERMISSION_TOO_BROAD"
  | "PERMISSION_MISSING";

/** The stable codes of {@link McpError}. */
export type McpCode =
  | "PATH_INVALID"
  | "PATH_OUTSIDE_PROJECT"
  | "CONTROL_PLANE"
  | "KEY_DIR"
  | "NOT_FOUND"
  | "NOT_DIRECTORY"
  | "RUNNER_UNAVAILABLE";

/** The stable codes of {@link ReleaseError}. */
export type ReleaseCode =
  | "RELEASE_MALFORMED"
  | "RELEASE_WRONG_KEY"
  | "RELEASE_SIGNATURE_INVALID"
  | "RELEASE_CHECKSUM_MISMATCH"
  | "RELEASE_FILE_MISSING"
  | "RELEASE_UNLISTED";

/** The stable codes of {@link SetupError}. */
export type SetupCode = "DEPS_MISSING";

/** The stable codes of {@link QueueError}. */
export type QueueCode =
  | "REQUEST_INVALID"
  | "REQUEST_NOT_SEALED"
  | "REQUEST_WRONG_KEY"
  | "REQUEST_SEAL_BROKEN"
  | "QUEUE_UNSAFE_PATH"
  | "RUNNER_RUNNING"
  | "RUNNER_PIN_CHANGED"
  | "RUNNER_INTERRUPTED"
  | "NO_RUNNER"
  | "RESULT_NOT_AUTHENTIC"
  | "RESULT_TOO_LARGE"
  | "PREFLIGHT_FAILED"
  | "REQUEST_EXPIRED"
  | "REQUEST_NOT_QUEUED"
  | "TOOL_NOT_GRANTED"
  | "MCP_ONLY_AGENT"
  | "RUNNER_STOPPED"
  | "DIRECT_GRANTS_UNSAFE"
  | "DIRECT_GRANT_INVALID"
  | "DIRECT_GRANT_EXPIRED"
  | "DIRECT_GRANT_SPENT";

/**
 * Returns true when `e` is one of this tool's typed refusals.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isAgentTeamsError, UsageError } from "./errors.ts";
 * assert.equal(isAgentTeamsError(new UsageError("USAGE", "no command given")), true);
 * assert.equal(isAgentTeamsError(new Error("boom")), false);
 * ```
 */
export function isAgentTeamsError(e: unknown): e is AgentTeamsError {
  return e instanceof AgentTeamsError;
}

/**
 * The code a failure is reported under: a typed refusal's own code, `NOT_CAPABLE` for a read or
 * spawn Deno's permission flags refused, `INTERNAL` for anything else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refusalCode, UsageError } from "./errors.ts";
 * assert.equal(refusalCode(new UsageError("USAGE", "no command given")), "USAGE");
 * assert.equal(refusalCode(new Deno.errors.NotCapable("Requires read access")), "NOT_CAPABLE");
 * assert.equal(refusalCode(new Error("boom")), "INTERNAL");
 * ```
 */
export function refusalCode(e: unknown): string {
  if (e instanceof AgentTeamsError) return e.code;
  return e instanceof Deno.errors.NotCapable ? "NOT_CAPABLE" : "INTERNAL";
}

/**
 * The code and message a failure that is not one of the tool's typed errors is reported under:
 * `NOT_CAPABLE` with Deno's own message for a permission refusal, `INTERNAL` with the error's
 * name and message for anything else. The CLI's refusal line and the runner's results both word
 * such a failure this way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { otherRefusal } from "./errors.ts";
 * assert.deepEqual(otherRefusal(new TypeError("boom")), { code: "INTERNAL", message: "TypeError: boom" });
 * ```
 */
export function otherRefusal(e: unknown): { code: string; message: string } {
  const message = e instanceof Deno.errors.NotCapable
    ? e.message
    : e instanceof Error
    ? `${e.name}: ${e.message}`
    : String(e);
  return { code: refusalCode(e), message: internalMessage(message) };
}

/** ANSI escape sequences (CSI and OSC), as Deno colours its own messages. */
// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;

/**
 * A failure's message as the tool reports it: its first line only (never a stack, never the
 * causes Deno lists below it), with terminal escape sequences and other control characters
 * removed and runs of white space made one space. Every `INTERNAL` (and `NOT_CAPABLE`) message
 * passes here ({@link otherRefusal}), so none carries escape codes or a stack.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { internalMessage } from "./errors.ts";
 * assert.equal(internalMessage("TypeError: boom\n    at \x1b[36mfile:///x.ts\x1b[0m:1:2"), "TypeError: boom");
 * ```
 */
export function internalMessage(message: string): string {
  const first = message.replace(ANSI, "").split(/\r?\n/)[0];
  // deno-lint-ignore no-control-regex
  return first.replace(/[\x00-\x1f\x7f-\x9f]/g, " ").replace(/\s+/g, " ").trim();
}
