/** Root resolution: the pure decision (`checkRoots`) and the live gathering (`resolveRoots`). */

import { SandboxError } from "../../lib/errors.ts";
import { checkRoots, resolveRoots, type RootFacts } from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

const BASE: RootFacts = {
  projectReal: "/srv/p",
  homeReal: "/home/op",
  tmpdirReal: "/tmp/run1",
  writeRoots: [{
    rel: "lean/.lake",
    walk: [{ path: "/srv/p/lean", kind: "dir" }, { path: "/srv/p/lean/.lake", kind: "dir" }],
  }],
  foreignWriteRoots: [],
  exec: [{ given: "~/.elan", real: "/home/op/.elan" }, { given: "/usr/bin", real: "/usr/bin" }],
  foldCase: false,
};

Deno.test("roots: a clean set resolves to real paths", () => {
  const r = checkRoots(BASE);
  assert.deepEqual(r.writeRoots, ["/srv/p/lean/.lake"]);
  assert.deepEqual(r.exec, ["/home/op/.elan", "/usr/bin"]);
  assert.deepEqual(r.tmpdir, "/tmp/run1");
});

const REFUSED: [string, Partial<RootFacts>, string][] = [
  ["a symlink on the root's path", {
    writeRoots: [{
      rel: "lean/.lake",
      walk: [{ path: "/srv/p/lean", kind: "symlink" }],
    }],
  }, "CONFINED_PATH_UNSAFE"],
  ["a symlinked root", {
    writeRoots: [{ rel: "build", walk: [{ path: "/srv/p/build", kind: "symlink" }] }],
  }, "CONFINED_PATH_UNSAFE"],
  ["a missing root", {
    writeRoots: [{ rel: "build", walk: [{ path: "/srv/p/build", kind: "missing" }] }],
  }, "CONFINED_INVALID"],
  ["a file as root", {
    writeRoots: [{ rel: "build", walk: [{ path: "/srv/p/build", kind: "file" }] }],
  }, "CONFINED_INVALID"],
  ["a root outside the project", {
    writeRoots: [{ rel: "x", walk: [{ path: "/srv/other", kind: "dir" }] }],
  }, "CONFINED_INVALID"],
  ["the project root itself", {
    writeRoots: [{ rel: "x", walk: [{ path: "/srv/p", kind: "dir" }] }],
  }, "CONFINED_INVALID"],
  ["exec /", { exec: [{ given: "/", real: "/" }] }, "CONFINED_INVALID"],
  ["exec home", { exec: [{ given: "~/", real: "/home/op" }] }, "CONFINED_INVALID"],
  ["exec resolving to home", { exec: [{ given: "/h", real: "/home/op" }] }, "CONFINED_INVALID"],
  ["exec the project", { exec: [{ given: "/srv/p", real: "/srv/p" }] }, "CONFINED_INVALID"],
  [
    "exec an ancestor of the project",
    { exec: [{ given: "/srv", real: "/srv" }] },
    "CONFINED_INVALID",
  ],
  ["exec inside a write root", {
    exec: [{ given: "/srv/p/lean/.lake/bin", real: "/srv/p/lean/.lake/bin" }],
  }, "CONFINED_INVALID"],
  ["exec containing a write root", {
    exec: [{ given: "/srv/p/lean", real: "/srv/p/lean" }],
  }, "CONFINED_INVALID"],
  [
    "exec inside TMPDIR",
    { exec: [{ given: "/tmp/run1/bin", real: "/tmp/run1/bin" }] },
    "CONFINED_INVALID",
  ],
  ["exec containing TMPDIR", { exec: [{ given: "/tmp", real: "/tmp" }] }, "CONFINED_INVALID"],
  ["exec overlapping another agent's root", {
    foreignWriteRoots: [{ rel: "build", real: "/srv/p/build" }],
    exec: [{ given: "/srv/p/build/bin", real: "/srv/p/build/bin" }],
  }, "CONFINED_INVALID"],
  ["TMPDIR inside the project", { tmpdirReal: "/srv/p/tmp" }, "CONFINED_INVALID"],
  ["TMPDIR containing the project", { tmpdirReal: "/srv" }, "CONFINED_INVALID"],
  ["an exec real path with a quote", {
    exec: [{ given: "/opt/x", real: '/opt/a"b' }],
  }, "CONFINED_PATH_UNSAFE"],
  ["a project path with a newline", { projectReal: "/srv/p\nx" }, "CONFINED_PATH_UNSAFE"],
  ["a TMPDIR with a backslash", { tmpdirReal: "/tmp/a\\b" }, "CONFINED_PATH_UNSAFE"],
];

