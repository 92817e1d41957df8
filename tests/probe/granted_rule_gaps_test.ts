/**
 * Probe (grants): gaps in `grantedRootProblem`, the one rule a granted root must pass.
 *
 * 1. It refuses a root that holds the home directory or overlaps the key dir, and nothing else
 *    below home: the operator's confined-programs directory (`~/.config/agentteams/confined`, a
 *    sibling of the key dir), `~/.ssh`, `~/.config/git` or `~/.local/bin` are accepted. A grant
 *    whose `issuer_root` is the home directory (nothing refuses that either) then lets the agent
 *    rewrite the operator file that sets its own exec and write lists, or plant the operator's
 *    global git config. `issuer_root` is not among the facts the rule sees at all.
 * 2. It checks control-plane names that count anywhere (`.git`, `.claude`, ...) but not the
 *    root-only ones (`references`, `sandbox`) at the issuer's root. `<issuer>/references` passes
 *    the runner's start check (`loadGrantedRoots` calls `resolveRoots`), is recorded as added,
 *    and then every confined run of that runner fails in `buildPlan` (a writable root inside a
 *    guarded path), whether it needs the grant or not.
 */
import assert from "node:assert/strict";
import { SandboxError } from "../../lib/errors.ts";
import { grantedRootProblem } from "../../lib/sandbox/write_exec_roots.ts";
import { makePrivateTmpdir, removePrivateTmpdir } from "../../lib/sandbox/mod.ts";
import { resolveRoots } from "../../lib/sandbox/write_exec_roots_io.ts";
import { makeFixture, runConfined, sh } from "../sandbox/_helpers.ts";

const BOUNDS = {
  projectReal: "/srv/p",
  homeReal: "/home/op",
  tmpdirReal: "/tmp/run1",
  keepClear: [{ path: "/home/op/.config/agentteams/keys", what: "the key dir" }],
  foldCase: false,
};

for (
  const dir of [
    "/home/op/.config/agentteams/confined",
    "/home/op/.ssh",
    "/home/op/.config/git",
    "/home/op/.local/bin",
  ]
) {
  Deno.test(`probe grants: a granted root at ${dir} is refused`, () => {
    // Even with the grant's issuer_root set to home itself.
    const p = grantedRootProblem({
      path: dir,
      grant: "G-1",
      kind: "dir",
      real: dir,
      issuerRoot: "/home/op",
      issuerGit: [],
    }, BOUNDS);
    assert.notEqual(p, null, `${dir} would be writable to every confined run of the runner`);
  });
}

Deno.test("probe grants (live): a granted root cannot rewrite the operator's confined-programs file", async () => {
  const fx = makeFixture();
  try {
    const dir = `${fx.home}/.config/agentteams/confined`;
    Deno.mkdirSync(dir, { recursive: true });
    const file = `${dir}/proj.json`;
    Deno.writeTextFileSync(file, '{"agents":{}}\n');
    const r = await runConfined(fx, sh(`echo '{"agents":{"worker":{"exec":["/"]}}}' > ${file}`), {
      extra: { grantedRoots: [{ root: dir, issuerRoot: fx.home, grant: "G-1" }] },
    }).catch((e: unknown) => e);
    assert.equal(
      Deno.readTextFileSync(file),
      '{"agents":{}}\n',
      `the operator's confined-programs file was rewritten (${
        r instanceof Error ? r.message : `exit ${(r as { code: number }).code}`
      })`,
    );
  } finally {
    fx.cleanup();
  }
});

Deno.test("probe grants: a root the runner's start check accepts does not break every later run", async () => {
  const fx = makeFixture();
  const tmpdir = makePrivateTmpdir();
  try {
    const issuer = `${fx.base}/issuer`;
    Deno.mkdirSync(`${issuer}/references`, { recursive: true });
    const g = { root: `${issuer}/references`, issuerRoot: issuer, grant: "G-1" };
    // What loadGrantedRoots checks at the runner's start (it throws when it refuses).
    let startRefused: string | null = null;
    try {
      resolveRoots({
        project: fx.project,
        home: fx.home,
        tmpdir,
        agent: { exec: [], write: [] },
        grantedRoots: [g],
        grantKeepClear: [{ path: fx.keyDir, what: "the key dir" }],
      });
    } catch (e) {
      if (!(e instanceof SandboxError)) throw e;
      startRefused = e.code;
    }
    // Every run afterwards, here one that does not touch the granted root at all.
    let runRefused: string | null = null;
    try {
      await runConfined(fx, sh(`echo ok > ${fx.project}/build/out.txt`), {
        extra: { grantedRoots: [g] },
      });
    } catch (e) {
      if (!(e instanceof SandboxError)) throw e;
      runRefused = e.code;
    }
    assert.ok(
      startRefused !== null || runRefused === null,
      `the start check accepted ${g.root}; then every confined run is refused (${runRefused})`,
    );
  } finally {
    removePrivateTmpdir(tmpdir);
    fx.cleanup();
  }
});
