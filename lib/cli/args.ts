/**
 * Strict command-line parsing. Every command declares its flags; an unknown flag, a missing value
 * or a stray positional is a usage error (exit 2), never silently ignored. The earlier tool's
 * spellings (`--issue-dispatch`, `--apply-proposal FILE`, `--verify-proposal-ledger`, ...) are
 * rewritten to the command they name, and `--description` is `--brief`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeArgv } from "./args.ts";
 * assert.deepEqual(
 *   normalizeArgv(["--apply-proposal", "p.json", "--description", "b.json"]),
 *   ["apply", "p.json", "--brief", "b.json"],
 * );
 * ```
 * @module
 */
import { didYouMean } from "../text/suggest.ts";
import { UsageError } from "../errors.ts";

/** A flag a command accepts. */
export interface FlagSpec {
  /** Long name without dashes, e.g. `dry-run`. */
  readonly name: string;
  /** `bool` flags take no value; `string` flags take one (`--x v` or `--x=v`). */
  readonly kind: "bool" | "string";
  /** Placeholder in help, e.g. `FILE`. */
  readonly value?: string;
  /** One line of help. */
  readonly help: string;
  /** May be given more than once (values collected). */
  readonly repeat?: boolean;
}

/** A positional argument. */
export interface PositionalSpec {
  /** Name in help, e.g. `FILE`. */
  readonly name: string;
  /** Must be present. */
  readonly required: boolean;
  /** Takes every remaining positional. */
  readonly variadic?: boolean;
  /**
   * With `variadic`: from its first word on, takes the rest of the command line as it is, flags
   * included (`permissions ledger show --tail 1`), but for `--json` and `--help`, which stay the
   * command's own; after a `--`, everything is the positional's.
   */
  readonly rest?: boolean;
}

/** Parsed flags and positionals. */
export interface Parsed {
  /** Flag values by name: `true` for bools, strings (or string lists for repeatable flags). */
  readonly flags: Readonly<Record<string, string | boolean | string[]>>;
  /** Positionals by name (variadic ones joined into a list). */
  readonly positionals: Readonly<Record<string, string | string[] | undefined>>;
}

/** The earlier tool's command flags: flag → [command words, takes a positional value]. */
export const COMMAND_ALIASES: Readonly<Record<string, readonly [readonly string[], boolean]>> = {
  "--issue-dispatch": [["dispatch"], false],
  "--apply-proposal": [["apply"], true],
  "--run-request": [["run"], true],
  "--verify-proposal-ledger": [["ledger", "verify"], false],
  "--serve-requests": [["serve"], false],
  "--verify-waivers": [["waiver", "verify"], false],
  "--sign-grant": [["grant", "sign"], false],
  "--issue-grant": [["grant", "issue"], false],
  "--verify-grants": [["grant", "verify"], false],
  "--post-audit": [["audit"], false],
};

/** Flag spellings rewritten to ours. */
export const FLAG_ALIASES: Readonly<Record<string, string>> = {
  "--description": "--brief",
};

/**
 * Splits off the common options given before the command's words (`agentteams --project DIR
 * ledger verify`, `--brief B brief check`, `--json ...`), as most CLIs accept them: each of
 * `flags` (string flags with their value, `--x v` or `--x=v`) from the start of `args` up to the
 * first word that is none of them. The caller puts them right after the command's words, where
 * the command parses them as its own (so one given twice is still refused, `USAGE`). Anything else
 * before the command is left where it is (and is then an unknown command).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitLeadingOptions } from "./args.ts";
 * import { COMMON_FLAGS } from "./common_flags.ts";
 * assert.deepEqual(splitLeadingOptions(["--project", "p", "--json", "ledger", "verify"], COMMON_FLAGS), {
 *   lead: ["--project", "p", "--json"],
 *   rest: ["ledger", "verify"],
 * });
 * ```
 */
export function splitLeadingOptions(
  args: readonly string[],
  flags: readonly FlagSpec[],
): { lead: string[]; rest: string[] } {
  const byName = new Map(flags.map((f) => [f.name, f]));
  let i = 0;
  while (i < args.length && args[i].startsWith("--") && args[i] !== "--") {
    const a = args[i];
    const eq = a.indexOf("=");
    const spec = byName.get(eq > 0 ? a.slice(2, eq) : a.slice(2));
    // `--help` before a command is the top-level help's (handled by the caller), not an option.
    if (spec === undefined || spec.name === "help") break;
    if (spec.kind === "string" && eq < 0) {
      // A value-taking option with nothing after it: left for the command line's own refusal.
      if (i + 1 >= args.length) break;
      i += 2;
    } else i += 1;
  }
  return { lead: args.slice(0, i), rest: args.slice(i) };
}