for (const [what, patch, code] of REFUSED) {
  Deno.test(`roots: refuses ${what}`, () => {
    assertRefusal(() => checkRoots({ ...BASE, ...patch }), code, SandboxError, what);
  });
}

Deno.test("roots: overlap is case-folded on macOS", () => {
  const facts = {
    ...BASE,
    exec: [{ given: "/SRV/P/LEAN/.LAKE/bin", real: "/SRV/P/LEAN/.LAKE/bin" }],
  };
  assertRefusal(() => checkRoots({ ...facts, foldCase: true }), "CONFINED_INVALID", SandboxError);
  assert.deepEqual(checkRoots({ ...facts, foldCase: false }).exec, ["/SRV/P/LEAN/.LAKE/bin"]);
});

Deno.test("roots: a sibling with a common prefix is not an overlap", () => {
  const r = checkRoots({
    ...BASE,
    exec: [{ given: "/srv/p/lean/.lakehouse", real: "/srv/p/lean/.lakehouse" }],
  });
  assert.deepEqual(r.exec, ["/srv/p/lean/.lakehouse"]);
});

Deno.test("roots (live): real dirs resolve; symlinks anywhere on the path are refused", () => {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "at-roots-" }));
  try {
    const project = `${base}/proj`;
    const home = `${base}/home`;
    const tmp = `${base}/tmp`;
    Deno.mkdirSync(`${project}/lean/.lake`, { recursive: true });
    Deno.mkdirSync(`${home}/.elan/bin`, { recursive: true });
    Deno.mkdirSync(tmp);
    Deno.mkdirSync(`${base}/outside`);
    Deno.symlinkSync(`${base}/outside`, `${project}/linked`);
    Deno.symlinkSync(project, `${base}/projlink`);
    Deno.symlinkSync(`${home}/.elan`, `${base}/elanlink`);
    const ok = resolveRoots({
      project: `${base}/projlink`, // the project itself may be reached through a link
      home,
      tmpdir: tmp,
      agent: { exec: ["~/.elan", `${base}/elanlink/bin`], write: ["lean/.lake"] },
    });
    assert.deepEqual(ok.projectReal, project);
    assert.deepEqual(ok.writeRoots, [`${project}/lean/.lake`]);
    assert.deepEqual(ok.exec, [`${home}/.elan`, `${home}/.elan/bin`]);
    for (const write of ["linked", "linked/sub", "missing", "lean/.lake/none"]) {
      const code = write.startsWith("linked") ? "CONFINED_PATH_UNSAFE" : "CONFINED_INVALID";
      assertRefusal(
        () =>
          resolveRoots({
            project,
            home,
            tmpdir: tmp,
            agent: { exec: ["/usr/bin"], write: [write] },
          }),
        code,
        SandboxError,
        write,
      );
    }
    // An exec path that is a link into a write root is caught by its real path.
    Deno.symlinkSync(`${project}/lean/.lake`, `${base}/lakelink`);
    assertRefusal(
      () =>
        resolveRoots({
          project,
          home,
          tmpdir: tmp,
          agent: { exec: [`${base}/lakelink`], write: ["lean/.lake"] },
        }),
      "CONFINED_INVALID",
      SandboxError,
    );
    // ~ expands to the real home: "~/" alone is refused by validation; a link to home here.
    Deno.symlinkSync(home, `${base}/homelink`);
    assertRefusal(
      () =>
        resolveRoots({
          project,
          home,
          tmpdir: tmp,
          agent: { exec: [`${base}/homelink`], write: [] },
        }),
      "CONFINED_INVALID",
      SandboxError,
    );
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});
