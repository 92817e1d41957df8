/**
 * The release workflow's compile step (.github/workflows/release.yml): `deno compile` of main.ts
 * for each target, with that target's release permission flags baked in (`releaseFlags` in
 * lib/permissions.ts, the one table: absolute programs only, no net, no ffi), written as
 * `OUT/agentteams-<target>`.
 *
 * `deno compile` needs the `denort` runtime of this Deno's version for each target. It would
 * download it from dl.deno.land, which these machines cannot reach, so this step uses only
 * `DENORT_BIN` (a denort binary for the target; the workflow downloads one per job) and stops,
 * before writing anything, when it is unset. `--print-argv` prints, one JSON line per target, the
 * `deno` arguments it would run, and needs no runtime: what the tests check.
 *
 * Usage: deno run --allow-all scripts/release_compile.ts --out DIR [--target TRIPLE ...]
 *          [--print-argv]   (default targets: all four of RELEASE_TARGETS)
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { releaseFlags, type ReleaseOs } from "../lib/permissions.ts";
import { resolve } from "../lib/fs/path.ts";

/** The targets a release builds: Linux and macOS, x86_64 and aarch64. */
export const RELEASE_TARGETS: readonly string[] = Object.freeze([
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
]);

/**
 * The OS a target triple runs on, or `null` for one a release does not build.
 *
 * @example
 * ```ts
 * import { targetOs } from "./release_compile.ts";
 * targetOs("aarch64-apple-darwin"); // "darwin"
 * targetOs("x86_64-pc-windows-msvc"); // null
 * ```
 */
export function targetOs(target: string): ReleaseOs | null {
  if (!RELEASE_TARGETS.includes(target)) return null;
  return target.endsWith("-apple-darwin") ? "darwin" : "linux";
}

/**
 * The `deno` arguments that compile `main.ts` for `target` into `outDir` (run from the repository
 * root, so deno.json's import map applies).
 *
 * @example
 * ```ts
 * import { compileArgv } from "./release_compile.ts";
 * const argv = compileArgv("x86_64-unknown-linux-gnu", "/tmp/out");
 * argv.at(-1); // "main.ts"
 * argv.includes("--allow-net"); // false
 * ```
 */
export function compileArgv(target: string, outDir: string): string[] {
  const os = targetOs(target);
  if (os === null) {
    throw new Error(
      `${target} is not a release target (one of ${RELEASE_TARGETS.join(", ")})`,
    );
  }
  return [
    "compile",
    "--quiet",
    ...releaseFlags(os),
    "--target",
    target,
    "--output",
    `${outDir}/agentteams-${target}`,
    "main.ts",
  ];
}

/**
 * Why compiling cannot start here, or `null`: `DENORT_BIN` must name the runtime (this step never
 * lets `deno compile` download one).
 *
 * @example
 * ```ts
 * import { runtimeProblem } from "./release_compile.ts";
 * runtimeProblem(undefined)?.startsWith("DENORT_BIN is not set"); // true
 * ```
 */
export function runtimeProblem(denortBin: string | undefined): string | null {
  if (denortBin === undefined || denortBin === "") {
    return "DENORT_BIN is not set: deno compile needs the denort runtime of Deno " +
      `${Deno.version.deno} for the target, and would download it from dl.deno.land (not ` +
      "reachable here). Set DENORT_BIN to a denort binary for the target (the release workflow " +
      "downloads denort-<target>.zip from dl.deno.land/release/v<version>/), or use " +
      "--print-argv to see what would run";
  }
  return null;
}

if (import.meta.main) {
  const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
  const targets: string[] = [];
  let out: string | null = null;
  let printOnly = false;
  const usage = "usage: deno run --allow-all scripts/release_compile.ts --out DIR " +
    "[--target TRIPLE ...] [--print-argv]";
  for (let i = 0; i < Deno.args.length; i++) {
    const a = Deno.args[i];
    const v = Deno.args[i + 1];
    if (a === "--print-argv") printOnly = true;
    else if ((a === "--target" || a === "--out") && v !== undefined && !v.startsWith("--")) {
      if (a === "--target") targets.push(v);
      else out = resolve(v);
      i++;
    } else {
      console.error(`${usage}; not ${a}`);
      Deno.exit(2);
    }
  }
  if (out === null) {
    console.error(`${usage}; --out is missing`);
    Deno.exit(2);
  }
  if (targets.length === 0) targets.push(...RELEASE_TARGETS);
  const bad = targets.find((t) => targetOs(t) === null);
  if (bad !== undefined) {
    console.error(
      `release_compile: ${bad} is not a release target (${RELEASE_TARGETS.join(", ")})`,
    );
    Deno.exit(2);
  }
  if (printOnly) {
    for (const t of targets) console.log(JSON.stringify({ target: t, argv: compileArgv(t, out) }));
    Deno.exit(0);
  }
  const problem = runtimeProblem(Deno.env.get("DENORT_BIN"));
  if (problem !== null) {
    console.error(`release_compile: not compiling: ${problem}`);
    Deno.exit(1);
  }
  if (targets.length > 1) {
    console.error(
      "release_compile: DENORT_BIN is one target's runtime: compile one --target at a time " +
        "(the workflow runs a job per target)",
    );
    Deno.exit(2);
  }
  Deno.mkdirSync(out, { recursive: true });
  for (const t of targets) {
    const r = await new Deno.Command(Deno.execPath(), {
      args: compileArgv(t, out),
      cwd: root,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!r.success) {
      console.error(`release_compile: agentteams-${t} not built (deno compile's message above)`);
      Deno.exit(1);
    }
    console.log(`built ${out}/agentteams-${t}`);
  }
}
