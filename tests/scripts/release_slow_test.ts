/**
 * The release workflow's steps (issue 27 item 1), run here as the workflow runs them, but for the
 * compile step (it needs the denort runtime, not reachable here): the bundle packed, the compile
 * step stopping with its message and writing nothing, the argv each target's compile would run
 * (its baked-in flags from the one `releaseFlags` table), SHA256SUMS, `release sign`, `release
 * verify`, minisign and sha256sum agreeing, the packed bundle running, and install.sh installing
 * from the directory. The binaries are stand-ins.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { releaseFlags } from "../../lib/permissions.ts";
import { initKeys, SIGNING_KEY_FILE } from "../../lib/crypto/keys.ts";
import { DENO, REPO_ROOT, runCli, tempDir } from "../_helpers/mod.ts";
import { RELEASE_TARGETS } from "../../scripts/release_compile.ts";

const dec = new TextDecoder();

async function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await new Deno.Command(cmd, {
    args,
    cwd: opts.cwd ?? REPO_ROOT,
    clearEnv: opts.env !== undefined,
    env: opts.env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

const script = (name: string, args: string[], env?: Record<string, string>) =>
  run(DENO, ["run", "--allow-all", join(REPO_ROOT, "scripts", name), ...args], { env });

/** The environment without DENORT_BIN (and everything else this test process has). */
function envWithout(name: string): Record<string, string> {
  const env = Deno.env.toObject();
  delete env[name];
  return env;
}

Deno.test("release steps: compile's argv per target bakes in releaseFlags(os): absolute programs, no net, no ffi", async () => {
  const out = "/nonexistent/release";
  const r = await script("release_compile.ts", ["--out", out, "--print-argv"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => l.target), [...RELEASE_TARGETS]);
  assert.equal(RELEASE_TARGETS.length, 4);
  for (const { target, argv } of lines as { target: string; argv: string[] }[]) {
    const os = target.endsWith("apple-darwin") ? "darwin" : "linux";
    const flags = argv.slice(argv.indexOf("--quiet") + 1, argv.indexOf("--target"));
    assert.deepEqual(flags, releaseFlags(os), target);
    // scripts/release_flags.ts prints the same table.
    const printed = await script("release_flags.ts", ["--os", os]);
    assert.deepEqual(printed.stdout.trim().split("\n"), flags, target);
    assert.deepEqual(argv.slice(argv.indexOf("--target")), [
      "--target",
      target,
      "--output",
      `${out}/agentteams-${target}`,
      "main.ts",
    ]);
    for (const f of argv) {
      assert.ok(
        !/^(-A|--allow-all|--allow-net|--allow-ffi)(=|$)|^--allow-run$/.test(f),
        `${target}: ${f}`,
      );
    }
    const runFlag = flags.find((f) => f.startsWith("--allow-run="));
    assert.ok(runFlag !== undefined, target);
    const programs = runFlag.slice("--allow-run=".length).split(",");
    assert.ok(programs.every((p) => p.startsWith("/")), runFlag);
    assert.ok(programs.includes("/usr/bin/git"), runFlag);
    if (os === "linux") {
      assert.ok(programs.includes("/usr/bin/bwrap"), runFlag);
      assert.ok(!programs.includes("/usr/bin/sandbox-exec"), runFlag);
    } else {
      assert.ok(programs.includes("/usr/bin/sandbox-exec"), runFlag);
      assert.ok(!programs.includes("/usr/bin/bwrap"), runFlag);
    }
  }
});

