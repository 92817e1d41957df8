/**
 * The Seatbelt (macOS `sandbox-exec`) backend. The profile is generated from fixed text only:
 * every path reaches it as a `-D NAME=value` parameter and is referenced as `(param "NAME")`, so
 * no path is ever spliced into the profile.
 *
 * Policy: reads allowed except the hidden (key) directories; writes denied except the private
 * TMPDIR, the write roots and a few `/dev` nodes; inside those, the project root entry, the
 * read-only entries and masks, the hidden directories and every control-plane name (`.git`,
 * `.claude`, ... in any letter case, by a regex of case classes built from fixed text) denied for
 * write; process execution denied except under the exec paths; the network denied unless the plan
 * shares it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { seatbeltArgv } from "./seatbelt.ts";
 * const argv = seatbeltArgv({
 *   sandboxExec: "/usr/bin/sandbox-exec", project: "/p", tmpdir: "/t", writeRoots: ["/p/build"],
 *   readOnly: [], masks: [], hidden: [], exec: ["/usr/bin"], network: false, cwd: "/p", env: [],
 *   argv: ["/usr/bin/make"],
 * });
 * assert.deepEqual(argv.slice(-1), ["/usr/bin/make"]);
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";
import type { ConfinementPlan } from "./mounts.ts";
import { CONTROL_PLANE_NAMES } from "../policy/control_plane.ts";

/** `/dev` nodes a confined command may write. */
export const SEATBELT_DEV_WRITES: readonly string[] = Object.freeze([
  "/dev/null",
  "/dev/zero",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/tty",
  "/dev/dtracehelper",
]);

/** A plan plus the absolute path of `sandbox-exec`. */
export interface SeatbeltPlan extends ConfinementPlan {
  /** Absolute path of `sandbox-exec`. */
  readonly sandboxExec: string;
}

/** The parameter names and values a plan produces, in profile order. */
export interface SeatbeltParams {
  /** `[name, value]` pairs passed as `-D name=value`. */
  readonly params: readonly (readonly [string, string])[];
  /** Names of the write-root parameters (TMPDIR first). */
  readonly writable: readonly string[];
  /** Names of the write-denied parameters (read-only entries and masks). */
  readonly readOnly: readonly string[];
  /** Names of the hidden-directory parameters. */
  readonly hidden: readonly string[];
  /** Names of the exec parameters. */
  readonly exec: readonly string[];
}

/**
 * Assigns a parameter name to every path of the plan.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { seatbeltParams } from "./seatbelt.ts";
 * assert.deepEqual(seatbeltParams({
 *   project: "/p", tmpdir: "/t", writeRoots: ["/p/b"], readOnly: [], masks: [], hidden: [],
 *   exec: [], network: false, cwd: "/p", env: [], argv: ["/bin/true"],
 * }).writable, ["TMPDIR", "WRITE_ROOT_0"]);
 * ```
 */
export function seatbeltParams(plan: ConfinementPlan): SeatbeltParams {
  const params: [string, string][] = [["PROJECT", plan.project], ["TMPDIR", plan.tmpdir]];
  const named = (prefix: string, paths: readonly string[]) =>
    paths.map((p, i) => {
      const name = `${prefix}_${i}`;
      params.push([name, p]);
      return name;
    });
  const writable = ["TMPDIR", ...named("WRITE_ROOT", plan.writeRoots)];
  const readOnly = named("READ_ONLY", [...plan.readOnly, ...plan.masks]);
  const hidden = named("HIDDEN", plan.hidden);
  const exec = named("EXEC", plan.exec);
  return { params, writable, readOnly, hidden, exec };
}

/**
 * A regex source matching a path component equal to `name` in any letter case, e.g.
 * `/\.[Gg][Ii][Tt](/|$)` for `.git`. Built from fixed names only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { caseFoldedComponentRegex } from "./seatbelt.ts";
 * assert.equal(caseFoldedComponentRegex(".git"), "/\\.[Gg][Ii][Tt](/|$)");
 * ```
 */
