/**
 * Granted write roots (a capability grant's target in another workspace): the pure rule
 * (`grantedRootProblem`, through `checkRoots`), one refusal per clause; and live runs under real
 * bwrap: a granted directory outside the project is writable, its issuer's control plane and a
 * nested `.git` inside it are not, nothing outside it is, and a root swapped for a symlink or
 * holding the key dir is refused before anything runs, with nothing written.
 */
import assert from "node:assert/strict";
import { SandboxError } from "../../lib/errors.ts";
import { checkRoots, type RootFacts } from "../../lib/sandbox/mod.ts";
import { type GrantedRootFacts, grantedRootProblem } from "../../lib/sandbox/write_exec_roots.ts";
import { controlPlaneReadOnly } from "../../lib/policy/control_plane.ts";
import { assertRefusal, assertSameTree } from "../_helpers/assert.ts";
import { snapshotTreeSync } from "../_helpers/mod.ts";
import { lexists, makeFixture, planFor, runConfined, sh } from "./_helpers.ts";
import { makePrivateTmpdir, removePrivateTmpdir } from "../../lib/sandbox/mod.ts";

const BASE: RootFacts = {
  projectReal: "/srv/p",
  homeReal: "/home/op",
  tmpdirReal: "/tmp/run1",
  writeRoots: [],
  grantKeepClear: [
    { path: "/srv/ops/keys", what: "the hidden directory /srv/ops/keys" },
    { path: "/srv/p/.agentteams", what: "the hidden directory .agentteams" },
    { path: "/opt/tools/bin", what: "the PATH directory /opt/tools/bin" },
  ],
  foreignWriteRoots: [],
  exec: [{ given: "/usr/bin", real: "/usr/bin" }],
  foldCase: false,
};

/** A granted root's facts; its issuer's workspace is the root itself unless given. */
function granted(path: string, f: Partial<GrantedRootFacts> = {}): GrantedRootFacts {
  return { path, grant: "G-1", kind: "dir", real: path, issuerRoot: path, issuerGit: [], ...f };
}

const BOUNDS = { ...BASE, keepClear: BASE.grantKeepClear ?? [] };

Deno.test("granted roots: a clean root outside the project is added after the agent's own", () => {
  const r = checkRoots({
    ...BASE,
    writeRoots: [{ rel: "build", walk: [{ path: "/srv/p/build", kind: "dir" }] }],
    grantedRoots: [
      granted("/srv/team-a/docs/shared", { issuerRoot: "/srv/team-a" }),
      granted("/home/op/work/a/docs", { issuerRoot: "/home/op/work/a" }),
    ],
  });
  assert.deepEqual(r.writeRoots, [
    "/srv/p/build",
    "/srv/team-a/docs/shared",
    "/home/op/work/a/docs",
  ]);
});

