/**
 * Prints the release forms' permission flags (the union of the commands' permissions,
 * `releaseFlags` in lib/permissions.ts), one a line: what `scripts/install` bakes into its
 * launcher; with `--os linux|darwin`, what a compiled binary for that OS bakes in
 * (scripts/release_compile.ts).
 *
 * Usage: deno run scripts/release_flags.ts [--os linux|darwin]
 *
 * @module
 */
import { releaseFlags } from "../lib/permissions.ts";

if (import.meta.main) {
  const [flag, os] = Deno.args;
  if (flag === undefined) console.log(releaseFlags().join("\n"));
  else if (flag === "--os" && (os === "linux" || os === "darwin") && Deno.args.length === 2) {
    console.log(releaseFlags(os).join("\n"));
  } else {
    console.error("usage: deno run scripts/release_flags.ts [--os linux|darwin]");
    Deno.exit(2);
  }
}
