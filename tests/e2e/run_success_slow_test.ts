/**
 * `agentteams run` end to end, the allowed paths: an allowlisted command runs under bwrap, its
 * output is printed, its exit code passes through, `--json` has the result's shape, the ledger
 * gets `run-request-start` then `run-request`, and `--dry-run` runs nothing, spends no use and
 * records no row. Also the permission layer: the `deno run` line `agentteams permissions run`
 * prints runs the same request successfully.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  bytesOrNull,
  exists,
  jsonOut,
  newRows,
  runPrinted,
  shScript,
  useCount,
  withWorld,
  workerBrief,
  type WorldPaths,
} from "./_run_helpers.ts";

const SCRIPTS = {
  // Writes to both streams and exits 7.
  "speak-and-exit": shScript("echo 'to stdout'\necho 'to stderr' >&2\nexit 7"),
  // Dies of SIGTERM.
  "die-by-signal": shScript("echo before\nkill -TERM $$\necho after"),
};

function brief(p: WorldPaths) {
  return workerBrief(p, [
    { prefix: ["/usr/bin/touch"], args: ["src/[a-z]+\\.txt"], writes: ["src/*"] },
    { prefix: ["echo"], args: ["[a-z]+"], variadic: true },
    { prefix: ["false"] },
    { prefix: [join(p.scripts, "speak-and-exit")] },
    { prefix: [join(p.scripts, "die-by-signal")] },
    // 300 000 bytes on stdout: past the 256 KiB cap.
    { prefix: ["/usr/bin/head", "-c", "300000", "/dev/zero"] },
  ]);
}

Deno.test("run: an allowed command runs confined; stdout printed; rows start then run-request", async () => {
  await withWorld("ok", { brief, scripts: SCRIPTS }, async (w) => {
    const nonce = await w.dispatch();
    const usesBefore = useCount(w.project);
    const r = await w.run({
      argv: ["/usr/bin/touch", "src/made.txt"],
      expected_writes: ["src/made.txt"],
      purpose: "make a file",
    }, { nonce });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(exists(join(w.project, "src/made.txt")), "the command ran");
    assert.match(
      r.stderr,
      /agentteams run: \/usr\/bin\/touch src\/made\.txt exited 0 in \d+ ms \(confined by bwrap\)/,
    );
    assert.equal(useCount(w.project), usesBefore + 1, "one use spent");
    const rows = newRows(w, r);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    const [start, done] = rows;
    assert.equal(start.agent, "worker");
    assert.deepEqual(start.argv, ["/usr/bin/touch", "src/made.txt"]);
    assert.equal(start.purpose, "make a file");
    assert.equal(start.confined, true);
    assert.equal(start.backend, "bwrap");
    assert.equal(done.agent, "worker");
    assert.deepEqual(done.argv, ["/usr/bin/touch", "src/made.txt"]);
    assert.equal(done.exit, 0);
    assert.equal(done.confined, true);
    assert.equal(done.backend, "bwrap");
    assert.equal(typeof done.duration_ms, "number");
    assert.ok(Number.isInteger(done.duration_ms) && (done.duration_ms as number) >= 0);
    assert.deepEqual(done.undeclared_writes, []);
    assert.equal(done.survivors_killed, false);
    assert.equal(done.purpose, "make a file");
    await w.verifyOk();

    // Human mode prints the command's stdout as is.
    const e = await w.run({ argv: ["echo", "hello", "world"] });
    assert.equal(e.code, 0, e.stderr);
    assert.equal(e.stdout, "hello world\n");
    await w.verifyOk();
  });
});

Deno.test("run: exit codes pass through (false -> 1, a script exiting 7 -> 7); both streams printed", async () => {
  await withWorld("exit", { brief, scripts: SCRIPTS }, async (w) => {
    const f = await w.run({ argv: ["false"] });
    assert.equal(f.code, 1, f.stderr);
    assert.match(f.stderr, /agentteams run: false exited 1 in \d+ ms \(confined by bwrap\)/);
    assert.doesNotMatch(f.stderr, /refused/);
    let rows = newRows(w, f);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.equal(rows[1].exit, 1);

    const s = await w.run({ argv: [join(w.scripts, "speak-and-exit")] });
    assert.equal(s.code, 7, s.stderr);
    assert.equal(s.stdout, "to stdout\n");
    assert.ok(s.stderr.split("\n").includes("to stderr"), s.stderr);
    assert.doesNotMatch(s.stderr, /refused/);
    rows = newRows(w, s);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.equal(rows[1].exit, 7);
    assert.equal(rows[1].confined, true);
    assert.equal(rows[1].backend, "bwrap");
    await w.verifyOk();
  });
});

Deno.test("run --json: one object {agent, argv, exit, stdout, stderr, truncated, undeclared_writes, ran, duration_ms}", async () => {
  await withWorld("json", { brief, scripts: SCRIPTS }, async (w) => {
    const s = await w.run({ argv: [join(w.scripts, "speak-and-exit")] }, { flags: ["--json"] });
    assert.equal(s.code, 7, s.stderr);
    const lines = s.stdout.trim().split("\n");
    assert.equal(lines.length, 1, `one JSON line expected: ${s.stdout}`);
    const out = jsonOut(s);
    assert.equal(out.agent, "worker");
    assert.deepEqual(out.argv, [join(w.scripts, "speak-and-exit")]);
    assert.equal(out.exit, 7);
    assert.equal(out.stdout, "to stdout\n");
    assert.equal(out.stderr, "to stderr\n");
    assert.equal(out.truncated, false);
    assert.deepEqual(out.undeclared_writes, []);
    assert.equal(out.ran, true);
    assert.equal(typeof out.duration_ms, "number");
    assert.equal(out.confined, true);
    assert.equal(out.backend, "bwrap");
    assert.equal(out.ok, false, "a non-zero exit is not ok");
    // The command's output is in the JSON only, not echoed around it.
    assert.doesNotMatch(s.stderr, /to stderr/);

    const ok = await w.run({ argv: ["echo", "hi"] }, { flags: ["--json"] });
    assert.equal(ok.code, 0, ok.stderr);
    const o = jsonOut(ok);
    assert.equal(o.ok, true);
    assert.equal(o.exit, 0);
    assert.equal(o.stdout, "hi\n");
    assert.equal(o.stderr, "");
    await w.verifyOk();
  });
});

Deno.test("run: a command killed by a signal exits 128+n; purpose is stripped and cut at 300 code points", async () => {
  await withWorld("signal", { brief, scripts: SCRIPTS }, async (w) => {
    const purpose = "  " + "\u{1F600}".repeat(350) + " \n";
    const r = await w.run({ argv: [join(w.scripts, "die-by-signal")], purpose }, {
      flags: ["--json"],
    });
    assert.equal(r.code, 128 + 15, r.stderr);
    const out = jsonOut(r);
    assert.equal(out.stdout, "before\n");
    // The runner records a signal death as minus the signal; bwrap, the sandbox's own pid 1,
    // reports its child's death by SIGTERM as the exit status 143, which is all the runner sees.
    assert.ok(out.exit === -15 || out.exit === 143, `exit ${out.exit}`);
    const rows = newRows(w, r);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.equal(rows[1].exit, out.exit);
    for (const row of rows) assert.equal(row.purpose, "\u{1F600}".repeat(300));
    await w.verifyOk();
  });
});

Deno.test("run --json: output past 256 KiB is cut at the cap and truncated is true", async () => {
  await withWorld("trunc", { brief, scripts: SCRIPTS }, async (w) => {
    const r = await w.run({ argv: ["/usr/bin/head", "-c", "300000", "/dev/zero"] }, {
      flags: ["--json"],
    });
    assert.equal(r.code, 0, r.stderr);
    const out = jsonOut(r);
    assert.equal(out.truncated, true);
    assert.equal((out.stdout as string).length, 256 * 1024);
    assert.equal(out.exit, 0);
    const human = await w.run({ argv: ["/usr/bin/head", "-c", "300000", "/dev/zero"] });
    assert.equal(human.code, 0, human.stderr);
    assert.equal(human.stdout.length, 256 * 1024);
    assert.match(human.stderr, /output truncated at 256 KiB/);
    await w.verifyOk();
  });
});

Deno.test("run --dry-run: runs nothing, spends no use, records no row, prints a dry-run line", async () => {
  await withWorld("dry", { brief, scripts: SCRIPTS }, async (w) => {
    const nonce = await w.dispatch();
    const ledger = join(w.project, ".agentteams", "proposal-ledger.jsonl");
    const ledgerBefore = bytesOrNull(ledger);
    const usesBefore = useCount(w.project);
    const marker = join(w.project, "src/dry.txt");
    const req = { argv: ["/usr/bin/touch", "src/dry.txt"], expected_writes: ["src/dry.txt"] };

    const r = await w.run(req, { nonce, flags: ["--dry-run"] });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout.trim(),
      `dry run: ${JSON.stringify(req.argv)} for worker passes every check; not run`,
    );
    assert.equal(exists(marker), false, "a dry run ran the command");
    assert.equal(useCount(w.project), usesBefore, "a dry run spent a use");
    assert.deepEqual(bytesOrNull(ledger), ledgerBefore, "a dry run recorded a row");

    const j = await w.run(req, { nonce, flags: ["--dry-run", "--json"] });
    assert.equal(j.code, 0, j.stderr);
    const out = jsonOut(j);
    assert.equal(out.ok, true);
    assert.equal(out.ran, false);
    assert.equal(out.exit, null);
    assert.equal(out.agent, "worker");
    assert.equal(exists(marker), false);
    assert.equal(useCount(w.project), usesBefore);
    assert.deepEqual(bytesOrNull(ledger), ledgerBefore);

    // A dry run of a request that would be refused is refused, and records nothing either.
    const bad = await w.run({ argv: ["/usr/bin/touch", "-d", "src/dry.txt"] }, {
      nonce,
      flags: ["--dry-run"],
    });
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /^agentteams run: refused: ARGV_NOT_ALLOWED: /m);
    assert.deepEqual(bytesOrNull(ledger), ledgerBefore);

    // The same nonce still runs for real afterwards.
    const real = await w.run(req, { nonce });
    assert.equal(real.code, 0, real.stderr);
    assert.ok(exists(marker));
    assert.equal(useCount(w.project), usesBefore + 1);
    await w.verifyOk();
  });
});

/** Parses the `--allow-<name>=a,b` lists of a printed `deno run` line. */
function allowLists(line: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of line.matchAll(/'?--allow-([a-z]+)=([^' ]+)'?/g)) out.set(m[1], m[2].split(","));
  return out;
}

