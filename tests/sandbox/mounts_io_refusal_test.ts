/**
 * Refusals of `prepareConfinement` on a real project: each one is tried through a real confined
 * run whose command would write a marker, and must fail with its code before anything runs: the
 * marker is absent and the whole fixture (project, write roots, home) is unchanged.
 */

import { SandboxError } from "../../lib/errors.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import assert from "node:assert/strict";
import {
  type Fixture,
  lexists,
  makeFixture,
  runConfined,
  type RunOptions,
  sh,
} from "./_helpers.ts";

interface Attempt {
  readonly argv: string[];
  readonly marker: string;
  readonly opts: RunOptions;
}

function refusedBeforeRunning(
  what: string,
  code: string,
  rule: string,
  arrange: (fx: Fixture) => Attempt,
) {
  Deno.test(`prepare (live): ${what} is refused (${code}) and nothing runs`, async () => {
    const fx = makeFixture();
    try {
      const { argv, marker, opts } = arrange(fx);
      const before = snapshotTreeSync(fx.base);
      const e = await assertRefusal(() => runConfined(fx, argv, opts), code, SandboxError);
      assert.ok(e.message.includes(rule), `refused by another rule: ${e.message}`);
      assert.ok(!lexists(marker), `${marker} must not exist`);
      assertSameTree(before, snapshotTreeSync(fx.base));
    } finally {
      fx.cleanup();
    }
  });
}

/** A directory outside the project, for links to point at. */
function outside(fx: Fixture): string {
  const dir = `${fx.base}/outside`;
  Deno.mkdirSync(dir);
  return dir;
}

refusedBeforeRunning(
  "an absolute working directory",
  "CONFINED_INVALID",
  "must be project-relative",
  (fx) => ({
    argv: sh("echo pwn > pwned"),
    marker: `${fx.project}/pwned`,
    opts: { extra: { cwd: fx.project } },
  }),
);

refusedBeforeRunning(
  "a working directory climbing out with ..",
  "CONFINED_INVALID",
  "must be project-relative",
  (fx) => ({
    argv: sh("echo pwn > pwned"),
    marker: `${fx.base}/pwned`,
    opts: { extra: { cwd: "build/../.." } },
  }),
);

refusedBeforeRunning(
  "a working directory that is a link out of the project",
  "CONFINED_INVALID",
  "is outside the project",
  (fx) => {
    const out = outside(fx);
    Deno.symlinkSync(out, `${fx.project}/out`);
    return {
      argv: sh("echo pwn > pwned"),
      marker: `${out}/pwned`,
      opts: { extra: { cwd: "out" } },
    };
  },
);

refusedBeforeRunning(
  "a relative extra read-only path",
  "CONFINED_INVALID",
  "must be absolute",
  (fx) => ({
    argv: sh("echo pwn > build/pwned"),
    marker: `${fx.project}/build/pwned`,
    opts: { extra: { extraReadOnly: [".git/hooks"] } },
  }),
);

refusedBeforeRunning(
  "an extra read-only path with a quote",
  "CONFINED_PATH_UNSAFE",
  "which a sandbox path may not hold",
  (fx) => ({
    argv: sh("echo pwn > build/pwned"),
    marker: `${fx.project}/build/pwned`,
    opts: { extra: { extraReadOnly: [`${fx.project}/.git/a"b`] } },
  }),
);

refusedBeforeRunning(
  "an extra read-only path containing a write root",
  "CONFINED_INVALID",
  "a writable root lies inside the protected path",
  (fx) => ({
    argv: sh("echo pwn > build/pwned"),
    marker: `${fx.project}/build/pwned`,
    opts: { extra: { extraReadOnly: [fx.project] } },
  }),
);

refusedBeforeRunning(
  "a protected path in a write root reached through a symlink",
  "CONFINED_PATH_UNSAFE",
  "passes through a symlink",
  (fx) => {
    const out = outside(fx);
    Deno.symlinkSync(out, `${fx.project}/build/keys`);
    return {
      argv: sh("echo pwn > build/keys/secret"),
      marker: `${out}/secret`,
      opts: { protectedPaths: ["build/keys/secret"] },
    };
  },
);

refusedBeforeRunning(
  "a control-plane-named symlink in a write root (to the project's .git)",
  "CONFINED_PATH_UNSAFE",
  "is a symlink with a control-plane or protected name",
  (fx) => {
    Deno.symlinkSync(`${fx.project}/.git`, `${fx.project}/build/.claude`);
    return {
      argv: sh("echo pwn > build/.claude/pwned"),
      marker: `${fx.project}/.git/pwned`,
      opts: {},
    };
  },
);

refusedBeforeRunning(
  "a control-plane-named symlink in a write root (to a directory outside)",
  "CONFINED_PATH_UNSAFE",
  "is a symlink with a control-plane or protected name",
  (fx) => {
    const out = outside(fx);
    Deno.symlinkSync(out, `${fx.project}/build/.Git`);
    return { argv: sh("echo pwn > build/.Git/config"), marker: `${out}/config`, opts: {} };
  },
);

// bwrap has no exec allowlist: the top-level program is checked against the exec paths while
// the plan is made.
refusedBeforeRunning(
  "a program under none of the agent's exec paths",
  "CONFINED_INVALID",
  "lies under none of the exec paths",
  (fx) => ({
    argv: sh("echo pwn > build/pwned"),
    marker: `${fx.project}/build/pwned`,
    opts: { extra: { agent: { exec: ["/usr/lib"], write: ["build"] } } },
  }),
);

refusedBeforeRunning(
  "a program for an agent with no exec paths (no confined_programs entry)",
  "CONFINED_INVALID",
  "none: confined_programs has no entry",
  (fx) => ({
    argv: sh("echo pwn > build/pwned"),
    marker: `${fx.project}/build/pwned`,
    opts: { extra: { agent: { exec: [], write: ["build"] } } },
  }),
);

refusedBeforeRunning(
  "a program named by a relative path",
  "CONFINED_INVALID",
  "must be an absolute path",
  (fx) => ({
    argv: ["sh", "-c", "echo pwn > build/pwned"],
    marker: `${fx.project}/build/pwned`,
    opts: {},
  }),
);
