/**
 * The per-command V8 options of the release launcher (`COMMAND_V8_FLAGS` in lib/permissions.ts):
 * each names a command there is, travels as one shell word (the launcher passes it unquoted), and
 * reaches only its own command; the launcher's shell code picks the command as the first argument
 * that is not an option, as the CLI does.
 */
import assert from "node:assert/strict";
import { COMMAND_V8_FLAGS, launchV8Flags } from "../../lib/permissions.ts";
import { COMMANDS } from "../../lib/cli/commands.ts";

Deno.test("COMMAND_V8_FLAGS: each key is a command's first word; each option one shell-safe word", () => {
  const firsts = new Set(COMMANDS.map((c) => c.words[0]));
  assert.ok(Object.keys(COMMAND_V8_FLAGS).length > 0);
  for (const word of Object.keys(COMMAND_V8_FLAGS)) {
    assert.ok(firsts.has(word), `${word} is not a command`);
    const opts = launchV8Flags(word);
    assert.equal(opts.length, 1);
    assert.match(opts[0], /^--v8-flags=[A-Za-z0-9=,_-]+$/);
  }
  assert.deepEqual(launchV8Flags("audit"), ["--v8-flags=--max-semi-space-size=2"]);
  assert.deepEqual(launchV8Flags("run"), ["--v8-flags=--min-semi-space-size=8"]);
  for (const c of COMMANDS) {
    if (!Object.hasOwn(COMMAND_V8_FLAGS, c.words[0])) {
      assert.deepEqual(launchV8Flags(c.words[0]), []);
    }
  }
  // Not an own key: nothing, not a prototype's member.
  assert.deepEqual(launchV8Flags("constructor"), []);
});

Deno.test("the launcher's command pick (scripts/install's shell lines) under dash: the first non-option argument", async () => {
  // The same lines scripts/install writes, ending in an echo of the options it would pass.
  const script = [
    "cmd=",
    'for a in "$@"; do case "$a" in -*) ;; *) cmd=$a; break ;; esac; done',
    "v8=",
    'case "$cmd" in',
    ...Object.keys(COMMAND_V8_FLAGS).map((w) => `  ${w}) v8=${launchV8Flags(w)[0]} ;;`),
    "esac",
    'echo "[$v8]"',
  ].join("\n");
  const install = Deno.readTextFileSync(new URL("../../scripts/install", import.meta.url));
  for (const line of script.split("\n").slice(0, 4)) {
    assert.ok(install.includes(`echo '${line}'`), `scripts/install writes ${line}`);
  }
  const run = async (...args: string[]) => {
    const out = await new Deno.Command("dash", { args: ["-c", script, "launcher", ...args] })
      .output();
    assert.equal(out.code, 0);
    return new TextDecoder().decode(out.stdout).trim();
  };
  assert.equal(await run("audit", "."), "[--v8-flags=--max-semi-space-size=2]");
  assert.equal(await run("--json", "audit"), "[--v8-flags=--max-semi-space-size=2]");
  assert.equal(await run("run", "r.json", "--unconfined"), "[--v8-flags=--min-semi-space-size=8]");
  assert.equal(await run("ledger", "verify"), "[]");
  assert.equal(await run("--version"), "[]");
  assert.equal(await run(), "[]");
});
