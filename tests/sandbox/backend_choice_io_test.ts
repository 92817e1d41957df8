/** The per-process backend decision shared by apply, run and the library surface. */
import assert from "node:assert/strict";
import { SandboxError } from "../../lib/errors.ts";
import { lazyBackend } from "../../lib/sandbox/backend_choice_io.ts";
import { assertRefusal } from "../_helpers/assert.ts";

Deno.test("lazyBackend: the opt-out needs the brief's allow_unconfined_runs, and is typed", () => {
  assertRefusal(
    () => lazyBackend({ allowUnconfinedRuns: false }, { unconfined: true }),
    "UNCONFINED_NOT_ALLOWED",
    SandboxError,
  );
});

Deno.test("lazyBackend: an allowed opt-out probes nothing and says so", async () => {
  const b = lazyBackend({ allowUnconfinedRuns: true }, { unconfined: true });
  assert.equal(await b(), "unconfined-opt-out");
  assert.equal(b(), b(), "one decision per process");
});

Deno.test("lazyBackend: otherwise the probe decides once (bubblewrap here)", async () => {
  const b = lazyBackend({ allowUnconfinedRuns: false }, { unconfined: false });
  const first = b();
  assert.equal(first, b(), "probed once");
  assert.equal(await first, "bwrap", "scripts/test installs bubblewrap; its probe must pass");
});

Deno.test("lazyBackend under the runner: no opt-out, even where the brief allows one; it confines", async () => {
  assertRefusal(
    () => lazyBackend({ allowUnconfinedRuns: true }, { unconfined: true, runner: true }),
    "UNCONFINED_NOT_ALLOWED",
    SandboxError,
  );
  const b = lazyBackend({ allowUnconfinedRuns: true }, { unconfined: false, runner: true });
  assert.equal(await b(), "bwrap");
});
