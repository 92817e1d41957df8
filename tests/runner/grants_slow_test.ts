/**
 * Capability grants widening the runner's confinement, end to end: a real runner started with
 * the flags `agentteams permissions serve` prints, real bwrap, grants signed through the CLI with
 * the operator's Ed25519 key (`keys init`). Without a grant a confined command cannot write the
 * issuer's directory; with a valid write grant, after the runner's next start, it can (only
 * there), and a `grants-loaded` row records the root; a grant whose root is too broad adds
 * nothing and says why; a HALT on the granted write takes the root away, at the next run of the
 * same runner and at its next start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertCliRefused } from "../_helpers/assert.ts";
import { sha256 } from "../_helpers/mod.ts";
import { grantFieldArgs } from "../authz/_fixtures.ts";
import { shScript, withWorld, type World } from "../e2e/_run_helpers.ts";
import {
  allowList,
  grantCovers,
  handRequest,
  installTeamDir,
  permissionsArgs,
  present,
  runnerBrief,
  startRunner,
  verifyDirect,
} from "./_runner_helpers.ts";

async function signGrant(w: World, id: string, target: string, issuerRoot: string) {
  const r = await w.cli([
    "grant",
    "sign",
    "--project",
    w.project,
    "--id",
    id,
    "--ops",
    "write",
    ...grantFieldArgs(target, issuerRoot, "holder"),
  ]);
  assert.equal(r.code, 0, r.stderr);
}

/** Runs a script through the queue (the brief is orchestrator-only: the runner runs it). */
async function runScript(w: World, name: string) {
  return await w.run({ argv: [join(w.scripts, name)] });
}

const loaded = (w: World) => w.rows().filter((r) => r.action === "grants-loaded");

