/**
 * The CLI entry: parse argv strictly, narrow Deno's permissions to what the command needs, run
 * it, and map every outcome to the contract's exit codes (0 ok, 1 refused, 2 usage, 3 undeclared
 * writes or timeout). A refusal prints one line on stderr:
 * `agentteams <command>: refused: <CODE>: <reason>`.
 *
 * @module
 */
import { VERSION } from "./version.ts";
import { STATE_DIR } from "../layout.ts";
import { resolve } from "../fs/path.ts";
import { AgentTeamsError, KeyError, otherRefusal, UsageError } from "../errors.ts";
import { readEnv } from "../env.ts";
import { BROAD_OK_ENV, narrowPermissions } from "../permissions.ts";
import { findCommand, neededOf, unknownCommandMessage } from "./commands.ts";
import { COMMON_FLAGS } from "./common_flags.ts";
import { diskKindOf, enclosingProjects, findProjectRoot } from "./project_root.ts";
import { loadCode } from "./code_dir.ts";
import { commandHelp, groupHelp, topHelp } from "./help.ts";
import { shellQuote } from "./shell_quote.ts";
import { normalizeArgv, parseArgs, splitLeadingOptions } from "./args.ts";
import { inert, oneLine } from "./terminal.ts";
import {
  earlierOutcome,
  earlierOutputFlag,
  earlierRefusal,
  earlierSpelling,
} from "./earlier_output.ts";
import type { Ctx, Outcome } from "./command_spec.ts";

/** Where output goes (tests pass collectors). */
export interface CliIo {
  /** Writes to stdout (a newline is added). */
  stdout(line: string): void;
  /** Writes to stderr (a newline is added). */
  stderr(line: string): void;
}

const consoleIo: CliIo = {
  stdout: (l) => console.log(l),
  stderr: (l) => console.error(l),
};

export { VERSION } from "./version.ts";

/** Whether AGENTTEAMS_DEBUG_STACK is set (and may be read): then refusals print their stack. */
function debugStack(): boolean {
  try {
    return Deno.env.get("AGENTTEAMS_DEBUG_STACK") !== undefined;
  } catch {
    return false;
  }
}

function refuse(
  io: CliIo,
  name: string,
  json: boolean,
  e: unknown,
  earlier: string | null,
): number {
  if (debugStack() && e instanceof Error) io.stderr(e.stack ?? String(e));
  if (earlier !== null && !json && !(e instanceof UsageError)) return refuseEarlier(io, earlier, e);
  if (e instanceof AgentTeamsError) {
    // A command line that could not be understood is the user's to fix, not a refusal; a command
    // that ran and then failed its checks (undeclared writes, a timeout, exit 3) was not refused.
    const what = e.family === "usage" ? "usage error" : e.exitCode === 3 ? "ran, but" : "refused";
    io.stderr(`agentteams ${name}: ${what}: ${e.code}: ${oneLine(e.message)}`);
    // A suggestion the refusal carries (a misspelt artifact field), on its own line.
    const hint = e.details.hint;
    if (!json && typeof hint === "string") io.stderr(`  hint: ${oneLine(hint)}`);
    // A program's own output (a gate's), as its lines, shown inert, below the refusal.
    const output = e.details.output;
    if (!json && typeof output === "string" && output.includes("\n")) {
      for (const line of output.split("\n")) io.stderr(`  | ${inert(line)}`);
    }
    if (json) {
      const result = "result" in e ? (e as { result: unknown }).result : undefined;
      io.stdout(JSON.stringify({ ok: false, error: e.toJSON(), ...(result ? { result } : {}) }));
    }
    return e.exitCode;
  }
  const { code, message: msg } = otherRefusal(e);
  io.stderr(`agentteams ${name}: refused: ${code}: ${oneLine(msg)}`);
  if (json) io.stdout(JSON.stringify({ ok: false, error: { code, message: msg } }));
  return 1;
}

/**
 * A refusal of a command spelled the earlier way, printed as the earlier tool did (a result the
 * command still produced, then `[command] refused: CODE: reason`), with the contract's exit code.
 */
