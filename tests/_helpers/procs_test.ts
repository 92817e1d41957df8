/** The /proc helpers see a marked process while it lives and its end once it is killed. */
import assert from "node:assert/strict";
import { awaitEnd, ended, livingWith, stateOf } from "./procs.ts";

Deno.test("procs: a marked process is found while it lives, and its end is seen", async () => {
  const word = `procs-test-${crypto.randomUUID()}`;
  assert.deepEqual(livingWith(word), []);
  const child = new Deno.Command("/bin/sh", {
    // `; :` keeps the shell from exec'ing sleep (which would drop the word, its $0).
    args: ["-c", "sleep 30; :", word],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    // Until the spawn's exec, the child's command line is still this process's.
    for (let i = 0; i < 2000 && livingWith(word).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    // (A child the shell forks for sleep carries the word too until its exec: the shell is there.)
    assert.ok(livingWith(word).includes(child.pid), String(livingWith(word)));
    assert.equal(ended(child.pid), false);
    child.kill("SIGKILL");
    await awaitEnd(word, 10_000);
    assert.deepEqual(livingWith(word), []);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
    await child.status;
  }
  assert.equal(stateOf(child.pid), null, "reaped: no entry");
  assert.equal(ended(child.pid), true);
});
