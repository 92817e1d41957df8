/**
 * The program's own code as a capability. Commands load their modules on first use (so a command
 * pays only for its own), and Deno checks such a load against the read permission like any other
 * read: every command's needs include reading the directory the code lies in, and a load the
 * permissions refuse is `NOT_CAPABLE`, not an internal error. Where the code lies also names the
 * entry module, which `permissions` prints in the launch line.
 *
 * @module
 */
import { SetupError } from "../errors.ts";

/** Whether this module runs from the source tree (else from the release bundle). */
const IN_SOURCE = import.meta.url.endsWith("/lib/cli/code_dir.ts");

/** The file path of `rel`, resolved against this module's URL. */
function fromHere(rel: string): string {
  return decodeURIComponent(new URL(rel, import.meta.url).pathname);
}

/**
 * The directory of the program's modules: `lib/` in the source tree (every lazily loaded module
 * lies below it), the bundle's own directory in the release bundle (its chunks lie side by side).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codeDir } from "./code_dir.ts";
 * assert.ok(codeDir().endsWith("/lib")); // in the source tree
 * ```
 */
export function codeDir(): string {
  return fromHere(IN_SOURCE ? ".." : ".").replace(/\/$/, "");
}

/**
 * The entry module's path: `main.ts` beside `lib/` in the source tree, the bundle's `main.js` in
 * the release bundle (this module lies in it or in a chunk beside it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { entryPath } from "./code_dir.ts";
 * assert.ok(entryPath().endsWith("/main.ts")); // in the source tree
 * ```
 */
export function entryPath(): string {
  return fromHere(IN_SOURCE ? "../../main.ts" : "./main.js");
}

/**
 * The npm package a failed module load names (`Failed caching npm package 'yaml@2.9.1'`, `Could
 * not find npm package ...`), or `null` when the failure is not about an npm package.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { missingNpmPackage } from "./code_dir.ts";
 * assert.equal(missingNpmPackage(new TypeError("Failed caching npm package 'yaml@2.9.1'\n 0: error")), "yaml@2.9.1");
 * ```
 */
export function missingNpmPackage(e: unknown): string | null {
  if (!(e instanceof Error)) return null;
  const m = e.message.match(/npm package '([^']+)'|npm package "([^"]+)"|npm:\/?([^\s'"]+)/);
  if (m === null || !/(cach|find|load|resolv|download|fetch)/i.test(e.message)) return null;
  return m[1] ?? m[2] ?? m[3] ?? null;
}

/**
 * Loads a command's module; a load refused because the code directory may not be read is
 * `NotCapable` (with the flag that grants it); one that fails because an npm package the source
 * tree imports is not in Deno's cache (and could not be fetched) is `DEPS_MISSING`, saying in one
 * line what to run; anything else is rethrown as it is. Every command's modules (and so every npm
 * package they import) load here, before the command acts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadCode } from "./code_dir.ts";
 * const { run } = await loadCode(() => import("./run_cmd.ts"));
 * assert.equal(typeof run, "function");
 * ```
 */
export async function loadCode<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const dir = codeDir();
    if (Deno.permissions.querySync({ name: "read", path: dir }).state !== "granted") {
      throw new Deno.errors.NotCapable(
        `this command's code in ${dir} may not be read: it needs --allow-read=${dir} ` +
          "(`agentteams permissions` prints the whole line)",
      );
    }
    const pkg = missingNpmPackage(e);
    if (pkg !== null) {
      const root = IN_SOURCE ? fromHere("../..").replace(/\/$/, "") : codeDir();
      throw new SetupError(
        "DEPS_MISSING",
        `the npm package ${pkg} this command imports is not in Deno's cache and could not be ` +
          `fetched: run \`deno install\` in ${root} once, with the npm registry reachable`,
        { cause: e },
      );
    }
    throw e;
  }
}
