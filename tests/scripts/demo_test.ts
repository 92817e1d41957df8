/**
 * The README's first command, as a newcomer runs it: `scripts/demo` from a clean clone of the
 * repository (what is committed), with no Deno on PATH. It installs Deno into the
 * clone's `.tools/` and must pass end to end, the printed permission line included (which once
 * began with a bare `deno` that no PATH held).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir } from "../_helpers/mod.ts";

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
    // PATH without any directory holding a `deno`.
    const path = (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":").filter((d) => {
      try {
        Deno.statSync(join(d, "deno"));
        return false;
      } catch {
        return true;
      }
    }).join(":");
    // The newcomer's own environment (their npm settings and certificates included), less Deno's.
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(Deno.env.toObject())) {
      if (!k.startsWith("DENO_")) env[k] = v;
    }
    const out = await new Deno.Command("bash", {
      args: ["scripts/demo"],
      cwd: clone,
      clearEnv: true,
      env: { ...env, PATH: path },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(600_000), // a hang guard: npm may fetch Deno on a cold cache
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text.slice(-3000));
    assert.match(text, /running exactly that line:\n\s+ok: \d+ rows verify/);
    assert.match(text, /Done\./);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
