/** The stat watch's own refusals: past the entry cap it fails closed with SNAPSHOT_FAILED. */
import assert from "node:assert/strict";
import { RequestError } from "../../lib/errors.ts";
import { watchPaths } from "../../lib/requests/watch.ts";

Deno.test("watchPaths: past the entry cap is SNAPSHOT_FAILED, at the cap every entry is recorded", () => {
  const dir = Deno.makeTempDirSync({ prefix: "at-watch-" });
  try {
    Deno.mkdirSync(`${dir}/.claude/agents`, { recursive: true });
    for (const n of ["a.md", "b.md"]) Deno.writeTextFileSync(`${dir}/.claude/agents/${n}`, n);
    const roots = [{ abs: `${dir}/.claude`, key: ".claude", recursive: true }];
    // .claude, .claude/agents, and two files: four entries.
    const at = watchPaths(roots, { racyCutoffMs: 0, maxEntries: 4 });
    assert.deepEqual([...at.entries.keys()].sort(), [
      ".claude",
      ".claude/agents",
      ".claude/agents/a.md",
      ".claude/agents/b.md",
    ]);
    assert.throws(
      () => watchPaths(roots, { racyCutoffMs: 0, maxEntries: 3 }),
      (e: unknown) =>
        e instanceof RequestError && e.code === "SNAPSHOT_FAILED" && /more than 3/.test(e.message),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
