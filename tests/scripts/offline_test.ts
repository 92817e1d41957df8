/**
 * First contact (issue 14, item 4): set-up caches what the tool needs and nothing else, and then
 * the tool runs offline. From an empty Deno cache, `deno install` (the set-up step of the demo and the tests) fetches the tool's packages
 * only (never the test-only fast-check); after it, `schema` runs with the network unreachable
 * and prints no download line. The release bundle needs no package at all at run time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO, REPO_ROOT, tempDir } from "../_helpers/mod.ts";
import { bundleTo } from "../../scripts/bundle.ts";
import { newcomerEnv } from "./_newcomer.ts";

const dec = new TextDecoder();
/** Offline: every request goes to a proxy no one answers at, so any fetch fails at once. */
const OFFLINE = {
  HTTPS_PROXY: "http://127.0.0.1:9",
  HTTP_PROXY: "http://127.0.0.1:9",
  NO_PROXY: "",
};

/** The newcomer's environment without proxy settings (OFFLINE sets its own). */
function hostEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(newcomerEnv()).filter(([k]) => !/^(https?|no)_proxy$/i.test(k)),
  );
}

async function deno(
  args: string[],
  env: Record<string, string>,
  cwd: string = REPO_ROOT,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await new Deno.Command(DENO, {
    args,
    cwd,
    clearEnv: true,
    env: { ...hostEnv(), PATH: "/usr/bin:/bin", NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

function cachedPackages(denoDir: string): string[] {
  try {
    return [...Deno.readDirSync(join(denoDir, "npm", "registry.npmjs.org"))].map((e) => e.name)
      .sort();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

Deno.test("from an empty cache: deno install fetches the tool's packages only, then schema runs offline", async () => {
  const dir = await tempDir("offline-src");
  try {
    const denoDir = join(dir, "deno");
    const home = join(dir, "home");
    await Deno.mkdir(home);
    const env = { DENO_DIR: denoDir, HOME: home, AGENTTEAMS_BROAD_OK: "1" };
    // A copy of the source tree: other tests' deno processes may rewrite the checkout's deno.lock
    // while this one reads it.
    const tree = join(dir, "tree");
    await Deno.mkdir(tree);
    for (const f of ["main.ts", "deno.json", "deno.lock", "lib"]) {
      const c = await new Deno.Command("cp", { args: ["-R", join(REPO_ROOT, f), tree] }).output();
      assert.equal(c.code, 0, `cp ${f}`);
    }
    const cached = await deno(["install", "--quiet"], env, tree);
    assert.equal(cached.code, 0, cached.stderr);
    assert.deepEqual(cachedPackages(denoDir), ["@hpke", "smol-toml", "yaml", "zod"]);
    const r = await deno(
      ["run", "-A", join(tree, "main.ts"), "schema"],
      { ...env, ...OFFLINE },
      tree,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^change-proposal$/m);
    assert.doesNotMatch(r.stderr, /Download/);
    assert.equal(r.stderr, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the release bundle runs from an empty cache with the network unreachable: nothing downloaded", async () => {
  const dir = await tempDir("offline-bundle");
  try {
    const out = join(dir, "bundle");
    await bundleTo(REPO_ROOT, out);
    const denoDir = join(dir, "deno");
    const home = join(dir, "home");
    await Deno.mkdir(home);
    const r = await deno(["run", "--no-config", "-A", join(out, "main.js"), "schema"], {
      DENO_DIR: denoDir,
      HOME: home,
      AGENTTEAMS_BROAD_OK: "1",
      ...OFFLINE,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^command-request$/m);
    assert.equal(r.stderr, "");
    assert.deepEqual(cachedPackages(denoDir), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
