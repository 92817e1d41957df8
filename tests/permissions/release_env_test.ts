/**
 * The release forms (the installed launcher, the binaries, the bundle line) grant every variable
 * any command reads at start: a command whose own list names one the release flags lack fails
 * NOT_CAPABLE through the launcher (the audit once did, on the yaml parser's LOG_TOKENS).
 */
import assert from "node:assert/strict";
import { COMMANDS } from "../../lib/cli/commands.ts";
import { expandEnvNames } from "../../lib/env.ts";
import { releaseFlags } from "../../lib/permissions.ts";

Deno.test("releaseFlags' --allow-env covers every command's environment", () => {
  const flag = releaseFlags().find((f) => f.startsWith("--allow-env="));
  assert.ok(flag !== undefined, releaseFlags().join(" "));
  const granted = new Set(flag.slice("--allow-env=".length).split(","));
  for (const c of COMMANDS) {
    const missing = expandEnvNames(c.env).filter((n) => !granted.has(n));
    assert.deepEqual(missing, [], `${c.words.join(" ")} reads ${missing.join(", ")}`);
  }
});
