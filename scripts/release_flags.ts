/**
 * Prints the release forms' permission flags (the union of the commands' permissions,
 * `releaseFlags` in lib/permissions.ts), one a line: what `scripts/install` bakes into its
 * launcher; with `--os linux|darwin`, what a compiled binary for that OS bakes in
 * (scripts/release_compile.ts). With `--v8`, the per-command V8 options the launcher adds
 * (`launchV8Flags`), one command a line: its first word, a tab, the option.
 *
 * Usage: deno run scripts/release_flags.ts [--os linux|darwin | --v8]
 *
 * @module
 */
import { COMMAND_V8_FLAGS, launchV8Flags, releaseFlags } from "../lib/permissions.ts";

if (import.meta.main) {
  const [flag, os] = Deno.args;
  if (flag === undefined) console.log(releaseFlags().join("\n"));
  else if (flag === "--v8" && Deno.args.length === 1) {
    for (const word of Object.keys(COMMAND_V8_FLAGS)) {
      console.log(`${word}\t${launchV8Flags(word).join(" ")}`);
    }
  } else if (flag === "--os" && (os === "linux" || os === "darwin") && Deno.args.length === 2) {
    console.log(releaseFlags(os).join("\n"));
  } else {
    console.error("usage: deno run scripts/release_flags.ts [--os linux|darwin | --v8]");
    Deno.exit(2);
  }
}
