/**
 * The README's first command, as a newcomer runs it: `scripts/demo` from a clean clone of the
 * repository (what is committed), with no Deno on PATH. It installs Deno into the
 * clone's `.tools/` and must pass end to end, the printed permission line included (which once
 * began with a bare `deno` that no PATH held).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir } from "../_helpers/mod.ts";
import { newcomerEnv } from "./_newcomer.ts";

Deno.test("scripts/demo passes from a clean clone with no deno on PATH", async () => {
  const dir = await tempDir("demo");
  try {
    const clone = join(dir, "clone");
    const git = await new Deno.Command("git", {
      args: ["clone", "-q", REPO_ROOT, clone],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(git.code, 0, new TextDecoder().decode(git.stderr));
    const out = await new Deno.Command("bash", {
      args: ["scripts/demo"],
      cwd: clone,
      clearEnv: true,
      env: newcomerEnv(),
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(600_000), // a hang guard: npm may fetch Deno on a cold cache
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text.slice(-3000));
    assert.match(text, /running exactly that line:\n\s+ok: \d+ rows verify/);
    // The runner's section: the nonce in no file, a refusal relayed through the queue.
    assert.match(text, /no match: the nonce travels only inside the box/);
    assert.match(text, /agentteams apply: refused: STALE_BASE: src\/app\.py changed/);
    // A write grant widening the runner's roots: the granted root written, the row recorded.
    assert.match(
      text,
      /agentteams serve: grants: G-7 adds the write root \S+\/team-a\/docs\/shared/,
    );
    assert.match(text, /report\.md exists: the runner added the granted root at its start/);
    assert.match(text, /"action": "grants-loaded", "active": \["G-7"\]/);
    assert.match(text, /Done\./);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("scripts/demo as an ordinary user without bubblewrap: a clear instruction, exit 1, nothing installed", async () => {
  // The unprivileged user scripts/test creates (else nobody); setpriv drops to it for real.
  const user = Deno.env.get("AGENTTEAMS_TEST_USER") ?? "nobody";
  const id = (flag: string) =>
    new TextDecoder().decode(new Deno.Command("id", { args: [flag, user] }).outputSync().stdout)
      .trim();
  const uid = id("-u");
  const gid = id("-g");
  assert.match(uid, /^[1-9]\d*$/, `no unprivileged user ${user}`);
  const dir = await tempDir("demo-user");
  try {
    // The demo alone, world-readable, and a PATH of every program here but bwrap.
    await Deno.mkdir(join(dir, "scripts"), { recursive: true });
    await Deno.copyFile(join(REPO_ROOT, "scripts/demo"), join(dir, "scripts/demo"));
    const bin = join(dir, "bin");
    await Deno.mkdir(bin);
    for (const e of Deno.readDirSync("/usr/bin")) {
      if (e.name !== "bwrap") Deno.symlinkSync(join("/usr/bin", e.name), join(bin, e.name));
    }
    for (const p of [dir, join(dir, "scripts"), bin]) await Deno.chmod(p, 0o755);
    await Deno.chmod(join(dir, "scripts/demo"), 0o755);
    const out = await new Deno.Command("/usr/bin/setpriv", {
      args: ["--reuid", uid, "--regid", gid, "--clear-groups", "bash", "scripts/demo"],
      cwd: dir,
      clearEnv: true,
      env: { PATH: bin, HOME: dir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, text);
    assert.match(
      text,
      /^demo: missing bubblewrap; install them \(e\.g\. sudo apt-get install bubblewrap\) and rerun$/m,
    );
    assert.doesNotMatch(text, /installing/);
    assert.throws(() => Deno.statSync(join(dir, ".tools")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
