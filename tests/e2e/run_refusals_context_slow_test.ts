/**
 * `agentteams run` end to end, refusals of everything around the argv: a program inside the
 * project (by absolute path, through a PATH entry in the project, through a symlink; a relative
 * `./x.sh` never even matches an entry), a cwd other than the pinned one, `expected_writes`
 * reaching the control plane, the brief or a protected path, stdin for an entry without gates and
 * a stdin gate that refuses (against one that passes: the command gets the content), a forged
 * nonce, a claimed agent that differs from the dispatch record, an agent without a policy, and a
 * project that is not a git worktree. Each refusal: the code, nothing ran, one
 * `run-request-refused` row (agent, code), `ledger verify` passes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  assertEachRefused,
  assertJsonRefused,
  assertRunRefused,
  DENO_BIN_DIR,
  exists,
  jsonOut,
  newRows,
  runUnconfinedInProcess,
  shScript,
  useCount,
  withWorld,
  workerBrief,
  type WorldPaths,
  writeFileAt,
} from "./_run_helpers.ts";

/** A program committed inside the project; running it would create `src/tool-ran.txt`. */
const TOOL = shScript(": > src/tool-ran.txt\necho tool-ran");

function brief(p: WorldPaths) {
  return workerBrief(p, [
    { prefix: ["/usr/bin/touch"], args: ["src/[a-z]+\\.txt"], writes: ["src/*"] },
    { prefix: ["/usr/bin/touch"], args: ["[a-z]+\\.txt"], cwd: "src/pinned", writes: ["src/*"] },
    { prefix: [join(p.project, "bin/tool")] },
    { prefix: ["tool"] },
    { prefix: [join(p.scratch, "outside-link")] },
    {
      prefix: ["/usr/bin/tee"],
      args: ["src/[a-z]+\\.txt"],
      stdin_gates: ["starts-with-ok"],
      writes: ["src/*"],
    },
  ], {
    top: {
      proposal_gates: {
        "starts-with-ok": { argv: ["/usr/bin/grep", "-q", "^ok", "{file}"] },
      },
      protected_paths: ["secrets", "docs/*.key"],
    },
  });
}

const FILES = {
  "README.md": "hello\n",
  "src/a.txt": "hello\n",
  "src/pinned/keep.txt": "keep\n",
  "src/deep/keep.txt": "keep\n",
  "bin/tool": TOOL,
  "secrets/keep.txt": "keep\n",
};

async function makeToolExecutable(p: WorldPaths): Promise<void> {
  await Deno.chmod(join(p.project, "bin/tool"), 0o755);
  await Deno.symlink(join(p.project, "bin/tool"), join(p.scratch, "outside-link"));
}

Deno.test("run: a program inside the project is PROGRAM_IN_PROJECT (absolute, PATH entry, symlink)", async () => {
  await withWorld("inproject", { brief, files: FILES }, async (w) => {
    await makeToolExecutable(w);
    const marker = join(w.project, "src/tool-ran.txt");
    const cases: { argv: string[]; env?: Record<string, string> }[] = [
      { argv: [join(w.project, "bin/tool")] },
      // A bare name found through an absolute PATH entry that lies in the project.
      { argv: ["tool"], env: { PATH: `${join(w.project, "bin")}:${DENO_BIN_DIR}:/usr/bin:/bin` } },
      // A symlink outside the project whose target is inside it.
      { argv: [join(w.scratch, "outside-link")] },
    ];
    for (const c of cases) {
      const r = await w.run({ argv: c.argv }, { env: c.env });
      await assertRunRefused(w, r, "PROGRAM_IN_PROJECT", {
        agent: "worker",
        absent: [marker],
        verify: false,
      });
    }
    // `./x.sh` and `bin/tool` name files in the project too. The lint refuses such a prefix in a
    // brief (see the POLICY_LINT test), so no entry can match them: refused before resolution.
    await assertEachRefused(
      w,
      [["./bin/tool"], ["bin/tool"], ["./x.sh"]].map((argv) => ({ argv })),
      "ARGV_NOT_ALLOWED",
      { absent: [marker] },
    );
  });
});

