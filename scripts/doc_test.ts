/**
 * `deno task test:doc`: every JSDoc example in `lib/` runs under `deno test --doc` (those marked
 * `ts ignore`, with their reason, excepted), with the project's own compiler options less the
 * `noUnused*` checks: Deno's example runner imports every export of the module into each example,
 * which those checks would refuse.
 *
 * Usage: deno run --allow-all scripts/doc_test.ts [PATH...] (default: lib/)
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The text of the examples' config: `deno.json`'s compiler options without `noUnusedLocals` and
 * `noUnusedParameters`, its imports and unstable features. Pure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exampleConfigText } from "./doc_test.ts";
 * const text = exampleConfigText(JSON.stringify({
 *   compilerOptions: { strict: true, noUnusedLocals: true, noUnusedParameters: true },
 *   imports: { zod: "npm:zod@4" },
 * }));
 * assert.deepEqual(JSON.parse(text), { compilerOptions: { strict: true }, imports: { zod: "npm:zod@4" } });
 * ```
 */
export function exampleConfigText(denoJson: string): string {
  const config = JSON.parse(denoJson);
  const { noUnusedLocals: _l, noUnusedParameters: _p, ...compilerOptions } = config.compilerOptions;
  return JSON.stringify({ compilerOptions, imports: config.imports, unstable: config.unstable });
}

/**
 * Writes the examples' config (see {@link exampleConfigText}) of the checkout's `deno.json` into
 * `dir`; returns its path.
 *
 * @example
 * ```ts ignore
 * // (writes a file: shown, not run)
 * import { writeExampleConfig } from "./doc_test.ts";
 * const path = writeExampleConfig(Deno.makeTempDirSync());
 * ```
 */
export function writeExampleConfig(dir: string): string {
  const path = join(dir, "deno.json");
  Deno.writeTextFileSync(path, exampleConfigText(Deno.readTextFileSync(join(root, "deno.json"))));
  return path;
}

if (import.meta.main) {
  const dir = Deno.makeTempDirSync({ prefix: "agentteams-doctest-" });
  try {
    const paths = Deno.args.length > 0 ? Deno.args : ["lib/"];
    // The examples make their temporary directories (and leave them): under this run's own,
    // removed below, not among /tmp's.
    const tmp = join(dir, "tmp");
    Deno.mkdirSync(tmp);
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "test",
        "--doc",
        "--no-lock",
        `--config=${writeExampleConfig(dir)}`,
        "--allow-all",
        ...paths,
      ],
      cwd: root,
      env: { TMPDIR: tmp },
    }).spawn().status;
    Deno.exitCode = r.code;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
