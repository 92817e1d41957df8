/**
 * No raw internal error (issue 23 item 8). The source tree run with an empty Deno cache and no
 * way to fetch: a command whose modules import an npm package is refused with one line,
 * `DEPS_MISSING`, naming the package and saying to run `deno install` in the checkout, with no
 * terminal escape code and no stack, and writes nothing. And the one place an `INTERNAL` message
 * is worded (`otherRefusal`) keeps only its first line, without escape codes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { internalMessage, otherRefusal } from "../../lib/errors.ts";
import { missingNpmPackage } from "../../lib/cli/code_dir.ts";
import { DENO, REPO_ROOT, snapshotTree, tempDir } from "../_helpers/mod.ts";
import { assertSameTree } from "../_helpers/assert.ts";

Deno.test("the source tree with an empty DENO_DIR, offline: one DEPS_MISSING line saying to run deno install, no escape codes, nothing written", async () => {
  const dir = await tempDir("deps-missing");
  try {
    const denoDir = join(dir, "deno-dir");
    const project = join(dir, "project");
    await Deno.mkdir(denoDir);
    await Deno.mkdir(join(project, ".claude", "agents"), { recursive: true });
    await Deno.writeTextFile(join(project, ".claude", "agents", "a.md"), "---\nname: a\n---\nhi\n");
    await Deno.mkdir(join(dir, "home"));
    // Deno fills its own cache dir; the project and HOME are the tool's to leave alone.
    const before = await snapshotTree(project, join(dir, "home"));
    for (const offline of [["--cached-only"], []]) {
      const out = await new Deno.Command(DENO, {
        args: ["run", "-A", ...offline, join(REPO_ROOT, "main.ts"), "audit", project],
        clearEnv: true,
        env: {
          PATH: "/usr/bin:/bin",
          HOME: join(dir, "home"),
          DENO_DIR: denoDir,
          // No registry to fetch from: a port nothing listens on.
          NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/",
          AGENTTEAMS_BROAD_OK: "1",
          DENO_NO_UPDATE_CHECK: "1",
        },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 1, stderr);
      // Deno's own download progress aside, the tool's line is one line.
      const ours = stderr.split("\n").filter((l) => l.startsWith("agentteams"));
      assert.equal(ours.length, 1, stderr);
      assert.match(
        ours[0],
        new RegExp(
          "^agentteams audit: refused: DEPS_MISSING: the npm package (@[a-z0-9-]+\/)?[a-z-]+@[0-9.]+ this command " +
            "imports is not in Deno's cache and could not be fetched: run `deno install` in " +
            REPO_ROOT.replaceAll("/", "\\/") + " once, with the npm registry reachable$",
        ),
      );
      assert.ok(!ours[0].includes("\x1b"), ours[0]);
      assert.doesNotMatch(ours[0], /INTERNAL|\bat file:/);
      assert.equal(new TextDecoder().decode(out.stdout), "");
    }
    assertSameTree(
      before,
      await snapshotTree(project, join(dir, "home")),
      "the refused run wrote something",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("internalMessage: the first line only, no escape codes, no stack, no control characters", () => {
  const deno = "TypeError: Failed caching npm package 'smol-toml@1.9.1'\n    0: error sending " +
    "request\n    at \x1b[0m\x1b[36mfile:///x/lib/audit/check_codex.ts\x1b[0m:\x1b[0m\x1b[33m10\x1b[0m";
  assert.equal(internalMessage(deno), "TypeError: Failed caching npm package 'smol-toml@1.9.1'");
  assert.equal(internalMessage("\x1b[31mred\x1b[0m and\tplain\x07"), "red and plain");
  assert.equal(internalMessage("\x1b]8;;http://x\x07link\x1b]8;;\x07"), "link");
  assert.equal(internalMessage("one line"), "one line");
  const e = new TypeError("boom\n    at f (file:///a.ts:1:1)");
  assert.deepEqual(otherRefusal(e), { code: "INTERNAL", message: "TypeError: boom" });
});

Deno.test("missingNpmPackage: names the package of Deno's npm load failures, nothing else", () => {
  assert.equal(
    missingNpmPackage(new TypeError("Failed caching npm package 'yaml@2.9.1'\n 0: x")),
    "yaml@2.9.1",
  );
  assert.equal(missingNpmPackage(new TypeError("Could not find npm package 'zod'")), "zod");
  assert.equal(missingNpmPackage(new TypeError("boom")), null);
  assert.equal(missingNpmPackage("npm package 'x'"), null);
});
