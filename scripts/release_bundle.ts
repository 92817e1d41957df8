/**
 * The release workflow's bundle step: the code-split bundle (scripts/bundle.ts, what
 * `deno task bundle` builds) packed as `OUT/agentteams-bundle.tar.gz`, the release's portable
 * form beside the compiled binaries (it runs on any OS with Deno; see the README). The archive is
 * reproducible: entries sorted, owner 0, mtime 0 (GNU tar; the workflow runs on Linux).
 *
 * Usage: deno run --allow-all scripts/release_bundle.ts OUT [--from BUNDLE_DIR]
 *   (--from packs a bundle already built, e.g. by `deno task bundle` into dist/agentteams)
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { resolve } from "../lib/fs/path.ts";
import { bundleTo } from "./bundle.ts";

/** The bundle's asset name in a release. */
export const BUNDLE_ASSET = "agentteams-bundle.tar.gz";

/**
 * The `tar` arguments that pack `bundleDir` (as a top-level `agentteams/` folder) into `archive`.
 *
 * @example
 * ```ts
 * import { tarArgv } from "./release_bundle.ts";
 * tarArgv("/b/agentteams", "/out/agentteams-bundle.tar.gz").at(-1); // "agentteams"
 * ```
 */
export function tarArgv(bundleDir: string, archive: string): string[] {
  const parent = bundleDir.replace(/\/[^/]+\/?$/, "") || "/";
  const name = bundleDir.replace(/\/$/, "").split("/").at(-1) as string;
  return [
    "--sort=name",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--mtime=@0",
    "--transform",
    `s,^${name},agentteams,`,
    "-czf",
    archive,
    "-C",
    parent,
    name,
  ];
}

if (import.meta.main) {
  const args = [...Deno.args];
  const usage = "usage: deno run --allow-all scripts/release_bundle.ts OUT [--from BUNDLE_DIR]";
  let from: string | null = null;
  const at = args.indexOf("--from");
  if (at >= 0) {
    if (args[at + 1] === undefined) {
      console.error(`${usage}; --from needs a directory`);
      Deno.exit(2);
    }
    from = resolve(args[at + 1]);
    args.splice(at, 2);
  }
  if (args.length !== 1 || args[0].startsWith("-")) {
    console.error(usage);
    Deno.exit(2);
  }
  const out = resolve(args[0]);
  const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
  let tmp: string | null = null;
  if (from === null) {
    tmp = Deno.makeTempDirSync({ prefix: "agentteams-bundle-" });
    from = `${tmp}/agentteams`;
    await bundleTo(root, from);
  }
  try {
    Deno.statSync(`${from}/main.js`);
  } catch {
    console.error(`release_bundle: ${from} holds no main.js: is it a bundle (deno task bundle)?`);
    Deno.exit(1);
  }
  Deno.mkdirSync(out, { recursive: true });
  const r = await new Deno.Command("tar", {
    args: tarArgv(from, `${out}/${BUNDLE_ASSET}`),
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (tmp !== null) Deno.removeSync(tmp, { recursive: true });
  if (!r.success) {
    console.error("release_bundle: tar failed (GNU tar is needed: --sort, --transform)");
    Deno.exit(1);
  }
  console.log(`wrote ${out}/${BUNDLE_ASSET}`);
}
