/** The stat watch's own refusals: past the entry cap it fails closed with SNAPSHOT_FAILED. */
import assert from "node:assert/strict";
import { RequestError } from "../../lib/errors.ts";
import { watchPaths } from "../../lib/requests/watch.ts";
import { sha256Hex } from "../../lib/crypto/hash.ts";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("watchPaths: past the entry cap is SNAPSHOT_FAILED, at the cap every entry is recorded", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "at-watch-" });
  try {
    Deno.mkdirSync(`${dir}/.claude/agents`, { recursive: true });
    for (const n of ["a.md", "b.md"]) Deno.writeTextFileSync(`${dir}/.claude/agents/${n}`, n);
    const roots = [{ abs: `${dir}/.claude`, key: ".claude", recursive: true }];
    // .claude, .claude/agents, and two files: four entries.
    const at = await watchPaths(roots, { racyCutoffMs: 0, maxEntries: 4 });
    assert.deepEqual([...at.entries.keys()].sort(), [
      ".claude",
      ".claude/agents",
      ".claude/agents/a.md",
      ".claude/agents/b.md",
    ]);
    const e = await assertRefusal(
      () => watchPaths(roots, { racyCutoffMs: 0, maxEntries: 3 }),
      "SNAPSHOT_FAILED",
      RequestError,
    );
    assert.match(e.message, /more than 3/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("watchPaths: a racy file carries the SHA-256 of its content; an old one only its stat", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "at-watch-" });
  try {
    Deno.mkdirSync(`${dir}/.agentteams`);
    const big = new Uint8Array(300_000).map((_, i) => i * 7);
    Deno.writeFileSync(`${dir}/.agentteams/ledger`, big);
    Deno.writeTextFileSync(`${dir}/.agentteams/old`, "old");
    Deno.utimeSync(`${dir}/.agentteams/old`, 1_000_000, 1_000_000);
    const roots = [{ abs: `${dir}/.agentteams`, key: ".agentteams", recursive: true }];
    const w = await watchPaths(roots, { racyCutoffMs: Date.now() - 60_000 });
    const ledger = w.entries.get(".agentteams/ledger") ?? "";
    assert.ok(ledger.endsWith(` sha256:${sha256Hex(big)}`), ledger);
    assert.ok(w.hashed.has(".agentteams/ledger"));
    // utime moved mtime back, but ctime is now: still racy, still hashed.
    assert.ok(w.hashed.has(".agentteams/old"));
    // Without a racy window and not asked for, nothing is hashed.
    const cold = await watchPaths(roots, { racyCutoffMs: Date.now() + 60_000 });
    assert.equal(cold.hashed.size, 0);
    assert.doesNotMatch(cold.entries.get(".agentteams/ledger") ?? "", /sha256:/);
    // The later snapshot hashes what the earlier one did, whatever the times.
    const again = await watchPaths(roots, {
      racyCutoffMs: Date.now() + 60_000,
      alsoHash: w.hashed,
    });
    assert.equal(again.entries.get(".agentteams/ledger"), ledger);
    // A same-size rewrite is a different fingerprint.
    big[123_456] ^= 1;
    Deno.writeFileSync(`${dir}/.agentteams/ledger`, big);
    const after = await watchPaths(roots, { racyCutoffMs: 0, alsoHash: w.hashed });
    assert.notEqual(after.entries.get(".agentteams/ledger"), ledger);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