export function caseFoldedComponentRegex(name: string): string {
  let out = "/";
  for (const ch of name) {
    const lo = ch.toLowerCase();
    const up = ch.toUpperCase();
    if (lo !== up) out += `[${up}${lo}]`;
    else if (/[a-z0-9_-]/i.test(ch)) out += ch;
    else if (ch === ".") out += "\\.";
    else throw new TypeError(`unexpected character ${JSON.stringify(ch)} in a control-plane name`);
  }
  return out + "(/|$)";
}

/**
 * The SBPL profile text for a plan. Only parameter names appear in it, never paths.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { seatbeltProfile } from "./seatbelt.ts";
 * assert.equal(seatbeltProfile({
 *   project: "/p", tmpdir: "/t", writeRoots: [], readOnly: [], masks: [], hidden: [],
 *   exec: ["/usr/bin"], network: false, cwd: "/p", env: [], argv: ["/usr/bin/true"],
 * }).includes('(subpath (param "EXEC_0"))'), true);
 * ```
 */
export function seatbeltProfile(plan: ConfinementPlan): string {
  const p = seatbeltParams(plan);
  const lines = ["(version 1)", "(allow default)", "(deny file-write*)", "(allow file-write*"];
  for (const name of p.writable) lines.push(`    (subpath (param "${name}"))`);
  for (const dev of SEATBELT_DEV_WRITES) lines.push(`    (literal "${dev}")`);
  lines.push(")", "(deny file-write*", '    (literal (param "PROJECT"))');
  for (const name of p.readOnly) lines.push(`    (subpath (param "${name}"))`);
  for (const name of p.hidden) lines.push(`    (subpath (param "${name}"))`);
  for (const n of CONTROL_PLANE_NAMES) lines.push(`    (regex #"${caseFoldedComponentRegex(n)}")`);
  lines.push(")");
  if (p.hidden.length > 0) {
    lines.push("(deny file-read*");
    for (const name of p.hidden) lines.push(`    (subpath (param "${name}"))`);
    lines.push(")");
  }
  lines.push("(deny process-exec*)");
  // An allow with no filter would allow every program, so it is emitted only with entries.
  if (p.exec.length > 0) {
    lines.push("(allow process-exec*");
    for (const name of p.exec) lines.push(`    (subpath (param "${name}"))`);
    lines.push(")");
  }
  if (!plan.network) lines.push("(deny network*)");
  return lines.join("\n") + "\n";
}

/**
 * The complete `sandbox-exec` argv (program first): `-D` parameters, `-p` profile, the command.
 * The command's program must be absolute, so it can never be read as an option.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { seatbeltArgv } from "./seatbelt.ts";
 * assert.deepEqual(seatbeltArgv({
 *   sandboxExec: "/usr/bin/sandbox-exec", project: "/p", tmpdir: "/t", writeRoots: [],
 *   readOnly: [], masks: [], hidden: [], exec: ["/usr/bin"], network: false, cwd: "/p", env: [],
 *   argv: ["/usr/bin/true"],
 * }).slice(0, 3), ["/usr/bin/sandbox-exec", "-D", "PROJECT=/p"]);
 * ```
 */
export function seatbeltArgv(plan: SeatbeltPlan): string[] {
  if (!plan.sandboxExec.startsWith("/")) {
    throw new SandboxError("SANDBOX_UNAVAILABLE", "sandbox-exec must be run by absolute path", {
      details: { sandboxExec: plan.sandboxExec },
    });
  }
  if (plan.argv.length === 0 || !plan.argv[0].startsWith("/")) {
    throw new SandboxError("CONFINED_INVALID", "the command's program must be an absolute path", {
      details: { argv: [...plan.argv] },
    });
  }
  const out = [plan.sandboxExec];
  for (const [name, value] of seatbeltParams(plan).params) out.push("-D", `${name}=${value}`);
  out.push("-p", seatbeltProfile(plan), ...plan.argv);
  return out;
}
