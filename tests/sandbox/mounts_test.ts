/** The pure plan builder: read-only overlays, masks, refusals, ordering. */

import { SandboxError } from "../../lib/errors.ts";
import { buildPlan, type PlanInput } from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";
import { assertRefusal } from "../_helpers/assert.ts";

const INPUT: PlanInput = {
  roots: {
    projectReal: "/p",
    homeReal: "/h",
    tmpdir: "/t/run",
    writeRoots: ["/p/build/out", "/p/build"],
    exec: ["/usr/bin"],
  },
  cwd: "/p",
  argv: ["/usr/bin/make", "all"],
  env: { PATH: "/usr/bin:/bin", TMPDIR: "/tmp", HOME: "/h" },
  network: false,
  hidden: ["/h/.config/agentteams/keys"],
  guards: [],
  scanHits: [],
  foldCase: false,
};

Deno.test("plan: environment sorted, TMPDIR forced to the private one, roots parents first", () => {
  const plan = buildPlan(INPUT);
  assert.deepEqual(plan.env, [["HOME", "/h"], ["PATH", "/usr/bin:/bin"], ["TMPDIR", "/t/run"]]);
  assert.deepEqual(plan.writeRoots, ["/p/build", "/p/build/out"]);
  assert.deepEqual(plan.hidden, ["/h/.config/agentteams/keys"]);
  assert.deepEqual(plan.exec, ["/usr/bin"]);
});

Deno.test("plan: guards in a writable root become read-only binds or masks; others are skipped", () => {
  const plan = buildPlan({
    ...INPUT,
    guards: [
      { path: "/p/.git", firstMissing: null, symlinkAt: null }, // outside every root
      { path: "/p/build/keys", firstMissing: null, symlinkAt: null },
      { path: "/p/build/locked/deep", firstMissing: "/p/build/locked", symlinkAt: null },
      { path: "/p/.agentteams", firstMissing: "/p/.agentteams", symlinkAt: null },
    ],
    scanHits: [
      { path: "/p/build/sub/.GIT", kind: "dir" },
      { path: "/p/build/keys/inner.pem", kind: "file" }, // covered by /p/build/keys
      { path: "/t/run/.git", kind: "dir" },
      { path: "/p/build/gone", kind: "missing" },
    ],
  });
  assert.deepEqual(plan.readOnly, ["/p/build/keys", "/t/run/.git", "/p/build/sub/.GIT"]);
  assert.deepEqual(plan.masks, ["/p/build/locked"]);
});

Deno.test("plan: a mask below a read-only entry is dropped (already covered)", () => {
  const plan = buildPlan({
    ...INPUT,
    guards: [{
      path: "/p/build/v/.git/hooks",
      firstMissing: "/p/build/v/.git/hooks",
      symlinkAt: null,
    }],
    scanHits: [{ path: "/p/build/v/.git", kind: "dir" }],
  });
  assert.deepEqual(plan.readOnly, ["/p/build/v/.git"]);
  assert.deepEqual(plan.masks, []);
});

const REFUSED: [string, Partial<PlanInput>, string][] = [
  ["a relative program", { argv: ["make"] }, "CONFINED_INVALID"],
  ["an empty argv", { argv: [] }, "CONFINED_INVALID"],
  ["a NUL in an argument", { argv: ["/bin/echo", "a\0b"] }, "CONFINED_INVALID"],
  ["a program path with a quote", { argv: ['/opt/a"b'] }, "CONFINED_PATH_UNSAFE"],
  ["a cwd outside the project", { cwd: "/etc" }, "CONFINED_INVALID"],
  ["a cwd with a newline", { cwd: "/p/a\nb" }, "CONFINED_PATH_UNSAFE"],
  ["a bad environment name", { env: { "A=B": "x" } }, "CONFINED_INVALID"],
  ["an environment value with NUL", { env: { A: "x\0y" } }, "CONFINED_INVALID"],
  ["a guard containing a writable root", {
    guards: [{ path: "/p", firstMissing: null, symlinkAt: null }],
  }, "CONFINED_INVALID"],
  ["a guard equal to a writable root", {
    guards: [{ path: "/p/build", firstMissing: null, symlinkAt: null }],
  }, "CONFINED_INVALID"],
  ["a guard in a root behind a symlink", {
    guards: [{ path: "/p/build/keys/a", firstMissing: null, symlinkAt: "/p/build/keys" }],
  }, "CONFINED_PATH_UNSAFE"],
  ["a control-plane-named symlink in a root", {
    scanHits: [{ path: "/p/build/.git", kind: "symlink" }],
  }, "CONFINED_PATH_UNSAFE"],
  ["a scan hit that contains a writable root", {
    scanHits: [{ path: "/p/build", kind: "dir" }],
  }, "CONFINED_INVALID"],
  ["a hidden dir containing a writable root", { hidden: ["/p"] }, "CONFINED_INVALID"],
  ["a hidden dir with a control character", { hidden: ["/h/k\x01"] }, "CONFINED_PATH_UNSAFE"],
];

for (const [what, patch, code] of REFUSED) {
  Deno.test(`plan: refuses ${what}`, () => {
    assertRefusal(() => buildPlan({ ...INPUT, ...patch }), code, SandboxError, what);
  });
}

Deno.test("plan: containment is case-folded when asked (macOS)", () => {
  const input = {
    ...INPUT,
    guards: [{ path: "/P/BUILD/keys", firstMissing: null, symlinkAt: null }],
  };
  assert.deepEqual(buildPlan({ ...input, foldCase: true }).readOnly, ["/P/BUILD/keys"]);
  assert.deepEqual(buildPlan({ ...input, foldCase: false }).readOnly, []);
});

Deno.test("plan: every writable place carries its pin; one left unpinned is refused", () => {
  const pins = [
    { path: "/t/run", dev: 1, ino: 2 },
    { path: "/p/build", dev: 1, ino: 3 },
    { path: "/p/build/out", dev: 1, ino: 4 },
  ];
  const byPath = (a: { path: string }, b: { path: string }) => a.path < b.path ? -1 : 1;
  assert.deepEqual([...(buildPlan({ ...INPUT, pins }).pins ?? [])].sort(byPath), pins.sort(byPath));
  const e = assertRefusal(
    () => buildPlan({ ...INPUT, pins: pins.filter((p) => p.path !== "/p/build/out") }),
    "CONFINED_INVALID",
    SandboxError,
  );
  assert.match(e.message, /the writable root \/p\/build\/out was not pinned/);
});
