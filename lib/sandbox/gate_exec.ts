/**
 * What a gate may execute under confinement: its declared `exec` (from the brief, or merged from
 * the operator file's `gate_exec`), else its own program plus, for a script, the absolute
 * interpreter named on its `#!` line. (`#!/usr/bin/env python3` therefore allows only
 * `/usr/bin/env`; such a gate needs a declared `exec`.)
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gateExecPaths } from "./gate_exec.ts";
 * assert.deepEqual(
 *   gateExecPaths({ name: "scan", glob: null, argv: ["/opt/scan"], exec: null }, "/opt/scan", "/bin/sh"),
 *   ["/opt/scan", "/bin/sh"],
 * );
 * ```
 * @module
 */

import type { GateDef } from "../policy/types.ts";
import { within } from "../fs/within.ts";

/**
 * The interpreter of a `#!` first line, when it is an absolute path; `null` otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseShebang } from "./gate_exec.ts";
 * assert.equal(parseShebang("#! /usr/bin/python3 -u\n"), "/usr/bin/python3");
 * assert.equal(parseShebang("print(1)"), null);
 * ```
 */
export function parseShebang(firstLine: string): string | null {
  if (!firstLine.startsWith("#!")) return null;
  const interp = firstLine.slice(2).split("\n")[0].trim().split(/[ \t]+/)[0] ?? "";
  return interp.startsWith("/") && interp !== "/" ? interp : null;
}

/**
 * The gate's exec allowlist: its declared `exec` when non-empty, else its resolved program and the
 * (resolved) shebang interpreter when there is one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gateExecPaths } from "./gate_exec.ts";
 * assert.deepEqual(
 *   gateExecPaths({ name: "g", glob: null, argv: ["x"], exec: ["/opt/tool"] }, "/opt/tool/x", null),
 *   ["/opt/tool"],
 * );
 * ```
 */
export function gateExecPaths(
  gate: GateDef,
  programReal: string,
  interpreterReal: string | null,
): string[] {
  if (gate.exec !== null && gate.exec.length > 0) return [...gate.exec];
  return interpreterReal === null || interpreterReal === programReal
    ? [programReal]
    : [programReal, interpreterReal];
}

/**
 * Reads a program's `#!` interpreter (first 512 bytes), `null` when it has none or cannot be
 * opened; Deno's `NotCapable` (the launch flags do not grant it) is thrown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readShebang } from "./gate_exec.ts";
 * assert.equal(readShebang("/usr/bin/true"), null); // (a binary)
 * ```
 */
export function readShebang(program: string): string | null {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(program, { read: true });
  } catch (e) {
    // Launch flags that do not grant it are refused, not read as "no interpreter": the exec list
    // would then leave the interpreter out.
    if (e instanceof Deno.errors.NotCapable) throw e;
    return null;
  }
  try {
    const buf = new Uint8Array(512);
    const n = file.readSync(buf) ?? 0;
    return parseShebang(new TextDecoder().decode(buf.subarray(0, n)));
  } finally {
    file.close();
  }
}

/**
 * True when the program's real path equals or lies under one of the real exec paths. On Linux
 * the runner uses this to check the top-level program before running it (bwrap has no exec
 * allowlist); Seatbelt enforces the list for every exec.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { execAllows } from "./gate_exec.ts";
 * assert.equal(execAllows("/usr/bin/make", ["/usr/bin"]), true);
 * assert.equal(execAllows("/usr/binx/make", ["/usr/bin"]), false);
 * ```
 */
export function execAllows(
  programReal: string,
  execReal: readonly string[],
  foldCase = false,
): boolean {
  return execReal.some((e) => within(programReal, e, foldCase));
}
