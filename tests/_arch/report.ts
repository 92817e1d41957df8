/**
 * Prints what the import checker finds on this repository with tests/_arch/layers.ts, grouped by
 * rule; exits 1 if it finds anything. With `--write-doc`, also writes the generated import map
 * into docs/architecture.md (between its markers; tests/_arch/doc_map.ts), then run
 * `deno fmt docs/architecture.md`.
 *
 *     deno run --allow-read tests/_arch/report.ts
 *     deno run --allow-read --allow-write tests/_arch/report.ts --write-doc
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { absentEntries, checkTree, formatViolations, loadTree, unitImports } from "./imports.ts";
import { importMapText, withSection } from "./doc_map.ts";
import { LAYERS } from "./layers.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tree = await loadTree(root, LAYERS);
const found = checkTree(tree, LAYERS);
const absent = await absentEntries(root, LAYERS);
console.log(found.length === 0 ? "no violations" : formatViolations(found));
for (const p of absent) console.log(`the layer table names ${p}, which does not exist`);
console.log(`${found.length + absent.length} violation(s)`);
if (Deno.args.includes("--write-doc")) {
  const doc = join(root, "docs", "architecture.md");
  const text = await Deno.readTextFile(doc);
  await Deno.writeTextFile(
    doc,
    withSection(text, importMapText(unitImports(tree, LAYERS), LAYERS)),
  );
  console.log(
    "wrote the import map into docs/architecture.md; now run deno fmt docs/architecture.md",
  );
}
if (found.length + absent.length > 0) Deno.exit(1);
