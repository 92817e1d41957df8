/**
 * The release workflow's checksum step: `DIR/SHA256SUMS` over every file of the release
 * directory (the binaries and the bundle), in `sha256sum`'s format (`sha256sum -c SHA256SUMS`
 * checks it; `agentteams release sign` signs it).
 *
 * Usage: deno run --allow-all scripts/release_sums.ts DIR
 *
 * @module
 */
import { resolve } from "../lib/fs/path.ts";
import { writeSums } from "../lib/release/release_dir.ts";
import { isAgentTeamsError } from "../lib/errors.ts";

if (import.meta.main) {
  if (Deno.args.length !== 1 || Deno.args[0].startsWith("-")) {
    console.error("usage: deno run --allow-all scripts/release_sums.ts DIR");
    Deno.exit(2);
  }
  const dir = resolve(Deno.args[0]);
  try {
    const names = writeSums(dir);
    console.log(`wrote ${dir}/SHA256SUMS (${names.length} files: ${names.join(", ")})`);
  } catch (e) {
    if (!isAgentTeamsError(e)) throw e;
    console.error(`release_sums: ${e.code}: ${e.message}`);
    Deno.exit(1);
  }
}
