/**
 * The test tiers: `deno task test` runs every test file but those named `*_slow_test.ts`, and
 * `scripts/test` (what CI runs) runs them all. The rule is the file name alone: no test file is
 * left out of the fast tier any other way, and the slow tier is not empty.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "../_helpers/mod.ts";

const SLOW = /_slow_test\.ts$/;

async function testFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...await testFiles(p));
    else if (e.isFile && /_test\.ts$/.test(e.name)) out.push(p.slice(REPO_ROOT.length + 1));
  }
  return out.sort();
}

Deno.test("tiers: deno task test leaves out exactly the *_slow_test.ts files; scripts/test runs all", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json")));
  const task: string = config.tasks.test;
  assert.match(task, /^deno test .*--ignore=tests\/\*\*\/\*_slow_test\.ts tests\/$/);
  assert.equal(task.match(/--ignore/g)?.length, 1, "one rule, no other file left out");
  assert.doesNotMatch(task, /--filter/);

  const script = await Deno.readTextFile(join(REPO_ROOT, "scripts", "test"));
  const line = script.split("\n").find((l) => l.startsWith("deno test "));
  assert.ok(line !== undefined, "scripts/test runs deno test");
  assert.doesNotMatch(line, /--ignore|--filter/, "scripts/test runs every tier");
  assert.match(line, / tests\/ /);

  const files = await testFiles(join(REPO_ROOT, "tests"));
  const slow = files.filter((f) => SLOW.test(f));
  assert.ok(slow.length > 0 && slow.length < files.length, `${slow.length} of ${files.length}`);
  // The glob deno's --ignore reads is the same rule as the name pattern here.
  for (const f of slow) assert.ok(f.startsWith("tests/") && f.endsWith("_slow_test.ts"), f);
});
