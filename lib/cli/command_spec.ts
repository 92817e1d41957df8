/**
 * The shapes shared by the command table, the command files and the entry point.
 *
 * @module
 */
import type { FlagSpec, Parsed, PositionalSpec } from "./args.ts";
import type { ExitCode } from "../errors.ts";
import type { Category, Needs } from "../permissions.ts";

/** Everything a command handler gets. */
export interface Ctx {
  /** The command's words, e.g. `ledger verify`. */
  readonly name: string;
  /** Parsed flags and positionals. */
  readonly parsed: Parsed;
  /** The environment variables the command declared (others are absent). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Absolute project root: `--project`, else the nearest directory from the current one up that
   * holds `.agentteams/`, a default brief or `.git` (`lib/cli/project_root.ts`).
   */
  readonly project: string;
  /** Structured output is wanted: `--json` was given, or an earlier spelling (a result object). */
  readonly json: boolean;
  /** The clock. */
  readonly now: () => Date;
  /** Writes a line of progress or detail to stderr. */
  readonly note: (line: string) => void;
  /**
   * The earlier tool's command flag the command was spelled with (`--issue-dispatch`), or absent:
   * a few commands then behave as the earlier tool did (`dispatch_cmd.ts`).
   */
  readonly earlier?: string | null;
}

/** What a handler returns; the entry point prints it. */
export interface Outcome {
  /** The exit code. */
  readonly exit: ExitCode | number;
  /** Human output for stdout (without `--json`). */
  readonly text?: string;
  /** The JSON object printed with `--json`. */
  readonly json?: Record<string, unknown>;
  /** When set, the refusal line printed on stderr (`... refused: CODE: message`). */
  readonly refusal?: { readonly code: string; readonly message: string };
}

/** The command table, as a command that asks about another command is handed it. */
export interface CommandTable {
  /** The command named by the leading words of argv, and the rest. */
  find(argv: readonly string[]): { spec: CommandSpec; rest: string[] } | null;
  /** Everything a command needs from Deno for a context. */
  needsOf(spec: CommandSpec, ctx: Ctx): Promise<Needs>;
}

/** A command of the table. */
export interface CommandSpec {
  /** Command words, e.g. `["ledger", "verify"]`. */
  readonly words: readonly string[];
  /** One line for the command list. */
  readonly summary: string;
  /** Longer help. */
  readonly help?: string;
  /** Positionals. */
  readonly positionals: readonly PositionalSpec[];
  /** Command-specific flags (the common ones are added). */
  readonly flags: readonly FlagSpec[];
  /**
   * Environment variables it reads: read at start into `ctx.env`, and granted by the permission
   * layer (`needsOf` adds them to {@link needs}, which does not state them again).
   */
  readonly env: readonly string[];
  /** What it needs from Deno, given the parsed context (before the handler runs). */
  readonly needs: (ctx: Ctx) => Needs | Promise<Needs>;
  /**
   * Programs that working out {@link needs} spawns (`run` asks git for its paths): `permissions`,
   * asked about this command, must be able to run them too.
   */
  readonly needsSpawns?: (ctx: Ctx) => readonly string[] | Promise<readonly string[]>;
  /**
   * The categories {@link needs} asks for in a context, told without working its lists out (the
   * acting commands: every category but net and ffi, in direct mode). Used instead of the lists
   * when read is granted wholesale: working the lists out then could not be refused on a path
   * (their reads are what a narrow launch refuses early), and which categories to revoke is all
   * the start decides. `permissions` always works the lists out. tests/cli/categories_test.ts
   * holds each to the categories of {@link needs} itself.
   */
  readonly categories?: (ctx: Ctx) => Promise<readonly Category[]>;
  /** The handler. */
  readonly run: (ctx: Ctx) => Promise<Outcome>;
  /** Refuse to run with net or ffi granted. */
  readonly refuseNetFfi?: boolean;
}
