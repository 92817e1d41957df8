/**
 * `agentteams permissions COMMAND [-- COMMAND-FLAGS]`: the narrowest `deno run` flags for a
 * command on this project, and the full command line to launch it with them.
 *
 * @module
 */
import { resolve } from "../fs/path.ts";
import { UsageError } from "../errors.ts";
import { launchFlags } from "../permissions.ts";
import { COMMON_FLAGS, findCommand, needsOf } from "./commands.ts";
import { entryPath } from "./code_dir.ts";
import { parseArgs } from "./parse.ts";
import type { Ctx, Outcome } from "./types.ts";

/** Quotes a word for a POSIX shell when it needs it. */
export function shellQuote(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'"'"'`)}'`;
}

/** Runs `permissions`. */
export async function permissionsCmd(ctx: Ctx): Promise<Outcome> {
  const words = ctx.parsed.positionals.COMMAND as string[];
  const found = findCommand(words);
  if (found === null) {
    throw new UsageError("UNKNOWN_COMMAND", `no command ${JSON.stringify(words.join(" "))}`);
  }
  const { spec, rest } = found;
  const parsed = parseArgs(rest, [...spec.flags, ...COMMON_FLAGS], spec.positionals);
  const name = spec.words.join(" ");
  const project = typeof parsed.flags.project === "string"
    ? resolve(parsed.flags.project)
    : ctx.project;
  const target: Ctx = { ...ctx, name, parsed, project };
  const needs = await needsOf(spec, target);
  const flags = launchFlags(needs);
  const line = [
    "deno",
    "run",
    ...flags,
    entryPath(),
    ...spec.words,
    ...rest,
    ...(rest.some((a) => a === "--project" || a.startsWith("--project=")) ? [] : [
      "--project",
      project,
    ]),
  ].map(shellQuote).join(" ");
  return { exit: 0, text: line, json: { ok: true, command: name, flags, needs, argv: line } };
}
