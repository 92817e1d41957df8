/**
 * Help texts built from the command table.
 *
 * @module
 */
import { COMMANDS } from "./commands.ts";
import { COMMON_FLAGS } from "./common_flags.ts";
import type { CommandSpec } from "./command_spec.ts";

/**
 * The top-level help.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { topHelp } from "./help.ts";
 * assert.equal(topHelp().split("\n")[2], "usage: agentteams <command> [options]");
 * ```
 */
export function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.words.join(" ").length));
  const lines = [
    "agentteams: only the operator writes; agents return proposals and requests.",
    "",
    "usage: agentteams <command> [options]",
    "",
    "commands:",
    ...COMMANDS.map((c) => `  ${c.words.join(" ").padEnd(width)}  ${c.summary}`),
    "",
    "common options: --project DIR, --brief FILE (alias --description), --json, --help",
    "  (--project, --brief and --json may also come before the command)",
    "agentteams --version prints the version; agentteams <command> --help explains one command",
    "exit codes: 0 ok, 1 refused or verification failed, 2 usage error, " +
    "3 undeclared writes or timeout",
  ];
  return lines.join("\n");
}

/**
 * A command group's help (`agentteams ledger --help`): its subcommands, a line each; `null` when
 * `word` names no group.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { groupHelp } from "./help.ts";
 * assert.equal(groupHelp("ledger")?.split("\n")[0], "usage: agentteams ledger <command> [options]");
 * assert.equal(groupHelp("apply"), null); // a command, not a group
 * ```
 */
export function groupHelp(word: string): string | null {
  const members = COMMANDS.filter((c) => c.words.length > 1 && c.words[0] === word);
  if (members.length === 0) return null;
  const width = Math.max(...members.map((c) => c.words.join(" ").length));
  return [
    `usage: agentteams ${word} <command> [options]`,
    "",
    "commands:",
    ...members.map((c) => `  ${c.words.join(" ").padEnd(width)}  ${c.summary}`),
    "",
    `agentteams ${word} <command> --help explains one`,
  ].join("\n");
}

/**
 * One command's help.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { commandHelp } from "./help.ts";
 * import { findCommand } from "./commands.ts";
 * assert.equal(commandHelp(findCommand(["apply"])!.spec).split("\n")[0], "usage: agentteams apply FILE [options]");
 * ```
 */
export function commandHelp(spec: CommandSpec): string {
  const pos = spec.positionals.map((p) =>
    p.variadic ? `${p.name}...` : p.required ? p.name : `[${p.name}]`
  );
  const lines = [
    `usage: agentteams ${[...spec.words, ...pos].join(" ")} [options]`,
    "",
    spec.summary,
  ];
  if (spec.help) lines.push("", spec.help);
  const flags = [...spec.flags, ...COMMON_FLAGS];
  const label = (f: { name: string; value?: string }) =>
    `--${f.name}${f.value ? " " + f.value : ""}`;
  const width = Math.max(...flags.map((f) => label(f).length));
  lines.push("", "options:", ...flags.map((f) => `  ${label(f).padEnd(width)}  ${f.help}`));
  return lines.join("\n");
}
