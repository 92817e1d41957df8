/**
 * Bun, the runtime Claude Code ships in, as a test oracle (npm `@oven/bun-linux-x64`, a
 * test-only package in tests/deno.lock): its binary copied out of Deno's npm cache and made
 * executable. Deno fetches the package when this module is loaded, so a clean machine needs only
 * the npm registry.
 *
 * @module
 */
import { join } from "node:path";
import bunPackage from "npm:@oven/bun-linux-x64@1.4.5/package.json" with { type: "json" };
import { DENO } from "./mod.ts";

/** The Bun version the oracle runs. */
export const BUN_VERSION: string = bunPackage.version;

/**
 * The Bun binary, copied into `dir` and made executable. Fails loudly when the package is not in
 * Deno's npm cache (never skips).
 */
export async function bunBinary(dir: string): Promise<string> {
  const info = await new Deno.Command(DENO, { args: ["info", "--json"], stdout: "piped" }).output();
  const npmCache = (JSON.parse(new TextDecoder().decode(info.stdout)) as { npmCache: string })
    .npmCache;
  const src = join(
    npmCache,
    "registry.npmjs.org",
    "@oven",
    "bun-linux-x64",
    BUN_VERSION,
    "bin",
    "bun",
  );
  const dst = join(dir, "bun");
  await Deno.copyFile(src, dst);
  await Deno.chmod(dst, 0o700);
  return dst;
}

/**
 * `Bun.YAML.parse` of each text, run by the real Bun: the JSON of each value, or `{ "error": … }`.
 */
export async function bunYamlParseAll(
  bun: string,
  dir: string,
  texts: readonly string[],
): Promise<({ value: unknown } | { error: string })[]> {
  const input = join(dir, "yaml-inputs.json");
  const script = join(dir, "yaml-oracle.js");
  Deno.writeTextFileSync(input, JSON.stringify(texts));
  Deno.writeTextFileSync(
    script,
    `const texts = JSON.parse(require("fs").readFileSync(${JSON.stringify(input)}, "utf8"));
const out = texts.map((t) => {
  try { const v = Bun.YAML.parse(t); return { value: v === undefined ? null : v }; }
  catch (e) { return { error: String(e && e.message || e) }; }
});
process.stdout.write(JSON.stringify(out));`,
  );
  const r = await new Deno.Command(bun, {
    args: [script],
    env: { HOME: dir, BUN_INSTALL_CACHE_DIR: join(dir, "bun-cache"), NO_COLOR: "1" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(r.stderr);
  if (r.code !== 0) throw new Error(`bun failed (${r.code}): ${err}`);
  return JSON.parse(new TextDecoder().decode(r.stdout));
}
