/**
 * The layers of DESIGN.md section 4 on the real tree: main.ts and lib/ checked against the layer
 * table in tests/_arch/layers.ts by the import checker of tests/_arch/imports.ts (its own tests:
 * tests/_arch/imports_test.ts). `deno run --allow-read tests/_arch/report.ts` prints the findings.
 * The import map in docs/architecture.md is generated from the same reading (tests/_arch/doc_map.ts)
 * and checked here against the tree.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "./_helpers/mod.ts";
import { importMapText, normalized, sectionOf } from "./_arch/doc_map.ts";
import { denoInfoSpecifiers } from "./_arch/deno_info.ts";
import {
  absentEntries,
  checkRepo,
  formatViolations,
  loadTree,
  parseImports,
  tableProblems,
  unitImports,
} from "./_arch/imports.ts";
import { LAYERS } from "./_arch/layers.ts";

Deno.test("architecture: main.ts and lib/ follow the layer table, with no cycles", async () => {
  const found = await checkRepo(REPO_ROOT, LAYERS);
  assert.equal(found.length, 0, `\n${formatViolations(found)}`);
});

Deno.test("architecture: the layer table is well formed, and every entry exists", async () => {
  assert.deepEqual(tableProblems(LAYERS), []);
  assert.deepEqual(await absentEntries(REPO_ROOT, LAYERS), []);
  // The check sees a missing entry (it could fail).
  const stale = { ...LAYERS, layers: [{ name: "x", paths: ["lib/no-such-folder/"] }] };
  assert.deepEqual(await absentEntries(REPO_ROOT, stale), ["lib/no-such-folder/"]);
});

Deno.test("architecture: docs/architecture.md's import map is the tree's (regenerate with report.ts --write-doc)", async () => {
  const doc = await Deno.readTextFile(join(REPO_ROOT, "docs", "architecture.md"));
  const section = sectionOf(doc);
  assert.ok(section !== null, "docs/architecture.md lacks the import map's markers");
  const tree = await loadTree(REPO_ROOT, LAYERS);
  const want = importMapText(unitImports(tree, LAYERS), LAYERS);
  assert.equal(
    normalized(section),
    normalized(want),
    "the import map in docs/architecture.md is stale: run deno run --allow-read --allow-write " +
      "tests/_arch/report.ts --write-doc && deno fmt docs/architecture.md",
  );
  // Every unit of the table has its line, and lib/audit/ is shown importing lib/policy/.
  for (const unit of LAYERS.layers.flatMap((l) => l.paths)) {
    assert.ok(section.includes(`\`${unit}\` imports`), unit);
  }
  assert.ok(unitImports(tree, LAYERS).get("lib/audit/")?.includes("lib/policy/"));
  // A map missing one edge reads differently (the comparison could fail).
  const fewer = new Map(unitImports(tree, LAYERS));
  fewer.set("lib/audit/", []);
  assert.notEqual(normalized(importMapText(fewer, LAYERS)), normalized(want));
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

/** Files of lib/ that share their name with another, grouped; each folder's mod.ts may. */
function sharedNames(files: Iterable<string>): string[][] {
  const byName = new Map<string, string[]>();
  for (const file of files) {
    const name = file.slice(file.lastIndexOf("/") + 1);
    if (!file.startsWith("lib/") || name === "mod.ts") continue;
    byName.set(name, [...(byName.get(name) ?? []), file]);
  }
  return [...byName.values()].filter((group) => group.length > 1);
}

Deno.test("architecture: no two files in lib/ share a name, but each folder's mod.ts", async () => {
  const tree = await loadTree(REPO_ROOT, LAYERS);
  assert.deepEqual(sharedNames(tree.files.keys()), [], "rename one: a name says what it holds");
  // The check sees a shared name (it could fail), and lets mod.ts be.
  const planted = ["lib/a/x.ts", "lib/b/x.ts", "lib/a/mod.ts", "lib/b/mod.ts", "main.ts"];
  assert.deepEqual(sharedNames(planted), [["lib/a/x.ts", "lib/b/x.ts"]]);
});
