/**
 * `agentteams permissions COMMAND [-- COMMAND-FLAGS]`: the narrowest `deno run` flags for a
 * command on this project, and the full command line to launch it with them.
 *
 * @module
 */
import { shellQuote } from "./shell_quote.ts";
import { dirname, resolve } from "../fs/path.ts";
import { UsageError } from "../errors.ts";
import {
  launchFlags,
  type Needs,
  NO_NEEDS,
  type ResolvedRoot,
  withResolvedRoots,
} from "../permissions.ts";
import { entryKind, realPathLoose } from "../fs/entry.ts";
import { within } from "../fs/within.ts";
import { COMMON_FLAGS } from "./common_flags.ts";
import { briefFlagPath, confinedDirs, tmpDirOf } from "./needs.ts";
import { keyDir } from "../crypto/keys.ts";
import { entryPath } from "./code_dir.ts";
import { normalizeArgv, parseArgs, splitLeadingOptions } from "./args.ts";
import { perInvocation } from "./per_invocation.ts";
import type { CommandSpec, CommandTable, Ctx, Outcome } from "./command_spec.ts";

/**
 * The directories the asked command resolves before it names paths below them: its project, its
 * TMPDIR, its key dir, the operator's confined-programs dir, and the directory of each file the
 * operator names (the artifact, `--brief`, `--checkpoint`, `--verify-key`, `--out`). Each one's
 * real path, found without widening the line (see {@link realRootOf}); a root nothing is read
 * below is left out.
 */
function resolvedRoots(target: Ctx, needs: Needs): ResolvedRoot[] {
  const named = [target.project, tmpDirOf(target), ...confinedDirs(target)];
  try {
    named.push(keyDir(target.env));
  } catch {
    // no usable key dir: the command refuses on its own
  }
  const brief = briefFlagPath(target);
  const file = target.parsed.positionals.FILE;
  const files = [
    ...(typeof file === "string" ? [resolve(file)] : []),
    ...(brief === null ? [] : [brief]),
    ...["checkpoint", "verify-key", "out"].flatMap((f) => {
      const v = target.parsed.flags[f];
      return typeof v === "string" ? [resolve(v)] : [];
    }),
  ];
  named.push(...files.map(dirname));
  const paths = [...needs.read, ...needs.write];
  const roots: ResolvedRoot[] = [];
  for (const root of new Set(named)) {
    const real = realRootOf(root, paths);
    if (real !== null) roots.push({ named: root, real });
  }
  return roots;
}

/**
 * The real path of `root`, from the root itself when the line grants it, else from a path the line
 * grants directly below it that is not a symlink (its real path is then the root's plus its name,
 * so launched narrow, `permissions` can find it too); for a root with nothing there yet (a key dir
 * `keys init` creates), from its nearest existing ancestor where that may be read. A symlink below
 * the root is never followed, so it cannot widen the line. `null` when nothing is read below the
 * root or it cannot be resolved.
 */
function realRootOf(root: string, paths: readonly string[]): string | null {
  const prefix = root === "/" ? "/" : root + "/";
  const below = paths.filter((p) => within(p, root));
  if (below.length === 0) return null;
  if (below.includes(root) && entryKind(root) !== "missing") return realPathLoose(root);
  for (const p of below) {
    const name = p.slice(prefix.length);
    if (name === "" || name.includes("/")) continue;
    const kind = entryKind(p);
    if (kind === "missing" || kind === "symlink") continue;
    const real = Deno.realPathSync(p);
    return real.slice(0, real.length - name.length - 1) || "/";
  }
  try {
    return realPathLoose(root);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) return null;
    throw e;
  }
}

/**
 * The Deno that runs this process, by absolute path (the line works whatever PATH holds: Deno
 * installed into `.tools/` by the project's scripts is on no PATH), or `deno` when this process is
 * not a `deno` binary (a compiled one).
 */
function denoProgram(): string {
  const exec = Deno.execPath();
  return /(^|\/)deno(\.exe)?$/.test(exec) ? exec : "deno";
}

/** The command `permissions` is asked about, parsed as that command parses, and its needs. */
interface Asked {
  spec: CommandSpec;
  rest: string[];
  /** What the printed line adds to `rest`: `--project`, and `--brief` when inherited. */
  inherited: string[];
  target: Ctx;
  needs: Needs;
}

/**
 * The command `permissions` is asked about and its needs, once per invocation: `permissions`' own
 * needs are worked out from the asked command's before narrowing, and its answer prints the same
 * needs, so they are worked out once (reading the brief and the artifact once).
 */