Deno.test("runner grants: a valid write grant widens every confined run's write roots at the runner's next start (recorded); a too-broad or HALTed one adds nothing", async (t) => {
  await withWorld("rq-grants", {
    brief: (p) =>
      runnerBrief(
        p,
        ["write-shared", "write-other"].map((n) => ({ prefix: [join(p.scripts, n)] })),
      ),
    scripts: {
      "write-shared": (p) => shScript(`echo granted >> ${p.dir}/issuer/docs/shared/out.txt`),
      "write-other": (p) => shScript(`echo other > ${p.dir}/issuer/docs/other.txt`),
    },
  }, async (w) => {
    const issuer = join(w.dir, "issuer");
    const out = join(issuer, "docs", "shared", "out.txt");
    await Deno.mkdir(join(issuer, "docs", "shared"), { recursive: true });
    await installTeamDir(w);

    await t.step("without a grant the confined command cannot write there", async () => {
      const runner = await startRunner(w);
      try {
        const r = await runScript(w, "write-shared");
        assert.notEqual(r.code, 0, r.stdout);
        assert.match(r.stdout + r.stderr, /Read-only file system/);
      } finally {
        assert.equal((await runner.stop()).code, 0, runner.stderr());
      }
      assert.equal(present(out), false);
      assert.deepEqual(loaded(w), [], "no grants ledger, no grants-loaded row");
    });

    await t.step(
      "a write grant, at the runner's next start: the root is writable, nothing else",
      async () => {
        await signGrant(w, "G-1", "docs/shared", issuer);
        // Too broad: the whole of the world's dir holds the project and HOME.
        await signGrant(w, "G-2", ".", w.dir);
        // The runner reads the issuer's workspace (git, the check, the scan) and may write only the
        // granted root itself (to remove bwrap's mask points and what a run must not leave there).
        const args = await permissionsArgs(w, ["serve", "--project", w.project]);
        const root = join(issuer, "docs", "shared");
        assert.ok(allowList(args, "read").some((e) => grantCovers(e, issuer)), args.join(" "));
        assert.ok(allowList(args, "write").some((e) => grantCovers(e, root)), args.join(" "));
        assert.ok(!allowList(args, "write").some((e) => grantCovers(e, issuer)), args.join(" "));
        const runner = await startRunner(w);
        try {
          const r = await runScript(w, "write-shared");
          assert.equal(r.code, 0, r.stderr);
          assert.equal(await Deno.readTextFile(out), "granted\n");
          const other = await runScript(w, "write-other");
          assert.notEqual(other.code, 0, "a write outside the granted root succeeded");
          assert.equal(present(join(issuer, "docs", "other.txt")), false);
        } finally {
          assert.equal((await runner.stop()).code, 0, runner.stderr());
        }
        // Direct mode (the operator's own `run --direct`) is never widened: grants are the runner's.
        const direct = await w.run({ argv: [join(w.scripts, "write-shared")] }, {
          flags: ["--direct"],
        });
        assert.notEqual(direct.code, 0, "a direct run was widened");
        assert.match(direct.stdout + direct.stderr, /Read-only file system/);
        assert.equal(await Deno.readTextFile(out), "granted\n");
        assert.match(runner.stderr(), /grants: G-1 adds the write root .*\/issuer\/docs\/shared/);
        assert.match(runner.stderr(), /grants: not added: G-2: CONFINED_INVALID: .*too broad/);
        const row = loaded(w).at(-1)!;
        assert.deepEqual(row.roots, [join(issuer, "docs", "shared")]);
        assert.deepEqual(row.active, ["G-1"]);
        // The verify keys the runner trusted at its start: the operator's, by its text's SHA-256.
        const pem = await Deno.readTextFile(join(w.keyDir, "operator-ed25519.pub.pem"));
        assert.deepEqual(row.key_fingerprints, [sha256(pem)]);
        assert.ok(
          (row.problems as string[]).some((p) =>
            /^G-2: CONFINED_INVALID: .*holds the home/.test(p)
          ),
          JSON.stringify(row.problems),
        );
      },
    );

    await t.step(
      "a HALT on the granted write takes the root away at the next run, and at the next start",
      async () => {
        const runner = await startRunner(w);
        try {
          assert.equal((await runScript(w, "write-shared")).code, 0);
          const halt = await w.cli(
            [
              "decision",
              "sign",
              "--project",
              w.project,
              "--action",
              "write:docs/shared",
              "--verdict",
              "HALT",
            ],
            { env: { AGENTTEAMS_DECISION_SIGNING_KEY: "dk" } },
          );
          assert.equal(halt.code, 0, halt.stderr);
          // The same runner, no restart: the HALT narrows at once.
          const r = await runScript(w, "write-shared");
          assert.notEqual(r.code, 0, "a HALTed grant still widened the run");
        } finally {
          assert.equal((await runner.stop()).code, 0, runner.stderr());
        }
        assert.equal(await Deno.readTextFile(out), "granted\ngranted\n");
        const again = await startRunner(w);
        try {
          assert.notEqual((await runScript(w, "write-shared")).code, 0);
        } finally {
          assert.equal((await again.stop()).code, 0, again.stderr());
        }
        assert.match(again.stderr(), /grants: not added: G-1: HALTED/);
        const row = loaded(w).at(-1)!;
        assert.deepEqual(row.roots, []);
        assert.deepEqual(row.active, []);
        assert.equal(await Deno.readTextFile(out), "granted\ngranted\n");
        await verifyDirect(w);
      },
    );

    await t.step(
      "a grant added while the runner serves stops it; nothing widens at run time",
      async () => {
        const runner = await startRunner(w);
        await signGrant(w, "G-3", "docs", issuer);
        // The runner's next look at the queue finds the pin changed, and it exits unserved.
        await handRequest(w, { kind: "verify-ledger" });
        const s = await runner.exited;
        assertCliRefused(
          { code: s.code, signal: s.signal, stdout: "", stderr: runner.stderr() },
          "serve",
          "RUNNER_PIN_CHANGED",
          1,
        );
        assert.equal(present(join(issuer, "docs", "other.txt")), false);
      },
    );
  });
});

