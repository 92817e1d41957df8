/**
 * Which path strings may reach a sandbox: no quotes, backslashes, newlines, NUL or other control
 * characters. Such a path is refused outright rather than quoted, so no backend ever has to escape
 * one (bwrap takes paths as separate argv elements and Seatbelt takes them as `-D` parameters, but a
 * path that cannot be written down plainly is also one an operator cannot review).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { assertSafePath } from "./safe_path.ts";
 * assert.doesNotThrow(() => assertSafePath("/usr/bin", "exec path"));
 * assert.throws(() => assertSafePath('/tmp/a"b', "write root"), { code: "CONFINED_PATH_UNSAFE" });
 * ```
 * @module
 */

import { SandboxError } from "../errors.ts";

/**
 * Returns the first character that makes `path` unsafe, or `null` when the path is plain.
 * Refused: `"`, `'`, `\`, every C0 control (NUL, tab, newline, ...), DEL and every C1 control.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unsafePathChar } from "./safe_path.ts";
 * assert.equal(unsafePathChar("/a\nb"), "\n");
 * assert.equal(unsafePathChar("/a/b"), null);
 * ```
 */
export function unsafePathChar(path: string): string | null {
  for (const ch of path) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return ch;
    if (ch === '"' || ch === "'" || ch === "\\") return ch;
  }
  return null;
}

/**
 * Throws `SandboxError("CONFINED_PATH_UNSAFE")` when `path` is empty or holds a refused character.
 * `what` names the path in the message (e.g. `confined_programs.worker.write`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { assertSafePath } from "./safe_path.ts";
 * assert.doesNotThrow(() => assertSafePath("/home/op/.elan", "confined_programs.prover.exec"));
 * assert.throws(() => assertSafePath("", "confined_programs.prover.exec"), { code: "CONFINED_PATH_UNSAFE" });
 * ```
 */
export function assertSafePath(
  path: string,
  what: string,
  details: Record<string, unknown> = {},
): void {
  if (path === "") {
    throw new SandboxError("CONFINED_PATH_UNSAFE", `${what}: empty path`, {
      details: { ...details, path },
    });
  }
  const bad = unsafePathChar(path);
  if (bad !== null) {
    const shown = JSON.stringify(path);
    throw new SandboxError(
      "CONFINED_PATH_UNSAFE",
      `${what}: path ${shown} contains ${JSON.stringify(bad)}, which a sandbox path may not hold`,
      { details: { ...details, path } },
    );
  }
}