/**
 * Rewrites the earlier tool's spellings: a command flag anywhere in argv becomes the leading
 * command words (with its value as the first positional), and flag aliases are renamed.
 *
 * @throws {UsageError} when two command flags are given.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeArgv } from "./args.ts";
 * assert.deepEqual(
 *   normalizeArgv(["--project", "r", "--issue-dispatch", "--agent", "w"]),
 *   ["dispatch", "--project", "r", "--agent", "w"],
 * );
 * ```
 */
export function normalizeArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  let command: string[] | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const eq = a.indexOf("=");
    const name = a.startsWith("--") && eq > 0 ? a.slice(0, eq) : a;
    const alias = Object.hasOwn(COMMAND_ALIASES, name) ? COMMAND_ALIASES[name] : undefined;
    if (alias !== undefined) {
      if (command !== null) {
        throw new UsageError("USAGE", `${name} conflicts with an earlier command flag`);
      }
      command = [...alias[0]];
      if (alias[1]) {
        if (eq > 0) command.push(a.slice(eq + 1));
        else if (i + 1 < argv.length) command.push(argv[++i]);
        else throw new UsageError("USAGE", `${name} needs a FILE`);
      }
      continue;
    }
    const renamed = Object.hasOwn(FLAG_ALIASES, name) ? FLAG_ALIASES[name] : undefined;
    if (renamed !== undefined) out.push(eq > 0 ? renamed + a.slice(eq) : renamed);
    else out.push(a);
  }
  return command === null ? out : [...command, ...out];
}

/**
 * Parses the arguments after the command words.
 *
 * @throws {UsageError} `UNKNOWN_FLAG` for an undeclared flag, `USAGE` for a missing value, a
 *   repeated single flag, a value given to a bool flag, a missing or extra positional.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseArgs } from "./args.ts";
 * const p = parseArgs(["x.json", "--dry-run"], [{ name: "dry-run", kind: "bool", help: "" }], [
 *   { name: "FILE", required: true },
 * ]);
 * assert.equal(p.flags["dry-run"], true);
 * ```
 */
export function parseArgs(
  args: readonly string[],
  flags: readonly FlagSpec[],
  positionals: readonly PositionalSpec[],
): Parsed {
  const byName = new Map(flags.map((f) => [f.name, f]));
  const values: Record<string, string | boolean | string[]> = {};
  const pos: string[] = [];
  const restFrom = positionals.findIndex((p) => p.rest === true);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      pos.push(...args.slice(i + 1));
      break;
    }
    if (restFrom >= 0 && pos.length >= restFrom && !a.startsWith("-")) {
      // The rest of the line is the positional's, but for the command's own --json and --help.
      for (let j = i; j < args.length; j++) {
        const b = args[j];
        if (b === "--") {
          pos.push(...args.slice(j));
          break;
        }
        if ((b === "--json" || b === "--help") && byName.has(b.slice(2))) {
          values[b.slice(2)] = true;
          continue;
        }
        pos.push(b);
      }
      break;
    }
    if (a.startsWith("-") && a !== "-") {
      if (!a.startsWith("--")) {
        throw new UsageError("UNKNOWN_FLAG", `unknown flag ${a} (flags are spelled --name)`);
      }
      const eq = a.indexOf("=");
      const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      const spec = byName.get(name);
      if (spec === undefined) {
        const near = didYouMean(name, byName.keys());
        throw new UsageError(
          "UNKNOWN_FLAG",
          `unknown flag --${name}` + (near === null ? "" : ` (did you mean --${near}?)`),
        );
      }
      if (spec.kind === "bool") {
        if (eq > 0) throw new UsageError("USAGE", `--${name} takes no value`);
        if (values[name] !== undefined) throw new UsageError("USAGE", `--${name} given twice`);
        values[name] = true;
        continue;
      }
      let v: string;
      if (eq > 0) v = a.slice(eq + 1);
      else if (i + 1 < args.length) v = args[++i];
      else throw new UsageError("USAGE", `--${name} needs a ${spec.value ?? "value"}`);
      if (spec.repeat) {
        const list = (values[name] as string[] | undefined) ?? [];
        list.push(v);
        values[name] = list;
      } else {
        if (values[name] !== undefined) throw new UsageError("USAGE", `--${name} given twice`);
        values[name] = v;
      }
      continue;
    }
    pos.push(a);
  }
  const named: Record<string, string | string[] | undefined> = {};
  let k = 0;
  for (const p of positionals) {
    if (p.variadic) {
      named[p.name] = pos.slice(k);
      if (p.required && pos.length <= k) throw new UsageError("USAGE", `missing ${p.name}`);
      k = pos.length;
      continue;
    }
    if (k < pos.length) named[p.name] = pos[k++];
    else if (p.required) throw new UsageError("USAGE", `missing ${p.name}`);
  }
  if (k < pos.length) {
    throw new UsageError("USAGE", `unexpected argument ${JSON.stringify(pos[k])}`);
  }
  return { flags: values, positionals: named };
}