const REFUSED: [string, GrantedRootFacts, string, RegExp][] = [
  ["a relative root", granted("docs/shared"), "CONFINED_INVALID", /absolute and normalized/],
  ["a root with ..", granted("/srv/a/../p/src"), "CONFINED_INVALID", /normalized/],
  ["a trailing slash", granted("/srv/a/docs/"), "CONFINED_INVALID", /normalized/],
  ["a quote in the path", granted('/srv/a"b'), "CONFINED_PATH_UNSAFE", /character/],
  [
    "a symlink as the root",
    granted("/srv/a/docs", { kind: "symlink", real: "/home/op" }),
    "CONFINED_PATH_UNSAFE",
    /passes through a symlink \(it resolves to \/home\/op\)/,
  ],
  [
    "a symlink above the root",
    granted("/srv/link/docs", { real: "/etc/docs" }),
    "CONFINED_PATH_UNSAFE",
    /symlink/,
  ],
  [
    "a missing root",
    granted("/srv/a/docs", { kind: "missing", real: null }),
    "CONFINED_INVALID",
    /not an existing directory \(it is missing\)/,
  ],
  [
    "a file",
    granted("/srv/a/docs", { kind: "file" }),
    "CONFINED_INVALID",
    /not an existing directory/,
  ],
  ["/", granted("/"), "CONFINED_INVALID", /too broad/],
  ["a root holding home", granted("/home"), "CONFINED_INVALID", /holds the home directory/],
  ["home itself", granted("/home/op"), "CONFINED_INVALID", /holds the home directory/],
  ["the project", granted("/srv/p"), "CONFINED_INVALID", /overlaps the project/],
  ["inside the project", granted("/srv/p/src"), "CONFINED_INVALID", /overlaps the project/],
  ["an ancestor of the project", granted("/srv"), "CONFINED_INVALID", /overlaps the project/],
  ["the TMPDIR's parent", granted("/tmp"), "CONFINED_INVALID", /private TMPDIR/],
  [
    "a parent of the key dir (AGENTTEAMS_KEY_DIR outside home)",
    granted("/srv/ops"),
    "CONFINED_INVALID",
    /overlaps the hidden directory \/srv\/ops\/keys/,
  ],
  [
    "a root below a hidden directory of home (~/.ssh)",
    granted("/home/op/.ssh"),
    "CONFINED_INVALID",
    /lies in ~\/\.ssh, a hidden directory of home/,
  ],
  [
    "a root below ~/.local/bin",
    granted("/home/op/.local/bin"),
    "CONFINED_INVALID",
    /~\/\.local/,
  ],
  ["/etc/cron.d", granted("/etc/cron.d"), "CONFINED_INVALID", /the system tree \/etc/],
  ["/usr/local/bin", granted("/usr/local/bin"), "CONFINED_INVALID", /system tree \/usr/],
  ["/var/lib/x", granted("/var/lib/x"), "CONFINED_INVALID", /system tree \/var\/lib/],
  [
    "a root holding a PATH directory",
    granted("/opt/tools"),
    "CONFINED_INVALID",
    /overlaps the PATH directory \/opt\/tools\/bin/,
  ],
  [
    "a root outside its issuer's workspace",
    granted("/srv/b/docs", { issuerRoot: "/srv/a" }),
    "CONFINED_INVALID",
    /does not lie in its issuer's workspace \/srv\/a/,
  ],
  [
    "a relative issuer root",
    granted("/srv/a/docs", { issuerRoot: "srv/a" }),
    "CONFINED_INVALID",
    /issuer's workspace/,
  ],
  [
    "a root in the issuer's references/ (a root-only entry)",
    granted("/srv/a/references/x", { issuerRoot: "/srv/a" }),
    "CONFINED_INVALID",
    /lies in the issuer's control plane \(references: /,
  ],
  [
    "a root in the issuer's hooks directory (core.hooksPath)",
    granted("/srv/a/tools/hooks", {
      issuerRoot: "/srv/a",
      issuerGit: [{ abs: "/srv/a/tools/hooks", what: "hooks directory", watch: "tree" }],
    }),
    "CONFINED_INVALID",
    /issuer's control plane \(tools\/hooks: git's hooks directory\)/,
  ],
  [
    "under a control-plane name",
    granted("/srv/a/.git/hooks"),
    "CONFINED_INVALID",
    /lies in \.git, which is control plane/,
  ],
  [
    "under a control-plane name in another case",
    granted("/srv/a/.Claude"),
    "CONFINED_INVALID",
    /control plane/,
  ],
];

for (const [what, g, code, message] of REFUSED) {
  Deno.test(`granted roots: refuses ${what} (${code})`, () => {
    const p = grantedRootProblem(g, BOUNDS);
    assert.equal(p?.code, code, what);
    assert.match(p!.message, message);
    assert.match(p!.message, /grant G-1/);
    const e = assertRefusal(() => checkRoots({ ...BASE, grantedRoots: [g] }), code, SandboxError);
    assert.match(e.message, message);
  });
}