const askedOf: (ctx: Ctx, table: CommandTable) => Promise<Asked> = perInvocation(
  async (ctx: Ctx, table: CommandTable) => {
    // The asked command's words follow `--`, which the top-level rewrite passes on as they
    // are: the earlier tool's spellings are rewritten here, as that command itself would.
    // Common options before its words (`permissions -- --project P ledger verify`) are its own.
    const split = splitLeadingOptions(
      normalizeArgv(ctx.parsed.positionals.COMMAND as string[]),
      COMMON_FLAGS,
    );
    const words = split.rest;
    const asked = table.find(words);
    if (asked === null) {
      throw new UsageError("UNKNOWN_COMMAND", `no command ${JSON.stringify(words.join(" "))}`);
    }
    const found = { ...asked, rest: [...split.lead, ...asked.rest] };
    const { spec } = found;
    // `permissions run --project P -- r.json`, the earlier spelling: its first `--` only ended
    // permissions' own flags, and is no part of the asked command's.
    const cut = found.rest.indexOf("--");
    const rest = cut < 0 ? found.rest : [...found.rest.slice(0, cut), ...found.rest.slice(cut + 1)];
    const own = parseArgs(rest, [...spec.flags, ...COMMON_FLAGS], spec.positionals);
    const name = spec.words.join(" ");
    const project = typeof own.flags.project === "string"
      ? resolve(own.flags.project)
      : ctx.project;
    // `permissions --brief B run -- F`: the asked command uses B too, as it does the project.
    const brief = typeof own.flags.brief !== "string" && typeof ctx.parsed.flags.brief === "string"
      ? resolve(ctx.parsed.flags.brief)
      : null;
    const parsed = brief === null ? own : { ...own, flags: { ...own.flags, brief } };
    const inherited = [
      ...(typeof own.flags.project === "string" ? [] : ["--project", project]),
      ...(brief === null ? [] : ["--brief", brief]),
    ];
    const target: Ctx = { ...ctx, name, parsed, project };
    const named = await table.needsOf(spec, target);
    const needs = withResolvedRoots(named, resolvedRoots(target, named));
    return { spec, rest, inherited, target, needs };
  },
);

/**
 * What `permissions` itself needs to answer: whatever the command it is asked about reads (its
 * brief, its artifact, the PATH directories its programs are resolved in, git's paths), since
 * working out that command's needs reads them, and the programs that working out spawns (git).
 * Launched without one of them, `permissions` refuses (`NOT_CAPABLE`) rather than print a line
 * that leaves out what it could not read.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, table, which it declares rather than makes.
 * import { targetReads } from "./permissions_cmd.ts";
 * import type { CommandTable, Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams permissions run r.json` from /work/p, /usr/bin on PATH
 * declare const table: CommandTable; // the command table (lib/cli/commands.ts)
 * (await targetReads(ctx, table)).read; // [..., "/usr/bin", ..., "/work/p/r.json", ...] (sorted)
 * ```
 */
export async function targetReads(ctx: Ctx, table: CommandTable): Promise<Needs> {
  const { spec, target, needs } = await askedOf(ctx, table);
  const run = await spec.needsSpawns?.(target) ?? [];
  return { ...NO_NEEDS, read: needs.read, run, env: needs.env, sys: needs.sys };
}

/**
 * Runs `permissions`.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs ctx, table, which it declares rather than makes.
 * import { permissionsCmd } from "./permissions_cmd.ts";
 * import type { CommandTable, Ctx } from "./command_spec.ts";
 * declare const ctx: Ctx; // `agentteams permissions ledger show` in /work/p
 * declare const table: CommandTable; // the command table (lib/cli/commands.ts)
 * (await permissionsCmd(ctx, table)).text;
 * // "deno run --no-prompt --allow-read=... .../main.ts ledger show --project /work/p"
 * ```
 */
export async function permissionsCmd(ctx: Ctx, table: CommandTable): Promise<Outcome> {
  const { spec, rest, inherited, target: { name }, needs } = await askedOf(ctx, table);
  const flags = launchFlags(needs);
  // What it inherits goes right after its words, before its own arguments: were the command
  // `permissions` itself, anything after its first argument would be the command it asks about.
  const exec = [denoProgram(), "run", ...flags, entryPath(), ...spec.words, ...inherited, ...rest];
  const line = exec.map(shellQuote).join(" ");
  return {
    exit: 0,
    text: line,
    json: { ok: true, command: name, flags, needs, argv: line, exec },
  };
}