Deno.test("release steps run here end to end but for compile: bundle, sums, sign, verify, install", async () => {
  const dir = await tempDir("release-steps");
  try {
    const out = join(dir, "release");
    // The bundle as `deno task bundle` builds it (its script, into a temp dir), then packed.
    const bundle = join(dir, "bundle", "agentteams");
    let r = await script("bundle.ts", [bundle]);
    assert.equal(r.code, 0, r.stderr);
    r = await script("release_bundle.ts", [out, "--from", bundle]);
    assert.equal(r.code, 0, r.stderr);
    // Compile without DENORT_BIN stops with the reason and writes nothing.
    const before = [...Deno.readDirSync(out)].map((e) => e.name).sort();
    r = await script(
      "release_compile.ts",
      ["--out", out, "--target", RELEASE_TARGETS[0]],
      envWithout("DENORT_BIN"),
    );
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /^release_compile: not compiling: DENORT_BIN is not set: .*denort/m);
    assert.deepEqual([...Deno.readDirSync(out)].map((e) => e.name).sort(), before);
    // Stand-ins for the binaries the compile jobs would have uploaded; with one missing, the sums
    // step refuses and writes nothing.
    for (const t of RELEASE_TARGETS.slice(1)) {
      Deno.writeTextFileSync(join(out, `agentteams-${t}`), `#!/bin/sh\necho "agentteams ${t}"\n`);
    }
    r = await script("release_sums.ts", [out]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`RELEASE_FILE_MISSING: .* lacks agentteams-${RELEASE_TARGETS[0]}:`),
    );
    assert.throws(() => Deno.statSync(join(out, "SHA256SUMS")), Deno.errors.NotFound);
    for (const t of RELEASE_TARGETS) {
      Deno.writeTextFileSync(join(out, `agentteams-${t}`), `#!/bin/sh\necho "agentteams ${t}"\n`);
    }
    r = await script("release_sums.ts", [out]);
    assert.equal(r.code, 0, r.stderr);
    const sums = Deno.readTextFileSync(join(out, "SHA256SUMS"));
    assert.equal(sums.trim().split("\n").length, 5, sums);
    assert.match(sums, / {2}agentteams-bundle\.tar\.gz$/m);
    const check = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: out });
    assert.equal(check.code, 0, check.stdout + check.stderr);

    // Sign with the operator's key (keys init), publish its minisign public key, verify.
    const home = join(dir, "home");
    Deno.mkdirSync(home);
    const env = { HOME: home, AGENTTEAMS_KEY_DIR: join(home, "keys") };
    await initKeys({ env });
    const key = join(env.AGENTTEAMS_KEY_DIR, SIGNING_KEY_FILE);
    const pub = join(dir, "release.pub");
    assert.equal((await runCli(["release", "sign", "--key", key, out], { env })).code, 0);
    assert.equal(
      (await runCli(["release", "pubkey", "--key", key, "--out", pub], { env })).code,
      0,
    );
    const verified = await runCli(["release", "verify", "--pubkey", pub, out], { env });
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, /and its 5 files match/);
    const m = await run("minisign", ["-V", "-H", "-p", pub, "-m", join(out, "SHA256SUMS")]);
    assert.equal(m.code, 0, m.stdout + m.stderr);

    // The packed bundle runs with the release flags.
    const unpacked = join(dir, "unpacked");
    Deno.mkdirSync(unpacked);
    r = await run("tar", ["-xzf", join(out, "agentteams-bundle.tar.gz"), "-C", unpacked]);
    assert.equal(r.code, 0, r.stderr);
    r = await run(DENO, [
      "run",
      "--no-config",
      ...releaseFlags(),
      join(unpacked, "agentteams", "main.js"),
      "--version",
    ], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^agentteams \d+\.\d+\.\d+/);

    // And the installer takes the release from the directory.
    const prefix = join(dir, "prefix");
    r = await run("dash", [
      join(REPO_ROOT, "scripts/install.sh"),
      "--from",
      out,
      "--pubkey",
      pub,
      "--prefix",
      prefix,
      "--target",
      "x86_64-unknown-linux-gnu",
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const ran = await run(join(prefix, "bin", "agentteams"), []);
    assert.equal(ran.stdout, "agentteams x86_64-unknown-linux-gnu\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