Deno.test("permissions run -- FILE --project P: the flags are computed for P, not the cwd", async () => {
  await withWorld("perm-flags", { brief, scripts: SCRIPTS }, async (w) => {
    const nonce = await w.dispatch();
    const file = await w.artifact({ argv: ["/usr/bin/touch", "src/perm.txt"] }, nonce);
    // Asked from the world dir (the project's parent), naming the project after `--`.
    const p = await w.cli(["permissions", "run", "--", file, "--project", w.project], {
      cwd: w.dir,
    });
    assert.equal(p.code, 0, p.stderr);
    const line = p.stdout.trim();
    assert.equal((line.match(/--project/g) ?? []).length, 1, line);
    const writes = allowLists(line).get("write") ?? [];
    assert.ok(writes.includes(w.project), `write access to the project expected: ${line}`);
    for (const entry of writes) {
      assert.ok(
        entry === w.project || entry.startsWith(w.project + "/") || entry === w.tmp ||
          entry.startsWith("/proc/"),
        `write access to ${entry} is broader than the project and TMPDIR: ${line}`,
      );
    }
  });
});

Deno.test("permissions run: the printed `deno run` line, run exactly as printed, runs the request", async () => {
  await withWorld("perm", { brief, scripts: SCRIPTS }, async (w) => {
    const nonce = await w.dispatch();
    const file = await w.artifact({
      argv: ["/usr/bin/touch", "src/perm.txt"],
      expected_writes: ["src/perm.txt"],
    }, nonce);
    // From the project itself, so the project is the same whichever way it is read.
    const p = await w.cli(["permissions", "run", "--", file, "--project", w.project], {
      cwd: w.project,
    });
    assert.equal(p.code, 0, p.stderr);
    const line = p.stdout.trim();
    assert.equal(line.split("\n").length, 1, line);
    assert.match(line, /^\S*deno run /);
    assert.doesNotMatch(line, / -A | --allow-all /);
    assert.match(line, /--allow-run=\S+/);
    assert.doesNotMatch(line, /--allow-net|--allow-ffi/);
    const before = w.rows().length;

    const out = await runPrinted(w, line);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.doesNotMatch(stderr, /NOT_CAPABLE|refused/, `${line}\n${stderr}`);
    assert.equal(out.code, 0, stderr);
    assert.doesNotMatch(stderr, /warning: launched with broad/, stderr);
    assert.ok(exists(join(w.project, "src/perm.txt")), "the command ran");
    const rows = w.rows().slice(before);
    assert.deepEqual(rows.map((x) => x.action), ["run-request-start", "run-request"]);
    assert.equal(rows[1].exit, 0);
    assert.equal(rows[1].confined, true);
    assert.equal(rows[1].backend, "bwrap");
    assert.deepEqual(rows[1].undeclared_writes, []);
    await w.verifyOk();
  });
});

