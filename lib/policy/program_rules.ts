/**
 * Which programs a command entry or a gate may name as `argv[0]`.
 *
 * Refused, by basename (so `/bin/bash` too), compared case-folded and with a trailing version
 * (`bash5`, `ksh93`) ignored:
 * - shells, which turn any argument into a program;
 * - launchers, which run another program named by their arguments (`env bash -c ...`,
 *   `xargs sh`, `busybox sh`, `sudo`, `nice`, `timeout`, ...). `env` is refused for this reason:
 *   with an argument pattern that admits a word it starts a shell. Put the real program first
 *   instead; the runner already applies its own timeout and environment.
 *
 * `argv[0]` must also be a bare program name or an absolute path: a relative path (`./x`,
 * `bin/x`) would resolve against the project, which agents can write, and `~` is not expanded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { programProblem } from "./program_rules.ts";
 * assert.equal(programProblem("/bin/bash"), "is a shell");
 * assert.equal(programProblem("lake"), null);
 * ```
 * @module
 */

import { hasControlChar } from "../text/chars.ts";

/** Shells, by basename. */
export const SHELLS: readonly string[] = Object.freeze([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "fish",
  "csh",
  "tcsh",
  "ash",
  "mksh",
  "pdksh",
  "rbash",
  "yash",
  "posh",
  "rc",
  "es",
  "nu",
  "xonsh",
  "elvish",
  "pwsh",
  "powershell",
]);

/** Programs that run another program named by their arguments, by basename. */
export const LAUNCHERS: readonly string[] = Object.freeze([
  "env",
  "busybox",
  "toybox",
  "sudo",
  "doas",
  "su",
  "runuser",
  "setpriv",
  "pkexec",
  "nohup",
  "nice",
  "ionice",
  "chrt",
  "taskset",
  "setsid",
  "stdbuf",
  "timeout",
  "xargs",
  "chroot",
  "unshare",
  "nsenter",
  "script",
  "flock",
  "watch",
  "time",
  "exec",
  "command",
  "eval",
  "builtin",
  "parallel",
  "expect",
  "sg",
  "newgrp",
  "firejail",
  "bwrap",
  "sandbox-exec",
]);

/**
 * The comparable name of a program: its basename, lower-cased, without a trailing version.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { programBaseName } from "./program_rules.ts";
 * assert.equal(programBaseName("/usr/local/bin/Bash5.2"), "bash");
 * ```
 */
export function programBaseName(program: string): string {
  const base = program.slice(program.lastIndexOf("/") + 1).toLowerCase();
  const stripped = base.replace(/[-_.]?[0-9][0-9.]*$/, "");
  return stripped === "" ? base : stripped;
}

/**
 * Why `program` may not be a command's or gate's `argv[0]`, or `null` when it may.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { programProblem } from "./program_rules.ts";
 * assert.equal(programProblem("env"), "is a launcher that can start any program (a shell included)");
 * assert.equal(programProblem("./tools/check"), "must be a bare program name or an absolute path");
 * ```
 */
export function programProblem(program: string): string | null {
  if (program === "") return "is empty";
  if (program.trim() !== program || hasControlChar(program)) {
    return "contains whitespace at an end or a control character";
  }
  if (program.includes("/") && !program.startsWith("/")) {
    return "must be a bare program name or an absolute path";
  }
  if (program.startsWith("/") && program.split("/").some((s) => s === "." || s === "..")) {
    return "has a '.' or '..' segment";
  }
  if (program.endsWith("/")) return "names a directory";
  if (program.startsWith("~")) return "must be a bare program name or an absolute path";
  const name = programBaseName(program);
  if (SHELLS.includes(name)) return "is a shell";
  if (LAUNCHERS.includes(name)) {
    return "is a launcher that can start any program (a shell included)";
  }
  return null;
}
