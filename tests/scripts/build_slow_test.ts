/**
 * First contact (issue 14, item 5): every build command prints a line that works as printed (from
 * another directory, in a shell with no Deno on PATH), and `deno task compile` exits non-zero when
 * a binary it was asked for was not built, without writing over the bundle's folder.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO, REPO_ROOT, tempDir } from "../_helpers/mod.ts";

const dec = new TextDecoder();

/** Runs a printed line in bash with a clean environment: system PATH only (no deno), a fresh HOME. */
async function runPrinted(line: string, home: string): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command("bash", {
    args: ["-c", line],
    cwd: home,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: home },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

/** The indented line a build script printed after "run it with". */
function printedRunLine(stdout: string, what: RegExp): string {
  const lines = stdout.split("\n");
  const i = lines.findIndex((l) => what.test(l));
  assert.ok(i >= 0 && lines[i + 1]?.startsWith("  "), `no run line after ${what}:\n${stdout}`);
  return lines[i + 1].trim();
}

Deno.test("deno task bundle prints a run line that works as printed", async () => {
  const dir = await tempDir("bundle-line");
  try {
    const outdir = join(dir, "out");
    const r = await new Deno.Command(DENO, {
      args: ["run", "--allow-all", join(REPO_ROOT, "scripts/bundle.ts"), outdir],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = dec.decode(r.stdout);
    assert.equal(r.code, 0, stdout + dec.decode(r.stderr));
    const line = printedRunLine(stdout, /^bundled .*; run it with:$/);
    assert.ok(line.startsWith(`${DENO} run --no-config `), line);
    const home = join(dir, "home");
    await Deno.mkdir(home);
    const ran = await runPrinted(line, home);
    assert.equal(ran.code, 0, ran.out);
    assert.match(ran.out, /^usage: agentteams <command>/m);
    assert.doesNotMatch(ran.out, /NOT_CAPABLE/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task compile: a binary not built exits 1 with deno's own reason; the bundle's folder and its line stay good", async () => {
  const dir = await tempDir("compile");
  try {
    const out = join(dir, "dist");
    const env = { ...Deno.env.toObject(), DENORT_BIN: join(dir, "no-such-denort") };
    const r = await new Deno.Command(DENO, {
      args: ["run", "--allow-all", join(REPO_ROOT, "scripts/build.ts"), "--out", out],
      cwd: REPO_ROOT,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = dec.decode(r.stdout);
    const stderr = dec.decode(r.stderr);
    assert.equal(r.code, 1, stdout + stderr);
    const target = Deno.build.target;
    assert.match(stderr, new RegExp(`compile agentteams-${target}: not built`));
    assert.match(stderr, new RegExp(`deno task compile: agentteams-${target} not built`));
    // The default binary's name is the target's, never the bundle's folder.
    assert.ok(Deno.statSync(join(out, "agentteams")).isDirectory);
    assert.ok(Deno.statSync(join(out, "agentteams", "main.js")).isFile);
    assert.throws(() => Deno.statSync(join(out, `agentteams-${target}`)), Deno.errors.NotFound);
    // The sums name only what was built.
    const sums = Deno.readTextFileSync(join(out, "SHA256SUMS"));
    assert.match(sums, / {2}agentteams\/main\.js$/m);
    assert.doesNotMatch(sums, new RegExp(`agentteams-${target}`));
    const home = join(dir, "home");
    await Deno.mkdir(home);
    const ran = await runPrinted(
      printedRunLine(stdout, /^built .*agentteams\/; run it with/),
      home,
    );
    assert.equal(ran.code, 0, ran.out);
    assert.match(ran.out, /^usage: agentteams <command>/m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task compile: an unknown option is a usage error (exit 2), nothing built", async () => {
  const dir = await tempDir("compile-usage");
  try {
    const out = join(dir, "dist");
    const r = await new Deno.Command(DENO, {
      args: ["run", "--allow-all", join(REPO_ROOT, "scripts/build.ts"), "--out", out, "--tagret"],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(r.code, 2);
    assert.match(dec.decode(r.stderr), /^usage: deno task compile .*; not --tagret$/m);
    assert.throws(() => Deno.statSync(out), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