Deno.test("permissions run --brief B, B outside the project: the printed line grants the brief, not its directory, and runs", async () => {
  await withWorld("perm-brief", { brief, scripts: SCRIPTS }, async (w) => {
    const elsewhere = join(w.dir, "briefs");
    await Deno.mkdir(elsewhere);
    const outside = join(elsewhere, "team.jsonc");
    await Deno.copyFile(join(w.project, "agentteams.jsonc"), outside);
    const nonce = await w.dispatch();
    const file = await w.artifact({
      argv: ["/usr/bin/touch", "src/perm.txt"],
      expected_writes: ["src/perm.txt"],
    }, nonce);
    const p = await w.cli(
      ["permissions", "run", "--", file, "--brief", outside, "--project", w.project],
      { cwd: w.project },
    );
    assert.equal(p.code, 0, p.stderr);
    const line = p.stdout.trim();
    const reads = allowLists(line).get("read") ?? [];
    assert.ok(reads.includes(outside), `the brief is not readable: ${line}`);
    assert.ok(
      !reads.some((r) => r === elsewhere || elsewhere.startsWith(r + "/")),
      `the brief's directory is readable, so this does not test the narrow case: ${line}`,
    );
    const out = await runPrinted(w, line);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `${line}\n${stderr}`);
    assert.ok(exists(join(w.project, "src/perm.txt")), "the command ran");
  });
});