function refuseEarlier(io: CliIo, earlier: string, e: unknown): number {
  const { code, message } = e instanceof AgentTeamsError
    ? { code: e.code, message: e.message }
    : otherRefusal(e);
  const exit = e instanceof AgentTeamsError ? e.exitCode : 1;
  const result = e instanceof AgentTeamsError && "result" in e
    ? (e as { result: unknown }).result
    : undefined;
  if (result !== undefined && result !== null && typeof result === "object") {
    const text = earlierOutcome(earlier, { exit, json: result as Record<string, unknown> });
    for (const l of text.stdout) io.stdout(l);
  }
  io.stderr(earlierRefusal(earlier, code, message));
  return exit;
}

function print(io: CliIo, name: string, json: boolean, o: Outcome, earlier: string | null): number {
  if (earlier !== null && !json) {
    const text = earlierOutcome(earlier, o);
    for (const l of text.stdout) io.stdout(l);
    for (const l of text.stderr) io.stderr(l);
    return o.exit;
  }
  if (json) io.stdout(JSON.stringify(o.json ?? { ok: o.exit === 0 }));
  else if (o.text !== undefined && o.text !== "") io.stdout(o.text);
  if (o.refusal) {
    io.stderr(`agentteams ${name}: refused: ${o.refusal.code}: ${oneLine(o.refusal.message)}`);
  }
  return o.exit;
}

/**
 * Refuses (`PROJECT_AMBIGUOUS`) a project found by discovery inside another project that is under
 * the switch or served by a runner (lib/cli/project_root.ts `enclosingProjects`): the marker that
 * made it a project may be one that project's agent sessions wrote. One that cannot be examined
 * counts as under the switch.
 */
async function refuseInsideSwitched(project: string): Promise<void> {
  const outers = enclosingProjects(project, diskKindOf);
  if (outers.length === 0) return;
  // The queue-mode check (its brief and runner reads) is loaded only when there is a project to
  // ask it of.
  const { queueModeReason } = await loadCode(() => import("../queue/mode.ts"));
  for (const outer of outers) {
    let why: string | null;
    try {
      why = await queueModeReason(outer, null, new Date());
    } catch {
      why = "it cannot be examined";
    }
    if (why === null) continue;
    throw new UsageError(
      "PROJECT_AMBIGUOUS",
      `${project} was taken as the project (the nearest directory holding .agentteams/, a brief ` +
        `or .git), but it lies inside the project ${outer} (${why}), whose agent sessions can ` +
        `write ${project} and so the marker that made it a project; nothing was done: pass ` +
        `--project ${outer} (or --project ${project} when that is the project you mean)`,
    );
  }
}

/** Refuses (`USAGE`) a project root that is missing or not a directory. */
function checkProjectDir(project: string): void {
  let isDir: boolean;
  try {
    isDir = Deno.statSync(project).isDirectory;
  } catch (e) {
    // A command whose narrow flags grant only part of the project cannot stat its root; its
    // own reads then fail as they must.
    if (e instanceof Deno.errors.NotCapable) return;
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    isDir = false;
  }
  if (!isDir) throw new UsageError("USAGE", `the project ${project} is not a directory`);
}

/**
 * `NO_KEY` where the project already has a ledger: `keys init` would make a key that cannot
 * verify its rows, so the refusal says so rather than only suggest it.
 */
function withLedgerHint(e: unknown, project: string | null): unknown {
  if (!(e instanceof KeyError) || e.code !== "NO_KEY" || project === null) return e;
  let hasLedger = false;
  try {
    hasLedger = Deno.lstatSync(`${project}/${STATE_DIR}/proposal-ledger.jsonl`).isFile;
  } catch {
    return e;
  }
  if (!hasLedger) return e;
  return new KeyError(
    "NO_KEY",
    `${e.message}. This project already has a ledger: a new key cannot verify its rows; find ` +
      "the key that signed them (AGENTTEAMS_KEY_DIR) before making one",
    { cause: e },
  );
}

/** Whether the operator said, with {@link BROAD_OK_ENV}=1, that a broad launch is on purpose. */
function broadAcknowledged(): boolean {
  if (Deno.permissions.querySync({ name: "env", variable: BROAD_OK_ENV }).state !== "granted") {
    return false;
  }
  return Deno.env.get(BROAD_OK_ENV) === "1";
}

