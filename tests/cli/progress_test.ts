/**
 * The progress line's pure parts (lib/cli/terminal.ts): when a line is wanted (a terminal, no
 * `--json`, not CI), what it says, and that draws closer than 100 ms apart are dropped, on a
 * clock the test moves (no timer). Through a real pseudo-terminal: progress_pty_slow_test.ts.
 */
import assert from "node:assert/strict";
import { CLEAR_LINE, progressLine, progressText, progressWanted } from "../../lib/cli/terminal.ts";

Deno.test("progressWanted: a terminal only, never with --json, in CI or on TERM=dumb", () => {
  assert.equal(progressWanted({ json: false, terminal: true, env: {} }), true);
  assert.equal(progressWanted({ json: false, terminal: true, env: { CI: "false" } }), true);
  assert.equal(progressWanted({ json: false, terminal: true, env: { CI: "0" } }), true);
  assert.equal(progressWanted({ json: false, terminal: false, env: {} }), false);
  assert.equal(progressWanted({ json: true, terminal: true, env: {} }), false);
  assert.equal(progressWanted({ json: false, terminal: true, env: { CI: "true" } }), false);
  assert.equal(progressWanted({ json: false, terminal: true, env: { CI: "1" } }), false);
  assert.equal(progressWanted({ json: false, terminal: true, env: { TERM: "dumb" } }), false);
});

Deno.test("progressLine: the first tick is drawn, then at most one per 100 ms of the clock, each over the last; done clears once; disabled writes nothing", () => {
  let t = 0;
  const out: string[] = [];
  const p = progressLine({
    label: "x",
    unit: "rows",
    enabled: true,
    write: (s) => out.push(s),
    now: () => t,
  });
  p.tick(1);
  t = 50;
  p.tick(2); // 50 ms after the last draw: dropped
  t = 99;
  p.tick(3); // dropped
  t = 100;
  p.tick(4);
  t = 250;
  p.tick(5000);
  p.done();
  p.done();
  p.tick(6);
  assert.deepEqual(out, [
    `${CLEAR_LINE}x: 1 rows`,
    `${CLEAR_LINE}x: 4 rows (40/s)`,
    `${CLEAR_LINE}x: 5,000 rows (20,000/s)`,
    CLEAR_LINE,
  ]);
  const none: string[] = [];
  const q = progressLine({ label: "x", unit: "rows", enabled: false, write: (s) => none.push(s) });
  q.tick(1);
  q.done();
  assert.deepEqual(none, []);
  assert.equal(
    progressText("audit", 1234567, "files", 1000),
    "audit: 1,234,567 files (1,234,567/s)",
  );
});
