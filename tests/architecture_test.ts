/**
 * The layers of DESIGN.md section 4 on the real tree: main.ts and lib/ checked against the layer
 * table in tests/_arch/layers.ts by the import checker of tests/_arch/imports.ts (its own tests:
 * tests/_arch/imports_test.ts). `deno run --allow-read tests/_arch/report.ts` prints the findings.
 */

import assert from "node:assert/strict";
import { REPO_ROOT } from "./_helpers/mod.ts";
import { denoInfoSpecifiers } from "./_arch/deno_info.ts";
import {
  checkRepo,
  formatViolations,
  loadTree,
  parseImports,
  tableProblems,
} from "./_arch/imports.ts";
import { LAYERS } from "./_arch/layers.ts";

Deno.test("architecture: main.ts and lib/ follow the layer table, with no cycles", async () => {
  const found = await checkRepo(REPO_ROOT, LAYERS);
  assert.equal(found.length, 0, `\n${formatViolations(found)}`);
});

Deno.test("architecture: the layer table is well formed", () => {
  assert.deepEqual(tableProblems(LAYERS), []);
});

Deno.test("architecture: the parser reads every file of the tree, and as deno info does", async () => {
  const tree = await loadTree(REPO_ROOT, LAYERS);
  const files = [...tree.files.keys()];
  assert.ok(files.length > 50, `scanned ${files.length} files`);
  const oracle = await denoInfoSpecifiers(REPO_ROOT, files);
  for (const [file, text] of tree.files) {
    const parsed = parseImports(text);
    assert.deepEqual(parsed.problems, [], file);
    const ours = [...new Set(parsed.imports.map((s) => s.specifier))].sort();
    assert.deepEqual(ours, oracle.get(file), file);
  }
});
