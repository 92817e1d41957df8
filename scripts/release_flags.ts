/**
 * Prints the release forms' permission flags (the union of the commands' permissions,
 * `releaseFlags` in lib/permissions.ts), one a line: what `scripts/install` bakes into its
 * launcher and `deno task compile` into its binaries.
 *
 * Usage: deno run scripts/release_flags.ts
 *
 * @module
 */
import { releaseFlags } from "../lib/permissions.ts";

if (import.meta.main) console.log(releaseFlags().join("\n"));
