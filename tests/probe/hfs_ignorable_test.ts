/**
 * Probe finding C: control-plane names spelt with a code point HFS+ ignores.
 *
 * HFS+ (still the file system of many external and older macOS volumes) drops U+200C, U+200D,
 * U+200E, U+200F, U+202A..U+202E, U+206A..U+206F and U+FEFF when it compares names, so
 * `.g\u200cit` *is* `.git` there (CVE-2014-9390; git's own `is_hfs_dotgit` in utf8.c skips exactly
 * these). `lib/text/chars.ts` refuses some of them, but deliberately not the joiners U+200C and
 * U+200D, and not U+206A..U+206F; and `controlPlaneHit` compares names with `toLowerCase()` only.
 * So a proposal for `src/vendor/lib/.g\u200cit/config` (or a submodule's `.g\u200dit` file,
 * `src/.c\u200dlaude/settings.json`) passes every rule and, on HFS+, replaces the vendored
 * repository's real `.git/config` (its base is readable to the agent), repoints a submodule's
 * gitfile, or writes a subproject's Claude settings. (The brief's lint likewise accepts a write
 * scope `.g\u200cit/`.)
 *
 * On Linux the write lands in a new, harmless directory; the test asserts what should happen on
 * every platform: the refusal (`CONTROL_PLANE`, or `PATH_INVALID` for the character), nothing
 * written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withWorld } from "../e2e/_run_helpers.ts";
import { applyCode, applyIn, changeOf, present } from "./_probe.ts";

const CASES = [
  "src/vendor/lib/.g\u200cit/config", // ZERO WIDTH NON-JOINER: a vendored repository's config
  "src/sub/.g\u200dit", // ZERO WIDTH JOINER: a submodule's gitfile (`gitdir:` anywhere)
  "src/.c\u200dlaude/settings.json", // a subproject's Claude Code hooks
  "src/.github\u206a/workflows/ci.yml", // INHIBIT SYMMETRIC SWAPPING (a deprecated format char)
  "src/.agentteam\u206fs/dispatches.jsonl", // NOMINAL DIGIT SHAPES
];

Deno.test("probe C: control-plane names with HFS+-ignorable code points are refused", async (t) => {
  await withWorld("probe-hfs", {
    brief: { agent_policies: { worker: { write_scopes: ["src/"] } } },
  }, async (w) => {
    const nonce = await w.dispatch();
    for (const path of CASES) {
      await t.step(JSON.stringify(path), async () => {
        const code = applyCode(await applyIn(w, changeOf(w, nonce, path, "x\n")));
        const written = present(join(w.project, path));
        assert.deepEqual(
          { refused: code === "CONTROL_PLANE" || code === "PATH_INVALID", written },
          { refused: true, written: false },
          `${JSON.stringify(path)}: ${code ?? "applied"}`,
        );
      });
    }
    await w.verifyOk();
  });
});
