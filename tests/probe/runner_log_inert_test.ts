/**
 * Probe 22c, finding C5 (tests/probe/PROBE_22C_REPORT.md): the runner printed names a session chose
 * to the operator's terminal as they were. A file in `.agentteams-queue/requests/` whose name is
 * not a request's is recorded once and logged (`<path> is not a request name; not served`), and
 * the name may hold any byte but `/` and NUL: an OSC 52 sequence (on terminals that honour it, it
 * sets the operator's clipboard: the next paste is the session's command), a screen clear, or a
 * newline and a forged `agentteams serve: ... served` line. The log now shows such characters
 * escaped, on one line. Run through a real runner launched with the flags `agentteams permissions
 * serve` prints (`--once`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeno } from "../_helpers/mod.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { queuePaths } from "../../lib/queue/queue_paths.ts";
import { permissionsArgs, runnerBrief, startRunner } from "../runner/_runner_helpers.ts";

const CLIP = "\x1b]52;c;ZWNobyBvd25lZAo=\x07";
const NAMES = [
  `a${CLIP}`,
  "b\x1b[2J\x1b[H",
  "c\nagentteams serve: 0123456789abcdef0123456789abcdef apply-proposal served (exit 0) in 1 ms",
  "d\u009b31m",
];

Deno.test("probe 22c: a name a session planted in the queue reaches the runner's log escaped, on one line", async () => {
  await withWorld("p22c-log-inert", { brief: runnerBrief }, async (w) => {
    await w.dispatchBeforeBriefChanged("worker");
    // The queue folders made (a runner started and stopped).
    const first = await startRunner(w);
    assert.equal((await first.stop()).code, 0, first.stderr());
    const q = queuePaths(w.project);
    for (const n of NAMES) Deno.writeTextFileSync(join(q.requests, n), "{}");
    const args = await permissionsArgs(w, ["serve", "--project", w.project, "--once"]);
    const r = await runDeno(args, { env: w.env, cwd: w.dir, hangGuardMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    // Each name was logged (its first letter and what follows, escaped), and no control
    // character but the line ends reached the terminal.
    for (const lead of ["a\\x1b]52", "b\\x1b[2J", "c\\x0aagentteams serve", "d\\x9b31m"]) {
      assert.ok(r.stderr.includes(lead), `${JSON.stringify(lead)} not in ${r.stderr}`);
    }
    // deno-lint-ignore no-control-regex -- the control characters are what the test looks for
    assert.doesNotMatch(r.stderr, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    assert.doesNotMatch(r.stderr, /^agentteams serve: 0123456789abcdef/m);
  });
});
