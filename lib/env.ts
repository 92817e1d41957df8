/**
 * Reading the environment by name. Deno's `--allow-env=A,B` grants single variables, under which
 * `Deno.env.toObject()` is refused; so the tool reads only the names a command needs, and a
 * `PREFIX_*` name stands for a fixed list of known variables (the locale's `LC_*`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readEnv } from "./env.ts";
 * assert.equal(readEnv(["HOME"]).HOME, Deno.env.get("HOME"));
 * ```
 * @module
 */
import { KeyError } from "./errors.ts";

/** An environment as a plain record, by name (`undefined`: not set). */
export type Env = Readonly<Record<string, string | undefined>>;

/** The locale variables `LC_*` stands for. */
export const LC_NAMES: readonly string[] = [
  "LC_ALL",
  "LC_CTYPE",
  "LC_COLLATE",
  "LC_MESSAGES",
  "LC_MONETARY",
  "LC_NUMERIC",
  "LC_TIME",
  "LC_ADDRESS",
  "LC_IDENTIFICATION",
  "LC_MEASUREMENT",
  "LC_NAME",
  "LC_PAPER",
  "LC_TELEPHONE",
];

/**
 * Expands `LC_*` into {@link LC_NAMES}; other names pass through.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expandEnvNames } from "./env.ts";
 * assert.equal(expandEnvNames(["HOME", "LC_*"]).includes("LC_ALL"), true);
 * ```
 */
export function expandEnvNames(names: readonly string[]): string[] {
  return [...new Set(names.flatMap((n) => n === "LC_*" ? LC_NAMES : [n]))];
}

/**
 * The variables the progress line reads (`lib/cli/terminal.ts`): `CI` (never drawn in CI) and
 * `TERM` (never on a dumb terminal).
 */
export const PROGRESS_ENV: readonly string[] = Object.freeze(["CI", "TERM"]);

/**
 * Reads the named variables (a missing one is `undefined`). A variable the process may not read
 * raises Deno's `NotCapable`, which callers let through.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readEnv } from "./env.ts";
 * assert.equal(typeof readEnv(["PATH"]).PATH, "string");
 * ```
 */
export function readEnv(names: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const n of expandEnvNames(names)) out[n] = Deno.env.get(n);
  return out;
}

/**
 * The operator's home from an environment. It must be an absolute path: the key dir and the
 * operator's confined programs are found below it, and a relative one would be the working
 * directory's (the project's) to decide.
 *
 * @throws {KeyError} `NO_KEY` when `HOME` is unset, empty or relative.
 * @example
 * ```ts
 * import { homeFrom } from "./env.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(homeFrom({ HOME: "/home/op" }), "/home/op");
 * assert.throws(() => homeFrom({ HOME: "op" }));
 * ```
 */
export function homeFrom(env: Env): string {
  const home = env.HOME;
  if (home === undefined || !home.startsWith("/")) {
    throw new KeyError(
      "NO_KEY",
      "HOME must be an absolute path (the key dir and the confined programs are found below it)",
    );
  }
  return home;
}