Deno.test("runner grants: the issuer's git paths inside a granted root stay read-only (its core.hooksPath), asked of git before each run", async () => {
  await withWorld("rq-grants-git", {
    brief: (p) =>
      runnerBrief(p, ["write-doc", "write-hook"].map((n) => ({ prefix: [join(p.scripts, n)] }))),
    scripts: {
      "write-doc": (p) => shScript(`echo doc > ${p.dir}/issuer/docs/readme.txt`),
      "write-hook": (p) =>
        shScript(`printf '#!/bin/sh\\necho pwned\\n' > ${p.dir}/issuer/docs/hooks/pre-commit`),
    },
  }, async (w) => {
    const issuer = join(w.dir, "issuer");
    await Deno.mkdir(join(issuer, "docs", "hooks"), { recursive: true });
    const git = (...args: string[]) =>
      new Deno.Command("git", { args: ["-C", issuer, ...args], stdout: "null", stderr: "piped" })
        .outputSync();
    assert.equal(git("init", "-q").code, 0);
    assert.equal(git("config", "core.hooksPath", "docs/hooks").code, 0);
    await installTeamDir(w);
    await signGrant(w, "G-1", "docs", issuer);
    const runner = await startRunner(w);
    try {
      const doc = await runScript(w, "write-doc");
      assert.equal(doc.code, 0, doc.stderr);
      const hook = await runScript(w, "write-hook");
      assert.notEqual(hook.code, 0, "the issuer's hooks directory was writable");
      // Moved while the runner serves: git is asked again before the next run.
      assert.equal(git("config", "core.hooksPath", "docs/hooks2").code, 0);
      await Deno.mkdir(join(issuer, "docs", "hooks2"));
      const moved = await w.run({
        argv: [join(w.scripts, "write-hook")],
      });
      assert.equal(moved.code, 0, "docs/hooks is no longer the hooks directory: it is writable");
    } finally {
      assert.equal((await runner.stop()).code, 0, runner.stderr());
    }
    assert.equal(present(join(issuer, "docs", "readme.txt")), true);
    assert.equal(
      Deno.readTextFileSync(join(issuer, "docs", "hooks", "pre-commit")),
      "#!/bin/sh\necho pwned\n",
      "written only once docs/hooks stopped being the hooks directory",
    );
  });
});

Deno.test("runner grants: what a run leaves in a granted root that would steer the issuer's git (a new bare repository, a nested .git replaced) fails the run and is removed", async () => {
  await withWorld("rq-grants-scrub", {
    brief: (p) =>
      runnerBrief(p, ["make-bare", "swap-nested"].map((n) => ({ prefix: [join(p.scripts, n)] }))),
    scripts: {
      "make-bare": (p) => shScript(`/usr/bin/git init -q --bare ${p.dir}/issuer/docs/vendored`),
      "swap-nested": (p) => {
        const d = `${p.dir}/issuer/docs`;
        return shScript(
          `mv ${d}/vendor ${d}/vendor.old && mkdir ${d}/vendor && ` +
            `cp -r ${d}/vendor.old/.git ${d}/vendor/.git && ` +
            `printf '[core]\\n\\tfsmonitor = touch /tmp/x\\n' >> ${d}/vendor/.git/config`,
        );
      },
    },
  }, async (w) => {
    const docs = join(w.dir, "issuer", "docs");
    await Deno.mkdir(join(docs, "vendor"), { recursive: true });
    const init = new Deno.Command("git", { args: ["init", "-q", join(docs, "vendor")] })
      .outputSync();
    assert.equal(init.code, 0);
    const config = Deno.readTextFileSync(join(docs, "vendor", ".git", "config"));
    await installTeamDir(w);
    await signGrant(w, "G-1", "docs", join(w.dir, "issuer"));
    const runner = await startRunner(w);
    try {
      const bare = await runScript(w, "make-bare");
      assert.equal(bare.code, 3, bare.stdout + bare.stderr);
      assert.match(bare.stdout + bare.stderr, /docs\/vendored/);
      assert.equal(present(join(docs, "vendored")), false, "the bare repository was left");
      const swap = await runScript(w, "swap-nested");
      assert.equal(swap.code, 3, swap.stdout + swap.stderr);
      assert.match(swap.stdout + swap.stderr, /docs\/vendor\/\.git/);
    } finally {
      assert.equal((await runner.stop()).code, 0, runner.stderr());
    }
    // The replacement is gone; the original, moved aside with its read-only mount, is intact.
    assert.equal(present(join(docs, "vendor", ".git")), false, "the replaced .git was left");
    assert.equal(Deno.readTextFileSync(join(docs, "vendor.old", ".git", "config")), config);
    const rows = w.rows().filter((r) => r.action === "run-request");
    assert.ok(
      rows.some((r) => (r.undeclared_writes as string[]).some((p) => p.endsWith("/docs/vendored"))),
      JSON.stringify(rows),
    );
  });
});