/**
 * Runs the CLI on `argv` and returns the exit code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runCli } from "./main.ts";
 * const lines: string[] = [];
 * assert.equal(await runCli(["--version"], { stdout: (l) => lines.push(l), stderr: () => {} }), 0);
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo = consoleIo): Promise<number> {
  let name = "";
  let json = argv.includes("--json");
  let projectDir: string | null = null;
  // Spelled the earlier tool's way (`--apply-proposal FILE`): printed the earlier tool's way.
  const earlier = earlierOutputFlag(argv);
  try {
    // Common options before the command (`--project DIR ledger verify`) go after its words.
    const { lead, rest: afterLead } = splitLeadingOptions(normalizeArgv(argv), COMMON_FLAGS);
    if (afterLead.length === 0 && lead.length > 0 && !lead.includes("--help")) {
      throw new UsageError(
        "UNKNOWN_COMMAND",
        `no command after the common options (${lead.join(" ")}): name one after them, ` +
          `e.g. agentteams ${lead.join(" ")} ledger verify; see agentteams --help`,
      );
    }
    const args = afterLead.length === 0 ? lead : afterLead;
    if (args.length === 0) {
      io.stdout(topHelp());
      return 0;
    }
    if (args[0] === "--help" || args[0] === "-h" || args[0] === "help") {
      io.stdout(topHelp());
      return 0;
    }
    if (args[0] === "--version") {
      io.stdout(`agentteams ${VERSION}`);
      return 0;
    }
    const found = findCommand(args);
    if (found === null) {
      // A group alone, or asked for its help: the group's subcommands.
      const group = groupHelp(args[0]);
      if (group !== null && (args[1] === "--help" || args[1] === "-h")) {
        io.stdout(group);
        return 0;
      }
      throw new UsageError("UNKNOWN_COMMAND", unknownCommandMessage(args));
    }
    const { spec } = found;
    const rest = [...(args === lead ? [] : lead), ...found.rest];
    name = spec.words.join(" ");
    const dashdash = rest.indexOf("--");
    if ((dashdash < 0 ? rest : rest.slice(0, dashdash)).includes("--help")) {
      io.stdout(commandHelp(spec));
      return 0;
    }
    const parsed = parseArgs(rest, [...spec.flags, ...COMMON_FLAGS], spec.positionals);
    json = parsed.flags.json === true;
    // Without --project, the one discovery rule every command shares (lib/cli/project_root.ts).
    const project = typeof parsed.flags.project === "string"
      ? resolve(parsed.flags.project)
      : findProjectRoot(Deno.cwd(), diskKindOf);
    if (typeof parsed.flags.project !== "string") await refuseInsideSwitched(project);
    checkProjectDir(project);
    projectDir = project;
    const ctx: Ctx = {
      name,
      parsed,
      env: readEnv(spec.env),
      project,
      // The earlier spellings print a result object, never the streams (earlier_output.ts).
      json: json || earlier !== null,
      now: () => new Date(),
      note: (l) => io.stderr(l),
      earlier: earlierSpelling(argv),
    };
    // Read before narrowing: once narrowed, the variable may no longer be readable.
    const broadOk = broadAcknowledged();
    const narrowing = narrowPermissions(await neededOf(spec, ctx), {
      refuseNetFfi: spec.refuseNetFfi,
    });
    if (narrowing.broader.length > 0 && !broadOk) {
      // The user's own arguments, quoted for a shell and shown inert (one line, no escapes).
      const asked = oneLine([...spec.words, ...rest].map(shellQuote).join(" "));
      io.stderr(
        `agentteams ${name}: warning: launched with broad ${narrowing.broader.join(", ")} ` +
          "permission" +
          (name === "permissions"
            ? ""
            : `; \`agentteams permissions ${asked}\` prints the narrow flags`) +
          ` (${BROAD_OK_ENV}=1 says it is on purpose)`,
      );
    }
    return print(io, name, json, await spec.run(ctx), earlier);
  } catch (e) {
    return refuse(io, name || (argv[0] ?? ""), json, withLedgerHint(e, projectDir), earlier);
  }
}
