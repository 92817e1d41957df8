/**
 * The tool's lockfile holds only the tool's packages (issue 14, item 4): Deno fetches every npm
 * package of the lockfile the first time a program needs any, so a test-only package there
 * (fast-check) would be downloaded by the tool's first run, and would break it offline. The tests
 * use their own lockfile, tests/deno.lock (`deno task test`, `scripts/test`), which holds the
 * tool's packages at the same versions and integrity, plus the test-only ones.
 *
 * A bare `deno test` (without `--lock=tests/deno.lock`) writes fast-check into deno.lock, and this
 * test then fails: restore deno.lock and use `deno task test`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";

/** The test-only packages, by name. */
const TEST_ONLY = [
  "fast-check",
  "pure-rand",
  "@microsoft/sarif-multitool-linux",
  "@oven/bun-linux-x64",
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/conformance",
  "@openai/codex",
  "@anthropic-ai/sandbox-runtime",
];

interface Lock {
  specifiers: Record<string, string>;
  npm: Record<string, { integrity: string }>;
}

function readLock(rel: string): Lock {
  return JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, rel))) as Lock;
}

// `npm:@scope/name@1.2.3` and `@scope/name@1.2.3_peer@4.5.6` (a peer in the key) both name
// `@scope/name`.
const nameOf = (key: string) => key.replace(/^npm:/, "").replace(/^(@?[^@]+)@.*$/, "$1");

Deno.test("deno.lock holds no test-only package; tests/deno.lock holds the tool's packages as deno.lock does", () => {
  const tool = readLock("deno.lock");
  const tests = readLock("tests/deno.lock");
  const stray = [...Object.keys(tool.specifiers), ...Object.keys(tool.npm)].filter((k) =>
    TEST_ONLY.includes(nameOf(k))
  );
  assert.deepEqual(stray, [], "restore deno.lock (git checkout deno.lock) and run deno task test");
  for (const [pkg, entry] of Object.entries(tool.npm)) {
    assert.equal(tests.npm[pkg]?.integrity, entry.integrity, `${pkg} in tests/deno.lock`);
  }
  for (const name of TEST_ONLY) {
    assert.ok(Object.keys(tests.npm).some((k) => nameOf(k) === name), `${name} in tests/deno.lock`);
  }
});

Deno.test("deno.json imports no test-only package (the tool's first run would fetch it)", () => {
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json"))) as {
    imports: Record<string, string>;
  };
  const test = Object.values(config.imports).filter((s) => TEST_ONLY.includes(nameOf(s)));
  assert.deepEqual(test, []);
});