Deno.test("granted roots: an exec path overlapping a granted root is refused (build, then run)", () => {
  const e = assertRefusal(
    () =>
      checkRoots({
        ...BASE,
        grantedRoots: [granted("/opt/shared")],
        exec: [{ given: "/opt/shared/bin", real: "/opt/shared/bin" }],
      }),
    "CONFINED_INVALID",
    SandboxError,
  );
  assert.match(e.message, /granted write root \/opt\/shared overlap/);
  // A gate's exec paths against the runner's granted roots (passed as foreign roots, absolute).
  assertRefusal(
    () =>
      checkRoots({
        ...BASE,
        foreignWriteRoots: [{ rel: "/opt/shared", real: "/opt/shared" }],
        exec: [{ given: "/opt/shared/bin", real: "/opt/shared/bin" }],
      }),
    "CONFINED_INVALID",
    SandboxError,
  );
});

Deno.test("granted roots: case-folded on macOS (a root in another case of the project overlaps it)", () => {
  const g = granted("/SRV/P/src");
  const bounds = BOUNDS;
  assert.equal(grantedRootProblem(g, { ...bounds, foldCase: true })?.code, "CONFINED_INVALID");
  assert.equal(grantedRootProblem(g, { ...bounds, foldCase: false }), null);
});

Deno.test("control plane: git's paths outside the project stay read-only too (a granted root may hold them)", () => {
  const ro = controlPlaneReadOnly({
    root: "/srv/p",
    git: [{ abs: "/srv/shared/hooks", what: "hooks directory", watch: "tree" }],
  });
  assert.ok(ro.includes("/srv/shared/hooks"), ro.join(" "));
});

