/**
 * The release workflow's checksum step: `DIR/SHA256SUMS` over every file of the release
 * directory (the binaries and the bundle), in `sha256sum`'s format (`sha256sum -c SHA256SUMS`
 * checks it; `agentteams release sign` signs it). A release directory lacking one of the four
 * targets' binaries or the bundle is refused (`RELEASE_FILE_MISSING`), with nothing written: a
 * release is all of them.
 *
 * Usage: deno run --allow-all scripts/release_sums.ts DIR
 *
 * @module
 */
import { resolve } from "../lib/fs/path.ts";
import { writeSums } from "../lib/release/release_dir.ts";
import { isAgentTeamsError, ReleaseError } from "../lib/errors.ts";
import { releaseFiles } from "../lib/release/sums.ts";
import { RELEASE_TARGETS } from "./release_compile.ts";
import { BUNDLE_ASSET } from "./release_bundle.ts";

/**
 * The assets a release must hold (the four binaries and the bundle) that `present` lacks.
 *
 * @example
 * ```ts
 * import { missingAssets } from "./release_sums.ts";
 * missingAssets(["agentteams-bundle.tar.gz"]).length; // 4
 * ```
 */
export function missingAssets(present: readonly string[]): string[] {
  return [...RELEASE_TARGETS.map((t) => `agentteams-${t}`), BUNDLE_ASSET].filter((a) =>
    !present.includes(a)
  );
}

if (import.meta.main) {
  if (Deno.args.length !== 1 || Deno.args[0].startsWith("-")) {
    console.error("usage: deno run --allow-all scripts/release_sums.ts DIR");
    Deno.exit(2);
  }
  const dir = resolve(Deno.args[0]);
  try {
    const missing = missingAssets(releaseFiles(dir));
    if (missing.length > 0) {
      throw new ReleaseError(
        "RELEASE_FILE_MISSING",
        `${dir} lacks ${missing.join(", ")}: a release holds every target's binary and the bundle`,
      );
    }
    const names = writeSums(dir);
    console.log(`wrote ${dir}/SHA256SUMS (${names.length} files: ${names.join(", ")})`);
  } catch (e) {
    if (!isAgentTeamsError(e)) throw e;
    console.error(`release_sums: ${e.code}: ${e.message}`);
    Deno.exit(1);
  }
}