Deno.test("run: a cwd other than the entry's pinned one is CWD_NOT_ALLOWED", async () => {
  await withWorld("cwd", { brief, files: FILES }, async (w) => {
    const markers = [
      join(w.project, "made.txt"),
      join(w.project, "src/made.txt"),
      join(w.project, "src/deep/made.txt"),
      join(w.project, "src/pinned/made.txt"),
    ];
    const cwds = [".", "src", "src/deep", "/tmp", join(w.project, "src/pinned"), "~"];
    await assertEachRefused(
      w,
      [...cwds, "src/pinned/../deep"].map((cwd) => ({ argv: ["/usr/bin/touch", "made.txt"], cwd })),
      "CWD_NOT_ALLOWED",
      { absent: markers, verify: false },
    );
    const j = await w.run({ argv: ["/usr/bin/touch", "made.txt"], cwd: "src" }, {
      flags: ["--json"],
    });
    assertJsonRefused(j, "CWD_NOT_ALLOWED");
    await assertRunRefused(w, j, "CWD_NOT_ALLOWED", { agent: "worker", absent: markers });

    // The control: the pinned cwd, spelt `./src/pinned/`, runs there.
    const ok = await w.run({
      argv: ["/usr/bin/touch", "made.txt"],
      cwd: "./src/pinned/",
      expected_writes: ["src/pinned/made.txt"],
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(exists(join(w.project, "src/pinned/made.txt")));
    await w.verifyOk();
  });
});

Deno.test("run: expected_writes in .git, .agentteams, the brief or a protected path is WRITES_NOT_ALLOWED", async () => {
  await withWorld("writes", { brief, files: FILES }, async (w) => {
    const marker = join(w.project, "src/w.txt");
    await assertEachRefused(
      w,
      [
        [".git/hooks/pre-commit"],
        [".git/hooks/"],
        [".git/"],
        [".git/config"],
        [".GIT/config"],
        ["src/w.txt", ".git/info/exclude"],
        [".agentteams/x"],
        [".agentteams/proposal-ledger.jsonl"],
        [".agentteams/"],
        ["agentteams.jsonc"],
        ["AgentTeams.JSONC"],
        ["agentteams.json"],
        ["secrets/x"],
        ["secrets/"],
        ["docs/prod.key"],
        ["src/../.git/config"],
        ["./"],
        ["/tmp/x"],
        [".github/agents/x.md"],
        [".claude/settings.json"],
      ].map((writes) => ({ argv: ["/usr/bin/touch", "src/w.txt"], expected_writes: writes })),
      "WRITES_NOT_ALLOWED",
      { absent: [marker] },
    );
  });
});

Deno.test("run: stdin without stdin_gates is STDIN_NOT_ALLOWED; a refusing gate is GATE_FAILED; a passing one feeds the command", async () => {
  await withWorld("stdin", { brief, files: FILES }, async (w) => {
    const touched = join(w.project, "src/stdin.txt");
    const teed = join(w.project, "src/teed.txt");

    const noGates = await w.run({
      argv: ["/usr/bin/touch", "src/stdin.txt"],
      expected_writes: ["src/stdin.txt"],
      stdin_from_content: { path: "src/in.txt", content: "ok\n" },
    });
    await assertRunRefused(w, noGates, "STDIN_NOT_ALLOWED", { agent: "worker", absent: [touched] });

    const usesBefore = useCount(w.project);
    const refused = await w.run({
      argv: ["/usr/bin/tee", "src/teed.txt"],
      expected_writes: ["src/teed.txt"],
      stdin_from_content: { path: "src/in.txt", content: "not ok\nsecond line\n" },
    });
    const refusal = await assertRunRefused(w, refused, "GATE_FAILED", {
      agent: "worker",
      absent: [teed],
    });
    assert.match(refusal.reason, /starts-with-ok/);
    assert.equal(useCount(w.project), usesBefore, "a refused request spent a use");

    const content = "ok, write this\nand this\n";
    const passed = await w.run({
      argv: ["/usr/bin/tee", "src/teed.txt"],
      expected_writes: ["src/teed.txt"],
      stdin_from_content: { path: "src/in.txt", content },
    }, { flags: ["--json"] });
    assert.equal(passed.code, 0, passed.stderr);
    const out = jsonOut(passed);
    assert.equal(out.stdout, content, "the command received the content on stdin");
    assert.equal(await Deno.readTextFile(teed), content);
    assert.deepEqual(out.undeclared_writes, []);
    const rows = newRows(w, passed);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    await w.verifyOk();
  });
});

Deno.test("run: a forged nonce (DISPATCH_UNKNOWN) and a malformed one are refused; nothing runs", async () => {
  await withWorld("nonce", { brief, files: FILES }, async (w) => {
    const marker = join(w.project, "src/forged.txt");
    await w.dispatch(); // a real dispatch exists; the forged nonce is not it
    const forged = "0123456789abcdef0123456789abcdef";
    const r = await w.run({ argv: ["/usr/bin/touch", "src/forged.txt"], dispatch: forged });
    await assertRunRefused(w, r, "DISPATCH_UNKNOWN", { agent: "?", absent: [marker] });

    const j = await w.run({ argv: ["/usr/bin/touch", "src/forged.txt"], dispatch: forged }, {
      flags: ["--json"],
    });
    assertJsonRefused(j, "DISPATCH_UNKNOWN");
    await assertRunRefused(w, j, "DISPATCH_UNKNOWN", { agent: "?", absent: [marker] });

    const bad = await w.run({
      argv: ["/usr/bin/touch", "src/forged.txt"],
      dispatch: "0123456789ABCDEF0123456789ABCDEF",
    });
    await assertRunRefused(w, bad, "ARTIFACT_INVALID", { agent: "?", absent: [marker] });
  });
});

Deno.test("run: a claimed agent that differs from the dispatch record is AGENT_MISMATCH", async () => {
  await withWorld("agent", {
    brief: (p) => {
      const b = brief(p);
      // `reviewer` may run the same command: the claim alone must not let it act.
      const policies = b.agent_policies as Record<string, unknown>;
      policies.reviewer = policies.worker;
      return b;
    },
    files: FILES,
  }, async (w) => {
    const marker = join(w.project, "src/claimed.txt");
    const r = await w.run({
      argv: ["/usr/bin/touch", "src/claimed.txt"],
      expected_writes: ["src/claimed.txt"],
      agent: "reviewer",
    });
    // The row never names the claimed agent: the nonce's signed record, or "?" (not resolved).
    await assertRunRefused(w, r, "AGENT_MISMATCH", { agent: ["worker", "?"], absent: [marker] });

    // A nonce issued to an agent the brief has since dropped: UNKNOWN_AGENT. (The CLI issues
    // none to an agent the brief does not name.)
    const other = await w.dispatchBeforeBriefChanged("other");
    const u = await w.run({ argv: ["/usr/bin/touch", "src/claimed.txt"] }, { nonce: other });
    await assertRunRefused(w, u, "UNKNOWN_AGENT", { agent: "other", absent: [marker] });
  });
});

Deno.test("run: a project that is not a git worktree is NO_WORKTREE, refused before running", async () => {
  await withWorld("nogit", { brief, files: FILES, git: false }, async (w) => {
    const marker = join(w.project, "src/nogit.txt");
    const usesBefore = useCount(w.project);
    const r = await w.run({
      argv: ["/usr/bin/touch", "src/nogit.txt"],
      expected_writes: ["src/nogit.txt"],
    });
    await assertRunRefused(w, r, "NO_WORKTREE", { agent: "worker", absent: [marker] });
    assert.equal(useCount(w.project), usesBefore, "no use spent");
    const j = await w.run({
      argv: ["/usr/bin/touch", "src/nogit.txt"],
      expected_writes: ["src/nogit.txt"],
    }, { flags: ["--json"] });
    assertJsonRefused(j, "NO_WORKTREE");
    await assertRunRefused(w, j, "NO_WORKTREE", { agent: "worker", absent: [marker] });
  });
});

Deno.test("run: an artifact that is not JSON, or not a command request, is ARTIFACT_INVALID (agent ?)", async () => {
  await withWorld("artifact", { brief, files: FILES }, async (w) => {
    const marker = join(w.project, "src/artifact.txt");
    const nonce = await w.sharedNonce();
    const bodies = [
      "{not json",
      JSON.stringify({
        kind: "change-proposal",
        dispatch: nonce,
        path: "src/artifact.txt",
        base_sha256: "absent",
        content: "x\n",
        rationale: "r",
      }),
      JSON.stringify({ kind: "command-request", dispatch: nonce, argv: [], purpose: "p" }),
      JSON.stringify({
        kind: "command-request",
        dispatch: nonce,
        argv: ["/usr/bin/touch", "src/artifact.txt"],
        purpose: "p",
        unexpected: true,
      }),
    ];
    for (const [i, body] of bodies.entries()) {
      const file = join(w.scratch, `bad-${i}.json`);
      await Deno.writeTextFile(file, body);
      const rowsBefore = w.rows().length;
      const r = await w.cli(["run", file, "--project", w.project]);
      await assertRunRefused(w, { ...r, rowsBefore, file }, "ARTIFACT_INVALID", {
        agent: "?",
        absent: [marker],
        verify: false,
      });
    }
    await w.verifyOk();
  });
});

Deno.test("run: a pinned cwd that is a symlink out of the project, or missing, is CWD_NOT_ALLOWED before anything is recorded as started", async () => {
  await withWorld("cwdlink", {
    brief: (p) =>
      workerBrief(p, [
        { prefix: ["/usr/bin/touch"], args: ["[a-z]+\\.txt"], cwd: "src/link" },
        { prefix: ["/usr/bin/touch"], args: ["[a-z]+\\.txt"], cwd: "src/missing" },
      ]),
  }, async (w) => {
    await Deno.symlink(w.scratch, join(w.project, "src/link"));
    const usesBefore = useCount(w.project);
    for (const cwd of ["src/link", "src/missing"]) {
      const r = await w.run({ argv: ["/usr/bin/touch", "x.txt"], cwd }, { flags: ["--json"] });
      assertJsonRefused(r, "CWD_NOT_ALLOWED");
      await assertRunRefused(w, r, "CWD_NOT_ALLOWED", {
        agent: "worker",
        absent: [join(w.scratch, "x.txt"), join(w.project, "src/x.txt")],
      });
    }
    assert.equal(useCount(w.project), usesBefore, "a refused request spent a use");
  });
});

Deno.test("run: a confined_programs write root that does not exist is refused before the start row (no dangling run-request-start)", async () => {
  await withWorld("noroot", {
    brief: (p) =>
      workerBrief(p, [{ prefix: ["/usr/bin/touch"], args: ["src/[a-z]+\\.txt"] }], {
        write: ["src", "build"],
      }),
  }, async (w) => {
    const usesBefore = useCount(w.project);
    const r = await w.run({ argv: ["/usr/bin/touch", "src/x.txt"] }, { flags: ["--json"] });
    assertJsonRefused(r, "CONFINED_INVALID");
    // A sandbox that cannot be set up is a refusal like any other: recorded, and no start row
    // left without a completion (that gap is the ledger-tamper signal).
    await assertRunRefused(w, r, "CONFINED_INVALID", {
      agent: ["worker", "?"],
      absent: [join(w.project, "src/x.txt")],
    });
    assert.equal(useCount(w.project), usesBefore, "a refused request spent a use");
  });
});

Deno.test("run: a worktree git cannot read (corrupt index) is SNAPSHOT_FAILED: the start row gets its refusal row; nothing runs", async () => {
  await withWorld("badindex", { brief, files: FILES }, async (w) => {
    const index = join(w.project, ".git/index");
    const garbage = new TextEncoder().encode("DIRC but not an index\n");
    await Deno.writeFile(index, garbage);
    const r = await w.run({ argv: ["/usr/bin/touch", "src/x.txt"] }, { flags: ["--json"] });
    assertJsonRefused(r, "SNAPSHOT_FAILED");
    assert.equal(exists(join(w.project, "src/x.txt")), false, "the refused command ran");
    assert.deepEqual(await Deno.readFile(index), garbage, "the index was rewritten");
    // The snapshot is taken after the write-ahead start row (the ledger is part of what it
    // watches), so the refusal follows that row and completes it: no lone start row is left.
    const rows = newRows(w, r);
    assert.deepEqual(rows.map((row) => [row.action, row.code ?? null]), [
      ["run-request-start", null],
      ["run-request-refused", "SNAPSHOT_FAILED"],
    ]);
    await w.verifyOk();
  });
});

Deno.test("run: an allowlisted program that is missing, not executable, or not on the sanitized PATH is PROGRAM_NOT_FOUND; nothing runs, no use spent", async () => {
  await withWorld("notfound", {
    brief: (p) =>
      workerBrief(p, [
        { prefix: [join(p.scripts, "missing-tool")] },
        { prefix: [join(p.scripts, "not-executable")] },
        { prefix: ["agentteams-no-such-tool"] },
      ]),
    files: FILES,
  }, async (w) => {
    const marker = join(w.project, "src/tool-ran.txt");
    // The file exists and would create the marker if anything ran it (through a shell, say).
    await writeFileAt(join(w.scripts, "not-executable"), TOOL, 0o644);
    const usesBefore = useCount(w.project);
    await assertEachRefused(
      w,
      [
        [join(w.scripts, "missing-tool")],
        [join(w.scripts, "not-executable")],
        ["agentteams-no-such-tool"],
      ].map((argv) => ({ argv })),
      "PROGRAM_NOT_FOUND",
      { absent: [marker], json: true, verify: false },
    );
    assert.equal(useCount(w.project), usesBefore, "a refused request spent a use");
    await w.verifyOk();
  });
});

Deno.test("run: a git older than 2.31 first on PATH is GIT_UNAVAILABLE; nothing runs, no use spent", async () => {
  await withWorld("oldgit", {
    brief,
    files: FILES,
    // Answers every call like an old git would answer `--version`.
    scripts: { git: shScript("echo 'git version 2.20.1'") },
  }, async (w) => {
    const marker = join(w.project, "src/oldgit.txt");
    const usesBefore = useCount(w.project);
    const r = await w.run({
      argv: ["/usr/bin/touch", "src/oldgit.txt"],
      expected_writes: ["src/oldgit.txt"],
    }, {
      flags: ["--json"],
      env: { PATH: `${w.scripts}:${DENO_BIN_DIR}:/usr/bin:/bin` },
    });
    assertJsonRefused(r, "GIT_UNAVAILABLE");
    const refusal = await assertRunRefused(w, r, "GIT_UNAVAILABLE", {
      agent: "worker",
      absent: [marker],
    });
    assert.match(refusal.reason, /2\.20/);
    assert.equal(useCount(w.project), usesBefore, "a refused request spent a use");
  });
});

Deno.test("run: a lone surrogate anywhere in the request is ARTIFACT_INVALID; nothing runs, no use spent", async () => {
  await withWorld("surrogate", { brief, files: FILES }, async (w) => {
    const marker = join(w.project, "src/lone.txt");
    const usesBefore = useCount(w.project);
    await assertEachRefused(
      w,
      [
        { argv: ["/usr/bin/touch", "src/lone.txt"], purpose: "lone \ud800 surrogate" },
        { argv: ["/usr/bin/touch", "src/lone.txt"], expected_writes: ["src/lone\udc00.txt"] },
      ],
      "ARTIFACT_INVALID",
      { absent: [marker], json: true, verify: false },
    );
    assert.equal(useCount(w.project), usesBefore, "a refused request spent a use");
    await w.verifyOk();
  });
});

Deno.test("run: a confined program outside the agent's exec paths is CONFINED_INVALID (bwrap has no exec allowlist: the top-level program is checked); nothing runs, no use spent", async () => {
  await withWorld("notexec", {
    brief: (p) =>
      workerBrief(p, [{ prefix: ["/usr/bin/touch"], args: ["src/[a-z]+\\.txt"] }], {
        exec: [p.scripts],
      }),
  }, async (w) => {
    const usesBefore = useCount(w.project);
    const r = await w.run({ argv: ["/usr/bin/touch", "src/x.txt"] }, { flags: ["--json"] });
    assertJsonRefused(r, "CONFINED_INVALID");
    assert.match(r.stderr, /lies under none of the exec paths/);
    // It says what to add, and where.
    assert.match(r.stderr, /add "\/usr\/bin" to confined_programs\.worker\.exec in the brief/);
    await assertRunRefused(w, r, "CONFINED_INVALID", {
      agent: ["worker", "?"],
      absent: [join(w.project, "src/x.txt")],
    });
    assert.equal(useCount(w.project), usesBefore, "a refused request spent a use");
  });
});

Deno.test("run: a confined program outside the exec paths is refused before its stdin gates run", async () => {
  await withWorld("notexec-stdin", {
    brief: (p) =>
      workerBrief(p, [{
        prefix: ["/usr/bin/tee"],
        args: ["src/[a-z]+\\.txt"],
        stdin_gates: ["g"],
        writes: ["src/*"],
      }], {
        exec: [p.scripts],
        top: {
          allow_unconfined_runs: true,
          proposal_gates: { g: { argv: ["/usr/bin/true", "{file}"] } },
        },
      }),
  }, async (w) => {
    const gatesRun: string[] = [];
    const out = await runUnconfinedInProcess(w, {
      argv: ["/usr/bin/tee", "src/x.txt"],
      purpose: "stdin",
      stdin_from_content: { path: "src/x.txt", content: "ok\n" },
    }, {
      backend: () => Promise.resolve("bwrap"),
      gateRunner: (gate) => {
        gatesRun.push(gate.name);
        return Promise.reject(new Error("a gate ran"));
      },
    });
    assert.equal(out.error?.code, "CONFINED_INVALID", String(out.error ?? out.result));
    assert.deepEqual(gatesRun, []);
    assert.equal(exists(join(w.project, "src/x.txt")), false);
  });
});

Deno.test("run: a stdin path that is an option, absolute, or leaves the project is STDIN_NOT_ALLOWED before any gate runs; nothing runs", async () => {
  await withWorld("stdinpath", { brief, files: FILES }, async (w) => {
    const teed = join(w.project, "src/teed.txt");
    await assertEachRefused(
      w,
      ["--help", "src/-x", "/etc/shadow", "../../etc/shadow", "src/./in.txt"].map((path) => ({
        argv: ["/usr/bin/tee", "src/teed.txt"],
        expected_writes: ["src/teed.txt"],
        stdin_from_content: { path, content: "ok\n" },
      })),
      "STDIN_NOT_ALLOWED",
      { absent: [teed] },
    );
  });
});