Deno.test("granted roots (live): writable outside the project; the issuer's control plane, a nested .git and everything else stay read-only", async () => {
  const fx = makeFixture();
  try {
    const issuer = `${fx.base}/issuer`;
    Deno.mkdirSync(`${issuer}/docs/shared/vendor/.git`, { recursive: true });
    Deno.mkdirSync(`${issuer}/references`, { recursive: true });
    Deno.writeTextFileSync(`${issuer}/references/security-approvers.txt`, "alice\n");
    Deno.writeTextFileSync(`${issuer}/docs/shared/vendor/.git/config`, "[core]\n");
    Deno.writeTextFileSync(`${issuer}/notes.txt`, "issuer\n");
    const whole = { root: issuer, issuerRoot: issuer, grant: "G-W" };
    const shared = { root: `${issuer}/docs/shared`, issuerRoot: issuer, grant: "G-S" };
    const run = (script: string, grants: typeof shared[]) =>
      runConfined(fx, sh(script), { extra: { grantedRoots: grants } });

    const ok = await run(`echo granted > ${issuer}/docs/shared/out.txt`, [shared]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(Deno.readTextFileSync(`${issuer}/docs/shared/out.txt`), "granted\n");
    assert.ok(ok.plan.writeRoots.includes(`${issuer}/docs/shared`));

    const before = snapshotTreeSync(fx.base);
    for (
      const [what, script, grants] of [
        ["outside the granted root", `echo x > ${issuer}/docs/other.txt`, [shared]],
        ["a nested .git in it", `echo x >> ${issuer}/docs/shared/vendor/.git/config`, [shared]],
        ["without the grant", `echo x > ${issuer}/docs/shared/out.txt`, []],
        ["the issuer's references/", `echo bob >> ${issuer}/references/security-approvers.txt`, [
          whole,
        ]],
        ["the issuer's missing .claude/", `mkdir ${issuer}/.claude`, [whole]],
        ["the issuer's missing .agentteams/", `mkdir ${issuer}/.agentteams`, [whole]],
      ] as const
    ) {
      const r = await run(script, [...grants]);
      assert.notEqual(r.code, 0, `${what}: the write succeeded`);
    }
    assertSameTree(before, snapshotTreeSync(fx.base), "nothing written by the refused writes");
    // The whole issuer workspace granted: its own files are writable, its control plane is not.
    const w = await run(`echo more >> ${issuer}/notes.txt`, [whole]);
    assert.equal(w.code, 0, w.stderr);
    assert.equal(Deno.readTextFileSync(`${issuer}/notes.txt`), "issuer\nmore\n");
    assert.ok(w.plan.readOnly.includes(`${issuer}/references`), w.plan.readOnly.join(" "));
    assert.ok(w.plan.masks.includes(`${issuer}/.claude`), w.plan.masks.join(" "));
  } finally {
    fx.cleanup();
  }
});

Deno.test("granted roots (live): a root that is a symlink, or holds the key dir, is refused and nothing runs", async () => {
  const fx = makeFixture();
  try {
    const issuer = `${fx.base}/issuer`;
    Deno.mkdirSync(`${issuer}/docs`, { recursive: true });
    Deno.symlinkSync(fx.home, `${issuer}/link`);
    const marker = `${issuer}/docs/marker`;
    const before = snapshotTreeSync(fx.base);
    for (
      const [root, code] of [
        [`${issuer}/link`, "CONFINED_PATH_UNSAFE"],
        [`${fx.home}/.config`, "CONFINED_INVALID"],
        [`${issuer}/missing`, "CONFINED_INVALID"],
      ] as const
    ) {
      await assertRefusal(
        () =>
          runConfined(fx, sh(`echo x > ${marker}; echo x > ${root}/marker`), {
            extra: { grantedRoots: [{ root, issuerRoot: issuer, grant: "G-X" }] },
          }),
        code,
        SandboxError,
      );
      assert.ok(!lexists(marker), "the command ran");
    }
    assertSameTree(before, snapshotTreeSync(fx.base));
  } finally {
    fx.cleanup();
  }
});

Deno.test("plan: a hidden directory inside a writable root is refused (a writable parent could swap it)", async () => {
  const fx = makeFixture();
  try {
    const keys = `${fx.project}/build/ops/keys`;
    Deno.mkdirSync(keys, { recursive: true });
    const e = await assertRefusal(
      () =>
        runConfined(fx, sh(`echo x > ${fx.project}/build/marker`), {
          extra: { hiddenDirs: [keys] },
        }),
      "CONFINED_INVALID",
      SandboxError,
    );
    assert.match(e.message, /hidden directory .*keys lies inside a writable root/);
    assert.ok(!lexists(`${fx.project}/build/marker`));
  } finally {
    fx.cleanup();
  }
});

Deno.test("granted roots: a root holding the issuer's hooks directory is fine: the hooks stay read-only inside it", () => {
  const g = granted("/srv/a/tools", {
    issuerRoot: "/srv/a",
    issuerGit: [{ abs: "/srv/a/tools/hooks", what: "hooks directory", watch: "tree" }],
  });
  assert.equal(grantedRootProblem(g, BOUNDS), null);
  // A root in the issuer's workspace below home, outside its dot-directories, is fine too.
  assert.equal(
    grantedRootProblem(granted("/home/op/work/a/docs", { issuerRoot: "/home/op/work/a" }), BOUNDS),
    null,
  );
});

Deno.test("prepare: a git path outside every writable place is not checked for its spelling; inside one it is", () => {
  const fx = makeFixture();
  try {
    const tmpdir = makePrivateTmpdir();
    try {
      const git = (abs: string) => [{ abs, what: "config file", watch: "entry" as const }];
      const outside = planFor(fx, ["/usr/bin/true"], tmpdir, {
        extra: { controlPlane: { git: git(`${fx.home}/it's/gitconfig`) } },
      });
      assert.ok(!outside.readOnly.some((p) => p.includes("it's")));
      assertRefusal(
        () =>
          planFor(fx, ["/usr/bin/true"], tmpdir, {
            extra: { controlPlane: { git: git(`${fx.project}/build/it's`) } },
          }),
        "CONFINED_PATH_UNSAFE",
        SandboxError,
      );
    } finally {
      removePrivateTmpdir(tmpdir);
    }
  } finally {
    fx.cleanup();
  }
});
