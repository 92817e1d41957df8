/**
 * `agentteams permissions COMMAND [-- COMMAND-FLAGS]`: the narrowest `deno run` flags for a
 * command on this project, and the full command line to launch it with them.
 *
 * @module
 */
import { resolve } from "../fs/path.ts";
import { UsageError } from "../errors.ts";
import { launchFlags, type Needs, NO_NEEDS } from "../permissions.ts";
import { COMMON_FLAGS, findCommand, needsOf } from "./commands.ts";
import { entryPath } from "./code_dir.ts";
import { parseArgs } from "./parse.ts";
import type { CommandSpec, Ctx, Outcome } from "./types.ts";

/** Quotes a word for a POSIX shell when it needs it. */
export function shellQuote(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'"'"'`)}'`;
}

/** The command `permissions` is asked about, parsed as that command would parse its arguments. */
function targetOf(ctx: Ctx): { spec: CommandSpec; rest: string[]; target: Ctx } {
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
  return { spec, rest, target: { ...ctx, name, parsed, project } };
}

/**
 * What `permissions` itself needs to answer: whatever the command it is asked about reads (its
 * brief, its artifact, the PATH directories its programs are resolved in), since working out that
 * command's needs reads them. Launched without one of them, `permissions` refuses (`NOT_CAPABLE`)
 * rather than print a line that leaves out what it could not read.
 *
 * @example
 * ```ts ignore
 * import { targetReads } from "./permissions_cmd.ts";
 * (await targetReads(ctx)).read; // [..., "/work/p/r.json", "/usr/bin", ...]
 * ```
 */
export async function targetReads(ctx: Ctx): Promise<Needs> {
  const { spec, target } = targetOf(ctx);
  const needs = await needsOf(spec, target);
  return { ...NO_NEEDS, read: needs.read, env: needs.env, sys: needs.sys };
}

/** Runs `permissions`. */
export async function permissionsCmd(ctx: Ctx): Promise<Outcome> {
  const { spec, rest, target } = targetOf(ctx);
  const { name, project } = target;
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
